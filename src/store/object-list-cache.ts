/**
 * The occurrences page's stored object lists (occurrence_object_lists), kept in the process once read.
 * A list row's text never changes once written: ingest closes a list by setting its to_seq and
 * writes a changed list as a new row from the new analysis, and analyses are never renumbered. So a list
 * read once, keyed by what identifies its row (application, package, first analysis) and its byte
 * length, is the same text for every later page, on every replica. On PostgreSQL only the lists a page
 * misses cross from the database: a wide page at limit 500 is 7 MB of lists, whose sending, receiving
 * and decoding was most of its cost (docs/benchmarks.md, "PostgreSQL limit 500"). On SQLite each reader
 * thread keeps the lists it inflated (the lists are stored deflated: inflating them was a third of a
 * wide page's cost, docs/benchmarks.md, "SQLite: one compressed object list per package").
 */
import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

/**
 * The lists kept (characters; one-byte strings), the least recently used dropped first: about 64 MB per
 * PostgreSQL process, 32 MB per SQLite reader thread (three on a 2-core machine: four wide limit-500
 * pages each).
 */
export const OBJECT_LIST_CACHE_CHARS = { postgres: 64 * 1024 * 1024, sqlite: 32 * 1024 * 1024 };

export class ObjectListCache {
  readonly #lists = new Map<string, string>();
  #chars = 0;

  readonly maxChars: number;

  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }

  get(key: string): string | undefined {
    const list = this.#lists.get(key);
    if (list !== undefined) {
      // Map keeps insertion order: re-inserting makes this the most recently used.
      this.#lists.delete(key);
      this.#lists.set(key, list);
    }
    return list;
  }

  set(key: string, list: string): void {
    if (list.length > this.maxChars) return;
    const old = this.#lists.get(key);
    if (old !== undefined) this.#chars -= old.length;
    this.#lists.delete(key);
    this.#lists.set(key, list);
    this.#chars += list.length;
    for (const [oldest, text] of this.#lists) {
      if (this.#chars <= this.maxChars) break;
      this.#lists.delete(oldest);
      this.#chars -= text.length;
    }
  }
}

const caches = new WeakMap<Kysely<Database>, ObjectListCache>();

/** The cache of this store's lists; none inside a transaction, whose writes may still roll back. */
export function objectListCacheOf(db: Kysely<Database>, maxChars: number): ObjectListCache | undefined {
  if (db.isTransaction) return undefined;
  let cache = caches.get(db);
  if (!cache) {
    cache = new ObjectListCache(maxChars);
    caches.set(db, cache);
  }
  return cache;
}
