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

export async function runReadTask<N extends ReadTaskName>(
  db: Db,
  name: N,
  args: Parameters<(typeof READ_TASKS)[N]>[1],
): Promise<string> {
  // A transaction's reads must see its own writes: only its connection can run them.
  const pool = db.isTransaction ? undefined : readPoolOf(db);
  if (!pool) return READ_TASKS[name](db, args);
  // The worker's statements bypass this thread's query log: the task counts as one read in the histogram.
  const started = performance.now();
  let outcome = "error";
  try {
    const text = await pool.task(name, args);
    outcome = "ok";
    return text;
  } finally {
    storeQueryDuration.observe(
      { store: "sqlite", statement: "select", outcome },
      (performance.now() - started) / 1000,
    );
  }
}

/** The occurrences page's JSON text (listOccurrencesJson), built in a reader thread where there is one. */
export function listOccurrencesPage(db: Db, query: OccurrenceQuery): Promise<string> {
  return runReadTask(db, "occurrencesJson", query);
}
