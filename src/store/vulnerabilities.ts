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

/** One affected package of an advisory, with its affected spans as the records state them. */
export interface AdvisoryPackageRow {
  ecosystem: string;
  name: string;
  ranges: {
    introduced: string | null;
    fixed: string | null;
    lastAffected: string | null;
    limit: string | null;
    version: string | null;
  }[];
}

/** What the advisory's records say beyond the vulnerability row: affected packages, references, revision. */
export async function advisoryDetail(
  db: Db,
  vulnerabilityId: number,
): Promise<{
  packages: AdvisoryPackageRow[];
  references: { type: string; url: string }[];
  records: string[];
  modifiedAt: string | null;
}> {
  const ranges = await db
    .selectFrom("vulnerability_ranges as r")
    .innerJoin("packages as p", "p.id", "r.package_id")
    .select([
      "p.ecosystem",
      "p.name",
      "r.id",
      "r.introduced",
      "r.fixed",
      "r.last_affected",
      "r.limit_version",
      "r.listed_version",
    ])
    .where("r.vulnerability_id", "=", vulnerabilityId)
    .orderBy("p.ecosystem")
    .orderBy("p.name")
    .orderBy("r.id")
    .execute();
  const packages = new Map<string, AdvisoryPackageRow>();
  for (const r of ranges) {
    const key = `${r.ecosystem}:${r.name}`;
    const entry = packages.get(key) ?? { ecosystem: r.ecosystem, name: r.name, ranges: [] };
    packages.set(key, entry);
    entry.ranges.push({
      introduced: r.introduced,
      fixed: r.fixed,
      lastAffected: r.last_affected,
      limit: r.limit_version,
      version: r.listed_version,
    });
  }
  const records = await db
    .selectFrom("advisory_records")
    .select(["id", "modified", "reference_urls"])
    .where("vulnerability_id", "=", vulnerabilityId)
    .orderBy("id")
    .execute();
  const references: { type: string; url: string }[] = [];
  const seen = new Set<string>();
  for (const record of records) {
    for (const reference of JSON.parse(record.reference_urls ?? "[]") as { type: string; url: string }[]) {
      if (seen.has(reference.url)) continue;
      seen.add(reference.url);
      references.push(reference);
    }
  }
  const modified = records.map((r) => r.modified).sort();
  return {
    packages: [...packages.values()],
    references,
    records: records.map((r) => r.id),
    modifiedAt: modified.at(-1) ?? null,
  };
}

/**
 * The newest analysis at or before `seq` in which the application used a version the vulnerability
 * affects (the occurrence read model's intervals: from_seq <= seq < to_seq), or undefined when none did.
 */
export async function lastAffectedSeq(
  db: Db,
  applicationId: number,
  vulnerabilityId: number,
  seq: number,
): Promise<number | undefined> {
  const { rows } = await sql<{ last: number | null }>`
    select max(case when to_seq - 1 < ${seq} then to_seq - 1 else ${seq} end) as last
    from cve_occurrences
    where application_id = ${applicationId} and vulnerability_id = ${vulnerabilityId} and from_seq <= ${seq}`.execute(
    db,
  );
  const last = rows[0]?.last;
  return last === null || last === undefined ? undefined : Number(last);
}

/** Package versions of the analysis at `seq` that the vulnerability affects. */
export async function countAffectedPackages(
  db: Db,
  applicationId: number,
  vulnerabilityId: number,
  seq: number,
): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(distinct package_version_id) as n from cve_occurrences
    where application_id = ${applicationId} and vulnerability_id = ${vulnerabilityId}
      and from_seq <= ${seq} and to_seq > ${seq}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
