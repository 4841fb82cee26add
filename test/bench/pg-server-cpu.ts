/**
 * CPU time of the PostgreSQL server processes (backends) serving a store's database, read from
 * /proc/<pid>/schedstat (nanoseconds on a core): with the server on this machine, a query's server-side
 * CPU is the difference around it. On a shared machine, CPU per query is what the query costs; wall
 * clock includes the time spent waiting for a core.
 */
import { readFileSync } from "node:fs";
import { type Kysely, sql } from "kysely";
import type { Database } from "../../src/store/schema.ts";

/** The backends of the database `db` is connected to (open the connections first, e.g. by a query). */
export async function serverBackends(db: Kysely<Database>): Promise<number[]> {
  const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity
    where datname = current_database()`.execute(db);
  return rows.map((r) => Number(r.pid));
}

/** CPU milliseconds these backends have used so far (a backend that ended no longer counts). */
export function serverCpuMs(pids: readonly number[]): number {
  let ns = 0;
  for (const pid of pids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // ended, or not on this machine
    }
  }
  return ns / 1e6;
}
