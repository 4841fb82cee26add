import type { Kysely } from "kysely";

/**
 * The web console's sign-in state, kept in the store so that any gateway replica can serve any browser:
 * `console_sign_ins` holds an authorization request in progress (PKCE verifier, where to return) keyed by
 * the SHA-256 of its `state`; `console_sessions` holds a signed-in browser's tokens keyed by the SHA-256 of
 * its session cookie (a stolen database does not hand out live cookies). Times are epoch milliseconds.
 */
export function consoleSessionsMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("console_sign_ins")
        .addColumn("state_hash", "text", (c) => c.notNull().primaryKey())
        .addColumn("code_verifier", "text", (c) => c.notNull())
        .addColumn("nonce", "text", (c) => c.notNull())
        .addColumn("return_to", "text", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("console_sessions")
        .addColumn("id_hash", "text", (c) => c.notNull().primaryKey())
        .addColumn("username", "text", (c) => c.notNull())
        .addColumn("csrf_token", "text", (c) => c.notNull())
        .addColumn("access_token", "text", (c) => c.notNull())
        .addColumn("access_expires_at", "bigint", (c) => c.notNull())
        .addColumn("refresh_token", "text")
        .addColumn("id_token", "text")
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("console_sessions_expiry")
        .on("console_sessions")
        .column("expires_at")
        .execute();
    },
  };
}
