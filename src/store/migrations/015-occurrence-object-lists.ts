import { type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";
import { buildObjectLists } from "../occurrence-model.ts";
import type { Database } from "../schema.ts";

/**
 * PostgreSQL: each package's referred objects as one pre-serialized list per run of analyses
 * (occurrence_object_lists, see occurrence-model.ts), so that an occurrences page reads one row per
 * package instead of ~100 occurrence_objects rows each. Built here from occurrence_objects; ingestion
 * keeps it current. The lists are large (~14 KB of JSON per package) and compressed by TOAST. SQLite
 * keeps reading occurrence_objects: nothing to do there.
 */
export function occurrenceObjectListsMigration(kind: StoreKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (kind !== "postgres") return;
      await db.schema
        .createTable("occurrence_object_lists")
        .addColumn("application_id", "integer", (c) => c.notNull())
        .addColumn("package_id", "integer", (c) => c.notNull())
        .addColumn("from_seq", "integer", (c) => c.notNull())
        .addColumn("to_seq", "integer", (c) => c.notNull())
        .addColumn("docs", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("occurrence_object_lists_pk", ["application_id", "package_id", "from_seq"])
        .execute();
      await buildObjectLists(db as Kysely<Database>);
      await sql`analyze occurrence_object_lists`.execute(db);
    },
  };
}
