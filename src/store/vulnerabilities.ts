/** Vulnerabilities: lookup by CVE id or alias, and the severity order. */
import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.ts";

export interface VulnerabilityRow {
  id: number;
  cveId: string;
  aliases: string[];
  severity: string;
  cvssScore: number | null;
  summary: string;
  publishedAt: string | null;
}

/** The SQL order of `v.severity`, most severe highest (the list operations sort by it). */
export const severitySqlRank = sql<number>`case v.severity when 'CRITICAL' then 4 when 'HIGH' then 3 when 'MEDIUM' then 2 when 'LOW' then 1 else 0 end`;

type Db = Kysely<Database>;

/** Finds a vulnerability by CVE id or by one of its aliases (GHSA, OSV ids). */
export async function findVulnerability(db: Db, idOrAlias: string): Promise<VulnerabilityRow | undefined> {
  const key = idOrAlias.toUpperCase().startsWith("CVE-") ? idOrAlias.toUpperCase() : idOrAlias;
  let row = await db.selectFrom("vulnerabilities").selectAll().where("cve_id", "=", key).executeTakeFirst();
  if (!row) {
    row = await db
      .selectFrom("vulnerability_aliases as va")
      .innerJoin("vulnerabilities as v", "v.id", "va.vulnerability_id")
      .selectAll("v")
      .where(sql<boolean>`lower(va.alias) = ${idOrAlias.toLowerCase()}`)
      .executeTakeFirst();
  }
  if (!row) return undefined;
  const aliases = await db
    .selectFrom("vulnerability_aliases")
    .select("alias")
    .where("vulnerability_id", "=", row.id)
    .orderBy("alias")
    .execute();
  return {
    id: row.id,
    cveId: row.cve_id,
    aliases: aliases.map((a) => a.alias),
    severity: row.severity,
    cvssScore: row.cvss_score,
    summary: row.summary,
    publishedAt: row.published_at,
  };
}
