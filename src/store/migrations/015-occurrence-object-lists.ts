import type { Kysely } from "kysely";
import type { StoreKind } from "../database.ts";
import { createObjectListsTable } from "./object-lists-table.ts";

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
      await createObjectListsTable(db, "text");
    },
  };
}
