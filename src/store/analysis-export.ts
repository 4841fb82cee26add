/**
 * Everything an SBOM export needs of one analysis, read in a few bulk queries: the package versions in
 * use with their facts, the advisories affecting them (with the functions they name), and the
 * references from application objects to the packages' external objects.
 */
import type { Kysely } from "kysely";
import { chunks } from "./batch.ts";
import { interactionOf, REFERENCE_COLUMNS, sourcesOfVersions } from "./packages.ts";
import type { Database } from "./schema.ts";
import { liveAt } from "./sql-helpers.ts";
import type { VulnerabilityRow } from "./vulnerabilities.ts";

export interface ExportedPackage {
  packageId: number;
  versionId: number;
  ecosystem: "npm" | "maven";
  name: string;
  version: string;
  /** Its scope in the application (null: unknown). */
  scope: string | null;
  releasedAt: string | null;
  releasedAtSource: string | null;
  saferClosestVersion: string | null;
  safestVersion: string | null;
  /** The inputs (lockfiles, POMs, archives, SBOMs) the version was read from. */
  sources: string[];
}

interface ExportedVulnerability extends VulnerabilityRow {
  /** Package version ids of the analysis it affects. */
  versionIds: number[];
  /** Functions it names, per package id: the function as written and its member path. */
  functions: Map<number, { function: string; member: string }[]>;
}

export interface ExportedReference {
  packageId: number;
  /** The package version the target belongs to (the one the referring code loads). */
  versionId: number;
  source: { id: string; name: string; fullName: string; type: string; typeId: string };
  target: { id: string; name: string; fullName: string; mangling: string; type: string; typeId: string };
}

export interface AnalysisExport {
  packages: ExportedPackage[];
  vulnerabilities: ExportedVulnerability[];
  references: ExportedReference[];
}

export async function readAnalysisExport(
  db: Kysely<Database>,
  applicationId: number,
  seq: number,
): Promise<AnalysisExport> {
  const tdb = db;
  const packages = await db
    .selectFrom("application_packages as ap")
    .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
    .innerJoin("packages as p", "p.id", "pv.package_id")
    .select([
      "p.id as package_id",
      "pv.id as version_id",
      "p.ecosystem",
      "p.name",
      "pv.version",
      "ap.scope",
      "pv.released_at",
      "pv.released_at_source",
      "pv.safer_closest_version",
      "p.safest_version",
    ])
    .where("ap.application_id", "=", applicationId)
    .where(liveAt("ap", seq))
    .orderBy("p.ecosystem")
    .orderBy("p.name")
    .orderBy("pv.rank")
    .orderBy("pv.version")
    .execute();

  const affecting = new Map<number, number[]>();
  for (const batch of chunks(
    packages.map((p) => p.version_id),
    400,
  )) {
    const rows = await db
      .selectFrom("version_vulnerabilities")
      .select(["vulnerability_id", "package_version_id"])
      .where("package_version_id", "in", batch)
      .execute();
    for (const r of rows)
      affecting.set(r.vulnerability_id, [...(affecting.get(r.vulnerability_id) ?? []), r.package_version_id]);
  }
  const vulnerabilities: ExportedVulnerability[] = [];
  for (const batch of chunks([...affecting.keys()], 400)) {
    const rows = await db.selectFrom("vulnerabilities").selectAll().where("id", "in", batch).execute();
    const aliases = await db
      .selectFrom("vulnerability_aliases")
      .select(["vulnerability_id", "alias"])
      .where("vulnerability_id", "in", batch)
      .orderBy("alias")
      .execute();
    const functions = await tdb
      .selectFrom("affected_functions")
      .select(["vulnerability_id", "package_id", "function", "member"])
      .distinct()
      .where("vulnerability_id", "in", batch)
      .orderBy("function")
      .execute();
    for (const r of rows) {
      const named = new Map<number, { function: string; member: string }[]>();
      for (const f of functions.filter((f) => f.vulnerability_id === r.id)) {
        named.set(f.package_id, [
          ...(named.get(f.package_id) ?? []),
          { function: f.function, member: f.member },
        ]);
      }
      vulnerabilities.push({
        id: r.id,
        cveId: r.cve_id,
        aliases: aliases.filter((a) => a.vulnerability_id === r.id).map((a) => a.alias),
        severity: r.severity,
        cvssScore: r.cvss_score,
        summary: r.summary,
        publishedAt: r.published_at,
        versionIds: affecting.get(r.id) ?? [],
        functions: named,
      });
    }
  }
  vulnerabilities.sort((a, b) => (a.cveId < b.cveId ? -1 : a.cveId > b.cveId ? 1 : 0));

  const references = await db
    .selectFrom("object_references as r")
    .innerJoin("external_objects as t", "t.id", "r.target_id")
    .innerJoin("application_objects as s", "s.id", "r.source_id")
    .innerJoin("package_versions as tv", "tv.id", "t.package_version_id")
    .select(["t.package_id", "t.package_version_id", ...REFERENCE_COLUMNS])
    .where("r.application_id", "=", applicationId)
    .where(liveAt("r", seq))
    .where(liveAt("t", seq))
    .orderBy("t.package_id")
    .orderBy("t.package_version_id")
    .orderBy("t.full_name")
    .orderBy("t.object_id")
    .orderBy("s.full_name")
    .orderBy("s.object_id")
    .execute();

  const sources = await sourcesOfVersions(
    db,
    applicationId,
    seq,
    packages.map((p) => p.version_id),
  );
  return {
    packages: packages.map((p) => ({
      packageId: p.package_id,
      versionId: p.version_id,
      ecosystem: p.ecosystem as "npm" | "maven",
      name: p.name,
      version: p.version,
      scope: p.scope,
      releasedAt: p.released_at,
      releasedAtSource: p.released_at_source,
      saferClosestVersion: p.safer_closest_version,
      safestVersion: p.safest_version,
      sources: sources.get(p.version_id) ?? [],
    })),
    vulnerabilities,
    references: references.map((r) => ({
      packageId: r.package_id,
      versionId: r.package_version_id,
      ...interactionOf(r),
    })),
  };
}
