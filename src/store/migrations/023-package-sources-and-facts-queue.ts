import type { Kysely } from "kysely";
import type { StoreKind } from "../database.ts";

/**
 * Issue 28. `package_sources`: the inputs (lockfiles, POMs, archives, SBOMs) each package version of an
 * analysis was read from, as a JSON array, over the analyses [from_seq, to_seq) where that list holds.
 * Its own intervals, so a package moving from one lockfile to another changes no package interval (nor
 * the comparisons and occurrences built on them).
 *
 * `package_facts_queue`: packages an uploaded analysis named whose published versions and release dates
 * are still to be looked up in the registries (scanner/facts/queue.ts). A row lives until its facts
 * are stored: a restart finds the work where it was; a replica claims a row for a while
 * (`claimed_until`, epoch ms) so that only one looks it up.
 */
export function packageSourcesAndFactsQueueMigration(kind: StoreKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("package_sources")
        .addColumn("id", kind === "postgres" ? "serial" : "integer", (c) =>
          kind === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn("application_id", "integer", (c) =>
          c.notNull().references("applications.id").onDelete("cascade"),
        )
        .addColumn("package_version_id", "integer", (c) => c.notNull().references("package_versions.id"))
        .addColumn("sources", "text", (c) => c.notNull())
        .addColumn("from_seq", "integer", (c) => c.notNull())
        .addColumn("to_seq", "integer", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("package_sources_lookup")
        .on("package_sources")
        .columns(["application_id", "package_version_id", "to_seq", "from_seq"])
        .execute();
      await db.schema
        .createTable("package_facts_queue")
        .addColumn("package_id", "integer", (c) =>
          c.primaryKey().references("packages.id").onDelete("cascade"),
        )
        .addColumn("enqueued_at", "bigint", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("claimed_by", "text")
        .addColumn("claimed_until", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("last_error", "text")
        .execute();
      await db.schema
        .createIndex("package_facts_queue_claim")
        .on("package_facts_queue")
        .columns(["claimed_until", "enqueued_at"])
        .execute();
    },
  };
}
