import { type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely, sql } from "kysely";
import { recordReferenceChanges } from "../compare.ts";
import type { StoreKind } from "../database.ts";
import type { Database } from "../schema.ts";

/**
 * The change log of the references (compare.ts): keyed by application then the comparison's page
 * order, so a page of a comparison is a walk of the primary key. On SQLite WITHOUT ROWID, so a page's
 * rows are contiguous. Built here from the stored history (every analysis against its predecessor);
 * ingestion appends to it afterwards.
 */
export function referenceChangesMigration(kind: StoreKind) {
  const sortText = (c: ColumnDefinitionBuilder) =>
    kind === "postgres" ? c.notNull().modifyEnd(sql`collate "C"`) : c.notNull();
  const clustered = <T extends string>(t: CreateTableBuilder<T, never>) =>
    kind === "sqlite" ? t.modifyEnd(sql`without rowid`) : t;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await clustered(
        db.schema
          .createTable("reference_changes")
          .addColumn("application_id", "integer", (c) => c.notNull())
          .addColumn("target_full_name", "text", sortText)
          .addColumn("target_object_id", "text", sortText)
          .addColumn("source_full_name", "text", sortText)
          .addColumn("source_object_id", "text", sortText)
          .addColumn("package_id", "integer", (c) => c.notNull())
          .addColumn("seq", "integer", (c) => c.notNull())
          .addColumn("sign", "integer", (c) => c.notNull())
          .addColumn("package_name", "text", (c) => c.notNull())
          .addPrimaryKeyConstraint("reference_changes_pk", [
            "application_id",
            "target_full_name",
            "target_object_id",
            "source_full_name",
            "source_object_id",
            "package_id",
            "seq",
          ]),
      ).execute();
      await db.schema
        .createTable("reference_change_totals")
        .addColumn("application_id", "integer", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("added", "integer", (c) => c.notNull())
        .addColumn("removed", "integer", (c) => c.notNull())
        .addPrimaryKeyConstraint("reference_change_totals_pk", ["application_id", "seq"])
        .execute();

      const store = db as Kysely<Database>;
      const analyses = await store
        .selectFrom("analyses")
        .select(["application_id", "seq"])
        .where("seq", ">=", 2)
        .orderBy("application_id")
        .orderBy("seq")
        .execute();
      for (const a of analyses) await recordReferenceChanges(store, a.application_id, a.seq);
      if (kind === "sqlite") await sql`ANALYZE reference_changes`.execute(db);
    },
  };
}
