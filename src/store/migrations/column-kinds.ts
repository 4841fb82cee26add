import { type ColumnDefinitionBuilder, type CreateTableBuilder, sql } from "kysely";
import type { StoreKind } from "../database.ts";

/**
 * What the migrations of this store kind declare the same way on every table:
 * - sortText: a NOT NULL text column that sorts by code point on both stores (PostgreSQL's default
 *   collation would sort by locale, so pages keyed on it would differ from SQLite's);
 * - clustered: on SQLite a WITHOUT ROWID table, so the rows of a page are contiguous in the primary key.
 */
export function columnKinds(kind: StoreKind) {
  return {
    sortText: (c: ColumnDefinitionBuilder) =>
      kind === "postgres" ? c.notNull().modifyEnd(sql`collate "C"`) : c.notNull(),
    clustered: <T extends string>(t: CreateTableBuilder<T, never>) =>
      kind === "sqlite" ? t.modifyEnd(sql`without rowid`) : t,
  };
}
