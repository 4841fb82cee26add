import { availableParallelism } from "node:os";
import { dirname } from "node:path";
import { Kysely, type LogEvent, PostgresDialect } from "kysely";
import { type Migration, type MigrationProvider, Migrator } from "kysely/migration";
import { observeStorePool, statementKind, storeQueryDuration, storeUp } from "../observability/metrics.ts";
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
import { listSearchMigration } from "./migrations/016-list-search.ts";
import { compareAndGateModelsMigration } from "./migrations/017-compare-and-gate-models.ts";
import { referenceRangeTotalsMigration } from "./migrations/018-reference-range-totals.ts";
import { gateFindingsMigration } from "./migrations/019-gate-findings.ts";
import { sqliteObjectListsMigration } from "./migrations/020-sqlite-object-lists.ts";
import { registrationCountsMigration } from "./migrations/021-registration-counts.ts";
import { advisoryProvenanceMigration } from "./migrations/022-advisory-provenance.ts";
import { packageSourcesAndFactsQueueMigration } from "./migrations/023-package-sources-and-facts-queue.ts";
import { packageVersionsOfObjectsMigration } from "./migrations/024-package-versions-of-objects.ts";
import { defaultGateTuningMigration } from "./migrations/025-default-gate-tuning.ts";
import { readModelRebuildsMigration } from "./migrations/026-read-model-rebuilds.ts";
import { createNodeSqliteDialect, openNodeSqliteDatabase } from "./node-sqlite-dialect.ts";
import { createPooledSqliteDialect } from "./pooled-sqlite-dialect.ts";
import { createGuardedPool, type GuardedPool, parsePostgresUrl } from "./postgres-pool.ts";
import { rebuildRequestedReadModels } from "./read-model-rebuild.ts";
import type { Database } from "./schema.ts";
import { ensurePgSearchIndex } from "./search-index.ts";

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
  /**
   * Whether the store is taken as available. PostgreSQL: false while the database is known to be down
   * (a new connection failed), with a reason that names no host; queries are then refused at once
   * (StoreUnavailableError) while the pool reconnects with backoff.
   */
  availability(): { available: true } | { available: false; reason: string };
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
  /**
   * Milliseconds a query waits for the store before a StoreUnavailableError: PostgreSQL, to connect or for
   * a free connection of the pool; SQLite, for the write lock another process holds (default 5 s).
   */
  waitTimeoutMs?: number | undefined;
  /**
   * PostgreSQL: milliseconds a statement may run (the server's statement_timeout; the client gives up 5 s
   * later, a server that stopped answering). Unset: no limit (the CLI's long imports). Migrations never
   * have one.
   */
  statementTimeoutMs?: number | undefined;
  /** The store's state changes (database down with its cause, back), for the process's log. */
  notify?: (line: string) => void;
}

/**
 * One reader per core for the heavy reads (at least two, at most eight), plus one they never take, so
 * that a short lookup (a sign-in, an API key, a tool's small page) never waits behind them.
 */
export function defaultReadWorkers(): number {
  return Math.max(2, Math.min(availableParallelism(), 8)) + 1;
}

/** How long a query waits for the store by default (a connection, or SQLite's write lock). */
export const DEFAULT_WAIT_TIMEOUT_MS = 5_000;

export async function openStore(options: OpenStoreOptions): Promise<StoreHandle> {
  const log = timedQueries(options.databaseUrl ? "postgres" : "sqlite", options.log);
  const waitTimeoutMs = options.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const notify = options.notify ?? (() => {});
  if (!options.databaseUrl) {
    const handle = openSqlite(
      options.sqliteFile,
      options.readWorkers ?? defaultReadWorkers(),
      waitTimeoutMs,
      log,
    );
    if (options.migrate ?? true) {
      try {
        handle.migrated = await migrateToLatest(handle);
      } catch (error) {
        await handle.close();
        throw error;
      }
    }
    return handle;
  }
  const { default: pg } = await import("pg");
  const location = parsePostgresUrl(options.databaseUrl);
  const open = (statementTimeoutMs: number | undefined, max: number) =>
    openPostgres(
      pg,
      createGuardedPool(pg, { location, max, waitTimeoutMs, statementTimeoutMs, log: notify }),
      location.safe,
      log,
    );
  const handle = observed(open(options.statementTimeoutMs, 10));
  if (options.migrate ?? true) {
    // Migrations and the index build run without a statement timeout (a trigram index over millions of
    // objects takes minutes): on connections of their own when the store's statements have one.
    const migrating = options.statementTimeoutMs === undefined ? handle : open(undefined, 2);
    try {
      handle.migrated = await migrateToLatest(migrating);
      const index = await ensurePgSearchIndex(migrating.db);
      // a new store builds it as part of its creation: only a later build is news
      if (index === "built" && !createdNow(handle.migrated))
        handle.notices.push("built the trigram index of objects?q= (external_objects_search)");
      else if (typeof index === "object") handle.notices.push(index.missing);
    } catch (error) {
      await handle.close();
      throw error;
    } finally {
      if (migrating !== handle) {
        handle.notices.push(...migrating.notices);
        await migrating.close();
      }
    }
  }
  return handle;
}

/** The handle's pool in the process's metrics until it closes. */
function observed(handle: StoreHandle): StoreHandle {
  const unobserve = observeStorePool(() => pool(handle).stats());
  const close = handle.close;
  handle.close = async () => {
    unobserve();
    await close();
  };
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

function openSqlite(
  file: string,
  readWorkers: number,
  waitTimeoutMs: number,
  log?: (event: LogEvent) => void,
): StoreHandle {
  const notices = [...secureDataDirectory(dirname(file)), ...secureSqliteFiles(file)];
  // An in-memory database has no file another connection could open.
  const pooled = readWorkers > 0 && file !== "" && file !== ":memory:" && !file.startsWith("file:");
  const { dialect } = pooled
    ? createPooledSqliteDialect(file, openNodeSqliteDatabase(file).database, readWorkers, waitTimeoutMs)
    : createNodeSqliteDialect(file, waitTimeoutMs);
  const db = new Kysely<Database>({ dialect, ...(log ? { log } : {}) });
  storeUp.set({ store: "sqlite" }, 1);
  return {
    db,
    kind: "sqlite",
    location: file,
    notices,
    migrated: [],
    availability: () => ({ available: true }),
    close: () => db.destroy(),
  };
}

const pools = new WeakMap<StoreHandle, GuardedPool>();
const pool = (handle: StoreHandle) => pools.get(handle) as GuardedPool;

function openPostgres(
  pg: typeof import("pg").default,
  guarded: GuardedPool,
  location: string,
  log?: (event: LogEvent) => void,
): StoreHandle {
  // Numeric/bigint columns come back as strings by default; our counts fit in JS numbers.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));
  pg.types.setTypeParser(pg.types.builtins.FLOAT4, (v) => Number.parseFloat(v));
  pg.types.setTypeParser(pg.types.builtins.FLOAT8, (v) => Number.parseFloat(v));
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: guarded }),
    ...(log ? { log } : {}),
  });
  const handle: StoreHandle = {
    db,
    kind: "postgres",
    location,
    notices: [],
    migrated: [],
    availability: () => guarded.availability(),
    close: async () => {
      await db.destroy();
    },
  };
  pools.set(handle, guarded);
  return handle;
}

/**
 * Every migration, in order: the name recorded in the store, and the migration for a store kind. A new
 * one is a line here (and its file); it must leave the previous release able to run on the new schema
 * (add, never rename or drop in the same release): during a rolling upgrade both run at once. It carries
 * its own SQL (a lint rule keeps live code out of migrations/); read models are rebuilt after the last
 * one when a migration asks (read-model-rebuild.ts).
 */
export const MIGRATIONS: readonly (readonly [name: string, migration: (kind: StoreKind) => Migration])[] = [
  ["001-initial", initialMigration],
  ["002-gate-rules", gateRulesMigration],
  ["003-users", usersMigration],
  ["004-cimd", cimdMigration],
  ["005-oidc", oidcMigration],
  ["006-open-objects-index", openObjectsIndexMigration],
  ["007-hashed-oidc-keys", hashedOidcKeysMigration],
  ["008-advisory-records", advisoryRecordsMigration],
  ["009-registered-clients", registeredClientsMigration],
  ["011-affected-functions", affectedFunctionsMigration],
  ["012-occurrence-model", occurrenceModelMigration],
  ["013-service-state", serviceStateMigration],
  ["014-console-sessions", consoleSessionsMigration],
  ["015-occurrence-object-lists", occurrenceObjectListsMigration],
  ["016-list-search", listSearchMigration],
  ["017-compare-and-gate-models", compareAndGateModelsMigration],
  ["018-reference-range-totals", referenceRangeTotalsMigration],
  ["019-gate-findings", gateFindingsMigration],
  ["020-sqlite-object-lists", sqliteObjectListsMigration],
  ["021-registration-counts", registrationCountsMigration],
  ["022-advisory-provenance", advisoryProvenanceMigration],
  ["023-package-sources-and-facts-queue", packageSourcesAndFactsQueueMigration],
  ["024-package-versions-of-objects", packageVersionsOfObjectsMigration],
  ["025-default-gate-tuning", defaultGateTuningMigration],
  ["026-read-model-rebuilds", readModelRebuildsMigration],
];

/** Whether these applied migrations created the store: then start-up work on it is no news for the log. */
const createdNow = (applied: readonly string[]): boolean => applied.includes(MIGRATIONS[0]?.[0] ?? "");

/** The migrations' names, in order. */
export const migrationNames: readonly string[] = MIGRATIONS.map(([name]) => name);

/**
 * This build's migrations, plus a no-op for each one the store has that this build does not know: a
 * newer build applied it (a rolling upgrade under way, or rolled back), and this one runs on that schema
 * (the rule above), where Kysely would refuse to start.
 */
function inCodeMigrations(kind: StoreKind, newer: readonly string[]): MigrationProvider {
  return {
    getMigrations: async (): Promise<Record<string, Migration>> => ({
      ...Object.fromEntries(newer.map((name) => [name, { up: async () => {} }])),
      ...Object.fromEntries(MIGRATIONS.map(([name, migration]) => [name, migration(kind)])),
    }),
  };
}

/** The migrations recorded in the store that this build does not have (none on a fresh store). */
async function newerMigrations(handle: StoreHandle): Promise<string[]> {
  const known = new Set(MIGRATIONS.map(([name]) => name));
  const tables = await handle.db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((table) => table.name === "kysely_migration")) return [];
  const rows = await handle.db
    .selectFrom("kysely_migration" as never)
    .select("name" as never)
    .execute();
  return (rows as { name: string }[]).map((row) => row.name).filter((name) => !known.has(name));
}

export async function migrateToLatest(handle: StoreHandle): Promise<string[]> {
  // On PostgreSQL, Kysely's Migrator holds a session advisory lock (pg_advisory_lock) while it checks
  // and applies migrations, so replicas starting together apply each migration once and the others
  // wait, then find nothing left to do. On SQLite, one file is one machine: its write lock suffices.
  // Migrations are independent of each other, and one developed beside another may land after it: a store
  // that already ran 008 still takes 007.
  const newer = await newerMigrations(handle);
  if (newer.length > 0) {
    handle.notices.push(
      `the store has migrations a newer build applied (${newer.join(", ")}): this build runs on that schema`,
    );
  }
  const migrator = new Migrator({
    db: handle.db,
    provider: inCodeMigrations(handle.kind, newer),
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`Store migration ${failed} failed on ${handle.location}: ${(error as Error).message}`);
  }
  const applied = (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
  const rebuilt = await rebuildRequestedReadModels(handle.db);
  // a new store has nothing to rebuild: only an upgraded one says so
  if (rebuilt.length > 0 && !createdNow(applied))
    handle.notices.push(`rebuilt the read models from the stored analyses (asked by ${rebuilt.join(", ")})`);
  return applied;
}
