import { type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";

/**
 * Users of the embedded identity provider. The user name is stored as given and unique ignoring
 * case (a unique index on lower(username); names are ASCII, so both databases fold them alike).
 * roles and applications are JSON arrays of strings; disabled is 0 or 1.
 */
export function usersMigration(kind: StoreKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("users")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("username", "text", (c) =>
          // Byte order on PostgreSQL too, so listings sort as on SQLite.
          kind === "postgres" ? c.notNull().modifyEnd(sql`collate "C"`) : c.notNull(),
        )
        .addColumn("password_hash", "text", (c) => c.notNull())
        .addColumn("roles", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("applications", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("disabled", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex("users_username_ci")
        .on("users")
        .unique()
        .expression(sql`lower(username)`)
        .execute();
    },
  };
}
