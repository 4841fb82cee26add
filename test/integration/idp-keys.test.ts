import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { KEY_RETENTION_SECONDS } from "../../src/idp/provider/realm.ts";
import { loadSigningKeys, rotateSigningKeys } from "../../src/idp/provider/signing-keys.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { runCli } from "../support/cli.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
import { authorize, type ClientSetup, decodeJwt, exchangeToken, refresh } from "../support/oauth-flow.ts";
import { storedSecret, withVault } from "../support/stored-secrets.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

type Jwks = { keys: Record<string, unknown>[] };

describe("embedded identity provider: signing keys", () => {
  for (const kind of STORE_KINDS) {
    describe(`the stored keys (${kind})`, () => {
      let store: TestStore;
      before(async () => {
        store = await createTestStore(kind);
      });
      after(() => store?.drop());
      const load = (now?: Date) =>
        withVault(
          store,
          async (vault) => (await loadSigningKeys(vault, KEY_RETENTION_SECONDS, now ? { now } : {})).keys,
        );

      it("are created once with a current and a next key, sealed: the store holds no private key in clear", async () => {
        const keys = await load();
        assert.deepEqual(
          keys.map((k) => k.status),
          ["current", "next"],
        );
        const again = await load();
        assert.deepEqual(
          again.map((k) => k.kid),
          keys.map((k) => k.kid),
        );
        const rows = await withVault(store, (vault) =>
          vault.db
            .withTables<{ service_secrets: { name: string; sealed: string } }>()
            .selectFrom("service_secrets")
            .selectAll()
            .execute(),
        );
        const row = rows.find((r) => r.name === "idp-signing-keys");
        assert.ok(row, "the keys are a row of service_secrets");
        assert.match(row.sealed, /^v1\./);
        const privateExponent = String(keys[0]?.jwk.d);
        assert.ok(!JSON.stringify(rows).includes(privateExponent), "no private key in clear");
        assert.ok(!JSON.stringify(rows).includes(String(keys[0]?.kid)), "not even the key id in clear");
      });

      it("rotation: next becomes current, current is retired and dropped once its tokens have expired", async () => {
        const [current, next] = await load();
        const now = new Date();
        const result = await withVault(store, (vault) =>
          rotateSigningKeys(vault, KEY_RETENTION_SECONDS, { now }),
        );
        assert.equal(result.current, next?.kid);
        assert.deepEqual(
          result.retired.map((r) => r.kid),
          [current?.kid],
        );
        assert.equal(
          result.retired[0]?.publishedUntil,
          new Date(now.getTime() + KEY_RETENTION_SECONDS * 1000).toISOString(),
        );
        const published = await load(now);
        assert.deepEqual(
          published.map((k) => [k.kid, k.status]),
          [
            [next?.kid, "current"],
            [result.next, "next"],
            [current?.kid, "retired"],
          ],
        );
        const later = new Date(now.getTime() + (KEY_RETENTION_SECONDS + 1) * 1000);
        assert.deepEqual(
          (await load(later)).map((k) => k.status),
          ["current", "next"],
        );
      });

      it("two rotations at once (two processes) both happen: neither loses the other's keys", async () => {
        const [current, next] = await load();
        const rotate = () => withVault(store, (vault) => rotateSigningKeys(vault, KEY_RETENTION_SECONDS));
        const [first, second] = await Promise.all([rotate(), rotate()]);
        const results = [first, second].sort((x, y) =>
          x.current === next?.kid ? -1 : y.current === next?.kid ? 1 : 0,
        );
        assert.equal(results[0]?.current, next?.kid, "one rotation made the published next key current");
        assert.equal(results[1]?.current, results[0]?.next, "the other started from its keys");
        const keys = await load();
        assert.deepEqual(
          keys.map((k) => k.status),
          ["current", "next", "retired", "retired", "retired"],
        );
        assert.equal(keys[0]?.kid, results[1]?.current);
        assert.ok(keys.some((k) => k.kid === current?.kid && k.status === "retired"));
      });
    });
  }

  describe("rotation while the service runs (imaging idp rotate-keys)", () => {
    let store: TestStore;
    let documents: CimdDocumentServer;
    let idp: IdpService;
    let setup: ClientSetup;

    before(async () => {
      store = await createTestStore("sqlite");
      documents = await startCimdDocumentServer();
      idp = await startIdpService(store, {
        idp: { cimdCa: documents.ca, keyWatchIntervalMs: 100 },
        seed: async (handle) => {
          await loadDemo(handle.db);
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

    const jwks = async () => (await (await fetch(`${idp.issuer}/jwks`)).json()) as Jwks;
    const listApplications = async (token: string) => {
      const client = new Client({ name: "idp-keys-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(idp.mcp), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      try {
        return (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
      } finally {
        await client.close();
      }
    };

    it("publishes public keys only", async () => {
      const published = await jwks();
      assert.equal(published.keys.length, 2);
      for (const key of published.keys) {
        assert.equal(key.d, undefined);
        assert.equal(key.p, undefined);
        assert.equal(key.alg, "RS256");
        assert.equal(key.use, "sig");
      }
    });

    it("signs with the new key after rotation; tokens signed with the old one stay valid at the gateway and for exchange", async () => {
      const before = await authorize(setup, { username: "alice", password: USERS.alice.password });
      const oldKid = decodeJwt(before.accessToken).header.kid;
      assert.equal(oldKid, (await jwks()).keys[0]?.kid, "signed with the current (first published) key");
      assert.equal((await listApplications(before.accessToken)).isError, undefined);

      const cli = await runCli(["idp", "rotate-keys", "--data-dir", store.dataDir, "--json"]);
      assert.equal(cli.code, 0, cli.stderr);
      const rotation = JSON.parse(cli.stdout) as {
        current: string;
        next: string;
        retired: { kid: string }[];
      };
      assert.deepEqual(
        rotation.retired.map((r) => r.kid),
        [oldKid],
      );

      // The running service picks the stored change up.
      const deadline = Date.now() + 10_000;
      while ((await jwks()).keys[0]?.kid !== rotation.current) {
        assert.ok(Date.now() < deadline, "the service did not load the rotated keys");
        await new Promise((r) => setTimeout(r, 100));
      }
      const kids = (await jwks()).keys.map((k) => k.kid);
      assert.deepEqual(kids, [rotation.current, rotation.next, oldKid]);

      const after = await refresh(setup, before.refreshToken as string);
      assert.equal(decodeJwt(after.accessToken).header.kid, rotation.current);
      assert.equal((await listApplications(after.accessToken)).isError, undefined);
      assert.equal((await listApplications(before.accessToken)).isError, undefined);

      const secret = await storedSecret(store, "mcp-token-exchange");
      const exchanged = await exchangeToken(
        idp.issuer,
        { clientId: "mcp-token-exchange", clientSecret: secret },
        { subject_token: before.accessToken },
      );
      assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
      assert.equal(decodeJwt(String(exchanged.body.access_token)).header.kid, rotation.current);
    });

    it("the command explains what it did", async () => {
      const cli = await runCli(["idp", "rotate-keys", "--data-dir", store.dataDir]);
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(cli.stdout, /Signing key \S+ is now current/);
      assert.match(cli.stdout, /stays published until \d{4}-\d\d-\d\dT/);
    });
  });
});
