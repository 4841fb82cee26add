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

const HOUR_MS = 60 * 60 * 1000;
/** maven-archiver 3.5.0, the first to write `project.build.outputTimestamp` on entries, was released then. */
const CHOSEN_TIMES_SINCE_MS = Date.UTC(2019, 11, 1);

/**
 * The latest credible modification time of `entries` (ms since 1970), the packaging time; null when none
 * is credible: entries at a fixed early time, later than `nowMs` (a builder's clock in the future), or a
 * reproducible build's. Such a build writes one chosen time (`project.build.outputTimestamp`) on every
 * entry, sometimes shifted by whole hours on some of them (a time-zone quirk of maven-archiver), and that
 * time may be years old (httpcore5 5.2.3, released 2023, reads 2021-01-10T15:31:00). Entries written at
 * different moments, as a build writes them, say when it ran; one time on all of them does only before
 * builds could choose it (Ant's jar task stamped every entry alike: spring-core 3.0.0.RELEASE).
 */
export function packagedAt(entries: readonly ZipEntry[], nowMs = Date.now()): number | null {
  const credible = new Set<number>();
  for (const { modifiedMs } of entries) {
    if (Number.isFinite(modifiedMs) && modifiedMs >= EARLIEST_CREDIBLE_MS && modifiedMs <= nowMs) {
      credible.add(modifiedMs);
    }
  }
  const times = [...credible];
  const first = times[0];
  if (first === undefined) return null;
  // a loop, not Math.max(...times): an archive may hold more entries than a call takes arguments
  let latest = first;
  for (const t of times) if (t > latest) latest = t;
  const oneChosenTime = times.every((t) => (t - first) % HOUR_MS === 0);
  return oneChosenTime && latest >= CHOSEN_TIMES_SINCE_MS ? null : latest;
}

export const packagedAtKey = (jarUrl: string) => `jar packaging time: ${jarUrl}`;

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
