/** What a scan produces and the store ingests: the contract between scanner and store. */
import type { PackageScope, ReleaseDateSource } from "../contracts/platform.ts";

export type Ecosystem = "npm" | "maven";

/**
 * One span of affected versions, in OSV's terms: from `introduced` ("0" or missing: from the beginning)
 * up to below `fixed`, or up to and including `lastAffected` (neither: no upper bound), and below `limit`
 * when one is given. `version` instead names one explicitly listed affected version (OSV `versions`),
 * matched by exact string as OSV's evaluation does; the other fields are then ignored.
 * An OSV range with several events becomes several spans (see src/domain/versions/osv-range.ts).
 */
export interface AffectedRange {
  introduced?: string | null;
  fixed?: string | null;
  lastAffected?: string | null;
  limit?: string | null;
  version?: string | null;
}

export interface PackageRef {
  ecosystem: Ecosystem;
  /** npm name as published; Maven `groupId:artifactId`. */
  name: string;
  version: string;
  /** The version's scope in the application; absent or null: the input did not say (read as unknown). */
  scope?: PackageScope | null | undefined;
}

/** A package version of an analysis. */
export interface AnalysisPackage extends PackageRef {
  /** The inputs it was read from (lockfiles, POMs, archives, SBOMs), relative to the scanned path. */
  sources?: string[] | undefined;
}

export interface ExternalObjectInput {
  id: string;
  /** `<ecosystem>:<name>` of the package the object belongs to. */
  package: string;
  /**
   * The version of that package the referring code loads (one of the analysis's versions of it). Absent:
   * the analysis's only version of the package, or the one an npm id names (objectVersions.ts).
   */
  version?: string | undefined;
  name: string;
  fullName: string;
  mangling: string;
  type: string;
  typeId: string;
}

export interface ApplicationObjectInput {
  id: string;
  name: string;
  fullName: string;
  type: string;
  typeId: string;
}

export interface ReferenceInput {
  from: ApplicationObjectInput;
  /** id of an external object of the same analysis. */
  to: string;
}

export interface AnalysisInput {
  analyzedAt: string;
  packages: AnalysisPackage[];
  objects: ExternalObjectInput[];
  references: ReferenceInput[];
}

export interface PublishedVersionInput {
  version: string;
  releasedAt: string | null;
  /** Where releasedAt comes from (null or absent: not recorded). */
  releasedAtSource?: ReleaseDateSource | null | undefined;
}

export interface AdvisoryInput {
  id: string;
  aliases: string[];
  severity: string;
  cvssScore: number | null;
  summary: string;
  publishedAt: string | null;
  /** The record's references (OSV `references`: advisory pages, fixes, reports), as it lists them. */
  references?: AdvisoryReference[];
  affected: {
    ecosystem: Ecosystem;
    package: string;
    ranges: AffectedRange[];
    /** Functions the advisory names as vulnerable (OSV `affected_functions`), as written in the record. */
    functions?: string[];
  }[];
}

export interface AdvisoryReference {
  /** OSV reference type: ADVISORY, FIX, REPORT, WEB, PACKAGE, ARTICLE, ... */
  type: string;
  url: string;
}

/** One OSV record as `imaging advisories import` reads it (see scanner/advisories/osv-record.ts). */
export interface OsvRecordInput {
  /** The record's own id (GHSA-..., MAL-..., CVE-...). */
  osvId: string;
  /** Its revision, ISO 8601 UTC: a newer one replaces the stored record, an older or equal one does not. */
  modified: string;
  /** Withdrawn records remove what the record brought. */
  withdrawn: boolean;
  /** `id` is the record's CVE when it names one, else its own id; `affected` holds npm and Maven only. */
  advisory: AdvisoryInput;
}

export function packageKey(ecosystem: string, name: string): string {
  return `${ecosystem}:${name}`;
}

/** Splits `<ecosystem>:<name>`; Maven names contain a colon themselves, so split on the first. */
export function parsePackageKey(key: string): { ecosystem: Ecosystem; name: string } {
  const colon = key.indexOf(":");
  const ecosystem = key.slice(0, colon);
  if (colon < 0 || (ecosystem !== "npm" && ecosystem !== "maven")) {
    throw new Error(`package "${key}" must be written <npm|maven>:<name>`);
  }
  return { ecosystem, name: key.slice(colon + 1) };
}
