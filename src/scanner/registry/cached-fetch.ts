/**
 * HTTP GETs of the scanner (npm packuments, Maven POMs, metadata and artifacts) through one on-disk cache
 * with validators: a second scan revalidates instead of downloading again, immutable artifacts are never
 * asked for twice, and `--offline` answers from the cache alone. make-fetch-happen is npm's own fetcher
 * (cacache storage, RFC 9111 revalidation with ETag/Last-Modified).
 */
import { dirname, join } from "node:path";
import type makeFetchHappen from "make-fetch-happen";
import { type AnswerMemo, createAnswerMemo } from "./answer-memo.ts";

interface RegistryFetchOptions {
  /** Directory of the on-disk cache, e.g. `<data dir>/cache/http`. */
  cacheDir: string;
  /** Answer from the cache only: a URL never fetched before is reported as not cached. */
  offline: boolean;
  /**
   * Requests in flight at once per host (default 48). Maven release dates take one small request per
   * version: at 8, the facts of solr-core's 40 first dependencies took 91 s here, at 48 15 s.
   */
  concurrency?: number;
  /** Per-request time limit (default 30 s). */
  timeoutMs?: number;
}

interface RegistryRequest {
  /**
   * The content at this URL never changes once published (a Maven POM or jar at a release version):
   * a cached copy is used without asking the server again.
   */
  immutable?: boolean;
  /**
   * A ranged request (part of a file): never read from or written to the HTTP cache, where the part
   * would stand for the whole file; offline, it is not answered.
   */
  partial?: boolean;
  headers?: Record<string, string>;
}

export type FetchOutcome =
  | { kind: "ok"; status: number; body: Buffer; headers: Headers; fromCache: boolean }
  /** 404 or 410: the registry has no such thing (a missing parent POM, an unpublished package). */
  | { kind: "not-found"; status: number }
  /** Offline and never fetched before. */
  | { kind: "not-cached" }
  /** Network failure or an unexpected status; `reason` is one line, safe to print. */
  | { kind: "failed"; reason: string };

export interface RegistryFetcher {
  get(url: string, request?: RegistryRequest): Promise<FetchOutcome>;
  /** Answers derived from several requests, kept beside the HTTP cache (`<cache>/answers`). */
  answers?: AnswerMemo;
}

export function createRegistryFetcher(options: RegistryFetchOptions): RegistryFetcher {
  // make-fetch-happen and its agent, cache and proxy modules are loaded at the first request, not at
  // creation: every service start creates a fetcher (uploads' facts), few of them ever fetch.
  let fetcher: Promise<ReturnType<typeof makeFetchHappen.defaults>> | undefined;
  const loaded = () =>
    (fetcher ??= import("make-fetch-happen").then(({ default: makeFetchHappen }) =>
      makeFetchHappen.defaults({
        cachePath: options.cacheDir,
        maxSockets: options.concurrency ?? 48,
        timeout: options.timeoutMs ?? 30_000,
        retry: { retries: 2, minTimeout: 200, maxTimeout: 2_000 },
        headers: { "user-agent": "imaging-services-scanner" },
      }),
    ));
  return {
    answers: createAnswerMemo(join(dirname(options.cacheDir), "answers")),
    async get(url, request = {}) {
      if (request.partial && options.offline) return { kind: "not-cached" };
      const cache = request.partial
        ? "no-store"
        : options.offline
          ? "only-if-cached"
          : request.immutable
            ? "force-cache"
            : "no-cache";
      try {
        const fetch = await loaded();
        const response = await fetch(url, { cache, headers: request.headers });
        if (response.status === 404 || response.status === 410) {
          await response.buffer();
          return { kind: "not-found", status: response.status };
        }
        if (response.status < 200 || response.status >= 300) {
          await response.buffer();
          return { kind: "failed", reason: `${redactUrl(url)} answered HTTP ${response.status}` };
        }
        const body = await response.buffer();
        const cacheStatus = response.headers.get("x-local-cache-status");
        return {
          kind: "ok",
          status: response.status,
          body,
          headers: new Headers(Object.fromEntries(response.headers.entries())),
          fromCache: cacheStatus === "hit" || cacheStatus === "revalidated" || cacheStatus === "stale",
        };
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === "ENOTCACHED") return { kind: "not-cached" };
        // The library's message repeats the URL it was given, credentials included.
        const message = redactCredentials((error as Error).message.split("\n")[0] ?? "");
        return { kind: "failed", reason: `${redactUrl(url)}: ${message}` };
      }
    },
  };
}

/** Every `scheme://user:password@` in a text, as redactUrl writes it. */
function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi, "$1***@");
}

/** A mirror URL may carry credentials (https://user:token@repo.example.com): never print them. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      parsed.username = "***";
      parsed.password = "";
    }
    return parsed.toString();
  } catch {
    return "(invalid URL)";
  }
}
