import type { Kysely } from "kysely";

/**
 * Clients registered dynamically (RFC 7591) with the embedded identity provider: what `imaging
 * clients` lists and what expiry and revocation act on. The provider's own copy of each client is
 * its `Client` row in oidc_payloads. Times are epoch milliseconds; last_used_at null: the client
 * never completed a sign-in (it expires).
 */
export function registeredClientsMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("registered_clients")
        .addColumn("client_id", "text", (c) => c.notNull().primaryKey())
        .addColumn("client_name", "text")
        .addColumn("redirect_uris", "text", (c) => c.notNull())
        .addColumn("source_address", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("last_used_at", "bigint")
        .execute();
    },
  };
}
