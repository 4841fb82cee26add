/**
 * What reading one scanned archive may cost, whatever it holds: a zip bomb (an entry inflating a thousand
 * times its size, entries by the million, jars nested without end) ends in a warning naming the entry,
 * never in the scanner's memory or time running out. The defaults are far above real applications (a
 * Spring Boot jar of 150 dependencies inflates ~200 MB) and far below what would hurt the machine.
 */

export interface ArchiveLimits {
  /** Bytes inflated in all, nested archives and the entries read from them (default 2 GiB). */
  maxTotalInflatedBytes: number;
  /**
   * Inflated bytes per compressed byte of one entry, checked once it has inflated `ratioGraceBytes`
   * (default 100, as Apache POI's ZipSecureFile: class files and jars compress 2–10×).
   */
  maxRatio: number;
  ratioGraceBytes: number;
  /** Entries one archive may declare (default 250,000: the largest real jars hold ~150,000). */
  maxEntries: number;
  /** Archives inside archives (an ear's war's jar is depth 2; default 4). */
  maxDepth: number;
  /** Size of one entry read whole into memory: a class file, a POM, a manifest (default 64 MiB). */
  maxEntryBytes: number;
  /** A nested archive inflating to more than this goes to a temporary file instead of memory (32 MiB). */
  inMemoryNestedBytes: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxTotalInflatedBytes: 2048 * MiB,
  maxRatio: 100,
  ratioGraceBytes: MiB,
  maxEntries: 250_000,
  maxDepth: 4,
  maxEntryBytes: 64 * MiB,
  inMemoryNestedBytes: 32 * MiB,
};

/** Not a zip archive, or a damaged one. */
export class ArchiveFormatError extends Error {
  override name = "ArchiveFormatError";
}

/** An entry (or an archive) that a limit stopped: `entry` is its label (`app.war!/WEB-INF/lib/x.jar`). */
export class ArchiveLimitError extends Error {
  override name = "ArchiveLimitError";
  readonly entry: string;
  constructor(entry: string, reason: string) {
    super(`${entry}: ${reason}`);
    this.entry = entry;
  }
}

/** The bytes inflated so far while reading one scanned archive, against its limits. */
export class InflateBudget {
  readonly limits: ArchiveLimits;
  #inflated = 0;
  #exhausted = false;
  /** The entries stopped by a limit, each said once. */
  readonly stopped: ArchiveLimitError[] = [];

  constructor(limits: Partial<ArchiveLimits> = {}) {
    this.limits = { ...DEFAULT_ARCHIVE_LIMITS, ...limits };
  }

  get inflated(): number {
    return this.#inflated;
  }

  /** The total was passed: nothing more of the archive is read (said once, by the entry that passed it). */
  get exhausted(): boolean {
    return this.#exhausted;
  }

  /**
   * Counts `bytes` more inflated for `entry` (`entryOut` so far out of `entryIn` compressed bytes read);
   * throws ArchiveLimitError when a limit is passed.
   */
  charge(entry: string, bytes: number, entryOut: number, entryIn: number): void {
    this.#inflated += bytes;
    const { maxTotalInflatedBytes, maxRatio, ratioGraceBytes } = this.limits;
    if (this.#inflated > maxTotalInflatedBytes) {
      this.#exhausted = true;
      throw new ArchiveLimitError(
        entry,
        `not read: the archive's entries inflate to more than ${formatBytes(maxTotalInflatedBytes)} in all (the limit), so the rest of it is not read`,
      );
    }
    if (entryOut > ratioGraceBytes && entryOut > maxRatio * Math.max(entryIn, 1)) {
      throw new ArchiveLimitError(
        entry,
        `not read: it inflates to more than ${maxRatio} times its compressed size (${formatBytes(entryOut)} from ${formatBytes(entryIn)} so far), as a zip bomb does`,
      );
    }
  }
}

export function formatBytes(n: number): string {
  if (n >= 1024 * MiB) return `${(n / (1024 * MiB)).toFixed(1)} GiB`;
  if (n >= MiB) return `${(n / MiB).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}
