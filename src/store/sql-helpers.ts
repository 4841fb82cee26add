import { type RawBuilder, sql } from "kysely";

/** Rows valid in analysis `seq` of their application: from_seq <= seq < to_seq. */
export const liveAt = (alias: string, seq: number): RawBuilder<boolean> =>
  sql<boolean>`${sql.ref(`${alias}.from_seq`)} <= ${seq} and ${sql.ref(`${alias}.to_seq`)} > ${seq}`;

/** External objects (alias `alias`) that an application object refers to in analysis `seq`. */
export const referredAt = (alias: string, seq: number): RawBuilder<boolean> =>
  sql<boolean>`exists (select 1 from object_references as r where r.target_id = ${sql.ref(`${alias}.id`)}
    and r.from_seq <= ${seq} and r.to_seq > ${seq})`;

/** Rows valid in at least one analysis of the inclusive range lo..hi. */
export const liveWithin = (alias: string, lo: number, hi: number): RawBuilder<boolean> =>
  sql<boolean>`${sql.ref(`${alias}.from_seq`)} <= ${hi} and ${sql.ref(`${alias}.to_seq`)} > ${lo}`;

/**
 * `column` contains `text`, ignoring ASCII case, with LIKE wildcards in `text` taken literally. Both
 * databases lower-case ASCII only on the byte-ordered columns, so the text is lowered the same way.
 */
export function containsIgnoringCase(column: string, text: string): RawBuilder<boolean> {
  return sql<boolean>`lower(${sql.ref(column)}) like ${containsPattern(text)} escape '\\'`;
}

/** The LIKE pattern (escape `\`) of text containing `text` lowered as containsIgnoringCase lowers it. */
export function containsPattern(text: string): string {
  const lowered = text.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return `%${lowered.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The text the trigram index holds for an external object: its four searched columns, lower-cased as
 * the search lowers them, one per line. A match of one column is a match of this text, so the index
 * never misses one; the search re-checks each column, so text spanning two columns never matches.
 * The PostgreSQL search repeats this expression exactly: that is how the planner finds the index.
 */
export function searchText(alias: string) {
  const col = (name: string) => sql.ref(`${alias}.${name}`);
  return sql`lower(${col("name")} || '\n' || ${col("full_name")} || '\n' || ${col("mangling")} || '\n' || ${col("type")})`;
}
