/**
 * One reader of the SQLite read pool (sqlite-read-pool.ts): its own read-only connection to the store
 * file, so a long SELECT runs here instead of on the event loop that serves the gateway, the identity
 * provider and the MCP servers. WAL mode lets it read while the main thread's connection writes.
 */

import { constants, setPriority } from "node:os";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { parentPort, workerData } from "node:worker_threads";
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement } from "kysely";
import { BYTE_READ_TASKS, READ_TASKS, type ReadTaskName } from "./read-tasks.ts";
import type { Database } from "./schema.ts";
import {
  type ReadReply,
  type ReadRequest,
  ROWS_PER_REPLY,
  runCostMs,
  type SlotBuffer,
} from "./sqlite-read-protocol.ts";
import type { ByteTarget } from "./utf8-segments.ts";

const { file } = workerData as { file: string };

// Linux nice values are per thread: this reader yields the CPU to the event loop of the main thread
// (gateway, identity provider, MCP servers) when both want it, as on a busy 2-core machine. Lowering
// one's own priority needs no privilege; where it is not supported, readers keep the normal one.
try {
  setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
} catch {
  // not supported here
}
const port = parentPort;
if (!port) throw new Error("sqlite-read-worker.ts runs as a worker thread");

function open(): DatabaseSync {
  // Read-only: a routing mistake fails loudly rather than writing from a second connection.
  const connection = new DatabaseSync(file, { readOnly: true });
  connection.exec("PRAGMA busy_timeout = 10000");
  return connection;
}

let db = open();
/** The read tasks' view of the same connection (read-tasks.ts): made on the first task. */
let kysely: Kysely<Database> | undefined;
const taskDb = (): Kysely<Database> => {
  kysely ??= new Kysely<Database>({ dialect: new SqliteDialect({ database: objectRowsDatabase() }) });
  return kysely;
};

/** The connection shaped for Kysely, rows as objects (a task's code reads them by name), statements kept. */
function objectRowsDatabase(): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  const inputs = (parameters: ReadonlyArray<unknown>) =>
    parameters.map((value) =>
      typeof value === "boolean" ? Number(value) : value === undefined ? null : value,
    ) as SQLInputValue[];
  return {
    close: () => statements.clear(),
    prepare: (sql) => {
      let found = statements.get(sql);
      if (!found) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
        const query = db.prepare(sql);
        found = {
          reader: true,
          all: (parameters) => query.all(...inputs(parameters)),
          run: () => {
            throw new Error("A read task does not write");
          },
          iterate: (parameters) => query.iterate(...inputs(parameters)),
        };
        statements.set(sql, found);
      }
      return found;
    },
  };
}

const STATEMENT_CACHE_SIZE = 500;
const prepared = new Map<string, StatementSync>();
let statisticsGeneration = 0;

function statement(sql: string): StatementSync {
  let found = prepared.get(sql);
  if (!found) {
    if (prepared.size >= STATEMENT_CACHE_SIZE) prepared.delete(prepared.keys().next().value as string);
    found = db.prepare(sql);
    // Rows as arrays: one column list per answer instead of one key set per row, less to transfer.
    found.setReturnArrays(true);
    prepared.set(sql, found);
  }
  return found;
}

/** JSON is the cheapest way across threads for plain values; blobs and big integers need a clone. */
function jsonSafe(rows: unknown[][]): boolean {
  for (const row of rows) {
    for (const value of row) {
      if (value === null || typeof value === "string") continue;
      if (typeof value === "number" && Number.isFinite(value)) continue;
      return false;
    }
  }
  return true;
}

function refreshStatistics(generation: number): void {
  if (generation === statisticsGeneration) return;
  // The writer ran ANALYZE: another connection keeps the statistics it loaded when it read the schema
  // (ANALYZE does not change the schema version, and reloading them is a write), and the plans of the
  // interval queries depend on them (docs/benchmarks.md). A new connection loads the new ones.
  prepared.clear();
  db.close();
  db = open();
  kysely = undefined;
  statisticsGeneration = generation;
}

function replyError(id: number, error: unknown): void {
  const e = error as Error & { code?: string; errcode?: number; errstr?: string };
  port?.postMessage({
    id,
    error: { message: e.message, code: e.code, errcode: e.errcode, errstr: e.errstr },
  } satisfies ReadReply);
}

type ByteTask = (
  db: Kysely<Database>,
  args: unknown,
  target: ByteTarget,
) => Promise<{ byteLength: number } | { text: string }>;

/** A slot grows in steps of this (or to its limit): a page a little longer than the last one reuses the memory. */
const GROW_STEP = 1024 * 1024;

/**
 * The request's slot for an answer of `byteLength` bytes: as it is if they fit, else grown in place (a
 * resizable buffer: same memory, no copy) up to the limit the pool granted; undefined beyond it.
 */
function slotFor(slot: SlotBuffer, limit: number, byteLength: number): Uint8Array | undefined {
  if (byteLength > slot.byteLength) {
    if (byteLength > limit || !slot.resizable) return undefined;
    slot.resize(Math.min(limit, Math.ceil(byteLength / GROW_STEP) * GROW_STEP));
  }
  return new Uint8Array(slot, 0, byteLength);
}

/**
 * The task's answer: its bytes in the request's slot if it holds them (grown if need be), else posted as
 * one string (see ReadReply). A task that writes bytes itself (BYTE_READ_TASKS) writes them into the slot;
 * another one's text is encoded.
 */
async function runTask(request: Extract<ReadRequest, { type: "task" }>): Promise<void> {
  const slot = request.slot;
  let answer: { byteLength: number } | { text: string };
  try {
    refreshStatistics(request.statisticsGeneration);
    const name = request.name as ReadTaskName;
    const writeBytes = (BYTE_READ_TASKS as Partial<Record<string, ByteTask>>)[name];
    const target: ByteTarget | undefined =
      slot && ((byteLength) => slotFor(slot, request.slotLimit ?? slot.byteLength, byteLength));
    if (target && writeBytes) {
      answer = await writeBytes(taskDb(), request.args, target);
    } else {
      const task = READ_TASKS[name] as ((db: Kysely<Database>, args: unknown) => Promise<string>) | undefined;
      if (!task) throw new Error(`Unknown read task ${request.name}`);
      const text = await task(taskDb(), request.args);
      answer = { text };
      const bytes = target?.(Buffer.byteLength(text));
      if (bytes) answer = { byteLength: Buffer.from(bytes.buffer, 0, bytes.length).write(text) };
    }
  } catch (error) {
    replyError(request.id, error);
    return;
  }
  // The slot goes back in every case: with the bytes, or beside the text that did not fit.
  if (slot) port?.postMessage({ id: request.id, ...answer, slot } satisfies ReadReply, [slot]);
  else if ("text" in answer) port?.postMessage({ id: request.id, text: answer.text } satisfies ReadReply);
}

port.on("message", (request: ReadRequest) => {
  if (request.type === "close") {
    prepared.clear();
    db.close();
    port.close();
    return;
  }
  if (request.type === "task") {
    void runTask(request);
    return;
  }
  let rows: unknown[][];
  let columns: string[];
  let executionMs: number;
  try {
    refreshStatistics(request.statisticsGeneration);
    // Preparing (once per statement and reader) is left out: it says nothing of the next runs.
    const query = statement(request.sql);
    const startedAt = performance.now();
    const started = process.threadCpuUsage();
    rows = query.all(...(request.parameters as SQLInputValue[])) as unknown as unknown[][];
    columns = query.columns().map((c) => c.name);
    executionMs = runCostMs(process.threadCpuUsage(started), startedAt);
  } catch (error) {
    replyError(request.id, error);
    return;
  }
  for (let start = 0; start === 0 || start < rows.length; start += ROWS_PER_REPLY) {
    const part = rows.length <= ROWS_PER_REPLY ? rows : rows.slice(start, start + ROWS_PER_REPLY);
    const more = start + ROWS_PER_REPLY < rows.length;
    const timing = more ? {} : { executionMs };
    port.postMessage(
      (jsonSafe(part)
        ? { id: request.id, columns, json: JSON.stringify(part), more, ...timing }
        : { id: request.id, columns, rows: part, more, ...timing }) satisfies ReadReply,
    );
  }
});
