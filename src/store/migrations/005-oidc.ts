import type { Kysely } from "kysely";
import type { StoreKind } from "../database.ts";

/**
 * State of the embedded identity provider (oidc-provider models: sessions, interactions, grants,
 * authorization codes, refresh tokens...), one row per model instance. `payload` is the model's JSON;
 * grant_id, uid and user_code are copies of payload fields the provider looks rows up by. Times are
 * epoch milliseconds; expires_at null means the row does not expire.
 */
export function oidcMigration(_kind: StoreKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("oidc_payloads")
        .addColumn("model", "text", (c) => c.notNull())
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("grant_id", "text")
        .addColumn("uid", "text")
        .addColumn("user_code", "text")
        .addColumn("expires_at", "bigint")
        .addColumn("consumed_at", "bigint")
        .addPrimaryKeyConstraint("oidc_payloads_pk", ["model", "id"])
        .execute();
      await db.schema.createIndex("oidc_payloads_grant_id").on("oidc_payloads").column("grant_id").execute();
      await db.schema
        .createIndex("oidc_payloads_uid")
        .on("oidc_payloads")
        .columns(["model", "uid"])
        .execute();
      await db.schema
        .createIndex("oidc_payloads_user_code")
        .on("oidc_payloads")
        .columns(["model", "user_code"])
        .execute();
      await db.schema
        .createIndex("oidc_payloads_expires_at")
        .on("oidc_payloads")
        .column("expires_at")
        .execute();
    },
  };
}
