import { type Kysely, PostgresAdapter } from "kysely";
import type { Database } from "./schema.ts";

/**
 * The registration rate limit's counters in the store, shared by every replica: one row per sender in
 * a fixed window. A take reads and writes its row in a transaction (locked on PostgreSQL; SQLite has
 * one writer), so registrations on two replicas at once both count. Bounded: when a sender starts a
 * window, rows whose window has ended go, and past `maxSenders` rows the oldest windows go first.
 */
export function storeRegistrationCounts(db: Kysely<Database>, maxSenders = 10_000) {
  const rowLocks = db.getExecutor().adapter instanceof PostgresAdapter;

  const evict = async (now: number, windowMs: number) => {
    await db
      .deleteFrom("registration_counts")
      .where("window_start", "<=", now - windowMs)
      .execute();
    const { rows } = await db
      .selectFrom("registration_counts")
      .select((eb) => eb.fn.countAll<number>().as("rows"))
      .executeTakeFirstOrThrow();
    const excess = Number(rows) - maxSenders;
    if (excess <= 0) return;
    await db
      .deleteFrom("registration_counts")
      .where(
        "sender",
        "in",
        db
          .selectFrom("registration_counts")
          .select("sender")
          .orderBy("window_start")
          .orderBy("sender")
          .limit(excess),
      )
      .execute();
  };

  return {
    /** Counts one registration of `sender`; the seconds to wait when `limit` is reached in its window. */
    async take(sender: string, now: number, windowMs: number, limit: number): Promise<number | undefined> {
      const outcome = await db.transaction().execute(async (trx) => {
        await trx
          .insertInto("registration_counts")
          .values({ sender, window_start: now, count: 0 })
          .onConflict((oc) => oc.column("sender").doNothing())
          .execute();
        let query = trx
          .selectFrom("registration_counts")
          .select(["window_start", "count"])
          .where("sender", "=", sender);
        if (rowLocks) query = query.forUpdate();
        const row = await query.executeTakeFirstOrThrow();
        const start = Number(row.window_start);
        const count = Number(row.count);
        if (count > 0 && now - start < windowMs) {
          if (count >= limit) return { wait: Math.max(1, Math.ceil((start + windowMs - now) / 1000)) };
          await trx
            .updateTable("registration_counts")
            .set({ count: count + 1 })
            .where("sender", "=", sender)
            .execute();
          return { newWindow: false };
        }
        await trx
          .updateTable("registration_counts")
          .set({ window_start: now, count: 1 })
          .where("sender", "=", sender)
          .execute();
        return { newWindow: true };
      });
      if ("wait" in outcome) return outcome.wait;
      if (outcome.newWindow) await evict(now, windowMs);
      return undefined;
    },
  };
}
