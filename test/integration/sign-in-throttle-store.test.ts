import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SignInThrottle } from "../../src/idp/provider/throttle.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { storeThrottleState } from "../../src/store/sign-in-failures.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/**
 * The sign-in throttle's counters in the store, as replicas share them: on PostgreSQL two store
 * handles (two processes' pools) counting failures at the same time lose none, and a lock set through
 * one holds through the other. A SQLite file is one process's (replicas need PostgreSQL): there the
 * two throttles share the process's handle, whose writes are serialized.
 */
for (const kind of STORE_KINDS) {
  describe(`sign-in throttling state in the store (${kind})`, () => {
    let store: TestStore;
    let one: StoreHandle;
    let two: StoreHandle;
    let clock = Date.parse("2026-07-28T10:00:00Z");
    const rules = {
      account: { freeAttempts: 30, baseLockMs: 30_000, maxLockMs: 900_000, windowMs: 900_000 },
      address: { freeAttempts: 1000, baseLockMs: 30_000, maxLockMs: 900_000, windowMs: 900_000 },
      now: () => clock,
    };

    before(async () => {
      store = await createTestStore(kind);
      one = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      two =
        kind === "postgres"
          ? await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile })
          : one;
    });
    after(async () => {
      await one?.close();
      if (two !== one) await two?.close();
      await store?.drop();
    });

    it("counts every failure made concurrently through two connections, then locks on both", async () => {
      const a = new SignInThrottle({ ...rules, state: storeThrottleState(one.db) });
      const b = new SignInThrottle({ ...rules, state: storeThrottleState(two.db) });
      await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).failure("Alice", "192.0.2.7")),
      );
      const row = await storeThrottleState(one.db).get("account:alice");
      assert.equal(row?.failures, 30, "no failure lost");
      assert.deepEqual(await b.check("alice", "198.51.100.1"), {
        allowed: false,
        scope: "account",
        retryAfterSeconds: 30,
      });
      assert.equal((await a.check("ALICE", "198.51.100.1")).allowed, false, "account names ignore case");
      clock += 31_000;
      assert.deepEqual(await a.check("alice", "198.51.100.1"), { allowed: true });
      await b.success("alice");
      assert.equal(await storeThrottleState(one.db).get("account:alice"), undefined, "a success clears it");
    });

    it("purges counters nobody is locked out by once they are old", async () => {
      const state = storeThrottleState(one.db);
      const t = new SignInThrottle({ ...rules, state });
      await t.failure("bob", "192.0.2.8");
      assert.ok(await state.get("account:bob"));
      await state.purge(clock + 25 * 3600_000, 24 * 3600_000);
      assert.equal(await state.get("account:bob"), undefined);
    });
  });
}
