import { type ColumnDefinitionBuilder, type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";

/**
 * The functions an advisory names as vulnerable (OSV `affected_functions`), per record and package, so
 * a newer revision replaces exactly what its record brought and a withdrawal removes it. `member` is the
 * name normalized to a member path of the package (`template` for `lodash.template` and
 * `(lodash).template`, `""` for the package itself), the key references are matched on.
 */
export function affectedFunctionsMigration(kind: StoreKind) {
  // Matched against external objects' byte-ordered full names: the same collation on both databases.
  const byteText = (c: ColumnDefinitionBuilder) =>
    kind === "postgres" ? c.notNull().modifyEnd(sql`collate "C"`) : c.notNull();
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("affected_functions")
        .addColumn("id", kind === "postgres" ? "serial" : "integer", (c) =>
          kind === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn("record_id", "text", (c) => c.notNull())
        .addColumn("vulnerability_id", "integer", (c) =>
          c.notNull().references("vulnerabilities.id").onDelete("cascade"),
        )
        .addColumn("package_id", "integer", (c) => c.notNull().references("packages.id"))
        .addColumn("function", "text", (c) => byteText(c))
        .addColumn("member", "text", (c) => byteText(c))
        .execute();
      await db.schema
        .createIndex("affected_functions_match")
        .on("affected_functions")
        .columns(["vulnerability_id", "package_id", "member"])
        .execute();
      await db.schema
        .createIndex("affected_functions_record")
        .on("affected_functions")
        .column("record_id")
        .execute();
    },
  };
}
