import { type Kysely, sql } from "kysely";
import { vulnerabilitiesOfVersions } from "./packages.ts";
import type { Database } from "./schema.ts";
import { liveAt } from "./sql-helpers.ts";

type Db = Kysely<Database>;

export interface PackageChange {
  name: string;
  version: string;
}

export interface VulnerablePackageChange extends PackageChange {
  vulnerabilities: string[];
}

export interface ReferenceChange {
  source: { fullName: string; id: string };
  target: { fullName: string; id: string; package: string };
}

export interface Changes<T> {
  added: T[];
  removed: T[];
}

export interface Comparison {
  packages: Changes<PackageChange>;
  references: Changes<ReferenceChange>;
  vulnerablePackages: Changes<VulnerablePackageChange>;
}

/**
 * What changed from analysis `fromSeq` to analysis `toSeq`, read from the validity intervals: a row
 * valid in one analysis and not in the other is a candidate, kept when no row of the same identity
 * (package version; source and target object) is valid in the other analysis.
 */
export async function compareAnalyses(
  db: Db,
  applicationId: number,
  fromSeq: number,
  toSeq: number,
): Promise<Comparison> {
  const added = await packagesOnlyIn(db, applicationId, toSeq, fromSeq);
  const removed = await packagesOnlyIn(db, applicationId, fromSeq, toSeq);
  const vulnerabilities = await vulnerabilitiesOfVersions(db, [
    ...added.map((p) => p.versionId),
    ...removed.map((p) => p.versionId),
  ]);
  const vulnerable = (list: typeof added) =>
    list
      .filter((p) => vulnerabilities.has(p.versionId))
      .map((p) => ({
        name: p.name,
        version: p.version,
        vulnerabilities: (vulnerabilities.get(p.versionId) ?? []).map((v) => v.cve),
      }));
  const plain = (list: typeof added) => list.map((p) => ({ name: p.name, version: p.version }));
  return {
    packages: { added: plain(added), removed: plain(removed) },
    references: {
      added: await referencesOnlyIn(db, applicationId, toSeq, fromSeq),
      removed: await referencesOnlyIn(db, applicationId, fromSeq, toSeq),
    },
    vulnerablePackages: { added: vulnerable(added), removed: vulnerable(removed) },
  };
}

/** Package versions used in analysis `inSeq` and not in `notSeq`, ordered by name then version. */
async function packagesOnlyIn(db: Db, applicationId: number, inSeq: number, notSeq: number) {
  if (inSeq === notSeq) return [];
  const rows = await db
    .selectFrom("application_packages as ap")
    .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
    .innerJoin("packages as p", "p.id", "pv.package_id")
    .select(["pv.id as version_id", "p.name", "pv.version"])
    .where("ap.application_id", "=", applicationId)
    .where(liveAt("ap", inSeq))
    .where(sql<boolean>`not (${liveAt("ap", notSeq)})`)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("application_packages as other")
            .select(sql`1`.as("one"))
            .where("other.application_id", "=", applicationId)
            .whereRef("other.package_version_id", "=", "ap.package_version_id")
            .where(liveAt("other", notSeq)),
        ),
      ),
    )
    .orderBy("p.name")
    .orderBy("p.ecosystem")
    .orderBy("pv.rank")
    .orderBy("pv.version")
    .execute();
  return rows.map((r) => ({ versionId: r.version_id, name: r.name, version: r.version }));
}

/**
 * References valid in analysis `inSeq` with no reference between the same source and target objects
 * (same ids, full names and package) valid in `notSeq`; ordered by target then source.
 */
async function referencesOnlyIn(
  db: Db,
  applicationId: number,
  inSeq: number,
  notSeq: number,
): Promise<ReferenceChange[]> {
  if (inSeq === notSeq) return [];
  const rows = await db
    .selectFrom("object_references as r")
    .innerJoin("application_objects as s", "s.id", "r.source_id")
    .innerJoin("external_objects as t", "t.id", "r.target_id")
    .innerJoin("packages as p", "p.id", "t.package_id")
    .select([
      "s.object_id as source_id",
      "s.full_name as source_full_name",
      "t.object_id as target_id",
      "t.full_name as target_full_name",
      "p.name as package_name",
    ])
    .distinct()
    .where("r.application_id", "=", applicationId)
    .where(liveAt("r", inSeq))
    .where(sql<boolean>`not (${liveAt("r", notSeq)})`)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("object_references as r2")
            .innerJoin("application_objects as s2", "s2.id", "r2.source_id")
            .innerJoin("external_objects as t2", "t2.id", "r2.target_id")
            .select(sql`1`.as("one"))
            .where("r2.application_id", "=", applicationId)
            .where(liveAt("r2", notSeq))
            .whereRef("s2.object_id", "=", "s.object_id")
            .whereRef("s2.full_name", "=", "s.full_name")
            .whereRef("t2.object_id", "=", "t.object_id")
            .whereRef("t2.full_name", "=", "t.full_name")
            .whereRef("t2.package_id", "=", "t.package_id"),
        ),
      ),
    )
    .orderBy("t.full_name")
    .orderBy("t.object_id")
    .orderBy("s.full_name")
    .orderBy("s.object_id")
    .execute();
  return rows.map((r) => ({
    source: { fullName: r.source_full_name, id: r.source_id },
    target: { fullName: r.target_full_name, id: r.target_id, package: r.package_name },
  }));
}
