import { type Kysely, sql } from "kysely";
import { buildObjectLists } from "../occurrence-model.ts";
import type { Database } from "../schema.ts";

/**
 * occurrence_object_lists as migrations 015 (PostgreSQL: JSON text, compressed by TOAST) and 020 (SQLite:
 * deflated bytes) create it, filled from occurrence_objects. Only the type of `docs` differs.
 */
export async function createObjectListsTable(db: Kysely<unknown>, docs: "text" | "blob"): Promise<void> {
  await db.schema
    .createTable("occurrence_object_lists")
    .addColumn("application_id", "integer", (c) => c.notNull())
    .addColumn("package_id", "integer", (c) => c.notNull())
    .addColumn("from_seq", "integer", (c) => c.notNull())
    .addColumn("to_seq", "integer", (c) => c.notNull())
    .addColumn("docs", docs, (c) => c.notNull())
    .addPrimaryKeyConstraint("occurrence_object_lists_pk", ["application_id", "package_id", "from_seq"])
    .execute();
  await buildObjectLists(db as Kysely<Database>);
  await sql`analyze occurrence_object_lists`.execute(db);
}
