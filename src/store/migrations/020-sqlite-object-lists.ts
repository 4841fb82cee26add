import type { Kysely } from "kysely";
import type { StoreKind } from "../database.ts";
import { createObjectListsTable } from "./object-lists-table.ts";

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
      await createObjectListsTable(db, "blob");
    },
  };
}
