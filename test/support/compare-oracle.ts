/**
 * The whole comparison of two analyses read from the validity intervals, without the change logs: the
 * reference the compare tests and the list benchmark check the store's pages against (it was in
 * src/store/compare.ts, which now holds only what the service runs).
 */
import type { Kysely } from "kysely";
import type { ReferenceChange } from "../../src/contracts/resources.ts";
import {
  type ComparisonPage,
  packagesOnlyInQuery,
  referenceChangeOf,
  referencesOnlyInQuery,
} from "../../src/store/compare.ts";
import { vulnerabilitiesOfVersions } from "../../src/store/packages.ts";
import type { Database } from "../../src/store/schema.ts";

type Db = Kysely<Database>;

/** Whole lists, without totals. */
export type Comparison = { [List in keyof ComparisonPage]: Pick<ComparisonPage[List], "added" | "removed"> };

interface VersionRow {
  versionId: number;
  name: string;
  version: string;
}

/** Package versions used in analysis `inSeq` and not in `notSeq`, ordered by name then version. */
async function packagesOnlyIn(
  db: Db,
  applicationId: number,
  inSeq: number,
  notSeq: number,
): Promise<VersionRow[]> {
  if (inSeq === notSeq) return [];
  const rows = await packagesOnlyInQuery(db, applicationId, inSeq, notSeq)
    .select(["pv.id as version_id", "p.name", "pv.version"])
    .orderBy("p.name")
    .orderBy("p.ecosystem")
    .orderBy("pv.rank")
    .orderBy("pv.version")
    .execute();
  return rows.map((r) => ({ versionId: r.version_id, name: r.name, version: r.version }));
}

/**
 * What changed from analysis `fromSeq` to analysis `toSeq`, every item, read from the validity
 * intervals: a row valid in one analysis and not in the other is a candidate, kept when no row of the
 * same identity (package version; source and target object) is valid in the other analysis.
 */
export async function compareFromIntervals(
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
  const references = async (inSeq: number, notSeq: number): Promise<ReferenceChange[]> => {
    if (inSeq === notSeq) return [];
    const rows = await referencesOnlyInQuery(db, applicationId, inSeq, notSeq)
      .orderBy("target_full_name")
      .orderBy("target_object_id")
      .orderBy("source_full_name")
      .orderBy("source_object_id")
      .orderBy("package_version_id")
      .execute();
    return rows.map(referenceChangeOf);
  };
  return {
    packages: { added: plain(added), removed: plain(removed) },
    references: {
      added: await references(toSeq, fromSeq),
      removed: await references(fromSeq, toSeq),
    },
    vulnerablePackages: { added: vulnerable(added), removed: vulnerable(removed) },
  };
}
