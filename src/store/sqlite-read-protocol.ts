/** Messages between the SQLite read pool (sqlite-read-pool.ts) and its workers (sqlite-read-worker.ts). */
export type ReadRequest =
  | {
      type: "read";
      id: number;
      sql: string;
      parameters: unknown[];
      /** Bumped when the writer refreshed the planner's statistics (ANALYZE). */
      statisticsGeneration: number;
    }
  | {
      /** Runs one of the store's read tasks (read-tasks.ts) on the reader's connection. */
      type: "task";
      id: number;
      name: string;
      args: unknown;
      statisticsGeneration: number;
    }
  | { type: "close" };

/**
 * A large answer comes in several replies of at most ROWS_PER_REPLY rows (`more` on all but the last):
 * the main thread parses each in its own event-loop turn, so other requests run in between. The last
 * one carries the worker thread's CPU time for the statement (`executionMs`), which decides whether it may run
 * on the main thread instead (sqlite-inline-reader.ts). A task's answer is its text, one string: copied
 * across, it lands in the main thread's young generation, where a transferred buffer of its bytes would
 * count as external memory and bring major collections (docs/benchmarks.md, "Occurrences over HTTP").
 */
export type ReadReply =
  | { id: number; columns: string[]; json: string; more: boolean; executionMs?: number }
  | { id: number; columns: string[]; rows: unknown[][]; more: boolean; executionMs?: number }
  | { id: number; text: string }
  | { id: number; error: { message: string; code?: string; errcode?: number; errstr?: string } };

export const ROWS_PER_REPLY = 500;
