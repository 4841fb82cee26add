import type { Kysely } from "kysely";
import { createReadModelRebuilds } from "./read-model-rebuild.ts";

/**
 * The table where migrations ask for the read models to be built again (read-model-rebuild.ts): a store
 * that ran 024 before 024 asked for it that way has it empty.
 */
export function readModelRebuildsMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createReadModelRebuilds(db);
    },
  };
}
