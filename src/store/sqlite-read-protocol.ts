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
  | { type: "close" };

export type ReadReply =
  | { id: number; columns: string[]; json: string }
  | { id: number; columns: string[]; rows: unknown[][] }
  | { id: number; error: { message: string; code?: string; errcode?: number; errstr?: string } };
