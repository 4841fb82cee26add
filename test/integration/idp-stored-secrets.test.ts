import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { openStore } from "../../src/store/database.ts";
import { ID_FIELDS, oidcKey } from "../../src/store/oidc-adapter.ts";
import type { OidcPayloadsTable } from "../../src/store/schema.ts";
import { follow, formsOf, postForm } from "../support/browserless-session.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
import {
  authorize,
  type ClientSetup,
  decodeJwt,
  refresh,
  startAuthorization,
} from "../support/oauth-flow.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/**
 * What a local user reading the store finds of the identity provider's state: neither refresh tokens,
 * authorization codes nor session ids (rows are keyed by their SHA-256), and a store written before
 * that change (migration 007) keeps working once migrated, its plain keys gone.
 */
type Row = OidcPayloadsTable;

for (const kind of STORE_KINDS) {
  describe(`the identity provider's stored state holds no usable secret (${kind})`, () => {
    let store: TestStore;
    let documents: CimdDocumentServer;
    let idp: IdpService;
    let setup: ClientSetup;
    let port: number;

    const start = () => startIdpService(store, { port, idp: { cimdCa: documents.ca } });
    const withStore = async <T>(work: (db: Awaited<ReturnType<typeof openStore>>["db"]) => Promise<T>) => {
      const handle = await openStore({
        databaseUrl: store.databaseUrl,
        sqliteFile: store.sqliteFile,
        migrate: false,
      });
      try {
        return await work(handle.db);
      } finally {
        await handle.close();
      }
    };
    const rows = () =>
      withStore((db) =>
        db.withTables<{ oidc_payloads: Row }>().selectFrom("oidc_payloads").selectAll().execute(),
      );

    before(async () => {
      store = await createTestStore(kind);
      documents = await startCimdDocumentServer();
      port = await freePort();
      idp = await startIdpService(store, {
        port,
        idp: { cimdCa: documents.ca },
        seed: async (handle) => {
          await seedUsers(handle.db);
          await seedCimdClient(handle.db, "test-ai-client", documents.clientId);
        },
      });
      setup = {
        issuer: idp.issuer,
        clientId: documents.clientId,
        redirectUri: "http://127.0.0.1:49152/callback",
        resource: idp.mcp,
      };
    });
    after(async () => {
      await idp?.stop();
      await documents?.close();
      await store?.drop();
    });

    it("after a sign-in, the store holds neither the refresh token, the code nor the session id", async () => {
      const signedIn = await authorize(setup, { username: "alice", password: USERS.alice.password });
      const refreshToken = signedIn.refreshToken as string;
      const code = signedIn.callback.searchParams.get("code") as string;
      const session = signedIn.jar.get("imaging_session") as string;
      assert.ok(refreshToken && code && session);
      const stored = await rows();
      const models = new Set(stored.map((r) => r.model));
      for (const model of ["Session", "Grant", "RefreshToken", "AuthorizationCode"]) {
        assert.ok(models.has(model), `a ${model} row was stored`);
      }
      const text = JSON.stringify(stored);
      assert.ok(!text.includes(refreshToken), "no refresh token in the store");
      assert.ok(!text.includes(code), "no authorization code in the store");
      assert.ok(!text.includes(session), "no session id in the store");
      assert.ok(stored.some((r) => r.model === "RefreshToken" && r.id === oidcKey(refreshToken)));
    });

    it("in the middle of a sign-in (consent page shown), the store holds no session id either", async () => {
      const started = await startAuthorization(setup);
      const [login] = formsOf(started.html, started.pageUrl);
      assert.ok(login, "the sign-in form");
      const response = await postForm(started.jar, login, {
        username: "bob",
        password: USERS.bob.password,
      });
      const consent = await follow(
        started.jar,
        new URL(response.headers.get("location") as string, login.action).href,
        setup.redirectUri,
      );
      assert.match(await consent.response.text(), /id="approve"/, "the consent page, its interaction stored");
      const session = started.jar.get("imaging_session") as string;
      assert.ok(session);
      const stored = await rows();
      assert.ok(stored.some((r) => r.model === "Interaction"));
      assert.ok(!JSON.stringify(stored).includes(session), "no session id in the store");
    });

    it("rows written before migration 007 (plain keys) still work once migrated, and their plain keys are gone", async () => {
      const signedIn = await authorize(setup, { username: "alice", password: USERS.alice.password });
      const refreshToken = signedIn.refreshToken as string;
      const session = signedIn.jar.get("imaging_session") as string;
      await idp.stop();

      // Rewrite the rows as the adapter of migrations 005-006 wrote them: keyed by the value itself, the
      // JSON repeating it. The ids known here: the refresh token, the session cookie, and the grant
      // the refresh token names; other rows (used codes, finished interactions) are dropped.
      await withStore(async (db) => {
        const table = db.withTables<{ oidc_payloads: Row; kysely_migration: { name: string } }>();
        const all = await table.selectFrom("oidc_payloads").selectAll().execute();
        const grantId = String(
          JSON.parse(all.find((r) => r.id === oidcKey(refreshToken))?.payload ?? "{}").grantId,
        );
        const plain = new Map([refreshToken, session, grantId].map((id) => [oidcKey(id), id]));
        await table.deleteFrom("oidc_payloads").execute();
        for (const row of all) {
          const id = plain.get(row.id);
          if (id === undefined) continue;
          const payload = JSON.parse(row.payload) as Record<string, unknown>;
          for (const field of (payload[ID_FIELDS] as string[] | undefined) ?? []) payload[field] = id;
          delete payload[ID_FIELDS];
          await table
            .insertInto("oidc_payloads")
            .values({ ...row, id, payload: JSON.stringify(payload) })
            .execute();
        }
        await table.deleteFrom("kysely_migration").where("name", "=", "007-hashed-oidc-keys").execute();
      });
      const old = await rows();
      assert.equal(old.length, 3, "the old-format store: session, grant, refresh token");
      assert.ok(old.some((r) => r.model === "RefreshToken" && r.id === refreshToken));
      assert.ok(old.some((r) => r.model === "Session" && r.id === session));

      idp = await start(); // runs migration 007
      const migrated = await rows();
      assert.equal(migrated.length, 3);
      const text = JSON.stringify(migrated);
      assert.ok(!text.includes(refreshToken), "the plain refresh token is gone");
      assert.ok(!text.includes(session), "the plain session id is gone");

      const renewed = await refresh(setup, refreshToken);
      assert.equal(decodeJwt(renewed.accessToken).payload.sub !== undefined, true);
      assert.notEqual(
        renewed.refreshToken,
        refreshToken,
        "the migrated refresh token was redeemed and rotated",
      );

      // The migrated session still signs the browser in: no sign-in form, straight back to the client.
      const again = await startAuthorization(setup, signedIn.jar);
      assert.doesNotMatch(again.html, /name="password"/, "the session cookie still identifies the user");
    });
  });
}
