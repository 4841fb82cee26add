import { type Kysely, sql } from "kysely";
import type { Database } from "../../src/store/schema.ts";
import { containsIgnoringCase, liveAt } from "../../src/store/sql-helpers.ts";

/**
 * The packages page as the store listed it before migration 016: every package of the analysis joined
 * and sorted by the package's own name and ecosystem. The tests and the benchmark compare listPackages
 * with it; the benchmark adds the same lookup of the versions' CVEs (vulnerabilitiesOfVersions).
 */
export async function packagePageByJoins(
  db: Kysely<Database>,
  query: {
    applicationId: number;
    seq: number;
    limit: number;
    skip: number;
    vulnerable?: boolean | undefined;
    q?: string | undefined;
  },
): Promise<{ name: string; ecosystem: string; version: string; versionId: number }[]> {
  let select = db
    .selectFrom("application_packages as ap")
    .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
    .innerJoin("packages as p", "p.id", "pv.package_id")
    .select(["p.ecosystem", "p.name", "pv.version", "pv.id as versionId"])
    .where("ap.application_id", "=", query.applicationId)
    .where(liveAt("ap", query.seq))
    .orderBy("p.name")
    .orderBy("p.ecosystem")
    .orderBy("pv.rank")
    .orderBy("pv.version")
    .limit(query.limit)
    .offset(query.skip);
  if (query.vulnerable !== undefined) {
    const wanted = query.vulnerable;
    select = select.where((eb) => {
      const affected = eb.exists(
        eb
          .selectFrom("version_vulnerabilities as vv")
          .select(sql`1`.as("one"))
          .whereRef("vv.package_version_id", "=", "pv.id"),
      );
      return wanted ? affected : eb.not(affected);
    });
  }
  if (query.q) select = select.where(containsIgnoringCase("p.name", query.q));
  return select.execute();
}
