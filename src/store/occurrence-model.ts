/**
 * The read model of the occurrences page (docs/benchmarks.md, "Occurrences read model"):
 *
 * - `cve_occurrences`: one row per interval of a package version in use (an application_packages row)
 *   and vulnerability affecting that version, keyed (application, vulnerability, package name, rank,
 *   version): a page of packages is one index range read in page order, no sort.
 * - `occurrence_objects`: one row per external object and run of analyses in which it exists unchanged
 *   and is referred to, keyed (application, package version, full name, object id), carrying the
 *   object's JSON. An object belongs to the package version the referring code loads (migration 024), so
 *   two versions of a package in one analysis list each its own objects.
 *
 * - `occurrence_object_lists` (migration 015 on PostgreSQL, 020 on SQLite, by version since 021): each
 *   package version's referred objects as one JSON array, one row per run of analyses in which that list
 *   is unchanged: a page is one row per package version. PostgreSQL keeps the text and compresses it itself (TOAST, ~16 bytes per object);
 *   SQLite compresses nothing, so there the list is stored deflated (packObjectList, ~15 bytes per object
 *   instead of ~140: docs/benchmarks-history.md, "SQLite: one compressed object list per package").
 *
 * All follow the history's intervals (from_seq <= seq < to_seq), so an analysis adds rows only for what
 * changed. Affected-ness follows version_vulnerabilities as it is now (an advisory imported after an
 * analysis applies to it, as for the joins it replaces): every recomputation of a version's
 * vulnerabilities or rank rebuilds that version's rows.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { type Kysely, PostgresAdapter, sql, type Transaction } from "kysely";
import { chunks } from "./batch.ts";
import { type ExternalObjectRecord, toExternalObject } from "./external-objects.ts";
import type { ExternalObjectInput } from "./input-records.ts";
import { CVE_OCCURRENCE_IDENTITY } from "./migrations/cve-occurrence-key.ts";
import { type Database, OPEN_SEQ } from "./schema.ts";

type Db = Kysely<Database> | Transaction<Database>;

/** An external object as the API writes it (properties in name order). */
export function objectDoc(o: ExternalObjectRecord): string {
  return JSON.stringify({
    fullName: o.fullName,
    id: o.id,
    mangling: o.mangling,
    name: o.name,
    type: o.type,
    typeId: o.typeId,
  });
}

interface Scope {
  versionIds: readonly number[];
  applicationId?: number;
  fromSeq?: number;
}

/** The cve_occurrences rows of the application_packages rows in `scope`. */
async function insertOccurrencePackages(db: Db, scope: Scope): Promise<void> {
  await db
    .insertInto("cve_occurrences")
    .columns([...CVE_OCCURRENCE_IDENTITY, "package_id", "scope", "from_seq", "to_seq"])
    .expression(
      db
        .selectFrom("application_packages as ap")
        .innerJoin("version_vulnerabilities as vv", "vv.package_version_id", "ap.package_version_id")
        .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
        .innerJoin("packages as p", "p.id", "pv.package_id")
        .select([
          "ap.application_id",
          "vv.vulnerability_id",
          "p.name",
          "pv.rank",
          "pv.version",
          "pv.id",
          "p.id as package_id",
          "ap.scope",
          "ap.from_seq",
          "ap.to_seq",
        ])
        .where(apFilter(scope)),
    )
    .execute();
}

function apFilter(scope: Scope) {
  const parts = [sql`ap.package_version_id in (${sql.join(scope.versionIds)})`];
  if (scope.applicationId !== undefined) parts.push(sql`ap.application_id = ${scope.applicationId}`);
  if (scope.fromSeq !== undefined) parts.push(sql`ap.from_seq = ${scope.fromSeq}`);
  return sql<boolean>`${sql.join(parts, sql` and `)}`;
}

/**
 * Rebuilds the rows of these package versions, for every application and interval: called when their
 * vulnerabilities or rank changed (advisory import, new published versions).
 */
export async function refreshOccurrencePackages(db: Db, versionIds: Iterable<number>): Promise<void> {
  for (const batch of chunks([...new Set(versionIds)], 300)) {
    // Only versions some analysis uses have rows (a registry refresh touches mostly others).
    const used = await db
      .selectFrom("application_packages")
      .select("package_version_id")
      .distinct()
      .where("package_version_id", "in", batch)
      .execute();
    if (used.length === 0) continue;
    const ids = used.map((r) => r.package_version_id);
    await db.deleteFrom("cve_occurrences").where("package_version_id", "in", ids).execute();
    await insertOccurrencePackages(db, { versionIds: ids });
  }
}

/** An analysis started using these versions (application_packages rows opened at `seq`). */
export async function openOccurrencePackages(
  trx: Db,
  applicationId: number,
  versionIds: readonly number[],
  seq: number,
): Promise<void> {
  for (const batch of chunks(versionIds, 300)) {
    await insertOccurrencePackages(trx, { applicationId, versionIds: batch, fromSeq: seq });
  }
}

/** An analysis stopped using these versions (application_packages rows closed at `seq`). */
export async function closeOccurrencePackages(
  trx: Db,
  applicationId: number,
  versionIds: readonly number[],
  seq: number,
): Promise<void> {
  await closeOpenRows(trx, "cve_occurrences", "package_version_id", applicationId, versionIds, seq);
}

/** Closes at `seq` the application's open rows of `table` whose `column` is one of `ids`, in batches. */
async function closeOpenRows(
  trx: Db,
  table: "cve_occurrences" | "occurrence_objects",
  column: "package_version_id" | "object_id",
  applicationId: number,
  ids: readonly (number | string)[],
  seq: number,
): Promise<void> {
  for (const batch of chunks(ids, 500)) {
    // Both tables have (application_id, <id>, to_seq); Kysely cannot type a column over a union of tables.
    await trx
      .updateTable(table as "cve_occurrences")
      .set({ to_seq: seq })
      .where("application_id", "=", applicationId)
      .where(column as "package_version_id", "in", batch as number[])
      .where("to_seq", "=", OPEN_SEQ)
      .execute();
  }
}

/** The vulnerability is gone (its last record withdrawn). */
export async function dropOccurrencesOf(db: Db, vulnerabilityId: number): Promise<void> {
  await db.deleteFrom("cve_occurrences").where("vulnerability_id", "=", vulnerabilityId).execute();
}

/**
 * Analysis `seq` (the application's newest) refers to the objects `referred` (ids); `versionOf` gives each
 * object's package version row; `replaced` are the ids whose external_objects row was (re)inserted at `seq`
 * (new, or changed attributes or version). Rows of objects no longer referred, of another version, or
 * replaced, are closed; referred objects without an open row, or replaced, get one.
 */
export async function diffOccurrenceObjects(
  trx: Db,
  applicationId: number,
  seq: number,
  objects: readonly ExternalObjectInput[],
  versionOf: ReadonlyMap<string, number>,
  referred: ReadonlySet<string>,
  replaced: ReadonlySet<string>,
): Promise<{ added: number; removed: number }> {
  const open = await trx
    .selectFrom("occurrence_objects")
    .select(["object_id", "package_version_id"])
    .where("application_id", "=", applicationId)
    .where("to_seq", "=", OPEN_SEQ)
    .execute();
  // An id may have an open row per version only in a store migrated by 021 (an object whose version the
  // history could not tell apart); closing is by id, so such an id is closed whole and its object re-added.
  const openKeys = new Set<string>();
  const closedIds = new Set<string>();
  const changedVersions = new Set<number>();
  for (const { object_id, package_version_id } of open) {
    openKeys.add(`${object_id}\u0000${package_version_id}`);
    if (
      !referred.has(object_id) ||
      replaced.has(object_id) ||
      versionOf.get(object_id) !== package_version_id
    ) {
      closedIds.add(object_id);
    }
  }
  for (const { object_id, package_version_id } of open) {
    if (closedIds.has(object_id)) changedVersions.add(package_version_id);
  }
  const closed = [...closedIds];
  await closeOpenRows(trx, "occurrence_objects", "object_id", applicationId, closed, seq);
  const added = objects.filter(
    (o) =>
      referred.has(o.id) &&
      (closedIds.has(o.id) || !openKeys.has(`${o.id}\u0000${versionOf.get(o.id)}`) || replaced.has(o.id)),
  );
  for (const batch of chunks(added, 400)) {
    await trx
      .insertInto("occurrence_objects")
      .values(
        batch.map((o) => ({
          application_id: applicationId,
          package_version_id: versionOf.get(o.id) as number,
          full_name: o.fullName,
          object_id: o.id,
          from_seq: seq,
          to_seq: OPEN_SEQ,
          doc: objectDoc(o),
        })),
      )
      .execute();
  }
  for (const o of added) changedVersions.add(versionOf.get(o.id) as number);
  await refreshObjectLists(trx, applicationId, seq, changedVersions);
  return { added: added.length, removed: closed.length };
}

/** Whether this store keeps occurrence_object_lists as text (PostgreSQL) or deflated (SQLite; see the header). */
export function listsAreText(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * A list's JSON text as SQLite stores it: raw deflate at zlib's default level. Measured on the wide CVE's
 * 500 lists (7.3 MB): deflate 6 is 0.77 MB and inflates in 8.3 ms of CPU; brotli 5 is 0.56 MB but
 * decompresses in 12 ms, zstd (Node's one-shot call) in 17 ms; deflate 9 saves 7 % for twice the
 * compression time. Decompression is on every page's path, compression only on ingest's.
 */
export function packObjectList(json: string): Uint8Array {
  return deflateRawSync(json);
}

/** A stored list's JSON text: PostgreSQL's as is, SQLite's inflated. */
export function objectListText(docs: string | Uint8Array): string {
  return typeof docs === "string" ? docs : inflateRawSync(docs).toString("utf8");
}

/** A JSON array text of the docs of `o`'s rows, in key order (PostgreSQL). */
const docsArray = sql<string>`'[' || string_agg(o.doc, ',' order by o.full_name, o.object_id) || ']'`;

/**
 * The referred objects of these package versions changed at analysis `seq` (the application's newest):
 * their open lists are closed and the lists of their open occurrence_objects rows, if any, opened.
 */
async function refreshObjectLists(
  trx: Db,
  applicationId: number,
  seq: number,
  versionIds: ReadonlySet<number>,
): Promise<void> {
  for (const batch of chunks([...versionIds], 500)) {
    await trx
      .updateTable("occurrence_object_lists")
      .set({ to_seq: seq })
      .where("application_id", "=", applicationId)
      .where("package_version_id", "in", batch)
      .where("to_seq", "=", OPEN_SEQ)
      .execute();
    if (listsAreText(trx)) {
      await sql`insert into occurrence_object_lists (application_id, package_version_id, from_seq, to_seq, docs)
        select o.application_id, o.package_version_id, ${seq}, ${OPEN_SEQ}, ${docsArray}
        from occurrence_objects o
        where o.application_id = ${applicationId} and o.package_version_id in (${sql.join(batch)}) and o.to_seq = ${OPEN_SEQ}
        group by o.application_id, o.package_version_id`.execute(trx);
      continue;
    }
    // SQLite: the same lists, deflated here (SQLite has no compression of its own).
    const open = await trx
      .selectFrom("occurrence_objects")
      .select(["package_version_id", "doc"])
      .where("application_id", "=", applicationId)
      .where("package_version_id", "in", batch)
      .where("to_seq", "=", OPEN_SEQ)
      .orderBy("package_version_id")
      .orderBy("full_name")
      .orderBy("object_id")
      .execute();
    const lists: Database["occurrence_object_lists"][] = [];
    for (const [versionId, docs] of groupDocs(open)) {
      lists.push({
        application_id: applicationId,
        package_version_id: versionId,
        from_seq: seq,
        to_seq: OPEN_SEQ,
        docs: packObjectList(`[${docs.join(",")}]`),
      });
    }
    for (const listBatch of chunks(lists, 100)) {
      await trx.insertInto("occurrence_object_lists").values(listBatch).execute();
    }
  }
}

/** The docs of rows sorted by package version, per version in their order. */
function groupDocs(rows: readonly { package_version_id: number; doc: string }[]): Map<number, string[]> {
  const byVersion = new Map<number, string[]>();
  for (const { package_version_id, doc } of rows) {
    const docs = byVersion.get(package_version_id);
    if (docs) docs.push(doc);
    else byVersion.set(package_version_id, [doc]);
  }
  return byVersion;
}

/**
 * Builds occurrence_object_lists from occurrence_objects (migration 024), the rows refreshObjectLists
 * would have written: a package version's list starts at every analysis where one of its rows starts or
 * ends, and runs to the next such analysis; analyses where none of its objects is referred have no row.
 */
export async function buildObjectLists(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom("occurrence_object_lists").execute();
  if (!listsAreText(db)) return buildPackedObjectLists(db);
  await sql`insert into occurrence_object_lists (application_id, package_version_id, from_seq, to_seq, docs)
    select application_id, package_version_id, seq, next_seq, docs from (
      select b.application_id, b.package_version_id, b.seq, b.next_seq,
        (select ${docsArray} from occurrence_objects o
          where o.application_id = b.application_id and o.package_version_id = b.package_version_id
            and o.from_seq <= b.seq and o.to_seq > b.seq) as docs
      from (select application_id, package_version_id, seq,
          coalesce(lead(seq) over (partition by application_id, package_version_id order by seq), ${OPEN_SEQ}) as next_seq
        from (select application_id, package_version_id, from_seq as seq from occurrence_objects
          union select application_id, package_version_id, to_seq from occurrence_objects where to_seq <> ${OPEN_SEQ}) s
      ) b
    ) l
    where docs is not null`.execute(db);
}

/**
 * buildObjectLists on SQLite, in JavaScript since the lists are deflated here: the same runs as the
 * statement above, one application and a few hundred package versions at a time.
 */
async function buildPackedObjectLists(db: Kysely<Database>): Promise<void> {
  const applications = await db.selectFrom("applications").select("id").execute();
  for (const { id: applicationId } of applications) {
    const versions = await db
      .selectFrom("occurrence_objects")
      .select("package_version_id")
      .distinct()
      .where("application_id", "=", applicationId)
      .orderBy("package_version_id")
      .execute();
    for (const batch of chunks(
      versions.map((p) => p.package_version_id),
      200,
    )) {
      const rows = await db
        .selectFrom("occurrence_objects")
        .select(["package_version_id", "from_seq", "to_seq", "doc"])
        .where("application_id", "=", applicationId)
        .where("package_version_id", "in", batch)
        .orderBy("package_version_id")
        .orderBy("full_name")
        .orderBy("object_id")
        .orderBy("from_seq")
        .execute();
      const byVersion = new Map<number, typeof rows>();
      for (const row of rows) {
        const list = byVersion.get(row.package_version_id);
        if (list) list.push(row);
        else byVersion.set(row.package_version_id, [row]);
      }
      const lists: Database["occurrence_object_lists"][] = [];
      for (const [versionId, versionRows] of byVersion) {
        // A list starts wherever one of the version's rows starts or ends, and runs to the next such analysis.
        const starts = new Set<number>();
        for (const r of versionRows) {
          starts.add(r.from_seq);
          if (r.to_seq !== OPEN_SEQ) starts.add(r.to_seq);
        }
        const ordered = [...starts].sort((a, b) => a - b);
        for (const [i, from] of ordered.entries()) {
          const docs = versionRows.filter((r) => r.from_seq <= from && r.to_seq > from).map((r) => r.doc);
          if (docs.length === 0) continue;
          lists.push({
            application_id: applicationId,
            package_version_id: versionId,
            from_seq: from,
            to_seq: ordered[i + 1] ?? OPEN_SEQ,
            docs: packObjectList(`[${docs.join(",")}]`),
          });
        }
      }
      for (const listBatch of chunks(lists, 100)) {
        await db.insertInto("occurrence_object_lists").values(listBatch).execute();
      }
    }
  }
}

/**
 * Builds both tables from the history already stored (migration 024): the same rows ingestAnalysis and
 * the recomputations would have written, one application and a few hundred package versions at a time.
 */
export async function buildOccurrenceModel(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom("cve_occurrences").execute();
  await db.deleteFrom("occurrence_objects").execute();
  const versions = await db
    .selectFrom("application_packages")
    .select("package_version_id")
    .distinct()
    .execute();
  await refreshOccurrencePackages(
    db,
    versions.map((v) => v.package_version_id),
  );
  const applications = await db.selectFrom("applications").select("id").execute();
  for (const { id: applicationId } of applications) {
    const objectVersions = await db
      .selectFrom("external_objects")
      .select("package_version_id")
      .distinct()
      .where("application_id", "=", applicationId)
      .execute();
    for (const batch of chunks(
      objectVersions.map((p) => p.package_version_id),
      200,
    )) {
      const objects = await db
        .selectFrom("external_objects")
        .select(["id", "package_version_id", "object_id", "name", "full_name", "mangling", "type", "type_id"])
        .select(["from_seq", "to_seq"])
        .where("application_id", "=", applicationId)
        .where("package_version_id", "in", batch)
        .execute();
      const references = await db
        .selectFrom("object_references as r")
        .innerJoin("external_objects as eo", "eo.id", "r.target_id")
        .select(["r.target_id", "r.from_seq", "r.to_seq"])
        .where("eo.application_id", "=", applicationId)
        .where("eo.package_version_id", "in", batch)
        .execute();
      const spansOf = new Map<number, [number, number][]>();
      for (const r of references) {
        const list = spansOf.get(r.target_id) ?? [];
        list.push([r.from_seq, r.to_seq]);
        spansOf.set(r.target_id, list);
      }
      const rows: Database["occurrence_objects"][] = [];
      for (const o of objects) {
        const doc = objectDoc(toExternalObject(o));
        for (const [from, to] of referredSpans(spansOf.get(o.id) ?? [], o.from_seq, o.to_seq)) {
          rows.push({
            application_id: applicationId,
            package_version_id: o.package_version_id,
            full_name: o.full_name,
            object_id: o.object_id,
            from_seq: from,
            to_seq: to,
            doc,
          });
        }
      }
      for (const rowBatch of chunks(rows, 400)) {
        await db.insertInto("occurrence_objects").values(rowBatch).execute();
      }
    }
  }
}

/** The union of the references' spans within the object's own span, touching spans merged. */
function referredSpans(spans: [number, number][], from: number, to: number): [number, number][] {
  const clipped = spans
    .map(([a, b]): [number, number] => [Math.max(a, from), Math.min(b, to)])
    .filter(([a, b]) => a < b)
    .sort((x, y) => x[0] - y[0]);
  const merged: [number, number][] = [];
  for (const span of clipped) {
    const last = merged.at(-1);
    if (last && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
    else merged.push(span);
  }
  return merged;
}
