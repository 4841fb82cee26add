/**
 * npm version ordering with `semver`, parsed loosely ("v1.2.3", "=1.2.3", "1.2.3beta" are accepted).
 * Strings semver cannot parse must not break a scan: they sort after every valid version, lexically among
 * themselves, so the order stays total and deterministic.
 */
import semver, { type SemVer } from "semver";

const LOOSE = { loose: true } as const;

/** A parsed npm version; `semver` is null when the string is not a valid (loose) semver version. */
interface NpmVersion {
  readonly raw: string;
  readonly semver: SemVer | null;
}

export function parseNpmVersion(raw: string): NpmVersion {
  return { raw, semver: semver.parse(raw, LOOSE) };
}

export function compareParsedNpmVersions(a: NpmVersion, b: NpmVersion): number {
  if (a.semver !== null && b.semver !== null) return a.semver.compare(b.semver);
  if (a.semver !== null) return -1;
  if (b.semver !== null) return 1;
  return a.raw < b.raw ? -1 : a.raw > b.raw ? 1 : 0;
}

/** semver precedence (build metadata ignored); invalid versions after valid ones, lexically. Never throws. */
export function compareNpmVersions(a: string, b: string): number {
  return compareParsedNpmVersions(parseNpmVersion(a), parseNpmVersion(b));
}

export function isParsedNpmPrerelease(v: NpmVersion): boolean {
  return v.semver !== null && v.semver.prerelease.length > 0;
}

/** True for a valid version with a prerelease tag (1.0.0-beta.1); invalid versions are not prereleases. */
export function isNpmPrerelease(v: string): boolean {
  return isParsedNpmPrerelease(parseNpmVersion(v));
}

/** semver major/minor; for an invalid string, its first two digit runs (missing = 0). */
export function npmMajorMinor(v: NpmVersion): readonly [bigint, bigint] {
  if (v.semver !== null) return [BigInt(v.semver.major), BigInt(v.semver.minor)];
  const runs = v.raw.match(/\d+/g) ?? [];
  return [BigInt(runs[0] ?? 0), BigInt(runs[1] ?? 0)];
}
