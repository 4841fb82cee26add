/**
 * Answers worth keeping between scans that no HTTP cache keeps: what a jar without Maven metadata turned
 * out to be (or that nothing matched it), after several checksum look-ups and a search. A 404 is not kept
 * by the HTTP cache, so without this every online re-scan would ask the same questions again.
 *
 * One small JSON file per key under `<data dir>/cache/answers`. Positive answers are kept for good (a
 * SHA-1 confirmed against the repository's checksum does not change); negative ones for `negativeTtlMs`
 * (7 days by default, as a missing artifact may be published later: Maven re-asks daily, Gradle after 24 h).
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface AnswerMemo {
  /** The value kept for `key`; undefined when none, or a negative one that has expired. */
  get(key: string): unknown;
  /** Keeps `value` for `key`; `negative` answers expire. */
  set(key: string, value: unknown, options?: { negative?: boolean }): void;
}

const DAY = 24 * 60 * 60 * 1000;

export function createAnswerMemo(dir: string, options: { negativeTtlMs?: number } = {}): AnswerMemo {
  const ttl = options.negativeTtlMs ?? 7 * DAY;
  const fileOf = (key: string) => join(dir, `${createHash("sha256").update(key).digest("hex")}.json`);
  return {
    get(key) {
      try {
        const kept = JSON.parse(readFileSync(fileOf(key), "utf8")) as {
          key: string;
          at: number;
          negative: boolean;
          value: unknown;
        };
        if (kept.key !== key) return undefined;
        if (kept.negative && Date.now() - kept.at > ttl) return undefined;
        return kept.value;
      } catch {
        return undefined; // none, or unreadable: asked again
      }
    },
    set(key, value, { negative = false } = {}) {
      try {
        mkdirSync(dir, { recursive: true });
        const file = fileOf(key);
        const part = `${file}.${process.pid}.part`;
        writeFileSync(part, JSON.stringify({ key, at: Date.now(), negative, value }));
        renameSync(part, file);
      } catch {
        // a read-only cache only costs the next scan its questions again
      }
    },
  };
}
