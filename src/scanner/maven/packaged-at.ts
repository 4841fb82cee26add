/**
 * When a jar was packaged, from its own entries: a release is built before it is signed and uploaded, so
 * this bounds its release date from above even when the signature is years late (artifacts signed again:
 * every Spring 4.1.9.RELEASE `.pom.asc` reads 2017-03-20, its jars' entries 2015-12-17). A jar in hand is
 * read from its central directory; a remote one from the last bytes of its central directory, one ranged
 * request (Maven writes `META-INF/maven/**` last, at packaging time), kept between scans (AnswerMemo: a
 * partial answer is never put in the HTTP cache, where a full download of the same jar could read it).
 */
import { entriesInTail, type ZipEntry } from "../archive/zip.ts";
import type { RegistryFetcher } from "../registry/cached-fetch.ts";

/** Bytes asked of a remote jar: the end record and the last ~100 directory headers. */
export const TAIL_BYTES = 8 * 1024;

/**
 * Entry times before this are no build's: DOS's epoch (1980) and the fixed times of reproducible builds
 * that chose one (Gradle's 1980-02-01) say nothing about when the release was made.
 */
const EARLIEST_CREDIBLE_MS = Date.UTC(1995, 0, 1);

/**
 * The latest credible modification time of `entries` (ms since 1970), the packaging time; null when none
 * is credible (every entry at a fixed early time, or later than `nowMs`: a builder's clock in the future).
 */
export function packagedAt(entries: readonly ZipEntry[], nowMs = Date.now()): number | null {
  let latest: number | null = null;
  for (const { modifiedMs } of entries) {
    if (!Number.isFinite(modifiedMs) || modifiedMs < EARLIEST_CREDIBLE_MS || modifiedMs > nowMs) continue;
    if (latest === null || modifiedMs > latest) latest = modifiedMs;
  }
  return latest;
}

export const packagedAtKey = (jarUrl: string) => `jar packaged at: ${jarUrl}`;

/**
 * When the jar at `jarUrl` was packaged, read from its last TAIL_BYTES; null when there is no such jar
 * (a POM-only module), no credible time, or no answer (offline and never asked).
 */
export async function remoteJarPackagedAt(fetcher: RegistryFetcher, jarUrl: string): Promise<number | null> {
  const key = packagedAtKey(jarUrl);
  const kept = fetcher.answers?.get(key) as { ms: number | null } | undefined;
  if (kept) return kept.ms;
  const outcome = await fetcher.get(jarUrl, { partial: true, headers: { range: `bytes=-${TAIL_BYTES}` } });
  if (outcome.kind === "not-cached" || outcome.kind === "failed") return null; // asked again next time
  if (outcome.kind === "not-found") {
    fetcher.answers?.set(key, { ms: null }, { negative: true });
    return null;
  }
  // a server that ignores Range sends the whole jar: its last bytes are the same tail
  const tail = outcome.status === 206 ? outcome.body : outcome.body.subarray(-TAIL_BYTES);
  const ms = packagedAt(entriesInTail(tail));
  fetcher.answers?.set(key, { ms }, { negative: ms === null });
  return ms;
}
