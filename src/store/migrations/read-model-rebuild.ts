import { type Kysely, sql } from "kysely";

/**
 * How a migration asks for the read models (occurrences, object lists, change logs and their totals) to
 * be built again from the stored rows: a row in `read_model_rebuilds`, which the store consumes once
 * every migration has run (../read-model-rebuild.ts). A migration never runs the live builders itself:
 * they are written for the latest schema, and a later change to them must not change what an old
 * migration does.
 */
export async function createReadModelRebuilds(db: Kysely<unknown>): Promise<void> {
  await sql`create table if not exists read_model_rebuilds (requested_by text primary key)`.execute(db);
}

export async function requestReadModelRebuild(db: Kysely<unknown>, migration: string): Promise<void> {
  await createReadModelRebuilds(db);
  await sql`insert into read_model_rebuilds (requested_by) values (${migration})`.execute(db);
}
