import { type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";

/**
 * Issue 13 point 5: the `packages` list and the `objects?q=` search without a scan of the application.
 *
 * - application_packages carries its package's name and ecosystem (a package never changes either), and
 *   `application_packages_page` walks an application's packages in the list's order: a page reads
 *   skip + limit live rows instead of joining and sorting every package of the application.
 * - `external_objects_page` walks an application's objects in the search's order (fullName, id): a
 *   query that matches often finds its page in the first rows.
 * - A trigram index over the four searched columns finds the candidates of a query that matches
 *   rarely: FTS5's trigram tokenizer on SQLite (a contentless table kept by triggers, so every writer
 *   and every cascade keeps it), pg_trgm's GIN index on PostgreSQL (built after the migrations). pg_trgm is a trusted extension
 *   (PostgreSQL 13+): the store's role creates it when it has CREATE on the database; otherwise an
 *   administrator runs `CREATE EXTENSION pg_trgm` in the store's database, or the search runs without
 *   the index (same answers, slower on rare queries) and `imaging doctor` says so.
 */
export function listSearchMigration(kind: StoreKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const collateC = kind === "postgres" ? sql` collate "C"` : sql``;
      await sql`alter table application_packages add column package_name text${collateC} not null default ''`.execute(
        db,
      );
      await sql`alter table application_packages add column package_ecosystem text not null default ''`.execute(
        db,
      );
      await sql`update application_packages set
          package_name = (select p.name from package_versions as pv join packages as p on p.id = pv.package_id
                          where pv.id = application_packages.package_version_id),
          package_ecosystem = (select p.ecosystem from package_versions as pv join packages as p on p.id = pv.package_id
                               where pv.id = application_packages.package_version_id)`.execute(db);
      if (kind === "postgres") {
        // Ingestion always names the package; the default only served the rows above.
        await sql`alter table application_packages alter column package_name drop default`.execute(db);
        await sql`alter table application_packages alter column package_ecosystem drop default`.execute(db);
      }
      await db.schema
        .createIndex("application_packages_page")
        .on("application_packages")
        .columns([
          "application_id",
          "package_name",
          "package_ecosystem",
          "package_version_id",
          "from_seq",
          "to_seq",
        ])
        .execute();
      await db.schema
        .createIndex("external_objects_page")
        .on("external_objects")
        .columns(["application_id", "full_name", "object_id", "from_seq", "to_seq"])
        .execute();

      if (kind === "sqlite") {
        await sql`create virtual table external_objects_search using fts5(
            text, content='', contentless_delete=1, tokenize='trigram')`.execute(db);
        await sql`insert into external_objects_search (rowid, text)
            select id, ${searchText("external_objects")} from external_objects`.execute(db);
        await sql`create trigger external_objects_search_insert after insert on external_objects begin
            insert into external_objects_search (rowid, text) values (new.id, ${searchText("new")});
          end`.execute(db);
        await sql`create trigger external_objects_search_delete after delete on external_objects begin
            delete from external_objects_search where rowid = old.id;
          end`.execute(db);
        await sql`create trigger external_objects_search_update
            after update of name, full_name, mangling, type on external_objects begin
            delete from external_objects_search where rowid = old.id;
            insert into external_objects_search (rowid, text) values (new.id, ${searchText("new")});
          end`.execute(db);
      }
      // PostgreSQL's pg_trgm index is built after the migrations, at every start where it is missing
      // (search-index.ts), with the expression the live search repeats.
      await sql`analyze`.execute(db);
    },
  };
}

/** The text the trigram index holds, as this migration wrote it (sql-helpers.ts holds the live one). */
function searchText(alias: string) {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  return sql`lower(${column("name")} || '\n' || ${column("full_name")} || '\n' || ${column("mangling")} || '\n' || ${column("type")})`;
}
