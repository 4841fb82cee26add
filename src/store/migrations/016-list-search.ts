import { type Kysely, sql } from "kysely";
import type { StoreKind } from "../database.ts";
import { searchText } from "../sql-helpers.ts";

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
 *   and every cascade keeps it), pg_trgm's GIN index on PostgreSQL. pg_trgm is a trusted extension
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
      } else if (await canUsePgTrgm(db)) {
        await createPgSearchIndex(db);
      }
      await sql`analyze`.execute(db);
    },
  };
}

async function createPgSearchIndex<DB>(db: Kysely<DB>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`create index if not exists external_objects_search on external_objects
      using gin ((${searchText("external_objects")}) gin_trgm_ops)`.execute(db);
}

/**
 * At every start on PostgreSQL: the objects search's trigram index exists, or is created now that
 * pg_trgm can be (an administrator installed it after migration 016 ran without it); otherwise a
 * notice for the log says what an administrator must do. Answers are the same either way.
 */
export async function ensurePgSearchIndex<DB>(db: Kysely<DB>): Promise<string | undefined> {
  const { rows } = await sql<{ found: boolean }>`select exists (select 1 from pg_indexes
      where indexname = 'external_objects_search' and schemaname = current_schema()) as found`.execute(db);
  if (rows[0]?.found) return undefined;
  const fix =
    "objects?q= searches without its trigram index (slow on large applications): a database superuser runs " +
    "CREATE EXTENSION pg_trgm in this database (or grants this role CREATE on it), then the next start builds the index";
  if (!(await canUsePgTrgm(db))) return fix;
  try {
    await createPgSearchIndex(db);
    return "built the trigram index of objects?q= (external_objects_search)";
  } catch (error) {
    return `${fix} (building it failed: ${(error as Error).message})`;
  }
}

/** pg_trgm is installed, or this role may install it (a trusted extension and CREATE on the database). */
export async function canUsePgTrgm<DB>(db: Kysely<DB>): Promise<boolean> {
  const { rows } = await sql<{ installed: boolean; allowed: boolean }>`select
      exists (select 1 from pg_extension where extname = 'pg_trgm') as installed,
      exists (select 1 from pg_available_extension_versions where name = 'pg_trgm' and trusted)
        and has_database_privilege(current_database(), 'CREATE') as allowed`.execute(db);
  const [row] = rows;
  return Boolean(row?.installed || row?.allowed);
}
