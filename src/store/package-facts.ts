/**
 * The facts the store keeps per package and version, and the rule that derives them. The rule itself is
 * domain logic (src/domain/package-facts.ts): the store is handed it by its callers and applies it when
 * the versions or advisories of a package change, so the facts stay consistent inside the same transaction.
 */
import type { AffectedRange, Ecosystem, PublishedVersionInput } from "./input-records.ts";

export interface PackageAdvisory {
  id: string;
  ranges: readonly AffectedRange[];
}
export interface VersionFacts {
  version: string;
  rank: number;
  releasedAt: string | null;
  prerelease: boolean;
  affectedBy: string[];
  saferClosestVersion: string | null;
}
export interface PackageFacts {
  releasesPerYear: number | null;
  safestVersion: string | null;
  /** ascending order, rank = 0..n-1 */
  versions: VersionFacts[];
}

export interface PackageFactsRule {
  /** Facts of one package from its published versions, the advisories' ranges and versions in use. */
  compute(
    ecosystem: Ecosystem,
    published: readonly PublishedVersionInput[],
    advisories: readonly PackageAdvisory[],
    extraVersions: readonly string[],
  ): PackageFacts;
  /** Version order of the ecosystem: negative, zero (equal, e.g. 1.0 and 1.0.0) or positive. */
  compare(ecosystem: Ecosystem, a: string, b: string): number;
}
