import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.ts";
import { liveAt } from "./sql-helpers.ts";

/** The application's latest analysis date, or undefined when it has none (or does not exist). */
export async function latestAnalysisAt(
  db: Kysely<Database>,
  application: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("analyses as a")
    .innerJoin("applications as app", "app.id", "a.application_id")
    .select("a.analyzed_at")
    .where("app.name", "=", application)
    .orderBy("a.seq", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.analyzed_at;
}

/** Packages of analysis `seq` whose version at least one known vulnerability affects. */
export async function countVulnerablePackages(
  db: Kysely<Database>,
  application: string,
  seq: number,
): Promise<number> {
  const row = await db
    .selectFrom("application_packages as ap")
    .innerJoin("applications as app", "app.id", "ap.application_id")
    .select(sql<number>`count(*)`.as("count"))
    .where("app.name", "=", application)
    .where(liveAt("ap", seq))
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom("version_vulnerabilities as vv")
          .select("vv.vulnerability_id")
          .whereRef("vv.package_version_id", "=", "ap.package_version_id"),
      ),
    )
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
