/**
 * Version facts for software-composition analysis: ordering, prerelease detection, advisory ranges and the
 * per-package facts (safest version, safer closest version, release cadence). Pure functions, no I/O.
 */

import type { AffectedRange, Ecosystem, PublishedVersionInput } from "../../store/input-records.ts";
import type { PackageAdvisory, PackageFacts } from "../../store/package-facts.ts";
import {
  compareParsedMavenVersions,
  isParsedMavenPrerelease,
  mavenMajorMinor,
  parseMavenVersion,
} from "./maven-version.ts";
import {
  compareParsedNpmVersions,
  isParsedNpmPrerelease,
  npmMajorMinor,
  parseNpmVersion,
} from "./npm-version.ts";

export type { AffectedRange, Ecosystem } from "../../store/input-records.ts";
export type { PackageAdvisory, PackageFacts, VersionFacts } from "../../store/package-facts.ts";
export type PublishedVersion = PublishedVersionInput;

/** String-level operations of one ecosystem; parsed forms are memoised for the lifetime of the object. */
interface VersionOps {
  compare(a: string, b: string): number;
  isPrerelease(v: string): boolean;
  majorMinor(v: string): readonly [bigint, bigint];
  /** false for strings the ecosystem cannot parse (npm only): never recommended as an upgrade target. */
  isValid(v: string): boolean;
}

interface Scheme<K> {
  parse(v: string): K;
  compare(a: K, b: K): number;
  isPrerelease(v: K): boolean;
  majorMinor(v: K): readonly [bigint, bigint];
  isValid(v: K): boolean;
}

function memoised<K>(scheme: Scheme<K>): VersionOps {
  const cache = new Map<string, K>();
  const get = (v: string): K => {
    let parsed = cache.get(v);
    if (parsed === undefined) {
      parsed = scheme.parse(v);
      cache.set(v, parsed);
    }
    return parsed;
  };
  return {
    compare: (a, b) => scheme.compare(get(a), get(b)),
    isPrerelease: (v) => scheme.isPrerelease(get(v)),
    majorMinor: (v) => scheme.majorMinor(get(v)),
    isValid: (v) => scheme.isValid(get(v)),
  };
}

function opsFor(ecosystem: Ecosystem): VersionOps {
  switch (ecosystem) {
    case "maven":
      return memoised({
        parse: parseMavenVersion,
        compare: compareParsedMavenVersions,
        isPrerelease: isParsedMavenPrerelease,
        majorMinor: mavenMajorMinor,
        isValid: () => true, // Maven orders any string
      });
    case "npm":
      return memoised({
        parse: parseNpmVersion,
        compare: compareParsedNpmVersions,
        isPrerelease: isParsedNpmPrerelease,
        majorMinor: npmMajorMinor,
        isValid: (v) => v.semver !== null,
      });
  }
}

export function compareVersions(ecosystem: Ecosystem, a: string, b: string): number {
  return opsFor(ecosystem).compare(a, b);
}

export function isPrerelease(ecosystem: Ecosystem, v: string): boolean {
  return opsFor(ecosystem).isPrerelease(v);
}

/** null, undefined and blank all mean "event not given". */
const given = (v: string | null | undefined): string | null => (v == null || v.trim() === "" ? null : v);

function inRange(ops: VersionOps, version: string, range: AffectedRange): boolean {
  const listed = given(range.version);
  if (listed !== null) return version === listed;
  const limit = given(range.limit);
  if (limit !== null && ops.compare(version, limit) >= 0) return false;
  const introduced = given(range.introduced);
  // "0" is OSV's "since the beginning"; compared literally it would be invalid for npm.
  if (introduced !== null && introduced !== "0" && ops.compare(version, introduced) < 0) return false;
  const fixed = given(range.fixed);
  const lastAffected = given(range.lastAffected);
  if (fixed === null && lastAffected === null) return true;
  return (
    (fixed !== null && ops.compare(version, fixed) < 0) ||
    (lastAffected !== null && ops.compare(version, lastAffected) <= 0)
  );
}

function affects(ops: VersionOps, version: string, ranges: readonly AffectedRange[]): boolean {
  return ranges.some((range) => inRange(ops, version, range));
}

/**
 * Affected when one range matches: v is the listed version, or introduced <= v, v < limit (when given) and
 * (v < fixed, or v <= lastAffected, or neither given). Should a range carry both fixed and lastAffected,
 * satisfying either upper bound is enough.
 */
export function isAffected(ecosystem: Ecosystem, version: string, ranges: readonly AffectedRange[]): boolean {
  return affects(opsFor(ecosystem), version, ranges);
}

interface Entry {
  version: string;
  releasedAt: string | null;
  published: boolean;
}

const timeOf = (iso: string | null): number | null => {
  const t = iso === null ? Number.NaN : Date.parse(iso);
  return Number.isNaN(t) ? null : t;
};

const earlier = (a: string | null, b: string | null): string | null => {
  const ta = timeOf(a);
  const tb = timeOf(b);
  if (tb === null) return a;
  return ta === null || tb < ta ? b : a;
};

/**
 * Sorted, deduplicated versions. Versions comparing equal (Maven 1.0 / 1.0.0) collapse into one entry that
 * keeps the first published spelling (extras only when nothing published matches) and the earliest known
 * release date; it counts as published if any of its spellings is.
 */
function collectVersions(
  ops: VersionOps,
  published: readonly PublishedVersion[],
  extraVersions: readonly string[],
): Entry[] {
  const all: Entry[] = [
    ...published.map((p) => ({ version: p.version, releasedAt: p.releasedAt ?? null, published: true })),
    ...extraVersions.map((version) => ({ version, releasedAt: null, published: false })),
  ];
  // Stable sort: among equal versions, published ones (listed first) lead their group.
  all.sort((a, b) => ops.compare(a.version, b.version));
  const merged: Entry[] = [];
  for (const entry of all) {
    const last = merged.at(-1);
    if (last === undefined || ops.compare(last.version, entry.version) !== 0) {
      merged.push({ ...entry });
    } else if (entry.published) {
      last.published = true;
      last.releasedAt = earlier(last.releasedAt, entry.releasedAt);
    }
  }
  return merged;
}

/** A version that is a date, maybe with a time: 20041127.091804, 20030203.000550, 20050101. */
const DATE_STAMP = /^(19|20)\d\d(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])([.-]\d+)?$/;
const isDateStamp = (version: string): boolean => DATE_STAMP.test(version);

const MS_PER_YEAR = 365.25 * 24 * 60 * 60 * 1000;

/** Dated published releases / years between first and last release (at least 1 year), rounded. */
function releasesPerYear(entries: readonly Entry[]): number | null {
  const times = entries
    .filter((e) => e.published)
    .map((e) => timeOf(e.releasedAt))
    .filter((t): t is number => t !== null);
  if (times.length === 0) return null;
  // reduce, not Math.max(...times): spreading thousands of arguments can overflow the stack.
  const first = times.reduce((a, b) => Math.min(a, b));
  const last = times.reduce((a, b) => Math.max(a, b));
  const years = Math.max((last - first) / MS_PER_YEAR, 1);
  return Math.round(times.length / years);
}

/**
 * Smallest candidate above `index`, preferring the same major.minor, then the same major, then anything.
 * `candidates` are indexes into the ascending list, so "above" is simply a larger index. Both orderings keep
 * a major.minor contiguous, so the tiers rarely change the pick; they stay explicit as the product rule.
 */
function saferClosest(
  ops: VersionOps,
  entries: readonly Entry[],
  candidates: readonly number[],
  index: number,
): string | null {
  const greater = candidates.filter((c) => c > index).map((c) => (entries[c] as Entry).version);
  const [major, minor] = ops.majorMinor((entries[index] as Entry).version);
  const sameMinor = greater.find((v) => {
    const [ma, mi] = ops.majorMinor(v);
    return ma === major && mi === minor;
  });
  const sameMajor = greater.find((v) => ops.majorMinor(v)[0] === major);
  return sameMinor ?? sameMajor ?? greater[0] ?? null;
}

/**
 * Product rules:
 * - `versions`: published plus `extraVersions` (versions in use, maybe unpublished: releasedAt null, never a
 *   release nor an upgrade candidate), ascending, deduplicated by version equality.
 * - `affectedBy`: sorted ids of the advisories whose ranges affect the version.
 * - candidates: published, non-prerelease, parseable versions affected by no advisory; for Maven, not a
 *   date-stamped version (20041127.091804) while numbered ones qualify, unless the version in use is one.
 * - `safestVersion`: the newest candidate, or null.
 * - `saferClosestVersion`: the version itself when unaffected; otherwise the smallest greater candidate in
 *   the first non-empty tier (same major.minor, same major, any); null when none, never invented.
 * - `releasesPerYear`: see `releasesPerYear`; null when no release date is known.
 */
export function computePackageFacts(
  ecosystem: Ecosystem,
  published: readonly PublishedVersion[],
  advisories: readonly PackageAdvisory[],
  extraVersions: readonly string[] = [],
): PackageFacts {
  const ops = opsFor(ecosystem);
  const entries = collectVersions(ops, published, extraVersions);
  const affectedBy = entries.map((e) =>
    [...new Set(advisories.filter((a) => affects(ops, e.version, a.ranges)).map((a) => a.id))].sort(),
  );
  const candidates: number[] = [];
  entries.forEach((e, i) => {
    if (
      e.published &&
      affectedBy[i]?.length === 0 &&
      !ops.isPrerelease(e.version) &&
      ops.isValid(e.version)
    ) {
      candidates.push(i);
    }
  });
  // A date-stamped Maven version (commons-codec 20041127.091804, commons-io 20030203.000550: builds of
  // 2003-2004 published as releases) outranks every numbered release in Maven's order, so
  // versions-maven-plugin suggests it as the latest; nobody means it as an upgrade. While numbered
  // candidates exist it is none, except for a version that is itself date-stamped.
  const numbered =
    ecosystem === "maven"
      ? candidates.filter((i) => !isDateStamp((entries[i] as Entry).version))
      : candidates;
  const upgrades = numbered.length > 0 ? numbered : candidates;
  const newest = upgrades.at(-1);

  return {
    releasesPerYear: releasesPerYear(entries),
    safestVersion: newest === undefined ? null : (entries[newest] as Entry).version,
    versions: entries.map((e, i) => {
      const ids = affectedBy[i] ?? [];
      return {
        version: e.version,
        rank: i,
        releasedAt: e.releasedAt,
        prerelease: ops.isPrerelease(e.version),
        affectedBy: ids,
        saferClosestVersion:
          ids.length === 0
            ? e.version
            : saferClosest(ops, entries, isDateStamp(e.version) ? candidates : upgrades, i),
      };
    }),
  };
}
