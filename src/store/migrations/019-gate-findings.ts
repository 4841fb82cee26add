import { type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";

/**
 * Stored gate evaluations keep their findings as rows (gates.ts): `gate_evaluations.doc` becomes the
 * rules' outcomes without findings, and a page of a rule's findings is one key range of
 * `gate_findings` instead of parsing a document that holds all of them. Stored evaluations are a
 * cache of the facts, so the old documents are dropped and recomputed on their next read.
 */
export function gateFindingsMigration(kind: StoreKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const table = db.schema
        .createTable("gate_findings")
        .addColumn("application_id", "integer", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("generation", "bigint", (c) => c.notNull())
        .addColumn("rule_id", "text", (c) => c.notNull())
        .addColumn("position", "integer", (c) => c.notNull())
        .addColumn("doc", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("gate_findings_pk", [
          "application_id",
          "seq",
          "generation",
          "rule_id",
          "position",
        ]);
      // On SQLite WITHOUT ROWID, so a page's rows are contiguous in the primary key.
      await (kind === "sqlite" ? table.modifyEnd(sql`without rowid`) : table).execute();
      await sql`delete from gate_evaluations`.execute(db);
    },
  };
}
