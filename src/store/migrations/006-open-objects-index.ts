import { type Kysely, sql } from "kysely";
import { OPEN_SEQ } from "../schema.ts";

/**
 * The index on (application_id, to_seq) of external objects misled SQLite's planner into scanning an
 * application's two million objects for the occurrences query (docs/benchmarks.md). Ingestion only
 * needs the open rows, so a partial index over them serves it and leaves the planner the right index.
 */
export function openObjectsIndexMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex("external_objects_open").execute();
      await db.schema
        .createIndex("external_objects_open_rows")
        .on("external_objects")
        .column("application_id")
        .where(sql.ref("to_seq"), "=", OPEN_SEQ)
        .execute();
    },
  };
}
