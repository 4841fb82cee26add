import { type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";
import { buildObjectLists } from "../occurrence-model.ts";
import type { Database } from "../schema.ts";

/**
 * SQLite: each package's referred objects as one deflated list per run of analyses (the table migration
 * 015 gives PostgreSQL, see occurrence-model.ts), so that an occurrences page inflates one value per
 * package instead of reading and concatenating ~100 occurrence_objects rows each. An ordinary (rowid)
 * table: its values (~1.5 KB deflated) are too large for WITHOUT ROWID to pay. Built here from
 * occurrence_objects; ingestion keeps it current. PostgreSQL has it since 015: nothing to do there.
 */
export function sqliteObjectListsMigration(kind: StoreKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (kind !== "sqlite") return;
      await db.schema
        .createTable("occurrence_object_lists")
        .addColumn("application_id", "integer", (c) => c.notNull())
        .addColumn("package_id", "integer", (c) => c.notNull())
        .addColumn("from_seq", "integer", (c) => c.notNull())
        .addColumn("to_seq", "integer", (c) => c.notNull())
        .addColumn("docs", "blob", (c) => c.notNull())
        .addPrimaryKeyConstraint("occurrence_object_lists_pk", ["application_id", "package_id", "from_seq"])
        .execute();
      await buildObjectLists(db as Kysely<Database>);
      await sql`ANALYZE occurrence_object_lists`.execute(db);
    },
  };
}
