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
      /**
       * Where to write the answer's UTF-8 bytes: one of the pool's buffers (sqlite-read-pool.ts), resizable,
       * transferred here and back with the reply.
       */
      slot?: SlotBuffer;
      /** The byte length the reader may grow the slot to (in place) for an answer longer than it. */
      slotLimit?: number;
    }
  | { type: "close" };

/**
 * A large answer comes in several replies of at most ROWS_PER_REPLY rows (`more` on all but the last):
 * the main thread parses each in its own event-loop turn, so other requests run in between. The last
 * one carries the worker thread's CPU time for the statement (`executionMs`), which decides whether it may run
 * on the main thread instead (sqlite-inline-reader.ts). A task's answer is its text, one string: copied
 * across, it lands in the main thread's young generation, where a transferred buffer of its bytes would
 * count as external memory and bring major collections (docs/benchmarks.md, "Occurrences over HTTP").
 * Unless the request brings a slot: one of a few buffers the pool reuses, transferred to the reader and back
 * (the same memory each time, so no external memory per page), the answer's bytes written into it, so the
 * main thread neither copies nor encodes the page.
 */
/**
 * A statement run's cost in ms, which decides whether it may run on the main thread: its thread's CPU time
 * (a preempted reader must not make a light statement look slow), but never more than the wall time the
 * run took. The thread's CPU clock advances by whole scheduler ticks (4 ms on this kernel), so a 0.1 ms
 * run that crosses one would otherwise read as 4 ms and send its statement back to the pool for good.
 */
export function runCostMs(cpu: NodeJS.CpuUsage, startedAt: number): number {
  return Math.min((cpu.user + cpu.system) / 1000, performance.now() - startedAt);
}

export type ReadReply =
  | { id: number; columns: string[]; json: string; more: boolean; executionMs?: number }
  | { id: number; columns: string[]; rows: unknown[][]; more: boolean; executionMs?: number }
  | { id: number; text: string; slot?: SlotBuffer }
  /** The task's answer is the first `byteLength` bytes of the request's slot (perhaps grown), transferred back. */
  | { id: number; byteLength: number; slot: SlotBuffer }
  | { id: number; error: { message: string; code?: string; errcode?: number; errstr?: string } };

export const ROWS_PER_REPLY = 500;

/** A resizable ArrayBuffer (ES2024, in Node 24; the project compiles against ES2023's declarations). */
export interface SlotBuffer extends ArrayBuffer {
  readonly resizable: boolean;
  readonly maxByteLength: number;
  /** Grows (or shrinks) the buffer in place, up to maxByteLength. */
  resize(byteLength: number): void;
}

/** A slot of `byteLength` bytes that can grow in place to `maxByteLength` (address space reserved, not memory). */
export function newSlotBuffer(byteLength: number, maxByteLength: number): SlotBuffer {
  const Resizable = ArrayBuffer as unknown as new (
    byteLength: number,
    options: { maxByteLength: number },
  ) => SlotBuffer;
  return new Resizable(byteLength, { maxByteLength });
}
