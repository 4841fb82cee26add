/**
 * The occurrences page in one hand-written SQL statement on the interval tables alone (no read model):
 * the page of affected packages in page order, each with its referred objects aggregated to JSON by the
 * database. The benchmark's baseline (the best single query on the schema before migration 012) and the
 * tests' oracle for the read model: both must give the same answers.
 */

import { type Kysely, SqliteAdapter, sql } from "kysely";
import type { Severity } from "../../src/contracts/platform.ts";
import {
  type CveInsight,
  type CvePackageRecord,
  type ExternalObjectRecord,
  releaseDateOf,
  scopeOf,
  toUtcSeconds,
} from "../../src/store/insights.ts";
import type { Database } from "../../src/store/schema.ts";
import { liveAt, referredAt } from "../../src/store/sql-helpers.ts";
import { severitySqlRank } from "../../src/store/vulnerabilities.ts";

export async function occurrencesBySingleQuery(
  db: Kysely<Database>,
  query: { applicationId: number; seq: number; vulnerabilityId: number; limit: number; skip: number },
): Promise<CvePackageRecord[]> {
  const { applicationId: app, seq } = query;
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const fields = sqlite
    ? sql`json_object('fullName', eo.full_name, 'id', eo.object_id, 'mangling', eo.mangling, 'name', eo.name, 'type', eo.type, 'typeId', eo.type_id)`
    : sql`json_build_object('fullName', eo.full_name, 'id', eo.object_id, 'mangling', eo.mangling, 'name', eo.name, 'type', eo.type, 'typeId', eo.type_id)`;
  const aggregate = sqlite
    ? sql`json_group_array(${fields} order by eo.full_name, eo.object_id)`
    : sql`coalesce(json_agg(${fields} order by eo.full_name, eo.object_id), '[]')::text`;
  const { rows } = await sql<{
    name: string;
    version: string;
    scope: string | null;
    released_at: string | null;
    released_at_source: string | null;
    releases_per_year: number | null;
    safer_closest_version: string | null;
    safest_version: string | null;
    objects: string;
  }>`with page as (
      select p.id as package_id, p.name, pv.version, pv.rank, pv.id as version_id, ap.scope, pv.released_at,
        pv.released_at_source, p.releases_per_year, pv.safer_closest_version, p.safest_version
      from version_vulnerabilities vv
      join application_packages ap on ap.package_version_id = vv.package_version_id
      join package_versions pv on pv.id = vv.package_version_id
      join packages p on p.id = pv.package_id
      where vv.vulnerability_id = ${query.vulnerabilityId} and ap.application_id = ${app}
        and ap.from_seq <= ${seq} and ap.to_seq > ${seq}
      order by p.name, pv.rank, pv.version, pv.id
      limit ${query.limit} offset ${query.skip})
    select page.name, page.version, page.scope, page.released_at, page.released_at_source,
      page.releases_per_year, page.safer_closest_version, page.safest_version,
      (select ${aggregate} from external_objects eo
        where eo.application_id = ${app} and eo.package_version_id = page.version_id
          and eo.from_seq <= ${seq} and eo.to_seq > ${seq}
          and exists (select 1 from object_references r where r.target_id = eo.id
            and r.from_seq <= ${seq} and r.to_seq > ${seq})) as objects
    from page
    order by page.name, page.rank, page.version, page.version_id`.execute(db);
  return rows.map((r) => ({
    name: r.name,
    objects: JSON.parse(r.objects) as ExternalObjectRecord[],
    releaseDate: releaseDateOf(r.released_at, r.released_at_source),
    releasesPerYear: r.releases_per_year,
    saferClosestVersion: r.safer_closest_version,
    safestVersion: r.safest_version,
    scope: scopeOf(r.scope),
    version: r.version,
  }));
}

/** listCveInsights on the interval tables alone (before migration 012): the oracle of the read model. */
export async function cveInsightsByJoins(
  db: Kysely<Database>,
  query: { applicationId: number; seq: number; limit: number; skip: number; severities?: readonly string[] },
): Promise<CveInsight[]> {
  const { applicationId, seq } = query;
  let select = db
    .selectFrom("application_packages as ap")
    .innerJoin("version_vulnerabilities as vv", "vv.package_version_id", "ap.package_version_id")
    .innerJoin("vulnerabilities as v", "v.id", "vv.vulnerability_id")
    .select((eb) => [
      "v.id",
      "v.cve_id",
      "v.severity",
      "v.cvss_score",
      "v.summary",
      eb.fn.count<number>("ap.package_version_id").distinct().as("affected"),
    ])
    .where("ap.application_id", "=", applicationId)
    .where(liveAt("ap", seq))
    .groupBy(["v.id", "v.cve_id", "v.severity", "v.cvss_score", "v.summary"])
    .orderBy(severitySqlRank, "desc")
    .orderBy(sql`coalesce(v.cvss_score, -1)`, "desc")
    .orderBy("v.cve_id")
    .limit(query.limit)
    .offset(query.skip);
  if (query.severities && query.severities.length > 0)
    select = select.where("v.severity", "in", query.severities);
  const rows = await select.execute();
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);

  const counts = await db
    .selectFrom("application_packages as ap")
    .innerJoin("version_vulnerabilities as vv", "vv.package_version_id", "ap.package_version_id")
    .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
    .innerJoin("external_objects as eo", (join) =>
      join.onRef("eo.application_id", "=", "ap.application_id").onRef("eo.package_version_id", "=", "pv.id"),
    )
    .select((eb) => ["vv.vulnerability_id", eb.fn.count<number>("eo.id").distinct().as("objects")])
    .where("ap.application_id", "=", applicationId)
    .where(liveAt("ap", seq))
    .where(liveAt("eo", seq))
    .where("vv.vulnerability_id", "in", ids)
    .where(referredAt("eo", seq))
    .groupBy("vv.vulnerability_id")
    .execute();
  const objectCounts = new Map(counts.map((c) => [c.vulnerability_id, Number(c.objects)]));
  const aliases = await db
    .selectFrom("vulnerability_aliases")
    .select(["vulnerability_id", "alias"])
    .where("vulnerability_id", "in", ids)
    .orderBy("alias")
    .execute();
  return rows.map((r) => ({
    affectedPackageCount: Number(r.affected),
    aliases: aliases.filter((a) => a.vulnerability_id === r.id).map((a) => a.alias),
    id: r.cve_id,
    referringObjectCount: objectCounts.get(r.id) ?? 0,
    score: r.cvss_score,
    severity: r.severity as Severity,
    summary: r.summary,
  }));
}

/**
 * The occurrences page as migration 012 read it on both stores, and SQLite still does: the page of
 * cve_occurrences with its facts, then the page's objects from occurrence_objects, one aggregated string
 * per package (two statements). The benchmark's comparison for migration 015's lists on PostgreSQL; the
 * JSON text is what listOccurrencesJson writes.
 */
export async function occurrencesByObjectRowsJson(
  db: Kysely<Database>,
  query: { applicationId: number; seq: number; vulnerabilityId: number; limit: number; skip: number },
): Promise<string> {
  const { applicationId: app, seq } = query;
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const { rows: packages } = await sql<{
    package_version_id: number;
    package_name: string;
    version: string;
    scope: string | null;
    released_at: string | null;
    released_at_source: string | null;
    releases_per_year: number | null;
    safer_closest_version: string | null;
    safest_version: string | null;
  }>`select co.package_version_id, co.package_name, co.version, co.scope, pv.released_at,
      pv.released_at_source, p.releases_per_year, pv.safer_closest_version, p.safest_version
    from (select c.package_id, c.package_name, c.rank, c.version, c.package_version_id, c.scope
      from cve_occurrences c
      where c.application_id = ${app} and c.vulnerability_id = ${query.vulnerabilityId}
        and c.from_seq <= ${seq} and c.to_seq > ${seq}
      order by c.package_name, c.rank, c.version, c.package_version_id
      limit ${query.limit} offset ${query.skip}) co
    join package_versions pv on pv.id = co.package_version_id
    join packages p on p.id = co.package_id
    order by co.package_name, co.rank, co.version, co.package_version_id`.execute(db);
  const ids = [...new Set(packages.map((p) => p.package_version_id))];
  const objects = new Map<number, string>();
  if (ids.length > 0) {
    const { rows } = sqlite
      ? await sql<{
          package_version_id: number;
          docs: string;
        }>`select package_version_id, group_concat(doc, ',') as docs
          from (select package_version_id, doc from occurrence_objects
            where application_id = ${app} and package_version_id in (${sql.join(ids)})
              and from_seq <= ${seq} and to_seq > ${seq}
            order by package_version_id, full_name, object_id)
          group by package_version_id`.execute(db)
      : await sql<{ package_version_id: number; docs: string }>`select package_version_id,
            string_agg(doc, ',' order by full_name, object_id) as docs
          from occurrence_objects
          where application_id = ${app} and package_version_id in (${sql.join(ids)})
            and from_seq <= ${seq} and to_seq > ${seq}
          group by package_version_id`.execute(db);
    for (const r of rows) objects.set(Number(r.package_version_id), `[${r.docs}]`);
  }
  const text = (value: string | number | null) => JSON.stringify(value);
  const records = packages.map(
    (p) =>
      `{"name":${text(p.package_name)},"objects":${objects.get(p.package_version_id) ?? "[]"},` +
      `"releaseDate":${p.released_at ? `{"dateTime":${text(toUtcSeconds(p.released_at))},"source":${text(p.released_at_source)}}` : "null"},` +
      `"releasesPerYear":${text(p.releases_per_year)},"saferClosestVersion":${text(p.safer_closest_version)},` +
      `"safestVersion":${text(p.safest_version)},"scope":${text(scopeOf(p.scope))},"version":${text(p.version)}}`,
  );
  return `[${records.join(",")}]`;
}
