import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  RawNode,
  SelectQueryNode,
  SqliteAdapter,
  type SqliteDatabase,
  SqliteDriver,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import { BEGIN_IMMEDIATE, counted, retryWhileBusy } from "./sqlite-busy.ts";
import { createReadPool, type ReadPool } from "./sqlite-read-pool.ts";

/**
 * SQLite with its reads off the event loop. Every SELECT outside a transaction runs on a worker thread
 * of the read pool, each with its own connection (WAL mode: readers never wait for the writer). Writes
 * and transactions stay on the one connection of the main thread, one at a time, so a write is
 * committed before its promise resolves and any read started afterwards sees it (read-your-writes).
 */
export function createPooledSqliteDialect(
  file: string,
  writer: SqliteDatabase,
  readWorkers: number,
  waitTimeoutMs: number,
): { dialect: Dialect; pool: ReadPool } {
  const pool = createReadPool(file, readWorkers);
  const dialect: Dialect = {
    createDriver: () => new PooledSqliteDriver(writer, pool, waitTimeoutMs),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createAdapter: () => new PooledSqliteAdapter(pool),
    createIntrospector: (db: Kysely<unknown>) => new SqliteIntrospector(db),
  };
  return { dialect, pool };
}

/** Kysely serializes every query of a single-connection adapter; here reads run side by side. */
class PooledSqliteAdapter extends SqliteAdapter {
  readonly pool: ReadPool;

  constructor(pool: ReadPool) {
    super();
    this.pool = pool;
  }

  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

/** The read pool behind a store's Kysely instance, if it has one (read-tasks.ts runs tasks on it). */
export function readPoolOf(db: { getExecutor(): { adapter: unknown } }): ReadPool | undefined {
  const adapter = db.getExecutor().adapter;
  return adapter instanceof PooledSqliteAdapter ? adapter.pool : undefined;
}

/** Raw SQL is a read only when it plainly is one; anything else goes to the writer, which is always right. */
const RAW_READ = /^\s*(select|with)\b/i;
const RAW_WRITE = /\b(insert|update|delete|replace|returning)\b/i;
const REFRESHES_STATISTICS = /^\s*(analyze|pragma\s+optimize)\b/i;

function isRead(query: CompiledQuery): boolean {
  if (SelectQueryNode.is(query.query)) return true;
  return RawNode.is(query.query) && RAW_READ.test(query.sql) && !RAW_WRITE.test(query.sql);
}

/** FIFO lock of the writer connection: held by a whole transaction, or by one write outside any. */
class WriterLock {
  #tail: Promise<void> = Promise.resolve();

  async acquire(): Promise<() => void> {
    let release!: () => void;
    const previous = this.#tail;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    return release;
  }
}

class PooledSqliteDriver implements Driver {
  readonly #writerDriver: SqliteDriver;
  readonly #pool: ReadPool;
  readonly #lock = new WriterLock();
  readonly #waitTimeoutMs: number;
  #writer: DatabaseConnection | undefined;

  constructor(writer: SqliteDatabase, pool: ReadPool, waitTimeoutMs: number) {
    this.#writerDriver = new SqliteDriver({ database: writer });
    this.#pool = pool;
    this.#waitTimeoutMs = waitTimeoutMs;
  }

  async init(): Promise<void> {
    await this.#writerDriver.init();
    this.#writer = await this.#writerDriver.acquireConnection();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this);
  }

  get writer(): DatabaseConnection {
    if (!this.#writer) throw new Error("The store is not open");
    return this.#writer;
  }

  async read(query: CompiledQuery): Promise<QueryResult<unknown>> {
    try {
      return { rows: await this.#pool.read(query.sql, toInputs(query.parameters)) };
    } catch (error) {
      throw counted(error);
    }
  }

  /** A statement of a transaction this process holds: the write lock is taken, a fault is counted. */
  async inTransaction<R>(run: () => Promise<R>): Promise<R> {
    try {
      return await run();
    } catch (error) {
      throw counted(error);
    }
  }

  async write<R>(query: CompiledQuery, run: () => Promise<R>): Promise<R> {
    const release = await this.#lock.acquire();
    try {
      return await retryWhileBusy(run, this.#waitTimeoutMs);
    } finally {
      if (REFRESHES_STATISTICS.test(query.sql)) this.#pool.statisticsChanged();
      release();
    }
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutedConnection;
    const release = await this.#lock.acquire();
    try {
      await retryWhileBusy(() => this.writer.executeQuery(BEGIN_IMMEDIATE), this.#waitTimeoutMs);
    } catch (error) {
      release();
      throw error;
    }
    routed.transaction = release;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutedConnection;
    // A failed commit keeps the lock: Kysely rolls back next, which releases it.
    await this.writer.executeQuery(CompiledQuery.raw("commit"));
    routed.endTransaction();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const routed = connection as RoutedConnection;
    try {
      await this.writer.executeQuery(CompiledQuery.raw("rollback"));
    } finally {
      routed.endTransaction();
    }
  }

  async savepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    await this.writer.executeQuery(CompiledQuery.raw(`savepoint ${quoteName(name)}`));
  }

  async rollbackToSavepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    await this.writer.executeQuery(CompiledQuery.raw(`rollback to ${quoteName(name)}`));
  }

  async releaseSavepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    await this.writer.executeQuery(CompiledQuery.raw(`release ${quoteName(name)}`));
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    // In-flight reads are answered, then every reader closes; the writer waits for a running write.
    await this.#pool.close();
    const release = await this.#lock.acquire();
    try {
      await this.#writerDriver.destroy();
    } finally {
      release();
    }
  }
}

/** What Kysely holds for one query or one transaction: it decides per query where it runs. */
class RoutedConnection implements DatabaseConnection {
  readonly #driver: PooledSqliteDriver;
  /** Set while this connection holds a transaction: releases the writer lock. */
  transaction: (() => void) | undefined;

  constructor(driver: PooledSqliteDriver) {
    this.#driver = driver;
  }

  endTransaction(): void {
    const release = this.transaction;
    this.transaction = undefined;
    release?.();
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const writer = this.#driver.writer;
    if (this.transaction) return this.#driver.inTransaction(() => writer.executeQuery<R>(query));
    if (isRead(query)) return this.#driver.read(query) as Promise<QueryResult<R>>;
    return this.#driver.write(query, () => writer.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    const writer = this.#driver.writer;
    if (this.transaction) {
      yield* writer.streamQuery<R>(query, chunkSize ?? 1);
      return;
    }
    // Streaming keeps a statement open across awaits: only on the writer, holding its lock throughout.
    const rows: QueryResult<R>[] = [];
    await this.#driver.write(query, async () => {
      for await (const chunk of writer.streamQuery<R>(query, chunkSize ?? 1)) rows.push(chunk);
    });
    yield* rows;
  }
}

function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function toInputs(parameters: ReadonlyArray<unknown>): unknown[] {
  return parameters.map((value) => {
    if (typeof value === "boolean") return value ? 1 : 0;
    if (value === undefined) return null;
    return value;
  });
}
