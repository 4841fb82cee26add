import { type CreateTableBuilder, type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";

/**
 * OSV records behind the advisories (`imaging advisories import`): each record's revision (`modified`),
 * withdrawal and attributes, so a re-import is a no-op, a newer revision replaces exactly what the older
 * one brought, and several records naming the same CVE (GHSA + another source) add up instead of
 * overwriting each other. Ranges remember their record, and gain OSV's `limit` and listed versions.
 */
export function advisoryRecordsMigration(kind: StoreKind) {
  const sortText = (t: CreateTableBuilder<string, never>) =>
    t.addColumn("id", "text", (c) => (kind === "postgres" ? c.modifyEnd(sql`collate "C"`) : c).primaryKey());
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sortText(db.schema.createTable("advisory_records"))
        .addColumn("vulnerability_id", "integer", (c) =>
          c.references("vulnerabilities.id").onDelete("set null"),
        )
        .addColumn("modified", "text", (c) => c.notNull())
        .addColumn("withdrawn", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("severity", "text", (c) => c.notNull())
        .addColumn("cvss_score", "real")
        .addColumn("summary", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("published_at", "text")
        .addColumn("aliases", "text", (c) => c.notNull().defaultTo("[]"))
        .execute();
      await db.schema
        .createIndex("advisory_records_vuln")
        .on("advisory_records")
        .column("vulnerability_id")
        .execute();
      await db.schema.alterTable("vulnerability_ranges").addColumn("record_id", "text").execute();
      await db.schema.alterTable("vulnerability_ranges").addColumn("limit_version", "text").execute();
      await db.schema.alterTable("vulnerability_ranges").addColumn("listed_version", "text").execute();
      await db.schema
        .createIndex("vulnerability_ranges_record")
        .on("vulnerability_ranges")
        .column("record_id")
        .execute();
    },
  };
}
