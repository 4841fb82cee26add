import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { createOidcAdapterFactory, oidcKey, purgeExpiredOidcPayloads } from "../../src/store/oidc-adapter.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

for (const kind of STORE_KINDS) {
  describe(`oidc-provider adapter on the platform store (${kind})`, () => {
    let store: TestStore;
    let handle: StoreHandle;
    let clock = Date.now();
    const now = () => clock;

    before(async () => {
      store = await createTestStore(kind);
      handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    });
    after(async () => {
      await handle?.close();
      await store?.drop();
    });

    it("stores, finds, replaces and destroys a model's payload", async () => {
      const sessions = createOidcAdapterFactory(handle.db, now)("Session");
      await sessions.upsert("s1", { jti: "s1", uid: "u1", accountId: "a" }, 60);
      assert.deepEqual(await sessions.find("s1"), { jti: "s1", uid: "u1", accountId: "a" });
      // The id (the session cookie) is not stored: found by uid, the session comes back without it.
      assert.deepEqual(await sessions.findByUid("u1"), { uid: "u1", accountId: "a" });
      await sessions.upsert("s1", { jti: "s1", uid: "u2", accountId: "a" }, 60);
      assert.equal(await sessions.findByUid("u1"), undefined);
      assert.equal((await sessions.findByUid("u2"))?.uid, "u2");
      await sessions.destroy("s1");
      assert.equal(await sessions.find("s1"), undefined);
    });

    it("keeps models apart: the same id in two models are two rows", async () => {
      const factory = createOidcAdapterFactory(handle.db, now);
      await factory("AccessToken").upsert("same", { kind: "AccessToken" }, 60);
      await factory("RefreshToken").upsert("same", { kind: "RefreshToken" }, 60);
      assert.equal((await factory("AccessToken").find("same"))?.kind, "AccessToken");
      assert.equal((await factory("RefreshToken").find("same"))?.kind, "RefreshToken");
    });

    it("marks a payload consumed (epoch seconds) once used", async () => {
      const codes = createOidcAdapterFactory(handle.db, now)("AuthorizationCode");
      await codes.upsert("c1", { grantId: "g0" }, 60);
      assert.equal((await codes.find("c1"))?.consumed, undefined);
      await codes.consume("c1");
      assert.equal((await codes.find("c1"))?.consumed, Math.floor(clock / 1000));
    });

    it("revokes every token of a grant, whatever its model", async () => {
      const factory = createOidcAdapterFactory(handle.db, now);
      await factory("RefreshToken").upsert("r1", { grantId: "g1" }, 60);
      await factory("AuthorizationCode").upsert("c2", { grantId: "g1" }, 60);
      await factory("RefreshToken").upsert("r2", { grantId: "g2" }, 60);
      await factory("Grant").upsert("g1", { accountId: "a" }, 60);
      await factory("AccessToken").revokeByGrantId("g1");
      assert.equal(await factory("RefreshToken").find("r1"), undefined);
      assert.equal(await factory("AuthorizationCode").find("c2"), undefined);
      assert.ok(await factory("RefreshToken").find("r2"));
      assert.ok(await factory("Grant").find("g1"), "the grant itself is destroyed by the provider, not here");
    });

    it("never returns an expired payload, and purges expired rows", async () => {
      const factory = createOidcAdapterFactory(handle.db, now);
      await factory("Interaction").upsert("i1", { uid: "i1" }, 10);
      await factory("Client").upsert("forever", { client_id: "forever" });
      assert.ok(await factory("Interaction").find("i1"));
      clock += 11_000;
      assert.equal(await factory("Interaction").find("i1"), undefined);
      assert.ok(await factory("Client").find("forever"), "no expiry: kept");
      clock += 120_000;
      assert.ok((await purgeExpiredOidcPayloads(handle.db, 60_000, now)) >= 1);
      assert.ok(await factory("Client").find("forever"));
    });

    it("keeps no id in the store: rows are keyed by its SHA-256, and the payload does not repeat it", async () => {
      const factory = createOidcAdapterFactory(handle.db, now);
      const refreshToken = "Rt8vQ2tq9B0pJ0nX3q4yKkzS0lJb1qQ8mW5c7e9g2hA";
      const interaction = "In4kQ2tq9B0pJ0nX3q4yKkzS0lJb1qQ8mW5c7e9g2hA";
      const sessionId = "Se5kQ2tq9B0pJ0nX3q4yKkzS0lJb1qQ8mW5c7e9g2hA";
      await factory("RefreshToken").upsert(
        refreshToken,
        { jti: refreshToken, grantId: "g9", kind: "RefreshToken" },
        60,
      );
      await factory("Interaction").upsert(
        interaction,
        {
          jti: interaction,
          uid: interaction,
          kind: "Interaction",
          session: { accountId: "a", cookie: sessionId },
        },
        60,
      );
      await factory("DeviceCode").upsert("d9", { jti: "d9", userCode: "WXYZ-QRST" }, 60);
      const rows = await handle.db
        .withTables<{
          oidc_payloads: {
            model: string;
            id: string;
            payload: string;
            uid: string | null;
            user_code: string | null;
          };
        }>()
        .selectFrom("oidc_payloads")
        .selectAll()
        .execute();
      const text = JSON.stringify(rows);
      assert.ok(!text.includes(refreshToken), "the refresh token is nowhere in the table");
      assert.ok(!text.includes(interaction), "the interaction id is nowhere in the table");
      assert.ok(!text.includes(sessionId), "nor the session id an interaction refers to");
      assert.ok(!rows.some((r) => r.user_code === "WXYZ-QRST"), "the user code is stored hashed");
      assert.ok(rows.some((r) => r.id === oidcKey(refreshToken)));
      assert.deepEqual(await factory("RefreshToken").find(refreshToken), {
        jti: refreshToken,
        grantId: "g9",
        kind: "RefreshToken",
      });
      assert.deepEqual(await factory("Interaction").find(interaction), {
        jti: interaction,
        uid: interaction,
        kind: "Interaction",
        session: { accountId: "a" },
      });
      assert.equal((await factory("DeviceCode").findByUserCode("WXYZ-QRST"))?.userCode, "WXYZ-QRST");
      assert.equal(
        await factory("RefreshToken").find(oidcKey(refreshToken)),
        undefined,
        "the hash is no token",
      );
    });

    it("finds device flow payloads by user code", async () => {
      const devices = createOidcAdapterFactory(handle.db, now)("DeviceCode");
      await devices.upsert("d1", { userCode: "ABCD-EFGH" }, 60);
      assert.equal((await devices.findByUserCode("ABCD-EFGH"))?.userCode, "ABCD-EFGH");
    });
  });
}
