import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import {
  type Dialect,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDriver,
  type SqliteStatement,
} from "kysely";
import { BusyAwareSqliteDriver } from "./sqlite-busy.ts";

/**
 * Kysely's SqliteDialect speaks to a better-sqlite3-shaped database. Node's built-in node:sqlite has
 * nearly the same surface, so a thin adapter avoids a native dependency that would need a compiler or
 * a prebuilt binary download on the target machine.
 */
export function createNodeSqliteDialect(
  file: string,
  waitTimeoutMs: number,
): { dialect: Dialect; raw: DatabaseSync } {
  const { database, raw } = openNodeSqliteDatabase(file);
  const sqlite = new SqliteDialect({ database });
  const dialect: Dialect = {
    createDriver: () => new BusyAwareSqliteDriver(sqlite.createDriver() as SqliteDriver, waitTimeoutMs),
    createQueryCompiler: () => sqlite.createQueryCompiler(),
    createAdapter: () => sqlite.createAdapter(),
    createIntrospector: (db) => sqlite.createIntrospector(db),
  };
  return { dialect, raw };
}

/** The store file's read-write connection, shaped for Kysely's SqliteDriver. */
export function openNodeSqliteDatabase(file: string): { database: SqliteDatabase; raw: DatabaseSync } {
  const raw = new DatabaseSync(file);
  raw.exec("PRAGMA journal_mode = WAL");
  // No busy timeout on the event loop's connection: a lock held by another process is waited for
  // asynchronously (sqlite-busy.ts), never by blocking the thread.
  raw.exec("PRAGMA busy_timeout = 0");
  raw.exec("PRAGMA foreign_keys = ON");
  raw.exec("PRAGMA synchronous = NORMAL");
  // A 64 MiB page cache for the one writer (readers keep SQLite's 2 MiB each): recording an analysis
  // touches its tables and a dozen indexes at once, which overflowed the default and made one big
  // transaction re-read its own pages (issue 37; docs/benchmarks.md, "Recording: the writer's page cache").
  raw.exec("PRAGMA cache_size = -65536");
  // Kysely prepares every query it runs; preparing costs more than running the small statements of an
  // import (docs/benchmarks.md, advisory import). node:sqlite runs each statement to completion
  // synchronously and nothing here streams (iterate), so a prepared statement can be reused safely.
  const prepared = new Map<string, SqliteStatement>();
  const database: SqliteDatabase = {
    close: () => {
      prepared.clear();
      raw.close();
    },
    prepare: (sql: string) => {
      let statement = prepared.get(sql);
      if (!statement) {
        if (prepared.size >= STATEMENT_CACHE_SIZE) prepared.delete(prepared.keys().next().value as string);
        statement = adaptStatement(raw.prepare(sql), sql);
        prepared.set(sql, statement);
      }
      return statement;
    },
  };
  return { database, raw };
}

const STATEMENT_CACHE_SIZE = 500;

const READER = /^\s*(select|with|pragma|values|explain)\b|\breturning\b/i;

function adaptStatement(statement: StatementSync, sql: string): SqliteStatement {
  const reader = typeof statement.columns === "function" ? statement.columns().length > 0 : READER.test(sql);
  return {
    reader,
    all: (parameters) => statement.all(...toInputs(parameters)) as unknown[],
    run: (parameters) => {
      const result = statement.run(...toInputs(parameters));
      return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
    },
    iterate: (parameters) => statement.iterate(...toInputs(parameters)) as IterableIterator<unknown>,
  };
}

function toInputs(parameters: ReadonlyArray<unknown>): SQLInputValue[] {
  return parameters.map((value) => {
    if (typeof value === "boolean") return value ? 1 : 0;
    if (value === undefined) return null;
    return value as SQLInputValue;
  });
}
