import { type Kysely, PostgresAdapter } from "kysely";
import type { Database, SignInFailuresTable } from "./schema.ts";

interface SignInFailures {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
}

const toEntry = (row: Omit<SignInFailuresTable, "key">): SignInFailures => ({
  failures: Number(row.failures),
  lastFailure: Number(row.last_failure),
  lockedUntil: Number(row.locked_until),
});

/**
 * The sign-in throttle's counters in the store, shared by every replica. An update reads and writes
 * one row in a transaction (the row locked on PostgreSQL; SQLite has one writer), so failures on two
 * replicas at once both count. Rows past `forgetAfterMs` without a lock are purged.
 */
export function storeThrottleState(db: Kysely<Database>) {
  const t = db;
  const rowLocks = db.getExecutor().adapter instanceof PostgresAdapter;
  return {
    async get(key: string): Promise<SignInFailures | undefined> {
      const row = await t
        .selectFrom("sign_in_failures")
        .select(["failures", "last_failure", "locked_until"])
        .where("key", "=", key)
        .executeTakeFirst();
      return row ? toEntry(row) : undefined;
    },
    async update(key: string, change: (entry: SignInFailures | undefined) => SignInFailures): Promise<void> {
      await t.transaction().execute(async (trx) => {
        await trx
          .insertInto("sign_in_failures")
          .values({ key, failures: 0, last_failure: 0, locked_until: 0 })
          .onConflict((oc) => oc.column("key").doNothing())
          .execute();
        let query = trx
          .selectFrom("sign_in_failures")
          .select(["failures", "last_failure", "locked_until"])
          .where("key", "=", key);
        if (rowLocks) query = query.forUpdate();
        const row = await query.executeTakeFirstOrThrow();
        const stored = toEntry(row);
        const next = change(stored.failures === 0 && stored.lockedUntil === 0 ? undefined : stored);
        await trx
          .updateTable("sign_in_failures")
          .set({ failures: next.failures, last_failure: next.lastFailure, locked_until: next.lockedUntil })
          .where("key", "=", key)
          .execute();
      });
    },
    async delete(key: string): Promise<void> {
      await t.deleteFrom("sign_in_failures").where("key", "=", key).execute();
    },
    /** Drops the rows nobody is locked out by and whose last failure is older than `forgetAfterMs`. */
    async purge(now: number, forgetAfterMs: number): Promise<void> {
      await t
        .deleteFrom("sign_in_failures")
        .where("locked_until", "<=", now)
        .where("last_failure", "<", now - forgetAfterMs)
        .execute();
    },
  };
}
