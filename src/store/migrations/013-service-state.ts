import type { Kysely } from "kysely";

/**
 * State every replica must share (issue 16): the secrets the platform generates for itself (the
 * embedded identity provider's signing keys, cookie and CSRF keys, the `mcp-token-exchange` secret),
 * sealed with a key the database never holds, and the sign-in throttling counters. `version` grows
 * with each replacement, so replicas notice a rotation with one cheap query. Times are epoch ms.
 */
export function serviceStateMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("service_secrets")
        .addColumn("name", "text", (c) => c.notNull().primaryKey())
        .addColumn("sealed", "text", (c) => c.notNull())
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("version", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("sign_in_failures")
        .addColumn("key", "text", (c) => c.notNull().primaryKey())
        .addColumn("failures", "integer", (c) => c.notNull())
        .addColumn("last_failure", "bigint", (c) => c.notNull())
        .addColumn("locked_until", "bigint", (c) => c.notNull())
        .execute();
    },
  };
}
