import { type ExpressionBuilder, type Kysely, PostgresAdapter, type RawBuilder, sql } from "kysely";
import { SCOPE_UNKNOWN, severityRank } from "../contracts/platform.ts";
import { EXTERNAL_OBJECT_COLUMNS, toExternalObject } from "./external-objects.ts";
import { releaseDateOf, scopeOf } from "./insights.ts";
import type { Database } from "./schema.ts";
import { containsIgnoringCase, containsPattern, liveAt, referredAt, searchText } from "./sql-helpers.ts";

type Db = Kysely<Database>;

/** The REST resources these queries answer with, as src/contracts declares them. */
import type {
  Interaction as InteractionRecord,
  ExternalObjectMatch as ObjectMatchRecord,
  PackageUse as PackageRecord,
} from "../contracts/resources.ts";

export type { InteractionRecord, ObjectMatchRecord, PackageRecord };

export interface PackageRef {
  id: number;
  ecosystem: string;
  name: string;
  /** The versions of it the analysis uses, in version order. */
  versions: string[];
}

/**
 * The columns of one reference (`object_references as r` joined to `application_objects as s`,
 * `external_objects as t` and its version `package_versions as tv`, see withTargetVersion) that make an
 * InteractionRecord: select them, then map each row with interactionOf.
 */
export const REFERENCE_COLUMNS = [
  "tv.version as target_version",
  "s.object_id as source_id",
  "s.name as source_name",
  "s.full_name as source_full_name",
  "s.type as source_type",
  "s.type_id as source_type_id",
  "t.object_id as target_id",
  "t.name as target_name",
  "t.full_name as target_full_name",
  "t.mangling as target_mangling",
  "t.type as target_type",
  "t.type_id as target_type_id",
] as const;

/**
 * The order of an interaction page (target fullName and id, then source fullName and id), after any
 * grouping of the caller's: the package's interactions and a CVE's references list them alike.
 */
export const INTERACTION_ORDER = sql.join(
  ["t.full_name", "t.object_id", "s.full_name", "s.object_id"].map((c) => sql.ref(c)),
);

type ReferenceRow = Record<
  | "target_version"
  | "source_id"
  | "source_name"
  | "source_full_name"
  | "source_type"
  | "source_type_id"
  | "target_id"
  | "target_name"
  | "target_full_name"
  | "target_mangling"
  | "target_type"
  | "target_type_id",
  string
>;

export function interactionOf(r: ReferenceRow): InteractionRecord {
  return {
    source: {
      fullName: r.source_full_name,
      id: r.source_id,
      name: r.source_name,
      type: r.source_type,
      typeId: r.source_type_id,
    },
    target: {
      fullName: r.target_full_name,
      id: r.target_id,
      mangling: r.target_mangling,
      name: r.target_name,
      type: r.target_type,
      typeId: r.target_type_id,
    },
    version: r.target_version,
  };
}

/**
 * The packages used in analysis `seq`, ordered by name then version, with the CVEs affecting each
 * version. `vulnerable` keeps only affected (true) or unaffected (false) versions; `q` keeps names
 * containing it, ignoring case.
 */
export async function listPackages(
  db: Db,
  query: {
    applicationId: number;
    seq: number;
    limit: number;
    skip: number;
    vulnerable?: boolean | undefined;
    q?: string | undefined;
    /** Keep these scopes only ("unknown": versions whose scope is not known). */
    scopes?: readonly string[] | undefined;
  },
): Promise<PackageRecord[]> {
  // application_packages carries the package's name and ecosystem (application_packages_page). A page
  // is two walks of that index: the first finds the package at which the page ends, the second reads the
  // rows up to it and sorts only those by version (a package's versions are consecutive). Without the
  // bound, PostgreSQL joined and sorted every package of the analysis.
  const kept: RawBuilder<boolean>[] = [
    sql<boolean>`ap.application_id = ${query.applicationId}`,
    liveAt("ap", query.seq),
  ];
  if (query.vulnerable !== undefined) {
    kept.push(
      sql<boolean>`${sql.raw(query.vulnerable ? "" : "not ")}exists (select 1 from version_vulnerabilities as vv
        where vv.package_version_id = ap.package_version_id)`,
    );
  }
  if (query.q) kept.push(containsIgnoringCase("ap.package_name", query.q));
  if (query.scopes && query.scopes.length > 0) kept.push(scopeIn("ap.scope", query.scopes));
  const last = await db
    .selectFrom("application_packages as ap")
    .where((eb) => eb.and(kept))
    .select(["ap.package_name", "ap.package_ecosystem"])
    .orderBy("ap.package_name")
    .orderBy("ap.package_ecosystem")
    .limit(1)
    .offset(query.skip + query.limit - 1)
    .executeTakeFirst();
  let select = db
    .selectFrom("application_packages as ap")
    .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
    .innerJoin("packages as p", "p.id", "pv.package_id")
    .where((eb) => eb.and(kept))
    .select([
      "pv.id as version_id",
      "p.id as package_id",
      "ap.package_ecosystem as ecosystem",
      "ap.package_name as name",
      "pv.version",
      "ap.scope",
      "pv.released_at",
      "pv.released_at_source",
      "p.releases_per_year",
      "pv.safer_closest_version",
      "p.safest_version",
    ])
    .orderBy("ap.package_name")
    .orderBy("ap.package_ecosystem")
    .orderBy("pv.rank")
    .orderBy("pv.version")
    .limit(query.limit)
    .offset(query.skip);
  if (last) {
    select = select
      .where("ap.package_name", "<=", last.package_name)
      .where((eb) =>
        eb.or([
          eb("ap.package_name", "<", last.package_name),
          eb("ap.package_ecosystem", "<=", last.package_ecosystem),
        ]),
      );
  }
  const rows = await select.execute();
  const vulnerabilities = await vulnerabilitiesOfVersions(
    db,
    rows.map((r) => r.version_id),
  );
  const sources = await sourcesOfVersions(
    db,
    query.applicationId,
    query.seq,
    rows.map((r) => r.version_id),
  );
  const pending = await factsPending(
    db,
    rows.map((r) => r.package_id),
  );
  return rows.map((r) => {
    const found = vulnerabilities.get(r.version_id) ?? [];
    return {
      // A text column; the store writes only the contract's ecosystems.
      ecosystem: r.ecosystem as PackageRecord["ecosystem"],
      factsPending: pending.has(r.package_id),
      maxSeverity: maxSeverity(found.map((v) => v.severity)),
      name: r.name,
      releaseDate: releaseDateOf(r.released_at, r.released_at_source),
      releasesPerYear: r.releases_per_year,
      saferClosestVersion: r.safer_closest_version,
      safestVersion: r.safest_version,
      scope: scopeOf(r.scope),
      sources: sources.get(r.version_id) ?? [],
      version: r.version,
      vulnerabilities: found.map((v) => v.cve),
    };
  });
}

/** The scope column is one of `scopes`, "unknown" standing for a scope not recorded (null). */
export function scopeIn(column: string, scopes: readonly string[]): RawBuilder<boolean> {
  const known = scopes.filter((s) => s !== SCOPE_UNKNOWN);
  const parts: RawBuilder<boolean>[] = [];
  if (known.length > 0) parts.push(sql<boolean>`${sql.ref(column)} in (${sql.join(known)})`);
  if (known.length < scopes.length) parts.push(sql<boolean>`${sql.ref(column)} is null`);
  return sql<boolean>`(${sql.join(parts, sql` or `)})`;
}

/** The inputs each package version of analysis `seq` was read from (package_sources, migration 023). */
export async function sourcesOfVersions(
  db: Db,
  applicationId: number,
  seq: number,
  versionIds: readonly number[],
): Promise<Map<number, string[]>> {
  const byVersion = new Map<number, string[]>();
  const ids = [...new Set(versionIds)];
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom("package_sources as ps")
      .select(["ps.package_version_id", "ps.sources"])
      .where("ps.application_id", "=", applicationId)
      .where("ps.package_version_id", "in", ids.slice(i, i + 500))
      .where(liveAt("ps", seq))
      .execute();
    for (const r of rows) byVersion.set(r.package_version_id, JSON.parse(r.sources) as string[]);
  }
  return byVersion;
}

/** Packages whose registry facts are still being looked up (package_facts_queue, migration 023). */
export async function factsPending(db: Db, packageIds: readonly number[]): Promise<Set<number>> {
  const pending = new Set<number>();
  const ids = [...new Set(packageIds)];
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom("package_facts_queue")
      .select("package_id")
      .where("package_id", "in", ids.slice(i, i + 500))
      .execute();
    for (const r of rows) pending.add(r.package_id);
  }
  return pending;
}

/** CVEs affecting each package version, ordered by CVE id. */
export async function vulnerabilitiesOfVersions(
  db: Db,
  versionIds: readonly number[],
): Promise<Map<number, { cve: string; severity: string }[]>> {
  const byVersion = new Map<number, { cve: string; severity: string }[]>();
  const ids = [...new Set(versionIds)];
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom("version_vulnerabilities as vv")
      .innerJoin("vulnerabilities as v", "v.id", "vv.vulnerability_id")
      .select(["vv.package_version_id", "v.cve_id", "v.severity"])
      .where("vv.package_version_id", "in", ids.slice(i, i + 500))
      .orderBy("v.cve_id")
      .execute();
    for (const r of rows) {
      const list = byVersion.get(r.package_version_id) ?? [];
      list.push({ cve: r.cve_id, severity: r.severity });
      byVersion.set(r.package_version_id, list);
    }
  }
  return byVersion;
}

/** The most severe of the given severities, or null for none. */
export function maxSeverity(severities: readonly string[]): string | null {
  let best: string | null = null;
  for (const s of severities) if (best === null || severityRank(s) > severityRank(best)) best = s;
  return best;
}

/**
 * Packages named `name` (of `ecosystem` when given) that analysis `seq` uses, ordered by ecosystem.
 * More than one means the name is ambiguous across ecosystems.
 */
export async function findUsedPackages(
  db: Db,
  query: { applicationId: number; seq: number; name: string; ecosystem?: string | undefined },
): Promise<PackageRef[]> {
  let select = db
    .selectFrom("packages as p")
    .select(["p.id", "p.ecosystem", "p.name"])
    .where("p.name", "=", query.name)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom("application_packages as ap")
          .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
          .select(sql`1`.as("one"))
          .whereRef("pv.package_id", "=", "p.id")
          .where("ap.application_id", "=", query.applicationId)
          .where(liveAt("ap", query.seq)),
      ),
    )
    .orderBy("p.ecosystem");
  if (query.ecosystem) select = select.where("p.ecosystem", "=", query.ecosystem);
  const found = await select.execute();
  if (found.length === 0) return [];
  const versions = await db
    .selectFrom("application_packages as ap")
    .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
    .select(["pv.package_id", "pv.version"])
    .where("ap.application_id", "=", query.applicationId)
    .where(liveAt("ap", query.seq))
    .where(
      "pv.package_id",
      "in",
      found.map((p) => p.id),
    )
    .orderBy("pv.rank")
    .orderBy("pv.version")
    .execute();
  return found.map((p) => ({
    ...p,
    versions: versions.filter((v) => v.package_id === p.id).map((v) => v.version),
  }));
}

/**
 * The application objects that refer to external objects of a package in analysis `seq`, ordered by
 * target fullName and id, then source fullName and id.
 */
export async function listInteractions(
  db: Db,
  query: {
    applicationId: number;
    seq: number;
    packageId: number;
    /** Only the objects of this version of the package. */
    version?: string | undefined;
    limit: number;
    skip: number;
  },
): Promise<InteractionRecord[]> {
  const { applicationId, seq } = query;
  let select = db
    .selectFrom("object_references as r")
    .innerJoin("external_objects as t", "t.id", "r.target_id")
    .innerJoin("application_objects as s", "s.id", "r.source_id")
    .innerJoin("package_versions as tv", "tv.id", "t.package_version_id")
    .select(REFERENCE_COLUMNS)
    .where("r.application_id", "=", applicationId)
    .where(liveAt("r", seq))
    // Redundant with r's application, but it lets the planner start from the package's objects
    // (external_objects_by_package, in page order) instead of every reference of the application.
    .where("t.application_id", "=", applicationId)
    .where("t.package_id", "=", query.packageId)
    .where(liveAt("t", seq));
  if (query.version !== undefined) select = select.where("tv.version", "=", query.version);
  const rows = await select.orderBy(INTERACTION_ORDER).limit(query.limit).offset(query.skip).execute();
  return rows.map(interactionOf);
}

/** Search parameters: see searchExternalObjects. */
export interface ObjectSearch {
  applicationId: number;
  seq: number;
  q: string;
  typeId?: string | undefined;
  limit: number;
  skip: number;
}

/**
 * Live objects a search walks in page order before it asks the trigram index instead: a query that
 * matches at least one object in (skip + limit) / SEARCH_WALK_ROWS finds its page in the walk; one that
 * matches more rarely has few candidates for the index to return and for the page to sort.
 */
export const SEARCH_WALK_ROWS = 10_000;

/**
 * External objects referred to in analysis `seq` whose name, fullName, mangling or type contains `q`
 * (ignoring case), optionally of one exact typeId, ordered by fullName then id.
 *
 * First a bounded walk of the application's objects in page order (external_objects_page): when its
 * first SEARCH_WALK_ROWS live objects hold the page, those are the page. Otherwise the trigram index
 * (migration 016) names the candidates and the page is sorted from them. Both re-check every column
 * exactly as the plain scan (searchExternalObjectsByScan) does, so the answers are the same.
 * `walkRows` replaces SEARCH_WALK_ROWS (the tests take each path on small stores).
 */
export async function searchExternalObjects(
  db: Db,
  query: ObjectSearch,
  options: { walkRows?: number } = {},
): Promise<ObjectMatchRecord[]> {
  const walked = await searchAmong(db, query, (live) =>
    live
      .orderBy("w.full_name")
      .orderBy("w.object_id")
      .limit(options.walkRows ?? SEARCH_WALK_ROWS),
  );
  if (walked.length === query.limit) return walked;
  // A trigram index knows nothing shorter than three characters (FTS5 matches nothing, pg_trgm reads
  // its whole index): such a query scans, as before, once the walk did not find its page.
  if ([...query.q].length < 3) return searchExternalObjectsByScan(db, query);
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const candidates = postgres
    ? // The expression of the GIN index of migration 016, so that the planner finds the index.
      sql<number>`(select c.id from external_objects as c where c.application_id = ${query.applicationId}
        and ${searchText("c")} like ${containsPattern(query.q)} escape '\\')`
    : sql<number>`(select rowid from external_objects_search where external_objects_search match ${ftsPhrase(query.q)})`;
  return searchAmong(db, query, (live) => live.where("w.id", "in", candidates));
}

/** An FTS5 phrase: the text in double quotes, its own double quotes doubled. */
function ftsPhrase(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/** Every column of the application's objects live in analysis `seq` (alias `w`). */
function liveObjects(db: Db, query: ObjectSearch) {
  return db
    .selectFrom("external_objects as w")
    .selectAll("w")
    .where("w.application_id", "=", query.applicationId)
    .where(liveAt("w", query.seq));
}

type LiveObjects = ReturnType<typeof liveObjects>;

/** The page of matches among the live objects that `restrict` keeps. */
async function searchAmong(
  db: Db,
  query: ObjectSearch,
  restrict: (live: LiveObjects) => LiveObjects,
): Promise<ObjectMatchRecord[]> {
  let select = db
    .selectFrom(restrict(liveObjects(db, query)).as("eo"))
    .innerJoin("packages as p", "p.id", "eo.package_id")
    .innerJoin("package_versions as pv", "pv.id", "eo.package_version_id")
    .select([...EXTERNAL_OBJECT_COLUMNS, "p.name as package_name", "pv.version"])
    .where(objectContains(query.q))
    .where(referredAt("eo", query.seq))
    .orderBy("eo.full_name")
    .orderBy("eo.object_id")
    .limit(query.limit)
    .offset(query.skip);
  if (query.typeId !== undefined) select = select.where("eo.type_id", "=", query.typeId);
  return (await select.execute()).map(toObjectMatch);
}

/**
 * The same search as one plain scan of the application's live objects: the answers searchExternalObjects
 * must give (the tests compare the two), and its path for queries the trigram index cannot serve.
 */
export async function searchExternalObjectsByScan(db: Db, query: ObjectSearch): Promise<ObjectMatchRecord[]> {
  const { seq } = query;
  // On SQLite, `+` keeps external_objects_page out of the plan: walking it in order reads every object
  // of the application through the table when the word is rare (2 s on the benchmark's store), where a
  // scan and a sort of the matches take a tenth of that. PostgreSQL has no unary + for text.
  const key = (column: string) =>
    db.getExecutor().adapter instanceof PostgresAdapter ? sql.ref(column) : sql`+${sql.ref(column)}`;
  let select = db
    .selectFrom("external_objects as eo")
    .innerJoin("packages as p", "p.id", "eo.package_id")
    .innerJoin("package_versions as pv", "pv.id", "eo.package_version_id")
    .select([...EXTERNAL_OBJECT_COLUMNS, "p.name as package_name", "pv.version"])
    .where("eo.application_id", "=", query.applicationId)
    .where(liveAt("eo", seq))
    .where(objectContains(query.q))
    .where(referredAt("eo", seq))
    .orderBy(key("eo.full_name"))
    .orderBy(key("eo.object_id"))
    .limit(query.limit)
    .offset(query.skip);
  if (query.typeId !== undefined) select = select.where("eo.type_id", "=", query.typeId);
  return (await select.execute()).map(toObjectMatch);
}

function toObjectMatch(
  r: Parameters<typeof toExternalObject>[0] & { package_name: string; version: string },
): ObjectMatchRecord {
  return { ...toExternalObject(r), package: r.package_name, version: r.version };
}

/** An object whose name, full name, mangling or type contains `q`, ignoring case. */
function objectContains(q: string) {
  return <DB, TB extends keyof DB>(eb: ExpressionBuilder<DB, TB>) =>
    eb.or([
      containsIgnoringCase("eo.name", q),
      containsIgnoringCase("eo.full_name", q),
      containsIgnoringCase("eo.mangling", q),
      containsIgnoringCase("eo.type", q),
    ]);
}
