import type { Kysely } from "kysely";

/**
 * What a user needs to tell "not known" from "not affected" (issue 30): each OSV record's references
 * (advisory pages, fixes, reports: shown with the advisory), and when advisories were last imported, so
 * that an id no record names is answered "no advisory known for it; advisories last imported at T".
 * `reference_urls` is null for records stored before this migration: the next import of the same
 * revision fills it in (see advisories.ts). The import state is one row, id 1.
 */
export function advisoryProvenanceMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable("advisory_records").addColumn("reference_urls", "text").execute();
      await db.schema
        .createTable("advisory_import_state")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("imported_at", "text", (c) => c.notNull())
        .execute();
    },
  };
}
