import { type Kysely, sql } from "kysely";
import { recordRangeTotals } from "../compare.ts";
import type { StoreKind } from "../database.ts";
import type { Database } from "../schema.ts";

/**
 * The reference totals of every pair of analyses that are not adjacent (compare.ts), so a comparison
 * across several analyses reads its totals instead of grouping every change in between. Built here
 * from the change logs of migration 017, analysis by analysis in order (each pair's totals derive from
 * the pair ending one analysis earlier); ingestion adds the pairs ending at each new analysis.
 */
export function referenceRangeTotalsMigration(kind: StoreKind) {
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
      const store = db as Kysely<Database>;
      const analyses = await store
        .selectFrom("analyses")
        .select(["application_id", "seq"])
        .where("seq", ">=", 3)
        .orderBy("application_id")
        .orderBy("seq")
        .execute();
      for (const a of analyses) await recordRangeTotals(store, a.application_id, a.seq);
      if (kind === "sqlite") await sql`ANALYZE reference_range_totals`.execute(db);
    },
  };
}
