/**
 * Read tasks: store reads whose whole answer is text the API sends as is (several statements and the
 * assembly of their rows). The SQLite read pool's workers run them by name (sqlite-read-worker.ts);
 * read-task-runner.ts decides where each one runs. Kept free of anything a worker does not need.
 */
import type { Kysely, Transaction } from "kysely";
import { listOccurrencesJson, type OccurrenceQuery, writeOccurrencesJson } from "./insights.ts";
import type { Database } from "./schema.ts";
import type { ByteTarget } from "./utf8-segments.ts";

export type Db = Kysely<Database> | Transaction<Database>;

/** Each task: a read on `db` that answers text. Arguments cross threads: plain values only. */
export const READ_TASKS = {
  occurrencesJson: (db: Db, query: OccurrenceQuery) => listOccurrencesJson(db, query),
} satisfies Record<string, (db: Db, args: never) => Promise<string>>;

export type ReadTaskName = keyof typeof READ_TASKS;

/**
 * The tasks that can also write their answer's UTF-8 bytes into a given buffer (the read pool's slot,
 * asked for once the answer's length is known): the same bytes as their text, or the text when no buffer
 * holds them. A reader thread runs these instead of
 * encoding the text (sqlite-read-worker.ts).
 */
export const BYTE_READ_TASKS = {
  occurrencesJson: (db: Db, query: OccurrenceQuery, target: ByteTarget) =>
    writeOccurrencesJson(db, query, target),
} satisfies Partial<
  Record<
    ReadTaskName,
    (db: Db, args: never, target: ByteTarget) => Promise<{ byteLength: number } | { text: string }>
  >
>;
