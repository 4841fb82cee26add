import type { Kysely } from "kysely";

/**
 * The dynamic client registration rate limit's counters (src/store/registration-counts.ts), in the
 * store so that every replica counts the same registrations, as the sign-in throttle's (013) do.
 * One row per sender (an IPv4 address or an IPv6 /64); times are epoch ms.
 */
export function registrationCountsMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("registration_counts")
        .addColumn("sender", "text", (c) => c.notNull().primaryKey())
        .addColumn("window_start", "bigint", (c) => c.notNull())
        .addColumn("count", "integer", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("registration_counts_window_start")
        .on("registration_counts")
        .column("window_start")
        .execute();
    },
  };
}
