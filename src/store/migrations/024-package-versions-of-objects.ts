import { type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";
import { type Database, OPEN_SEQ } from "../schema.ts";
import { columnKinds } from "./column-kinds.ts";
import { requestReadModelRebuild } from "./read-model-rebuild.ts";

/**
 * Objects belong to the package version the referring code loads (issue 32), and package versions have
 * a scope and their release dates a source:
 *
 * - `external_objects.package_version_id`, recomputed from what the store holds (objectVersionRows): the
 *   version an npm object's id names (`npm:lodash@4.17.4:lodash.merge`, as the scanner has always written
 *   them), else the package's only version in the application over the object's analyses. An object whose
 *   analyses span a change of version (a Java object kept from log4j-core 2.14.1 to 2.17.1: its id names
 *   no version) is split at the change, its references with it. Where the application used several versions
 *   of the package at once and the id names none, nothing in the store tells them apart: the object is kept
 *   under each of those versions, as every read showed it before, until the next analysis records it.
 * - the read models keyed by object are rebuilt keyed by version: occurrence_objects and
 *   occurrence_object_lists (a page joins a package version to its own list), the reference change log
 *   (a reference to another version is another reference) with its totals, and cve_occurrences (it
 *   carries the version's scope). Stored gate verdicts are dropped (generation bumped): a package is now
 *   "referred" when its version's own objects are.
 * - `application_packages.scope`: null for every stored row, which the answers read as "unknown", never
 *   as production or dev: the scope was never recorded, and the lockfiles are not in the store.
 * - `package_versions.released_at_source`: "registry" for npm dates (the registry's publication times,
 *   the only source of npm dates so far; "release-notes" for the day-precision dates of the demo data,
 *   written as midnight without milliseconds), null for Maven dates, which came from the repository's
 *   Last-Modified or from the signature, and the store cannot tell which: the next scan that looks the
 *   package up records the date with its source (and replaces a re-signed release's late date).
 *
 * The migrations that built these read models before (012, 015, 017, 018, 020) only create their tables
 * now: their builders read this migration's columns. This one empties them and asks for them to be built
 * once every migration has run, by the code that reads them (read-model-rebuild.ts).
 */
export function packageVersionsOfObjectsMigration(kind: StoreKind) {
  const { sortText, clustered } = columnKinds(kind);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const store = db as Kysely<Database>;
      await db.schema.alterTable("external_objects").addColumn("package_version_id", "integer").execute();
      await db.schema.alterTable("application_packages").addColumn("scope", "text").execute();
      await db.schema.alterTable("cve_occurrences").addColumn("scope", "text").execute();
      await db.schema.alterTable("package_versions").addColumn("released_at_source", "text").execute();

      await sql`update package_versions set released_at_source =
          case when released_at like '%T00:00:00Z' then 'release-notes' else 'registry' end
        where released_at is not null
          and package_id in (select id from packages where ecosystem = 'npm')`.execute(db);

      await objectVersionRows(store);
      await db.schema
        .createIndex("external_objects_version")
        .on("external_objects")
        .columns(["application_id", "package_version_id", "from_seq", "to_seq"])
        .execute();

      await db.schema.dropTable("occurrence_objects").execute();
      await clustered(
        db.schema
          .createTable("occurrence_objects")
          .addColumn("application_id", "integer", (c) => c.notNull())
          .addColumn("package_version_id", "integer", (c) => c.notNull())
          .addColumn("full_name", "text", sortText)
          .addColumn("object_id", "text", sortText)
          .addColumn("from_seq", "integer", (c) => c.notNull())
          .addColumn("to_seq", "integer", (c) => c.notNull())
          .addColumn("doc", "text", (c) => c.notNull())
          .addPrimaryKeyConstraint("occurrence_objects_pk", [
            "application_id",
            "package_version_id",
            "full_name",
            "object_id",
            "from_seq",
          ]),
      ).execute();
      await db.schema
        .createIndex("occurrence_objects_open")
        .on("occurrence_objects")
        .columns(["application_id", "object_id"])
        .where(sql.ref("to_seq"), "=", OPEN_SEQ)
        .execute();
      await db.schema.dropTable("occurrence_object_lists").execute();
      await db.schema
        .createTable("occurrence_object_lists")
        .addColumn("application_id", "integer", (c) => c.notNull())
        .addColumn("package_version_id", "integer", (c) => c.notNull())
        .addColumn("from_seq", "integer", (c) => c.notNull())
        .addColumn("to_seq", "integer", (c) => c.notNull())
        .addColumn("docs", kind === "postgres" ? "text" : "blob", (c) => c.notNull())
        .addPrimaryKeyConstraint("occurrence_object_lists_pk", [
          "application_id",
          "package_version_id",
          "from_seq",
        ])
        .execute();

      await db.schema.dropTable("reference_changes").execute();
      await clustered(
        db.schema
          .createTable("reference_changes")
          .addColumn("application_id", "integer", (c) => c.notNull())
          .addColumn("target_full_name", "text", sortText)
          .addColumn("target_object_id", "text", sortText)
          .addColumn("source_full_name", "text", sortText)
          .addColumn("source_object_id", "text", sortText)
          .addColumn("package_version_id", "integer", (c) => c.notNull())
          .addColumn("seq", "integer", (c) => c.notNull())
          .addColumn("sign", "integer", (c) => c.notNull())
          .addColumn("package_name", "text", (c) => c.notNull())
          .addColumn("version", "text", (c) => c.notNull())
          .addPrimaryKeyConstraint("reference_changes_pk", [
            "application_id",
            "target_full_name",
            "target_object_id",
            "source_full_name",
            "source_object_id",
            "package_version_id",
            "seq",
          ]),
      ).execute();
      // The read models are built from these rows by the live builders, once every migration has run
      // (read-model-rebuild.ts), so that they are built for the schema they are read with.
      await requestReadModelRebuild(db, "024-package-versions-of-objects");
      await sql`analyze external_objects`.execute(db);
    },
  };
}

interface ObjectRow {
  id: number;
  package_id: number;
  object_id: string;
  name: string;
  full_name: string;
  mangling: string;
  type: string;
  type_id: string;
  from_seq: number;
  to_seq: number;
}

interface VersionUse {
  versionId: number;
  version: string;
  from: number;
  to: number;
}

/** A run of analyses of an object and the versions it belongs to there. */
interface Piece {
  from: number;
  to: number;
  versionId: number;
}

/**
 * The pieces of an object's interval, each with its version: the one its id names, else per run of
 * analyses the versions of its package then in use (several: one piece each, see the header).
 */
export function objectPieces(
  object: Pick<ObjectRow, "object_id" | "from_seq" | "to_seq">,
  packageKey: string,
  uses: readonly VersionUse[],
): Piece[] {
  const named = npmVersionInId(object.object_id, packageKey);
  const namedUse = named === undefined ? undefined : uses.find((u) => u.version === named);
  if (namedUse) return [{ from: object.from_seq, to: object.to_seq, versionId: namedUse.versionId }];
  const cuts = new Set([object.from_seq, object.to_seq]);
  for (const u of uses) {
    if (u.from > object.from_seq && u.from < object.to_seq) cuts.add(u.from);
    if (u.to > object.from_seq && u.to < object.to_seq) cuts.add(u.to);
  }
  const bounds = [...cuts].sort((a, b) => a - b);
  const pieces: Piece[] = [];
  let previous: number[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const from = bounds[i] as number;
    const to = bounds[i + 1] as number;
    let live = [...new Set(uses.filter((u) => u.from <= from && u.to > from).map((u) => u.versionId))];
    // An analysis refers to objects of packages it uses; should a run have none, the neighbour's versions.
    if (live.length === 0) live = previous;
    if (live.length === 0) live = [...new Set(uses.map((u) => u.versionId))].slice(0, 1);
    previous = live;
    for (const versionId of live.sort((a, b) => a - b)) {
      const last = pieces.findLast((p) => p.versionId === versionId);
      if (last && last.to === from) last.to = to;
      else pieces.push({ from, to, versionId });
    }
  }
  return pieces;
}

/** Fills external_objects.package_version_id, splitting objects whose version changed (see the header). */
async function objectVersionRows(db: Kysely<Database>): Promise<void> {
  const applications = await db.selectFrom("applications").select("id").execute();
  for (const { id: applicationId } of applications) {
    const rows = await db
      .selectFrom("application_packages as ap")
      .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
      .innerJoin("packages as p", "p.id", "pv.package_id")
      .select(["pv.package_id", "p.ecosystem", "p.name", "pv.id", "pv.version", "ap.from_seq", "ap.to_seq"])
      .where("ap.application_id", "=", applicationId)
      .execute();
    const usesOf = new Map<number, VersionUse[]>();
    const keyOf = new Map<number, string>();
    for (const r of rows) {
      usesOf.set(r.package_id, [
        ...(usesOf.get(r.package_id) ?? []),
        { versionId: r.id, version: r.version, from: r.from_seq, to: r.to_seq },
      ]);
      keyOf.set(r.package_id, `${r.ecosystem}:${r.name}`);
    }
    let after = 0;
    for (;;) {
      const objects: ObjectRow[] = await db
        .selectFrom("external_objects")
        .select([
          "id",
          "package_id",
          "object_id",
          "name",
          "full_name",
          "mangling",
          "type",
          "type_id",
          "from_seq",
          "to_seq",
        ])
        .where("application_id", "=", applicationId)
        .where("id", ">", after)
        .orderBy("id")
        .limit(20_000)
        .execute();
      if (objects.length === 0) break;
      after = (objects.at(-1) as ObjectRow).id;
      const whole = new Map<number, number[]>();
      const split: { object: ObjectRow; pieces: Piece[] }[] = [];
      for (const object of objects) {
        const pieces = objectPieces(
          object,
          keyOf.get(object.package_id) ?? "",
          usesOf.get(object.package_id) ?? [],
        );
        const [first] = pieces;
        if (!first) continue; // a package the application never used: nothing reads the object
        if (pieces.length === 1 && first.from === object.from_seq && first.to === object.to_seq) {
          whole.set(first.versionId, [...(whole.get(first.versionId) ?? []), object.id]);
        } else split.push({ object, pieces });
      }
      for (const [versionId, ids] of whole) {
        for (const batch of batches(ids)) {
          await db
            .updateTable("external_objects")
            .set({ package_version_id: versionId })
            .where("id", "in", batch)
            .execute();
        }
      }
      for (const { object, pieces } of split) await splitObject(db, applicationId, object, pieces);
    }
  }
}

/** The object's row becomes its first piece; each other piece a new row, with the references it had then. */
async function splitObject(
  db: Kysely<Database>,
  applicationId: number,
  object: ObjectRow,
  pieces: readonly Piece[],
): Promise<void> {
  const references = await db
    .selectFrom("object_references")
    .select(["id", "source_id", "from_seq", "to_seq"])
    .where("target_id", "=", object.id)
    .execute();
  const [first, ...rest] = pieces as [Piece, ...Piece[]];
  await db
    .updateTable("external_objects")
    .set({ package_version_id: first.versionId, from_seq: first.from, to_seq: first.to })
    .where("id", "=", object.id)
    .execute();
  const rowOf = new Map<Piece, number>([[first, object.id]]);
  for (const piece of rest) {
    const { id: _, ...attributes } = object;
    const inserted = await db
      .insertInto("external_objects")
      .values({
        ...attributes,
        application_id: applicationId,
        package_version_id: piece.versionId,
        from_seq: piece.from,
        to_seq: piece.to,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    rowOf.set(piece, inserted.id);
  }
  await db.deleteFrom("object_references").where("target_id", "=", object.id).execute();
  const values = [];
  for (const r of references) {
    for (const piece of pieces) {
      const from = Math.max(r.from_seq, piece.from);
      const to = Math.min(r.to_seq, piece.to);
      if (from >= to) continue;
      values.push({
        application_id: applicationId,
        source_id: r.source_id,
        target_id: rowOf.get(piece) as number,
        from_seq: from,
        to_seq: to,
      });
    }
  }
  for (const batch of batches(values)) await db.insertInto("object_references").values(batch).execute();
}

/** Rows in statements of 500 (both databases cap bound parameters per statement). */
function* batches<T>(rows: readonly T[]): Generator<T[]> {
  for (let start = 0; start < rows.length; start += 500) yield rows.slice(start, start + 500);
}

/**
 * The version an npm object's id names, as the JavaScript extractor has always written them
 * (`npm:lodash@4.17.15:lodash.merge` under package key `npm:lodash`); undefined for any other id. Kept
 * as of this migration: object-versions.ts holds the live rule.
 */
function npmVersionInId(id: string, packageKey: string): string | undefined {
  if (!packageKey.startsWith("npm:")) return undefined;
  const head = `${packageKey}@`;
  if (!id.startsWith(head)) return undefined;
  const end = id.indexOf(":", head.length);
  return end > head.length ? id.slice(head.length, end) : undefined;
}
