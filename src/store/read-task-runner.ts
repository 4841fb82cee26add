/**
 * Where a read task (read-tasks.ts) runs. On SQLite with the read pool, in a reader thread on its own
 * connection: only the finished answer's UTF-8 bytes come back, moved without a copy, so the thread that
 * serves the gateway, the identity provider and the MCP servers neither parses rows nor builds the
 * text. Elsewhere (PostgreSQL, no pool, inside a transaction) on the calling thread: the same bytes.
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
): Promise<Buffer> {
  // A transaction's reads must see its own writes: only its connection can run them.
  const pool = db.isTransaction ? undefined : readPoolOf(db);
  if (!pool) return Buffer.from(await READ_TASKS[name](db, args));
  // The worker's statements bypass this thread's query log: the task counts as one read in the histogram.
  const started = performance.now();
  let outcome = "error";
  try {
    const bytes = await pool.task(name, args);
    outcome = "ok";
    return bytes;
  } finally {
    storeQueryDuration.observe(
      { store: "sqlite", statement: "select", outcome },
      (performance.now() - started) / 1000,
    );
  }
}

/** The occurrences page (listOccurrencesJson) as the bytes of its JSON text. */
export function listOccurrencesBytes(db: Db, query: OccurrenceQuery): Promise<Buffer> {
  return runReadTask(db, "occurrencesJson", query);
}
