import { type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";
import { columnKinds } from "./column-kinds.ts";

/** The tables whose rows a quality gate evaluation reads besides the analysis's own intervals. */
export const GATE_FACT_TABLES = [
  "gate_rules",
  "packages",
  "package_versions",
  "version_vulnerabilities",
  "vulnerabilities",
] as const;

/**
 * Two read models:
 * - the change logs of the packages and references (compare.ts). The references' is keyed by
 *   application then the comparison's page order, so a page of a comparison is a walk of the primary
 *   key (on SQLite WITHOUT ROWID, so a page's rows are contiguous). Built from the stored history (every
 *   analysis against its predecessor) by migration 024; ingestion appends to them afterwards.
 * - stored gate evaluations (gates.ts), valid while `gate_facts_generation` has the value they were
 *   computed at. Triggers bump it on every write to the tables an evaluation reads, whichever code path
 *   writes them, in the writer's transaction: a reader that reads the generation before the facts never
 *   stores an evaluation under a generation newer than its facts.
 */
export function compareAndGateModelsMigration(kind: StoreKind) {
  const { sortText, clustered } = columnKinds(kind);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await clustered(
        db.schema
          .createTable("reference_changes")
          .addColumn("application_id", "integer", (c) => c.notNull())
          .addColumn("target_full_name", "text", sortText)
          .addColumn("target_object_id", "text", sortText)
          .addColumn("source_full_name", "text", sortText)
          .addColumn("source_object_id", "text", sortText)
          .addColumn("package_id", "integer", (c) => c.notNull())
          .addColumn("seq", "integer", (c) => c.notNull())
          .addColumn("sign", "integer", (c) => c.notNull())
          .addColumn("package_name", "text", (c) => c.notNull())
          .addPrimaryKeyConstraint("reference_changes_pk", [
            "application_id",
            "target_full_name",
            "target_object_id",
            "source_full_name",
            "source_object_id",
            "package_id",
            "seq",
          ]),
      ).execute();
      await db.schema
        .createTable("package_changes")
        .addColumn("application_id", "integer", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("package_version_id", "integer", (c) => c.notNull())
        .addColumn("sign", "integer", (c) => c.notNull())
        .addPrimaryKeyConstraint("package_changes_pk", ["application_id", "seq", "package_version_id"])
        .execute();
      await db.schema
        .createTable("reference_change_totals")
        .addColumn("application_id", "integer", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("added", "integer", (c) => c.notNull())
        .addColumn("removed", "integer", (c) => c.notNull())
        .addPrimaryKeyConstraint("reference_change_totals_pk", ["application_id", "seq"])
        .execute();

      // Filled from the stored history by migration 024 (which keys references by package version).

      await db.schema
        .createTable("gate_facts_generation")
        .addColumn("id", "integer", (c) => c.notNull().primaryKey())
        .addColumn("value", "bigint", (c) => c.notNull())
        .execute();
      await sql`insert into gate_facts_generation (id, value) values (1, 1)`.execute(db);
      if (kind === "sqlite") {
        // Row-level only on SQLite; the single writer makes the extra update cheap.
        for (const table of GATE_FACT_TABLES) {
          for (const event of ["insert", "update", "delete"]) {
            await sql
              .raw(
                `create trigger ${table}_${event}_gate_facts after ${event} on ${table} ` +
                  "begin update gate_facts_generation set value = value + 1 where id = 1; end",
              )
              .execute(db);
          }
        }
      } else {
        await sql`create function bump_gate_facts_generation() returns trigger language plpgsql as $$
          begin update gate_facts_generation set value = value + 1 where id = 1; return null; end $$`.execute(
          db,
        );
        for (const table of GATE_FACT_TABLES) {
          await sql
            .raw(
              `create trigger ${table}_gate_facts after insert or update or delete or truncate on ${table} ` +
                "for each statement execute function bump_gate_facts_generation()",
            )
            .execute(db);
        }
      }
      await db.schema
        .createTable("gate_evaluations")
        .addColumn("application_id", "integer", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("generation", "bigint", (c) => c.notNull())
        .addColumn("doc", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("gate_evaluations_pk", ["application_id", "seq"])
        .execute();
    },
  };
}
