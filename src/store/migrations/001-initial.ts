import type { CreateTableBuilder, Kysely } from "kysely";
import type { StoreKind } from "../database.ts";
import { columnKinds } from "./column-kinds.ts";

type Table = CreateTableBuilder<string, never>;

/** Creates the analysis store. Sort columns use byte order on both databases so results match. */
export function initialMigration(kind: StoreKind) {
  const id = (t: Table): Table =>
    kind === "postgres"
      ? t.addColumn("id", "serial", (c) => c.primaryKey())
      : t.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement());
  const { sortText } = columnKinds(kind);
  /**
   * A table of an application's rows valid over the analyses [from_seq, to_seq) (to_seq OPEN_SEQ while
   * current), with the index ingestion closes the open rows by.
   */
  const intervalTable = async (db: Kysely<unknown>, name: string, columns: (t: Table) => Table) => {
    await columns(
      id(db.schema.createTable(name)).addColumn("application_id", "integer", (c) =>
        c.notNull().references("applications.id").onDelete("cascade"),
      ),
    )
      .addColumn("from_seq", "integer", (c) => c.notNull())
      .addColumn("to_seq", "integer", (c) => c.notNull())
      .execute();
    await db.schema.createIndex(`${name}_open`).on(name).columns(["application_id", "to_seq"]).execute();
  };

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await id(db.schema.createTable("applications"))
        .addColumn("name", "text", (c) => sortText(c).unique())
        .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("demo", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();

      await id(db.schema.createTable("analyses"))
        .addColumn("application_id", "integer", (c) =>
          c.notNull().references("applications.id").onDelete("cascade"),
        )
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("analyzed_at", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addUniqueConstraint("analyses_app_seq", ["application_id", "seq"])
        .execute();
      await db.schema
        .createIndex("analyses_app_time")
        .on("analyses")
        .columns(["application_id", "analyzed_at"])
        .execute();

      await id(db.schema.createTable("packages"))
        .addColumn("ecosystem", "text", (c) => c.notNull())
        .addColumn("name", "text", sortText)
        .addColumn("releases_per_year", "integer")
        .addColumn("safest_version", "text")
        .addUniqueConstraint("packages_eco_name", ["ecosystem", "name"])
        .execute();

      await id(db.schema.createTable("package_versions"))
        .addColumn("package_id", "integer", (c) => c.notNull().references("packages.id").onDelete("cascade"))
        .addColumn("version", "text", (c) => c.notNull())
        .addColumn("released_at", "text")
        .addColumn("published", "integer", (c) => c.notNull().defaultTo(1))
        .addColumn("prerelease", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("rank", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("safer_closest_version", "text")
        .addUniqueConstraint("package_versions_pkg_version", ["package_id", "version"])
        .execute();

      await id(db.schema.createTable("vulnerabilities"))
        .addColumn("cve_id", "text", (c) => sortText(c).unique())
        .addColumn("severity", "text", (c) => c.notNull())
        .addColumn("cvss_score", "real")
        .addColumn("summary", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("published_at", "text")
        .execute();

      await db.schema
        .createTable("vulnerability_aliases")
        .addColumn("alias", "text", (c) => c.primaryKey())
        .addColumn("vulnerability_id", "integer", (c) =>
          c.notNull().references("vulnerabilities.id").onDelete("cascade"),
        )
        .execute();

      await id(db.schema.createTable("vulnerability_ranges"))
        .addColumn("vulnerability_id", "integer", (c) =>
          c.notNull().references("vulnerabilities.id").onDelete("cascade"),
        )
        .addColumn("package_id", "integer", (c) => c.notNull().references("packages.id").onDelete("cascade"))
        .addColumn("introduced", "text")
        .addColumn("fixed", "text")
        .addColumn("last_affected", "text")
        .execute();
      await db.schema
        .createIndex("vulnerability_ranges_pkg")
        .on("vulnerability_ranges")
        .column("package_id")
        .execute();
      await db.schema
        .createIndex("vulnerability_ranges_vuln")
        .on("vulnerability_ranges")
        .column("vulnerability_id")
        .execute();

      await db.schema
        .createTable("version_vulnerabilities")
        .addColumn("package_version_id", "integer", (c) =>
          c.notNull().references("package_versions.id").onDelete("cascade"),
        )
        .addColumn("vulnerability_id", "integer", (c) =>
          c.notNull().references("vulnerabilities.id").onDelete("cascade"),
        )
        .addPrimaryKeyConstraint("version_vulnerabilities_pk", ["vulnerability_id", "package_version_id"])
        .execute();
      await db.schema
        .createIndex("version_vulnerabilities_version")
        .on("version_vulnerabilities")
        .columns(["package_version_id", "vulnerability_id"])
        .execute();

      await intervalTable(db, "application_packages", (t) =>
        t.addColumn("package_version_id", "integer", (c) => c.notNull().references("package_versions.id")),
      );
      await db.schema
        .createIndex("application_packages_lookup")
        .on("application_packages")
        .columns(["application_id", "package_version_id", "from_seq", "to_seq"])
        .execute();

      await intervalTable(db, "external_objects", (t) =>
        t
          .addColumn("package_id", "integer", (c) => c.notNull().references("packages.id"))
          .addColumn("object_id", "text", sortText)
          .addColumn("name", "text", sortText)
          .addColumn("full_name", "text", sortText)
          .addColumn("mangling", "text", sortText)
          .addColumn("type", "text", (c) => c.notNull())
          .addColumn("type_id", "text", (c) => c.notNull()),
      );
      await db.schema
        .createIndex("external_objects_by_package")
        .on("external_objects")
        .columns(["application_id", "package_id", "full_name", "object_id", "from_seq", "to_seq"])
        .execute();

      await intervalTable(db, "application_objects", (t) =>
        t
          .addColumn("object_id", "text", sortText)
          .addColumn("name", "text", sortText)
          .addColumn("full_name", "text", sortText)
          .addColumn("type", "text", (c) => c.notNull())
          .addColumn("type_id", "text", (c) => c.notNull()),
      );

      await intervalTable(db, "object_references", (t) =>
        t
          .addColumn("source_id", "integer", (c) => c.notNull().references("application_objects.id"))
          .addColumn("target_id", "integer", (c) => c.notNull().references("external_objects.id")),
      );
      await db.schema
        .createIndex("object_references_target")
        .on("object_references")
        .columns(["target_id", "from_seq", "to_seq"])
        .execute();
      await db.schema
        .createIndex("object_references_source")
        .on("object_references")
        .column("source_id")
        .execute();

      await db.schema
        .createTable("api_keys")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("secret_hash", "text", (c) => c.notNull())
        .addColumn("user_name", "text", (c) => c.notNull())
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("applications", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("revoked_at", "text")
        .execute();
    },
  };
}
