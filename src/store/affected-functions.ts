/**
 * The functions advisories name as vulnerable (OSV `affected_functions`), and the references of an
 * application that reach them. Kept apart from the occurrences query (store/insights.ts): this is an
 * additive read, joined on the same rows (external objects of the affected packages, live references).
 */
import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import { chunks } from "./batch.ts";
import type { ExternalObjectRecord } from "./external-objects.ts";
import type { AdvisoryInput, Ecosystem } from "./input-records.ts";
import { INTERACTION_ORDER, interactionOf, REFERENCE_COLUMNS } from "./packages.ts";
import type { Database } from "./schema.ts";
import { liveAt } from "./sql-helpers.ts";

type Db = Kysely<Database> | Transaction<Database>;

/**
 * An affected function's name as a member path of its package. GHSA writes `(lodash).defaultsDeep`,
 * `(lodash.defaultsdeep)` (the package itself) and, in older records, `lodash.template` — also under
 * `lodash-es`, whose objects are `lodash-es.template`: the first segment names the library, not the
 * package. Maven names are fully qualified (`org.example.Foo.bar`) and kept whole. A parameter list
 * (`bar(java.lang.String)`) is dropped: the match is by name, every overload counts.
 */
export function memberOfFunction(ecosystem: Ecosystem, packageName: string, fn: string): string {
  const name = fn
    .trim()
    .replace(/\(([^()]*)\)$/, (whole, _inner, offset: number) => (offset > 0 ? "" : whole));
  const grouped = /^\(([^()]+)\)(?:\.(.+))?$/.exec(name);
  if (grouped) return defaultless(grouped[2] ?? "");
  if (name === packageName) return "";
  if (name.startsWith(`${packageName}.`)) return defaultless(name.slice(packageName.length + 1));
  if (ecosystem === "npm") {
    const dot = name.indexOf(".");
    return defaultless(dot < 0 ? name : name.slice(dot + 1));
  }
  return name;
}

/** A module's `default` export is the module itself, as `(package)` names it. */
const defaultless = (member: string) => (member === "default" ? "" : member);

/**
 * An external object's full name as a member path of its package (the same rule, applied to what the
 * scanners write: `lodash.merge`, `lodash/merge` for a deep import, `lodash` for the module).
 */
export function memberOfObject(packageName: string, fullName: string): string {
  if (fullName === packageName) return "";
  for (const separator of [".", "/"]) {
    if (fullName.startsWith(`${packageName}${separator}`)) {
      return defaultless(fullName.slice(packageName.length + 1).replaceAll("/", "."));
    }
  }
  return fullName;
}

/** memberOfObject in SQL (both databases), for filtering in the query. */
function memberOfObjectSql(packageName: string, fullName: string): RawBuilder<string> {
  const p = sql.ref(packageName);
  const f = sql.ref(fullName);
  const rest = sql`substr(${f}, length(${p}) + 2)`;
  return sql<string>`case
    when ${f} = ${p} then ''
    when substr(${f}, 1, length(${p}) + 1) = ${p} || '.' then ${rest}
    when substr(${f}, 1, length(${p}) + 1) = ${p} || '/' then replace(${rest}, '/', '.')
    else ${f} end`;
}

/** The object (alias `t`, package alias `p`) is one of the functions the advisory names. */
function reaches(vulnerabilityId: number): RawBuilder<boolean> {
  const member = memberOfObjectSql("p.name", "t.full_name");
  return sql<boolean>`exists (select 1 from affected_functions as af where af.vulnerability_id = ${vulnerabilityId}
    and af.package_id = t.package_id and (af.member = ${member} or (af.member = '' and ${member} = 'default')))`;
}

/** The advisory names functions of the object's package (alias `t`). */
function namesFunctions(vulnerabilityId: number): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from affected_functions as af where af.vulnerability_id = ${vulnerabilityId}
    and af.package_id = t.package_id)`;
}

// -------------------------------------------------------------------------------------------------
// Import

export interface RecordFunctions {
  recordId: string;
  vulnerabilityId: number;
  affected: AdvisoryInput["affected"];
}

/** Stores the functions the records name; `packageIds` holds the ids of their packages (`<ecosystem>:<name>`). */
export async function insertAffectedFunctions(
  db: Db,
  records: readonly RecordFunctions[],
  packageIds: ReadonlyMap<string, number>,
): Promise<void> {
  const rows = records.flatMap((r) =>
    r.affected.flatMap((a) => {
      const packageId = packageIds.get(`${a.ecosystem}:${a.package}`);
      if (packageId === undefined) return [];
      return (a.functions ?? []).map((fn) => ({
        record_id: r.recordId,
        vulnerability_id: r.vulnerabilityId,
        package_id: packageId,
        function: fn,
        member: memberOfFunction(a.ecosystem, a.package, fn),
      }));
    }),
  );
  for (const batch of chunks(rows, 200)) await db.insertInto("affected_functions").values(batch).execute();
}

/** Removes what a record brought (before a newer revision, or on its withdrawal). */
export async function detachAffectedFunctions(db: Db, recordId: string): Promise<void> {
  await db.deleteFrom("affected_functions").where("record_id", "=", recordId).execute();
}

// -------------------------------------------------------------------------------------------------
// Reads

export interface ApplicationObjectRecord {
  fullName: string;
  id: string;
  name: string;
  type: string;
  typeId: string;
}

export interface CveReferenceRecord {
  /** The version of the package the target belongs to (the one the referring code loads). */
  version: string;
  /** Every function the advisory names for the target's package (empty when it names none). */
  affectedFunctions: string[];
  ecosystem: string;
  package: string;
  /** null when the advisory names no function of the package: nothing to tell either way. */
  reachesAffectedFunction: boolean | null;
  /** The affected functions the target is. */
  reachedFunctions: string[];
  source: ApplicationObjectRecord;
  target: ExternalObjectRecord;
}

/**
 * References (application object → external object) of analysis `seq` whose target belongs to a package
 * version the vulnerability affects, each marked by whether its target is a function the advisory names.
 * `reaches`: true keeps the marked ones, false the ones of packages whose functions are named but not
 * reached (references to packages the advisory names no function of are in neither).
 * Ordered by package name and ecosystem, version, target fullName and id, source fullName and id.
 */
export async function listCveReferences(
  db: Kysely<Database>,
  query: {
    applicationId: number;
    seq: number;
    vulnerabilityId: number;
    reaches?: boolean | undefined;
    limit: number;
    skip: number;
  },
): Promise<CveReferenceRecord[]> {
  const { applicationId, seq, vulnerabilityId } = query;
  const tdb = db;
  // The affected versions the application uses: only the objects of those versions (the ones the
  // referring code loads) reach the vulnerability, not those of another version of the same package.
  const affectedVersions = tdb
    .selectFrom("version_vulnerabilities as vv")
    .innerJoin("application_packages as ap", "ap.package_version_id", "vv.package_version_id")
    .select("vv.package_version_id")
    .where("vv.vulnerability_id", "=", vulnerabilityId)
    .where("ap.application_id", "=", applicationId)
    .where(liveAt("ap", seq));
  let select = tdb
    .selectFrom("object_references as r")
    .innerJoin("external_objects as t", "t.id", "r.target_id")
    .innerJoin("application_objects as s", "s.id", "r.source_id")
    .innerJoin("packages as p", "p.id", "t.package_id")
    .innerJoin("package_versions as tv", "tv.id", "t.package_version_id")
    .select(["p.id as package_id", "p.name as package_name", "p.ecosystem", ...REFERENCE_COLUMNS])
    .where("r.application_id", "=", applicationId)
    .where(liveAt("r", seq))
    .where(liveAt("t", seq))
    .where("t.package_version_id", "in", affectedVersions);
  if (query.reaches === true) select = select.where(reaches(vulnerabilityId));
  if (query.reaches === false) {
    select = select
      .where(namesFunctions(vulnerabilityId))
      .where(sql<boolean>`not ${reaches(vulnerabilityId)}`);
  }
  const rows = await select
    .orderBy("p.name")
    .orderBy("p.ecosystem")
    .orderBy("tv.rank")
    .orderBy("tv.version")
    .orderBy(INTERACTION_ORDER)
    .limit(query.limit)
    .offset(query.skip)
    .execute();
  if (rows.length === 0) return [];

  const functions = await tdb
    .selectFrom("affected_functions")
    .select(["package_id", "function", "member"])
    .distinct()
    .where("vulnerability_id", "=", vulnerabilityId)
    .where("package_id", "in", [...new Set(rows.map((r) => r.package_id))])
    .orderBy("function")
    .execute();
  return rows.map((r) => {
    const named = functions.filter((f) => f.package_id === r.package_id);
    const member = memberOfObject(r.package_name, r.target_full_name);
    const reached = [...new Set(named.filter((f) => f.member === member).map((f) => f.function))];
    const all = [...new Set(named.map((f) => f.function))];
    return {
      affectedFunctions: all,
      ecosystem: r.ecosystem,
      package: r.package_name,
      reachesAffectedFunction: all.length === 0 ? null : reached.length > 0,
      reachedFunctions: reached,
      ...interactionOf(r),
    };
  });
}
