import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import {
  createConsoleSession,
  deleteConsoleSession,
  findConsoleSession,
  purgeExpiredConsoleState,
  savePendingSignIn,
  secretHash,
  takePendingSignIn,
  updateConsoleTokens,
} from "../../src/store/console-sessions.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/**
 * The console's sign-in state in the store (migration 014), on SQLite and PostgreSQL: what a gateway
 * replica reads to serve a browser another replica signed in, never the browser's secrets in the clear.
 */
for (const kind of STORE_KINDS) {
  describe(`console sessions in the store (${kind})`, () => {
    let store: TestStore;
    let handle: StoreHandle;
    before(async () => {
      store = await createTestStore(kind);
      handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    });
    after(async () => {
      await handle?.close();
      await store?.drop();
    });

    const session = (overrides: Partial<Parameters<typeof createConsoleSession>[2]> = {}) => ({
      username: "alice",
      csrfToken: "csrf-1",
      accessToken: "access-1",
      accessExpiresAt: Date.now() + 60_000,
      refreshToken: "refresh-1",
      idToken: "id-1",
      expiresAt: Date.now() + 3_600_000,
      ...overrides,
    });

    it("a pending sign-in is taken once; the state is stored only as its hash", async () => {
      await savePendingSignIn(
        handle.db,
        "state-abc",
        { codeVerifier: "v", nonce: "n", returnTo: "/console/x" },
        Date.now() + 60_000,
      );
      const rows = await sql<{ state_hash: string }>`select state_hash from console_sign_ins`.execute(
        handle.db,
      );
      assert.deepEqual(
        rows.rows.map((r) => r.state_hash),
        [secretHash("state-abc")],
      );
      assert.deepEqual(await takePendingSignIn(handle.db, "state-abc"), {
        codeVerifier: "v",
        nonce: "n",
        returnTo: "/console/x",
      });
      assert.equal(
        await takePendingSignIn(handle.db, "state-abc"),
        undefined,
        "a state is good for one callback",
      );
      await savePendingSignIn(
        handle.db,
        "old",
        { codeVerifier: "v", nonce: "n", returnTo: "/" },
        Date.now() - 1,
      );
      assert.equal(await takePendingSignIn(handle.db, "old"), undefined, "an expired sign-in is refused");
    });

    it("a session is found by its id, updated after a refresh, deleted at sign-out; the id is stored hashed", async () => {
      await createConsoleSession(handle.db, "session-id-1", session());
      const ids = await sql<{ id_hash: string }>`select id_hash from console_sessions`.execute(handle.db);
      assert.ok(ids.rows.every((r) => r.id_hash !== "session-id-1"));
      assert.equal((await findConsoleSession(handle.db, "session-id-1"))?.accessToken, "access-1");
      assert.equal(await findConsoleSession(handle.db, "another"), undefined);
      const later = Date.now() + 120_000;
      await updateConsoleTokens(handle.db, "session-id-1", {
        accessToken: "access-2",
        accessExpiresAt: later,
        refreshToken: "refresh-2",
        idToken: "id-2",
      });
      const updated = await findConsoleSession(handle.db, "session-id-1");
      assert.equal(updated?.accessToken, "access-2");
      assert.equal(updated?.accessExpiresAt, later);
      assert.equal(updated?.refreshToken, "refresh-2");
      assert.equal(updated?.csrfToken, "csrf-1", "the CSRF token stays");
      await deleteConsoleSession(handle.db, "session-id-1");
      assert.equal(await findConsoleSession(handle.db, "session-id-1"), undefined);
    });

    it("expired sessions are not served and are purged", async () => {
      await createConsoleSession(handle.db, "expired", session({ expiresAt: Date.now() - 1 }));
      await createConsoleSession(handle.db, "live", session());
      assert.equal(await findConsoleSession(handle.db, "expired"), undefined);
      await purgeExpiredConsoleState(handle.db);
      const left = await sql<{ n: number | string }>`select count(*) as n from console_sessions`.execute(
        handle.db,
      );
      assert.equal(Number(left.rows[0]?.n), 1);
      assert.ok(await findConsoleSession(handle.db, "live"));
    });
  });
}
