import { type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";
import { OPEN_SEQ } from "../schema.ts";
import { columnKinds } from "./column-kinds.ts";
import { CVE_OCCURRENCE_IDENTITY } from "./cve-occurrence-key.ts";

/**
 * The read model of the occurrences page (occurrence-model.ts): two tables keyed in page order. On
 * SQLite they are WITHOUT ROWID, so a page's rows are contiguous in the table itself; the partial
 * index on open rows serves ingestion (it closes and opens rows of the newest analysis). Filled from
 * the stored history by migration 024 (which re-keys occurrence_objects by package version); ingestion
 * and advisory import keep it current afterwards.
 */
export function occurrenceModelMigration(kind: StoreKind) {
  const { sortText, clustered } = columnKinds(kind);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await clustered(
        db.schema
          .createTable("cve_occurrences")
          .addColumn("application_id", "integer", (c) => c.notNull())
          .addColumn("vulnerability_id", "integer", (c) => c.notNull())
          .addColumn("package_name", "text", sortText)
          .addColumn("rank", "integer", (c) => c.notNull())
          .addColumn("version", "text", sortText)
          .addColumn("package_version_id", "integer", (c) => c.notNull())
          .addColumn("package_id", "integer", (c) => c.notNull())
          .addColumn("from_seq", "integer", (c) => c.notNull())
          .addColumn("to_seq", "integer", (c) => c.notNull())
          .addPrimaryKeyConstraint("cve_occurrences_pk", [...CVE_OCCURRENCE_IDENTITY, "from_seq"]),
      ).execute();
      await db.schema
        .createIndex("cve_occurrences_version")
        .on("cve_occurrences")
        .column("package_version_id")
        .execute();

      await clustered(
        db.schema
          .createTable("occurrence_objects")
          .addColumn("application_id", "integer", (c) => c.notNull())
          .addColumn("package_id", "integer", (c) => c.notNull())
          .addColumn("full_name", "text", sortText)
          .addColumn("object_id", "text", sortText)
          .addColumn("from_seq", "integer", (c) => c.notNull())
          .addColumn("to_seq", "integer", (c) => c.notNull())
          .addColumn("doc", "text", (c) => c.notNull())
          .addPrimaryKeyConstraint("occurrence_objects_pk", [
            "application_id",
            "package_id",
            "full_name",
            "object_id",
            "from_seq",
          ]),
      ).execute();
      await db.schema
        .createIndex("occurrence_objects_open")
        .on("occurrence_objects")
        .columns(["application_id", "object_id"])
        .where(sql.ref("to_seq"), "=", OPEN_SEQ)
        .execute();

      // Rebuilding a version's rows finds its application_packages rows by version.
      await db.schema
        .createIndex("application_packages_version")
        .on("application_packages")
        .column("package_version_id")
        .execute();

      // Built from the stored history by migration 024, which keys the objects by package version.
    },
  };
}
