/**
 * Where a read task (read-tasks.ts) runs. On SQLite with the read pool, in a reader thread on its own
 * connection: only the finished answer comes back, one string, so the thread that serves the gateway,
 * the identity provider and the MCP servers neither parses rows nor builds the text. Elsewhere
 * (PostgreSQL, no pool, inside a transaction) on the calling thread: the same text.
 */
import { performance } from "node:perf_hooks";
import { storeQueryDuration } from "../observability/metrics.ts";
import type { OccurrenceQuery } from "./insights.ts";
import { readPoolOf } from "./pooled-sqlite-dialect.ts";
import { type Db, READ_TASKS, type ReadTaskName } from "./read-tasks.ts";
import type { LeasedBytes } from "./sqlite-read-pool.ts";

export function runReadTask<N extends ReadTaskName>(
  db: Db,
  name: N,
  args: Parameters<(typeof READ_TASKS)[N]>[1],
): Promise<string> {
  return run(db, name, args, false) as Promise<string>;
}

async function run<N extends ReadTaskName>(
  db: Db,
  name: N,
  args: Parameters<(typeof READ_TASKS)[N]>[1],
  bytes: boolean,
): Promise<string | LeasedBytes> {
  // A transaction's reads must see its own writes: only its connection can run them.
  const pool = db.isTransaction ? undefined : readPoolOf(db);
  if (!pool) return READ_TASKS[name](db, args);
  // The worker's statements bypass this thread's query log: the task counts as one read in the histogram.
  const started = performance.now();
  let outcome = "error";
  try {
    const text = await (bytes ? pool.taskBytes(name, args) : pool.task(name, args));
    outcome = "ok";
    return text;
  } finally {
    storeQueryDuration.observe(
      { store: "sqlite", statement: "select", outcome },
      (performance.now() - started) / 1000,
    );
  }
}

/**
 * The same page for an HTTP answer: its UTF-8 bytes in a buffer of the read pool where a reader built it
 * (release it once the answer is finished), else its text. Sent as bytes, the page costs the main
 * thread no copy from the reader, no UTF-8 length scan and no encoding (docs/benchmarks.md).
 */
export function occurrencesPageForAnswer(db: Db, query: OccurrenceQuery): Promise<string | LeasedBytes> {
  return run(db, "occurrencesJson", query, true);
}
