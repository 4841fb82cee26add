import type { Kysely } from "kysely";
import type { StoreKind } from "../database.ts";

/**
 * The reference totals of every pair of analyses that are not adjacent (compare.ts), so a comparison
 * across several analyses reads its totals instead of grouping every change in between. Built by
 * migration 024 from the change logs, analysis by analysis in order (each pair's totals derive from the
 * pair ending one analysis earlier); ingestion adds the pairs ending at each new analysis.
 */
export function referenceRangeTotalsMigration(_kind: StoreKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("reference_range_totals")
        .addColumn("application_id", "integer", (c) => c.notNull())
        .addColumn("hi", "integer", (c) => c.notNull())
        .addColumn("lo", "integer", (c) => c.notNull())
        .addColumn("added", "integer", (c) => c.notNull())
        .addColumn("removed", "integer", (c) => c.notNull())
        .addPrimaryKeyConstraint("reference_range_totals_pk", ["application_id", "hi", "lo"])
        .execute();
      // Filled from the change logs by migration 024, which rebuilds them keyed by package version.
    },
  };
}
