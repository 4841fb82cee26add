import type { Kysely } from "kysely";

/**
 * occurrence_object_lists as migrations 015 (PostgreSQL: JSON text, compressed by TOAST) and 020 (SQLite:
 * deflated bytes) created it, keyed by package; only the type of `docs` differs. Migration 021 recreates
 * it keyed by package version and fills it from occurrence_objects.
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
}
