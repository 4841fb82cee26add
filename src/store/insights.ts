import { type Kysely, sql } from "kysely";
import { SCOPE_UNKNOWN } from "../contracts/platform.ts";
/** The REST resources these queries answer with, as src/contracts declares them. */
import type {
  CveInsight,
  CvePackage as CvePackageRecord,
  ReleaseDate,
  Scope,
} from "../contracts/resources.ts";
import {
  OBJECT_LIST_CACHE_SIZE,
  type ObjectList,
  type ObjectListCache,
  objectListBytes,
  objectListCacheOf,
} from "./object-list-cache.ts";
import { listsAreText, objectListText } from "./occurrence-model.ts";
import { type Database, OPEN_SEQ } from "./schema.ts";
import { liveAt } from "./sql-helpers.ts";
import { type ByteTarget, type Segment, segmentsText, writeSegments } from "./utf8-segments.ts";
import { severitySqlRank } from "./vulnerabilities.ts";

export type { ExternalObjectRecord } from "./external-objects.ts";
export type { CveInsight, CvePackageRecord };

type Db = Kysely<Database>;

/**
 * The packages of an application (as of analysis `seq`) affected by a vulnerability, ordered by name
 * then version, each with the external objects of that package that the application refers to. Reads
 * the occurrence read model (occurrence-model.ts): the page's packages are one index range in page
 * order, each joined to its stored object list (occurrence_object_lists: text on PostgreSQL, deflated on
 * SQLite).
 */
export interface OccurrenceQuery {
  applicationId: number;
  seq: number;
  vulnerabilityId: number;
  limit: number;
  skip: number;
}

/** A page's package with its facts and its objects' JSON array (text or UTF-8 bytes; null: none referred). */
interface OccurrenceRow {
  package_version_id: number;
  package_name: string;
  version: string;
  scope: string | null;
  released_at: string | null;
  released_at_source: string | null;
  releases_per_year: number | null;
  safer_closest_version: string | null;
  safest_version: string | null;
  objects: ObjectList | null;
}

/** The page's packages joined to their facts, in page order. */
function occurrenceFacts(db: Db, query: OccurrenceQuery) {
  const { applicationId, seq } = query;
  // The page is cut from the key alone (covering, in order), then only its rows are joined to their facts.
  const page = db
    .selectFrom("cve_occurrences as c")
    .select(["c.package_id", "c.package_name", "c.rank", "c.version", "c.package_version_id", "c.scope"])
    .where("c.application_id", "=", applicationId)
    .where("c.vulnerability_id", "=", query.vulnerabilityId)
    .where(liveAt("c", seq))
    .orderBy("c.package_name")
    .orderBy("c.rank")
    .orderBy("c.version")
    .orderBy("c.package_version_id")
    .limit(query.limit)
    .offset(query.skip)
    .as("co");
  return db
    .selectFrom(page)
    .innerJoin("package_versions as pv", "pv.id", "co.package_version_id")
    .innerJoin("packages as p", "p.id", "co.package_id")
    .select([
      "co.package_version_id",
      "co.package_name",
      "co.version",
      "co.scope",
      "pv.released_at",
      "pv.released_at_source",
      "p.releases_per_year",
      "pv.safer_closest_version",
      "p.safest_version",
    ])
    .orderBy("co.package_name")
    .orderBy("co.rank")
    .orderBy("co.version")
    .orderBy("co.package_version_id");
}

async function occurrencePage(db: Db, query: OccurrenceQuery, useCache = true): Promise<OccurrenceRow[]> {
  const { applicationId, seq } = query;
  const facts = occurrenceFacts(db, query);
  const cache = useCache ? objectListCacheOf(db, OBJECT_LIST_CACHE_SIZE[storeOf(db)]) : undefined;
  if (cache) return cachedListsPage(db, query, facts, cache);
  // In a transaction (or a list gone since the page's facts were read): one statement, one stored list
  // per package (a round trip and ~100 rows per package fewer than object rows); SQLite's inflated here.
  const rows = await withPageLists(facts, applicationId, seq).select("l.docs as list").execute();
  return rows.map(({ list, ...r }) => ({ ...r, objects: list === null ? null : objectListText(list) }));
}

const storeOf = (db: Db) => (listsAreText(db) ? "postgres" : "sqlite");

type FactsQuery = ReturnType<typeof occurrenceFacts>;

/**
 * The facts joined with each package version's pre-serialized object list valid at analysis `seq`
 * (migration 015, by version since 021).
 */
function withPageLists(facts: FactsQuery, applicationId: number, seq: number) {
  return facts.leftJoin("occurrence_object_lists as l", (join) =>
    join
      .on("l.application_id", "=", applicationId)
      .onRef("l.package_version_id", "=", "co.package_version_id")
      .on("l.from_seq", "<=", seq)
      .on("l.to_seq", ">", seq),
  );
}

/**
 * The page's facts with the key of each package's list (its row and stored byte length, read from the
 * row without reading the list), then, in a second statement, only the lists the cache misses
 * (object-list-cache.ts): on PostgreSQL they no longer cross from the server, on SQLite (where a reader
 * thread runs the page) they are not inflated again. A list's text never changes for its key, so the two
 * statements need no shared snapshot; a list gone in between (its application deleted) sends the page
 * back to the one-statement read.
 */
async function cachedListsPage(
  db: Db,
  query: OccurrenceQuery,
  facts: FactsQuery,
  cache: ObjectListCache,
): Promise<OccurrenceRow[]> {
  const { applicationId, seq } = query;
  const postgres = listsAreText(db);
  // SQLite's length() of a blob reads its size from the record, not the blob.
  const bytes = postgres ? sql<number>`octet_length(l.docs)` : sql<number>`length(l.docs)`;
  const rows = await withPageLists(facts, applicationId, seq)
    .select(["l.from_seq as list_from", bytes.as("list_bytes")])
    .execute();
  const key = (r: { package_version_id: number; list_from: number; list_bytes: number }) =>
    `${applicationId}:${r.package_version_id}:${r.list_from}:${r.list_bytes}`;
  // Per row of the page: its list's key (none: no object referred) and the list, once found.
  const keys = rows.map((r) => (r.list_from === null ? undefined : key(r as Parameters<typeof key>[0])));
  const objects = keys.map((k): ObjectList | null | undefined => (k === undefined ? null : cache.get(k)));
  const missing = rows.filter((_, i) => objects[i] === undefined);
  if (missing.length > 0) {
    type Read = {
      package_version_id: number;
      list_from: number;
      docs: string | Uint8Array;
      list_bytes: number;
    };
    const { rows: read } = postgres
      ? // The keys as two arrays joined by unnest, one lookup per list: with a row-value IN list of 500
        // pairs the first limit-500 page in a fresh process took 250 ms (median), with unnest 57 ms (015's: 42).
        await sql<Read>`
          select l.package_version_id, l.from_seq as list_from, l.docs, octet_length(l.docs) as list_bytes
          from unnest(${missing.map((r) => r.package_version_id)}::integer[], ${missing.map((r) => r.list_from)}::integer[])
            as k(package_version_id, from_seq)
          join occurrence_object_lists l
            on l.application_id = ${applicationId} and l.package_version_id = k.package_version_id
              and l.from_seq = k.from_seq`.execute(db)
      : // SQLite: the page's lists of the missing package versions, one primary-key lookup each.
        await sql<Read>`
          select package_version_id, from_seq as list_from, docs, length(docs) as list_bytes
          from occurrence_object_lists
          where application_id = ${applicationId}
            and package_version_id in (${sql.join(missing.map((r) => r.package_version_id))})
            and from_seq <= ${seq} and to_seq > ${seq}`.execute(db);
    const found = new Map<string, ObjectList>();
    for (const r of read) {
      // SQLite's kept as the inflated bytes: a page is written from them as they are (writeOccurrencesJson).
      const list = typeof r.docs === "string" ? r.docs : objectListBytes(r.docs);
      cache.set(key(r), list);
      found.set(key(r), list);
    }
    for (const [i, k] of keys.entries()) {
      if (objects[i] !== undefined) continue;
      const list = found.get(k as string);
      if (list === undefined) return occurrencePage(db, query, false);
      objects[i] = list;
    }
  }
  // Plain objects of the page's fields (no spread per row: a limit-500 page is 500 of them).
  return rows.map((r, i) => ({
    package_version_id: r.package_version_id,
    package_name: r.package_name,
    version: r.version,
    scope: r.scope,
    released_at: r.released_at,
    released_at_source: r.released_at_source,
    releases_per_year: r.releases_per_year,
    safer_closest_version: r.safer_closest_version,
    safest_version: r.safest_version,
    objects: objects[i] as ObjectList | null,
  }));
}

/**
 * An occurrences page as the API writes it: a JSON array text (CvePackage records, properties in name
 * order) in which the objects' JSON from the read model is spliced as stored, never parsed and
 * re-serialized: a wide page is ~5,000 objects (limit 50) to ~50,000 (limit 500).
 */
export async function listOccurrencesJson(
  db: Db,
  query: OccurrenceQuery,
  options: { cachedLists?: boolean } = {},
): Promise<string> {
  return segmentsText(occurrenceSegments(await occurrencePage(db, query, options.cachedLists ?? true)));
}

/**
 * The same page's UTF-8 bytes written into the buffer `target` gives for their length (a read pool's
 * buffer, grown to the page if need be): their length, or the page's text if it gives none. On SQLite the
 * lists are copied from the bytes the reader keeps, so the page is never a string: no join, no encoding,
 * almost no garbage for the reader's and V8's helper threads to collect (docs/benchmarks-history.md,
 * "the page as bytes end to end").
 */
export async function writeOccurrencesJson(
  db: Db,
  query: OccurrenceQuery,
  target: ByteTarget,
): Promise<{ byteLength: number } | { text: string }> {
  const segments = occurrenceSegments(await occurrencePage(db, query));
  const byteLength = writeSegments(segments, target);
  return byteLength === undefined ? { text: segmentsText(segments) } : { byteLength };
}

/** The page's JSON in order: the facts' text around each package's stored list. */
function occurrenceSegments(packages: readonly OccurrenceRow[]): Segment[] {
  const text = (value: string | number | null) => JSON.stringify(value);
  const segments: Segment[] = [];
  for (const p of packages) {
    segments.push(
      `${segments.length === 0 ? "[" : ","}{"name":${text(p.package_name)},"objects":`,
      p.objects ?? "[]",
      `,"releaseDate":${p.released_at ? `{"dateTime":${text(toUtcSeconds(p.released_at))},"source":${text(p.released_at_source)}}` : "null"},` +
        `"releasesPerYear":${text(p.releases_per_year)},"saferClosestVersion":${text(p.safer_closest_version)},` +
        `"safestVersion":${text(p.safest_version)},"scope":${text(scopeOf(p.scope))},"version":${text(p.version)}}`,
    );
  }
  segments.push(segments.length === 0 ? "[]" : "]");
  return segments;
}

/**
 * Vulnerabilities affecting the application in analysis `seq`, most severe first. Reads the occurrence
 * read model: affected versions from cve_occurrences, referred objects from occurrence_objects.
 */
export async function listCveInsights(
  db: Db,
  query: { applicationId: number; seq: number; limit: number; skip: number; severities?: readonly string[] },
): Promise<CveInsight[]> {
  const { applicationId, seq } = query;
  let select = db
    .selectFrom("cve_occurrences as co")
    .innerJoin("vulnerabilities as v", "v.id", "co.vulnerability_id")
    .select((eb) => [
      "v.id",
      "v.cve_id",
      "v.severity",
      "v.cvss_score",
      "v.summary",
      eb.fn.count<number>("co.package_version_id").distinct().as("affected"),
    ])
    .where("co.application_id", "=", applicationId)
    .where(liveAt("co", seq))
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

  // Each referred object has one row live at `seq`, under the package version it belongs to: only the
  // objects of affected versions count.
  const { rows: counts } = await sql<{ vulnerability_id: number; objects: number }>`
    select a.vulnerability_id, count(*) as objects
    from (select distinct vulnerability_id, package_version_id from cve_occurrences
      where application_id = ${applicationId} and from_seq <= ${seq} and to_seq > ${seq}
        and vulnerability_id in (${sql.join(ids)})) as a
    join occurrence_objects as o on o.application_id = ${applicationId}
      and o.package_version_id = a.package_version_id and o.from_seq <= ${seq} and o.to_seq > ${seq}
    group by a.vulnerability_id`.execute(db);
  const objectCounts = new Map(counts.map((c) => [Number(c.vulnerability_id), Number(c.objects)]));
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
    // A text column; the store writes only the contract's severities.
    severity: r.severity as CveInsight["severity"],
    summary: r.summary,
  }));
}

/** A version's release date as the API writes it (the contract's ReleaseDate), or null. */
export function releaseDateOf(releasedAt: string | null, source: string | null): ReleaseDate | null {
  return releasedAt ? { dateTime: toUtcSeconds(releasedAt), source: source as ReleaseDate["source"] } : null;
}

/** A stored scope as the API writes it: null (not stated, or stored before scopes were) is unknown. */
export function scopeOf(scope: string | null): Scope {
  return (scope ?? SCOPE_UNKNOWN) as Scope;
}

/** Date#toISOString's form, which the store writes: its seconds are cut out without parsing a Date. */
const ISO_MILLIS_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** ISO 8601 UTC with a trailing Z, to the second, as the API family writes datetimes. */
export function toUtcSeconds(iso: string): string {
  // Hot: every date of a listed row (each tool call, each occurrences page) goes through here.
  if (iso.length === 24 && ISO_MILLIS_UTC.test(iso)) return `${iso.slice(0, 19)}Z`;
  // Any other form is parsed, and kept once computed: a release date is written by many pages.
  let seconds = utcSeconds.get(iso);
  if (seconds === undefined) {
    seconds = new Date(iso).toISOString().replace(/\.\d{3}Z$/, "Z");
    if (utcSeconds.size >= MAX_UTC_SECONDS) utcSeconds.clear();
    utcSeconds.set(iso, seconds);
  }
  return seconds;
}

const utcSeconds = new Map<string, string>();
const MAX_UTC_SECONDS = 10_000;

export { OPEN_SEQ };
