import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { listGateRules } from "../../src/store/gates.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/**
 * Migration 025 on a store that ran every migration before it: the releases rule, as migration 002
 * created it, is turned off; a rule an administrator edited keeps their choice. The store is put back in
 * the state 024 left (the rule on, 025 not recorded), which is all 025 reads.
 */
for (const kind of STORE_KINDS) {
  describe(`migration 025 (default gate tuning) on ${kind}`, () => {
    let test: TestStore;
    let store: StoreHandle;
    const enabled = async () =>
      Object.fromEntries((await listGateRules(store.db)).map((r) => [r.id, r.enabled]));
    const asBefore025 = async (updatedBy: string | null) => {
      await sql`update gate_rules set enabled = 1, updated_by = ${updatedBy}`.execute(store.db);
      await sql`delete from kysely_migration where name = '025-default-gate-tuning'`.execute(store.db);
    };

    before(async () => {
      test = await createTestStore(kind);
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
    });
    after(async () => {
      await store?.close();
      await test?.drop();
    });

    it("a new store has the releases rule off and the two vulnerability rules on", async () => {
      assert.deepEqual(await enabled(), {
        "max-releases-behind-safest": false,
        "no-referenced-severe-cve": true,
        "no-unfixable-vulnerability": true,
      });
    });

    it("turns off the default releases rule of an older store", async () => {
      await asBefore025(null);
      assert.equal((await enabled())["max-releases-behind-safest"], true);
      await store.close();
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      assert.deepEqual(store.migrated, ["025-default-gate-tuning"]);
      assert.deepEqual(await enabled(), {
        "max-releases-behind-safest": false,
        "no-referenced-severe-cve": true,
        "no-unfixable-vulnerability": true,
      });
    });

    it("keeps the rule on where an administrator edited it", async () => {
      await asBefore025("alice");
      await store.close();
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      assert.deepEqual(store.migrated, ["025-default-gate-tuning"]);
      assert.equal((await enabled())["max-releases-behind-safest"], true);
    });
  });
}
