/**
 * The occurrences page's stored object lists (occurrence_object_lists), kept in the process once read.
 * A list row's text never changes once written: ingest closes a list by setting its to_seq and
 * writes a changed list as a new row from the new analysis, and analyses are never renumbered. So a list
 * read once, keyed by what identifies its row (application, package, first analysis) and its byte
 * length, is the same text for every later page, on every replica. On PostgreSQL only the lists a page
 * misses cross from the database: a wide page at limit 500 is 7 MB of lists, whose sending, receiving
 * and decoding was most of its cost (docs/benchmarks-history.md, "PostgreSQL limit 500"). On SQLite each
 * reader thread keeps the lists it inflated (the lists are stored deflated: inflating them was a third of
 * a wide page's cost, docs/benchmarks-history.md, "SQLite: one compressed object list per package"), as
 * the UTF-8 bytes inflating gives: a page is written as bytes (utf8-segments.ts) by copying them, no
 * string made.
 */
import { inflateRawSync } from "node:zlib";
import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

/**
 * The lists kept (their length: characters of one-byte strings on PostgreSQL, bytes on SQLite), the least
 * recently used dropped first: about 64 MB per PostgreSQL process, 32 MB per SQLite reader thread (three
 * on a 2-core machine: four wide limit-500 pages each).
 */
export const OBJECT_LIST_CACHE_SIZE = { postgres: 64 * 1024 * 1024, sqlite: 32 * 1024 * 1024 };

/** A list as kept: PostgreSQL's text, SQLite's inflated UTF-8 bytes. */
export type ObjectList = string | Uint8Array;

export class ObjectListCache {
  readonly #lists = new Map<string, ObjectList>();
  #size = 0;

  readonly maxSize: number;

  constructor(maxSize: number) {
    this.maxSize = maxSize;
  }

  get(key: string): ObjectList | undefined {
    const list = this.#lists.get(key);
    if (list !== undefined) {
      // Map keeps insertion order: re-inserting makes this the most recently used.
      this.#lists.delete(key);
      this.#lists.set(key, list);
    }
    return list;
  }

  set(key: string, list: ObjectList): void {
    if (list.length > this.maxSize) return;
    const old = this.#lists.get(key);
    if (old !== undefined) this.#size -= old.length;
    this.#lists.delete(key);
    this.#lists.set(key, list);
    this.#size += list.length;
    for (const [oldest, kept] of this.#lists) {
      if (this.#size <= this.maxSize) break;
      this.#lists.delete(oldest);
      this.#size -= kept.length;
    }
  }
}

const caches = new WeakMap<Kysely<Database>, ObjectListCache>();

/** The cache of this store's lists; none inside a transaction, whose writes may still roll back. */
export function objectListCacheOf(db: Kysely<Database>, maxSize: number): ObjectListCache | undefined {
  if (db.isTransaction) return undefined;
  let cache = caches.get(db);
  if (!cache) {
    cache = new ObjectListCache(maxSize);
    caches.set(db, cache);
  }
  return cache;
}

/**
 * A SQLite list (stored deflated, occurrence-model.ts packObjectList) as the UTF-8 bytes of its JSON, in
 * memory of its own: zlib hands its result out as a slice of its 64 KB output chunk, which a kept list
 * would otherwise hold whole.
 */
export function objectListBytes(docs: Uint8Array): Uint8Array {
  const inflated = inflateRawSync(docs);
  return inflated.byteLength === inflated.buffer.byteLength ? inflated : new Uint8Array(inflated);
}
