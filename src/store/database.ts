import { availableParallelism } from "node:os";
import { dirname } from "node:path";
import { Kysely, type LogEvent, PostgresDialect } from "kysely";
import { type Migration, type MigrationProvider, Migrator } from "kysely/migration";
import { statementKind, storeQueryDuration } from "../observability/metrics.ts";
import { secureDataDirectory, secureSqliteFiles } from "./file-modes.ts";
import { initialMigration } from "./migrations/001-initial.ts";
import { gateRulesMigration } from "./migrations/002-gate-rules.ts";
import { usersMigration } from "./migrations/003-users.ts";
import { cimdMigration } from "./migrations/004-cimd.ts";
import { oidcMigration } from "./migrations/005-oidc.ts";
import { openObjectsIndexMigration } from "./migrations/006-open-objects-index.ts";
import { hashedOidcKeysMigration } from "./migrations/007-hashed-oidc-keys.ts";
import { advisoryRecordsMigration } from "./migrations/008-advisory-records.ts";
import { registeredClientsMigration } from "./migrations/009-registered-clients.ts";
import { affectedFunctionsMigration } from "./migrations/011-affected-functions.ts";
import { occurrenceModelMigration } from "./migrations/012-occurrence-model.ts";
import { serviceStateMigration } from "./migrations/013-service-state.ts";
import { consoleSessionsMigration } from "./migrations/014-console-sessions.ts";
import { occurrenceObjectListsMigration } from "./migrations/015-occurrence-object-lists.ts";
import { ensurePgSearchIndex, listSearchMigration } from "./migrations/016-list-search.ts";
import { compareAndGateModelsMigration } from "./migrations/017-compare-and-gate-models.ts";
import { referenceRangeTotalsMigration } from "./migrations/018-reference-range-totals.ts";
import { gateFindingsMigration } from "./migrations/019-gate-findings.ts";
import { sqliteObjectListsMigration } from "./migrations/020-sqlite-object-lists.ts";
import { packageSourcesAndFactsQueueMigration } from "./migrations/024-package-sources-and-facts-queue.ts";
import { createNodeSqliteDialect, openNodeSqliteDatabase } from "./node-sqlite-dialect.ts";
import { createPooledSqliteDialect } from "./pooled-sqlite-dialect.ts";
import type { Database } from "./schema.ts";

export type StoreKind = "sqlite" | "postgres";

export interface StoreHandle {
  db: Kysely<Database>;
  kind: StoreKind;
  /** Where the data lives, for messages (never includes a password). */
  location: string;
  /** What opening changed on disk for safety (data directory or store files tightened), for the log. */
  notices: string[];
  /** The migrations this opening applied (replicas starting together: exactly one of them applies each). */
  migrated: string[];
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  databaseUrl?: string | undefined;
  sqliteFile: string;
  /** Run pending migrations (default true). */
  migrate?: boolean;
  /**
   * SQLite: worker threads that run the reads, each with its own connection (default: one per core,
   * 2 to 8, plus one that heavy reads never take); 0 runs every query on the calling thread's event loop.
   */
  readWorkers?: number | undefined;
  /** Kysely's query log (the benchmarks time statements with it). */
  log?: (event: LogEvent) => void;
}

/**
 * One reader per core for the heavy reads (at least two, at most eight), plus one they never take, so
 * that a short lookup (a sign-in, an API key, a tool's small page) never waits behind them.
 */
export function defaultReadWorkers(): number {
  return Math.max(2, Math.min(availableParallelism(), 8)) + 1;
}

export async function openStore(options: OpenStoreOptions): Promise<StoreHandle> {
  const log = timedQueries(options.databaseUrl ? "postgres" : "sqlite", options.log);
  const handle = options.databaseUrl
    ? await openPostgres(options.databaseUrl, log)
    : openSqlite(options.sqliteFile, options.readWorkers ?? defaultReadWorkers(), log);
  if (options.migrate ?? true) {
    try {
      handle.migrated = await migrateToLatest(handle);
      if (handle.kind === "postgres") {
        const notice = await ensurePgSearchIndex(handle.db);
        if (notice) handle.notices.push(notice);
      }
    } catch (error) {
      await handle.close();
      throw error;
    }
  }
  return handle;
}

/** Every query's time goes to the store latency histogram (the process's metrics), then to `log` if any. */
function timedQueries(store: StoreKind, log?: (event: LogEvent) => void): (event: LogEvent) => void {
  return (event) => {
    storeQueryDuration.observe(
      {
        store,
        statement: statementKind(event.query.sql),
        outcome: event.level === "error" ? "error" : "ok",
      },
      event.queryDurationMillis / 1000,
    );
    log?.(event);
  };
}

function openSqlite(file: string, readWorkers: number, log?: (event: LogEvent) => void): StoreHandle {
  const notices = [...secureDataDirectory(dirname(file)), ...secureSqliteFiles(file)];
  // An in-memory database has no file another connection could open.
  const pooled = readWorkers > 0 && file !== "" && file !== ":memory:" && !file.startsWith("file:");
  const { dialect } = pooled
    ? createPooledSqliteDialect(file, openNodeSqliteDatabase(file).database, readWorkers)
    : createNodeSqliteDialect(file);
  const db = new Kysely<Database>({ dialect, ...(log ? { log } : {}) });
  return { db, kind: "sqlite", location: file, notices, migrated: [], close: () => db.destroy() };
}

async function openPostgres(url: string, log?: (event: LogEvent) => void): Promise<StoreHandle> {
  // The driver is loaded with the first PostgreSQL store: a SQLite deployment never needs it.
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle connection the server drops (restart, failover) is discarded by the pool, and the next
  // query reconnects or fails where it is answered. Unlistened, this event would end the process.
  pool.on("error", () => {});
  // Numeric/bigint columns come back as strings by default; our counts fit in JS numbers.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));
  pg.types.setTypeParser(pg.types.builtins.FLOAT4, (v) => Number.parseFloat(v));
  pg.types.setTypeParser(pg.types.builtins.FLOAT8, (v) => Number.parseFloat(v));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), ...(log ? { log } : {}) });
  const safe = new URL(url);
  safe.password = "";
  return {
    db,
    kind: "postgres",
    location: safe.toString(),
    notices: [],
    migrated: [],
    close: () => db.destroy(),
  };
}

export const migrationNames = [
  "001-initial",
  "002-gate-rules",
  "003-users",
  "004-cimd",
  "005-oidc",
  "006-open-objects-index",
  "007-hashed-oidc-keys",
  "008-advisory-records",
  "009-registered-clients",
  "011-affected-functions",
  "012-occurrence-model",
  "013-service-state",
  "014-console-sessions",
  "015-occurrence-object-lists",
  "016-list-search",
  "017-compare-and-gate-models",
  "018-reference-range-totals",
  "019-gate-findings",
  "020-sqlite-object-lists",
  "024-package-sources-and-facts-queue",
] as const;

function inCodeMigrations(kind: StoreKind): MigrationProvider {
  return {
    getMigrations: async (): Promise<Record<string, Migration>> => ({
      [migrationNames[0]]: initialMigration(kind),
      [migrationNames[1]]: gateRulesMigration(kind),
      [migrationNames[2]]: usersMigration(kind),
      [migrationNames[3]]: cimdMigration(kind),
      [migrationNames[4]]: oidcMigration(kind),
      [migrationNames[5]]: openObjectsIndexMigration(),
      [migrationNames[6]]: hashedOidcKeysMigration(),
      [migrationNames[7]]: advisoryRecordsMigration(kind),
      [migrationNames[8]]: registeredClientsMigration(),
      [migrationNames[9]]: affectedFunctionsMigration(kind),
      [migrationNames[10]]: occurrenceModelMigration(kind),
      [migrationNames[11]]: serviceStateMigration(),
      [migrationNames[12]]: consoleSessionsMigration(),
      [migrationNames[13]]: occurrenceObjectListsMigration(kind),
      [migrationNames[14]]: listSearchMigration(kind),
      [migrationNames[15]]: compareAndGateModelsMigration(kind),
      [migrationNames[16]]: referenceRangeTotalsMigration(kind),
      [migrationNames[17]]: gateFindingsMigration(kind),
      [migrationNames[18]]: sqliteObjectListsMigration(kind),
      [migrationNames[19]]: packageSourcesAndFactsQueueMigration(kind),
    }),
  };
}

export async function migrateToLatest(handle: StoreHandle): Promise<string[]> {
  // On PostgreSQL, Kysely's Migrator holds a session advisory lock (pg_advisory_lock) while it checks
  // and applies migrations, so replicas starting together apply each migration once and the others
  // wait, then find nothing left to do. On SQLite, one file is one machine: its write lock suffices.
  // Migrations are independent of each other, and one developed beside another may land after it: a store
  // that already ran 008 still takes 007.
  const migrator = new Migrator({
    db: handle.db,
    provider: inCodeMigrations(handle.kind),
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`Store migration ${failed} failed on ${handle.location}: ${(error as Error).message}`);
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
