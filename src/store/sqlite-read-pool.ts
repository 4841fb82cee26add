import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import {
  createInlineReader,
  INLINE_AFTER_RUNS,
  INLINE_LONGEST_MS,
  INLINE_READ_MS,
} from "./sqlite-inline-reader.ts";
import { newSlotBuffer, type ReadReply, type ReadRequest, type SlotBuffer } from "./sqlite-read-protocol.ts";

export interface ReadPool {
  /** Runs one SELECT on the first free reader; rows as objects, like node:sqlite's `all()`. */
  read(sql: string, parameters: unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * Runs a read task (read-tasks.ts) on the first free reader: its answer comes back as one string,
   * so this thread neither parses rows nor builds the text.
   */
  task(name: string, args: unknown): Promise<string>;
  /**
   * The same, but the answer's UTF-8 bytes are written by the reader into one of the pool's shared
   * buffers when one is free and holds them (grown to the answer within the pool's limits), so this thread
   * neither copies nor encodes them: the caller releases the buffer once the bytes are no longer read
   * (e.g. once the HTTP answer is finished).
   */
  taskBytes(name: string, args: unknown): Promise<string | LeasedBytes>;
  /** Readers reload the planner's statistics before their next query (the writer ran ANALYZE). */
  statisticsChanged(): void;
  /** Lets the reads in progress finish, then closes every reader's connection and ends its thread. */
  close(): Promise<void>;
  readonly size: number;
}

/** A task's answer in one of the pool's shared buffers: valid until released, then reused. */
export interface LeasedBytes {
  readonly bytes: Buffer;
  /** Gives the buffer back to the pool (idempotent); `bytes` must not be read afterwards. */
  release(): void;
}

interface Pending {
  resolve(answer: Record<string, unknown>[] | string | LeasedBytes): void;
  reject(error: Error): void;
}

interface Reader {
  worker: Worker;
  /** The request this reader runs, if any (one at a time, as node:sqlite is synchronous), and its rows so far. */
  busy:
    | {
        id: number;
        pending: Pending;
        rows: Record<string, unknown>[];
        /** What the reader's durations are kept by: the SQL, or the task's name. */
        key: string;
        heavy: boolean;
        started: number;
        /**
         * The buffer's byte length when it went to the reader with the task (it comes back with the reply,
         * perhaps grown), and the bytes of the growth budget reserved for it meanwhile; undefined: none went.
         */
        slotOut: { byteLength: number; reserved: number } | undefined;
      }
    | undefined;
}

interface Queued {
  request: Extract<ReadRequest, { type: "read" | "task" }>;
  key: string;
  pending: Pending;
  heavy: boolean;
  /** A task whose caller takes its bytes in a shared buffer (taskBytes). */
  wantsSlot: boolean;
}

/** The name of the readers' threads (at most 15 characters: Linux keeps no more). */
export const READER_THREAD_NAME = "sqlite-reader";

/** A statement that took longer than this on average is heavy: light reads go before it. */
const HEAVY_READ_MS = 5;
const MAX_TIMED_STATEMENTS = 2_000;
/**
 * The buffers a task's bytes are written into, transferred to a reader and back (taskBytes): enough for the
 * wide CVE's limit-50 page (~720 KB), several for answers still being sent to slow clients. Allocated on
 * demand and reused, never freed. A new buffer per page would be external memory of the main thread's heap
 * each time and bring major collections (docs/benchmarks.md); the same memory going back and forth does not.
 * Each is resizable: a longer answer (a wide limit-500 page is ~7 MB) grows the buffer in place in the
 * reader, once, up to `maxBytes`, while the buffers' growth in all stays within `growthBytes`; the grown
 * buffer stays grown for the next pages. An answer beyond that, or one asked for while all are leased,
 * comes as a string.
 */
export interface ByteBufferLimits {
  /** Buffers at most (each `initialBytes` when made). */
  count: number;
  initialBytes: number;
  /** What one buffer may grow to. */
  maxBytes: number;
  /** The bytes all buffers may grow by in all, beyond their initial size. */
  growthBytes: number;
}

export const BYTE_BUFFERS: ByteBufferLimits = {
  count: 16,
  initialBytes: 1024 * 1024,
  maxBytes: 16 * 1024 * 1024,
  // Four wide limit-500 pages (8 MiB buffers) at once: 48 MiB per pool at most, with the 16 initial MiB.
  growthBytes: 32 * 1024 * 1024,
};
export const MAX_BYTE_BUFFERS = BYTE_BUFFERS.count;

// The worker is TypeScript when the service runs from the sources, JavaScript once built.
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./sqlite-read-worker.ts" : "./sqlite-read-worker.js",
  import.meta.url,
);

/**
 * Worker threads, each with its own read-only connection to the SQLite file: the main thread only
 * posts the SQL and parses the answer, so a heavy read no longer stalls every other request.
 */
export function createReadPool(
  file: string,
  size: number,
  buffers: ByteBufferLimits = BYTE_BUFFERS,
): ReadPool {
  const readers: Reader[] = [];
  // Two queues, so that a sign-in's or a tool's short lookup never waits behind heavy pages: light reads
  // go first, and heavy ones never take the last reader (unless there is only one).
  const light: Queued[] = [];
  const heavy: Queued[] = [];
  const maxHeavy = Math.max(1, size - 1);
  let heavyRunning = 0;
  /** Average duration of each statement (moving average, ms): what makes a read heavy. */
  const durations = new Map<string, number>();
  const finished = (busy: NonNullable<Reader["busy"]>) => {
    if (busy.heavy) heavyRunning--;
    const took = performance.now() - busy.started;
    const average = durations.get(busy.key);
    if (average === undefined && durations.size >= MAX_TIMED_STATEMENTS) durations.clear();
    durations.set(busy.key, average === undefined ? took : average * 0.8 + took * 0.2);
  };
  /**
   * The CPU time each statement has taken in SQLite itself (without the hand-over): its average (moving),
   * its longest run and its number of runs. One that ran at least INLINE_AFTER_RUNS times, below
   * INLINE_READ_MS on average and never above INLINE_LONGEST_MS, runs on the main thread from then on
   * (sqlite-inline-reader.ts). One run above INLINE_LONGEST_MS, with any parameters, sends it back to the
   * pool for good: one statement can be cheap or not by its parameters (a narrow CVE's page, a wide one's).
   */
  const executions = new Map<string, { average: number; longest: number; runs: number }>();
  const executed = (sql: string, ms: number | undefined) => {
    if (ms === undefined) return;
    const seen = executions.get(sql);
    if (seen) {
      seen.runs++;
      seen.average = seen.average * 0.9 + ms * 0.1;
      if (ms > seen.longest) seen.longest = ms;
      return;
    }
    if (executions.size >= MAX_TIMED_STATEMENTS) executions.clear();
    executions.set(sql, { average: ms, longest: ms, runs: 1 });
  };
  const runsInline = (sql: string) => {
    const seen = executions.get(sql);
    return (
      seen !== undefined &&
      seen.runs >= INLINE_AFTER_RUNS &&
      seen.average < INLINE_READ_MS &&
      seen.longest < INLINE_LONGEST_MS
    );
  };
  const inline = createInlineReader(file);
  let nextId = 1;
  let statisticsGeneration = 0;
  let closing: Promise<void> | undefined;
  const freeSlots: SlotBuffer[] = [];
  let slots = 0;
  /** The bytes the buffers have grown by beyond their initial size, and those reserved for tasks running. */
  let grown = 0;
  let reserved = 0;
  const takeSlot = (): SlotBuffer | undefined => {
    const free = freeSlots.pop();
    if (free || slots >= buffers.count) return free;
    slots++;
    return newSlotBuffer(buffers.initialBytes, buffers.maxBytes);
  };
  const lease = (slot: SlotBuffer, byteLength: number): LeasedBytes => {
    let held = true;
    return {
      bytes: Buffer.from(slot, 0, byteLength),
      release() {
        if (!held) return;
        held = false;
        freeSlots.push(slot);
      },
    };
  };
  /** A buffer that went out with a task came back (perhaps grown): its reservation ends, its growth counts. */
  const returned = (busy: NonNullable<Reader["busy"]>, slot: SlotBuffer) => {
    if (!busy.slotOut) return;
    reserved -= busy.slotOut.reserved;
    grown += slot.byteLength - busy.slotOut.byteLength;
  };
  /** A buffer that went out with a task and did not come back (an error, a reader that stopped). */
  const lost = (busy: NonNullable<Reader["busy"]>) => {
    if (!busy.slotOut) return;
    slots--;
    reserved -= busy.slotOut.reserved;
    grown -= busy.slotOut.byteLength - buffers.initialBytes;
  };
  let whenIdle: (() => void) | undefined;

  const spawn = (): Reader => {
    // Named, so that its thread shows as such (/proc/<pid>/task/*/comm, top -H; the benchmark counts its CPU).
    const worker = new Worker(WORKER_URL, { workerData: { file }, name: READER_THREAD_NAME });
    const reader: Reader = { worker, busy: undefined };
    // An idle pool must not keep a process alive (a CLI command that forgot to close the store).
    worker.unref();
    worker.on("message", (reply: ReadReply) => {
      const busy = reader.busy;
      if (!busy || busy.id !== reply.id) return;
      if ("error" in reply) {
        reader.busy = undefined;
        finished(busy);
        lost(busy);
        busy.pending.reject(readError(reply.error));
        dispatch(reader);
        return;
      }
      if ("text" in reply) {
        reader.busy = undefined;
        finished(busy);
        if (reply.slot) {
          returned(busy, reply.slot);
          freeSlots.push(reply.slot);
        } else lost(busy);
        busy.pending.resolve(reply.text);
        dispatch(reader);
        return;
      }
      if ("byteLength" in reply) {
        reader.busy = undefined;
        finished(busy);
        returned(busy, reply.slot);
        busy.pending.resolve(lease(reply.slot, reply.byteLength));
        dispatch(reader);
        return;
      }
      // Parsed as each part arrives, one event-loop turn per part.
      const rows = "json" in reply ? (JSON.parse(reply.json) as unknown[][]) : reply.rows;
      appendObjects(busy.rows, reply.columns, rows);
      if (reply.more) return;
      executed(busy.key, reply.executionMs);
      reader.busy = undefined;
      finished(busy);
      busy.pending.resolve(busy.rows);
      dispatch(reader);
    });
    const fail = (error: Error) => {
      const busy = reader.busy;
      reader.busy = undefined;
      if (busy) {
        finished(busy);
        lost(busy);
      }
      busy?.pending.reject(new Error(`SQLite reader stopped: ${error.message}`));
      const index = readers.indexOf(reader);
      if (index >= 0) readers.splice(index, 1);
      if (!closing) {
        const replacement = spawn();
        readers.push(replacement);
        dispatch(replacement);
        return;
      }
      if (readers.length === 0) {
        for (const queued of [...light.splice(0), ...heavy.splice(0)]) {
          queued.pending.reject(new Error("The store is closed"));
        }
      }
      if (whenIdle && readers.every((r) => !r.busy)) whenIdle();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => {
      if (readers.includes(reader)) fail(new Error(`exit code ${code}`));
    });
    return reader;
  };

  const dispatch = (reader: Reader) => {
    const next = light.shift() ?? (heavyRunning < maxHeavy ? heavy.shift() : undefined);
    if (!next) {
      reader.worker.unref();
      if (whenIdle && readers.every((r) => !r.busy)) whenIdle();
      return;
    }
    if (next.heavy) heavyRunning++;
    reader.busy = {
      id: next.request.id,
      pending: next.pending,
      rows: [],
      key: next.key,
      heavy: next.heavy,
      started: performance.now(),
      slotOut: undefined,
    };
    // Referenced while it works: a process awaiting a read must not exit under it.
    reader.worker.ref();
    // Taken when the reader starts, not while queued: a queue of pages holds no buffers.
    const slot = next.wantsSlot ? takeSlot() : undefined;
    if (slot) {
      // What the reader may grow it to: reserved until it comes back, so that readers running at once
      // never grow the buffers beyond the budget together.
      const slotLimit = Math.max(
        slot.byteLength,
        Math.min(buffers.maxBytes, slot.byteLength + buffers.growthBytes - grown - reserved),
      );
      reader.busy.slotOut = { byteLength: slot.byteLength, reserved: slotLimit - slot.byteLength };
      reserved += slotLimit - slot.byteLength;
      reader.worker.postMessage({ ...next.request, statisticsGeneration, slot, slotLimit }, [slot]);
      return;
    }
    reader.worker.postMessage({ ...next.request, statisticsGeneration });
  };

  const enqueue = (
    request: Queued["request"],
    key: string,
    wantsSlot = false,
  ): Promise<Record<string, unknown>[] | string | LeasedBytes> => {
    if (closing) return Promise.reject(new Error("The store is closed"));
    return new Promise((resolve, reject) => {
      const isHeavy = (durations.get(key) ?? 0) > HEAVY_READ_MS;
      (isHeavy ? heavy : light).push({
        request,
        key,
        pending: { resolve, reject },
        heavy: isHeavy,
        wantsSlot,
      });
      // Readers start on demand: a short CLI command that reads little starts one thread, not all.
      let idle = readers.find((r) => !r.busy);
      if (!idle && readers.length < size) {
        idle = spawn();
        readers.push(idle);
      }
      if (idle) dispatch(idle);
    });
  };

  return {
    size,
    read(sql, parameters) {
      if (closing) return Promise.reject(new Error("The store is closed"));
      if (runsInline(sql)) {
        try {
          const answer = inline.read(sql, parameters);
          if (answer) {
            executed(sql, answer.ms);
            const objects: Record<string, unknown>[] = [];
            appendObjects(objects, answer.columns, answer.rows);
            return Promise.resolve(objects);
          }
        } catch (error) {
          return Promise.reject(error);
        }
      }
      return enqueue({ type: "read", id: nextId++, sql, parameters, statisticsGeneration }, sql) as Promise<
        Record<string, unknown>[]
      >;
    },
    task(name, args) {
      return enqueue(
        { type: "task", id: nextId++, name, args, statisticsGeneration },
        `task:${name}`,
      ) as Promise<string>;
    },
    taskBytes(name, args) {
      return enqueue(
        { type: "task", id: nextId++, name, args, statisticsGeneration },
        `task:${name}`,
        true,
      ) as Promise<string | LeasedBytes>;
    },
    statisticsChanged() {
      statisticsGeneration++;
      inline.statisticsChanged();
    },
    close() {
      closing ??= (async () => {
        // The reads already asked for are answered; new ones are refused from now on.
        if (light.length + heavy.length > 0 || readers.some((r) => r.busy)) {
          await new Promise<void>((resolve) => {
            whenIdle = resolve;
          });
        }
        inline.close();
        const stopping = readers.splice(0);
        await Promise.all(
          stopping.map(
            (reader) =>
              new Promise<void>((resolve) => {
                reader.worker.once("exit", () => resolve());
                // Waiting for the thread to end must keep the process alive until it has.
                reader.worker.ref();
                reader.worker.postMessage({ type: "close" } satisfies ReadRequest);
              }),
          ),
        );
      })();
      return closing;
    },
  };
}

function readError(reply: Extract<ReadReply, { error: unknown }>["error"]): Error {
  const error = new Error(reply.message) as Error & Record<string, unknown>;
  error.code = reply.code;
  error.errcode = reply.errcode;
  error.errstr = reply.errstr;
  return error;
}

function appendObjects(into: Record<string, unknown>[], columns: string[], rows: unknown[][]): void {
  const width = columns.length;
  for (const row of rows) {
    const object: Record<string, unknown> = {};
    for (let c = 0; c < width; c++) object[columns[c] as string] = row[c];
    into.push(object);
  }
}
