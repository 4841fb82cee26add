import { type Kysely, sql } from "kysely";
import { rebuildChangeLogs } from "./compare.ts";
import { buildObjectLists, buildOccurrenceModel } from "./occurrence-model.ts";
import type { Database } from "./schema.ts";

/** The read models' tables, analysed once rebuilt so that the planner sees their new sizes. */
const READ_MODEL_TABLES = [
  "occurrence_objects",
  "occurrence_object_lists",
  "cve_occurrences",
  "reference_changes",
  "package_changes",
  "reference_range_totals",
];

/**
 * Builds the read models again from the stored rows when a migration asked for it (a row of
 * `read_model_rebuilds`, migrations/read-model-rebuild.ts), after every migration has run, with the
 * builders the store reads them with. One transaction: the request is consumed and the models written
 * together, and a replica starting at the same time waits on the request's row, then finds it gone.
 * Returns the migrations whose requests it served.
 */
export async function rebuildRequestedReadModels(db: Kysely<Database>): Promise<string[]> {
  // the usual start: nothing asked, and no write transaction taken for it
  const asked = await sql<{ one: number }>`select 1 as one from read_model_rebuilds limit 1`.execute(db);
  if (asked.rows.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ requested_by: string }>`delete from read_model_rebuilds
        returning requested_by`.execute(trx);
    if (rows.length === 0) return [];
    await buildOccurrenceModel(trx);
    await buildObjectLists(trx);
    await rebuildChangeLogs(trx);
    // stored gate verdicts were computed from the old models
    await sql`update gate_facts_generation set value = value + 1 where id = 1`.execute(trx);
    for (const table of READ_MODEL_TABLES) await sql`analyze ${sql.table(table)}`.execute(trx);
    return rows.map((row) => row.requested_by).sort();
  });
}
