import { type Kysely, sql } from "kysely";
import { searchText } from "./sql-helpers.ts";

/**
 * At every start on PostgreSQL, after the migrations: the objects search's trigram index (pg_trgm's GIN
 * index over searchText, the expression the search repeats so that the planner finds it) exists, or is
 * built now that pg_trgm can be (a new store, or an administrator installed the extension since);
 * otherwise what an administrator must do, for the log. Answers are the same either way.
 * pg_trgm is a trusted extension (PostgreSQL 13+): the store's role creates it when it has CREATE on the
 * database.
 */
export async function ensurePgSearchIndex<DB>(
  db: Kysely<DB>,
): Promise<"present" | "built" | { missing: string }> {
  const { rows } = await sql<{ found: boolean }>`select exists (select 1 from pg_indexes
      where indexname = 'external_objects_search' and schemaname = current_schema()) as found`.execute(db);
  if (rows[0]?.found) return "present";
  const fix =
    "objects?q= searches without its trigram index (slow on large applications): a database superuser runs " +
    "CREATE EXTENSION pg_trgm in this database (or grants this role CREATE on it), then the next start builds the index";
  if (!(await canUsePgTrgm(db))) return { missing: fix };
  try {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`create index if not exists external_objects_search on external_objects
        using gin ((${searchText("external_objects")}) gin_trgm_ops)`.execute(db);
    return "built";
  } catch (error) {
    return { missing: `${fix} (building it failed: ${(error as Error).message})` };
  }
}

/** pg_trgm is installed, or this role may install it (a trusted extension and CREATE on the database). */
async function canUsePgTrgm<DB>(db: Kysely<DB>): Promise<boolean> {
  const { rows } = await sql<{ installed: boolean; allowed: boolean }>`select
      exists (select 1 from pg_extension where extname = 'pg_trgm') as installed,
      exists (select 1 from pg_available_extension_versions where name = 'pg_trgm' and trusted)
        and has_database_privilege(current_database(), 'CREATE') as allowed`.execute(db);
  const [row] = rows;
  return Boolean(row?.installed || row?.allowed);
}
