import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { runCostMs } from "./sqlite-read-protocol.ts";

/**
 * A read-only connection on the main thread for the statements that are cheaper to run than to hand to
 * a worker of the read pool (sqlite-read-pool.ts). Handing over a read costs the main thread a message
 * each way, a JSON round trip and a thread wake-up, and the worker's thread its own share: more CPU than a
 * lookup that runs in tens of microseconds (docs/benchmarks.md, "MCP server (direct path)": a tool
 * call's one query cost ~0.5 ms of CPU through the pool). Only statements measured cheap run here: below
 * INLINE_READ_MS of CPU on average over at least INLINE_AFTER_RUNS runs, and never above
 * INLINE_LONGEST_MS; a run above that sends the statement back to the pool for good, so the event loop is
 * held longer than that at most once per statement.
 */
export const INLINE_READ_MS = 0.5;
/** Runs of a statement before it may run here. */
export const INLINE_AFTER_RUNS = 20;
/** A statement that once took longer than this (CPU ms) always runs in the pool. */
export const INLINE_LONGEST_MS = 3;

interface InlineReader {
  /** Rows as arrays and their column names (as the workers answer), or undefined when SQLite is busy. */
  read(sql: string, parameters: unknown[]): { columns: string[]; rows: unknown[][]; ms: number } | undefined;
  statisticsChanged(): void;
  close(): void;
}

const STATEMENT_CACHE_SIZE = 200;

export function createInlineReader(file: string): InlineReader {
  let db: DatabaseSync | undefined;
  const prepared = new Map<string, StatementSync>();
  const open = () => {
    // Read-only, as the workers: a routing mistake fails loudly. No busy wait on the event loop: a busy
    // database (rare in WAL mode) sends the read to the pool instead.
    const connection = new DatabaseSync(file, { readOnly: true });
    connection.exec("PRAGMA busy_timeout = 0");
    return connection;
  };
  const statement = (sql: string): StatementSync => {
    let found = prepared.get(sql);
    if (!found) {
      if (prepared.size >= STATEMENT_CACHE_SIZE) prepared.delete(prepared.keys().next().value as string);
      db ??= open();
      found = db.prepare(sql);
      found.setReturnArrays(true);
      prepared.set(sql, found);
    }
    return found;
  };
  return {
    read(sql, parameters) {
      try {
        const query = statement(sql);
        const startedAt = performance.now();
        const started = process.threadCpuUsage();
        const rows = query.all(...(parameters as SQLInputValue[])) as unknown as unknown[][];
        const columns = query.columns().map((c) => c.name);
        return { columns, rows, ms: runCostMs(process.threadCpuUsage(started), startedAt) };
      } catch (error) {
        // SQLITE_BUSY (5) or SQLITE_LOCKED (6): the pool's readers wait for it off the event loop.
        const code = (error as { errcode?: number }).errcode;
        if (code !== undefined && (code & 0xff) >= 5 && (code & 0xff) <= 6) return undefined;
        throw error;
      }
    },
    statisticsChanged() {
      // Like the workers: a new connection loads the planner's new statistics.
      prepared.clear();
      db?.close();
      db = undefined;
    },
    close() {
      prepared.clear();
      db?.close();
      db = undefined;
    },
  };
}
