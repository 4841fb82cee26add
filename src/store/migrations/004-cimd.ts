import { type ColumnDefinitionBuilder, type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";

/**
 * CIMD client policies (Keycloak's model): profiles, policies (their associated profiles as a JSON
 * array of names) and the client_id each `imaging cimd add` was given. Lists are JSON arrays of
 * strings; booleans are 0/1 integers on both databases.
 */
export function cimdMigration(kind: StoreKind) {
  const key = (c: ColumnDefinitionBuilder) =>
    kind === "postgres" ? c.notNull().modifyEnd(sql`collate "C"`).primaryKey() : c.notNull().primaryKey();
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("cimd_profiles")
        .addColumn("name", "text", key)
        .addColumn("executor", "text", (c) => c.notNull())
        .addColumn("allow_http_scheme", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("restrict_same_domain", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("only_allow_confidential_client", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("trusted_domains", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("cimd_policies")
        .addColumn("name", "text", key)
        .addColumn("condition", "text", (c) => c.notNull())
        .addColumn("uri_schemes", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("trusted_domains", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("profiles", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("enabled", "integer", (c) => c.notNull().defaultTo(1))
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("cimd_clients")
        .addColumn("client", "text", key)
        .addColumn("client_id", "text", (c) => c.notNull())
        .addColumn("profile", "text", (c) => c.notNull())
        .addColumn("policy", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
    },
  };
}
