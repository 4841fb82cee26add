import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type SqliteDriver,
  type TransactionSettings,
} from "kysely";
import { storeErrors } from "../observability/metrics.ts";
import { asStoreUnavailable } from "./store-errors.ts";

/**
 * SQLite's write lock, held by another process (an `imaging` command importing into the same file), is
 * waited for without blocking the event loop: node:sqlite runs on the calling thread, so its own busy
 * timeout would freeze every request of the process while it waits. The main thread's connection has
 * no busy timeout; a statement outside a transaction, or a transaction's `BEGIN IMMEDIATE` (the write
 * lock taken up front, so nothing later in the transaction can find it taken), that finds the file
 * locked is tried again with backoff until `waitTimeoutMs`, then fails as StoreUnavailableError (503).
 */
export async function retryWhileBusy<T>(run: () => Promise<T>, waitTimeoutMs: number): Promise<T> {
  const deadline = Date.now() + waitTimeoutMs;
  for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
    try {
      return await run();
    } catch (error) {
      const fault = asStoreUnavailable(error);
      if (fault?.kind !== "busy" || Date.now() + wait > deadline) throw counted(error);
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** A store fault as StoreUnavailableError, counted in the metrics; any other error as it is. */
export function counted(error: unknown): unknown {
  const fault = asStoreUnavailable(error);
  if (!fault) return error;
  storeErrors.inc({ store: "sqlite", kind: fault.kind });
  return fault;
}

/** The statement that opens a transaction on the main thread's connection. */
export const BEGIN_IMMEDIATE = CompiledQuery.raw("begin immediate");

/** Kysely's SqliteDriver (one connection, on the event loop) with the waits above. */
export class BusyAwareSqliteDriver implements Driver {
  readonly #inner: SqliteDriver;
  readonly #waitTimeoutMs: number;

  constructor(inner: SqliteDriver, waitTimeoutMs: number) {
    this.#inner = inner;
    this.#waitTimeoutMs = waitTimeoutMs;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new BusyAwareConnection(await this.#inner.acquireConnection(), this.#waitTimeoutMs);
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings): Promise<void> {
    const aware = connection as BusyAwareConnection;
    await retryWhileBusy(() => aware.inner.executeQuery(BEGIN_IMMEDIATE), this.#waitTimeoutMs);
    aware.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const aware = connection as BusyAwareConnection;
    await this.#inner.commitTransaction(aware.inner);
    aware.inTransaction = false;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const aware = connection as BusyAwareConnection;
    aware.inTransaction = false;
    await this.#inner.rollbackTransaction(aware.inner);
  }

  savepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<SqliteDriver["savepoint"]>[2],
  ): Promise<void> {
    return this.#inner.savepoint((connection as BusyAwareConnection).inner, name, compile);
  }

  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<SqliteDriver["rollbackToSavepoint"]>[2],
  ): Promise<void> {
    return this.#inner.rollbackToSavepoint((connection as BusyAwareConnection).inner, name, compile);
  }

  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<SqliteDriver["releaseSavepoint"]>[2],
  ): Promise<void> {
    return this.#inner.releaseSavepoint((connection as BusyAwareConnection).inner, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return (this.#inner as Driver).releaseConnection((connection as BusyAwareConnection).inner);
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}

class BusyAwareConnection implements DatabaseConnection {
  readonly inner: DatabaseConnection;
  readonly #waitTimeoutMs: number;
  inTransaction = false;

  constructor(inner: DatabaseConnection, waitTimeoutMs: number) {
    this.inner = inner;
    this.#waitTimeoutMs = waitTimeoutMs;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.inTransaction)
      return retryWhileBusy(() => this.inner.executeQuery<R>(query), this.#waitTimeoutMs);
    try {
      return await this.inner.executeQuery<R>(query);
    } catch (error) {
      throw counted(error);
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}
