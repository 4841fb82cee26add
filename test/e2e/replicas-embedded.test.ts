import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { openStore } from "../../src/store/database.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { runCliProcess } from "../support/cli.ts";
import { seedCimdClient, seedUsers, USERS } from "../support/idp-service.ts";
import { callApplications, signInThrough } from "../support/replica-flows.ts";
import { killUnderLoad, loadKnobs } from "../support/replica-scenarios.ts";
import { type ReplicaSet, startReplicas } from "../support/replicas.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * Issue 16 with the embedded identity provider: three real `imaging start` processes on one PostgreSQL
 * behind Debian's HAProxy, sharing the store and IMAGING_SECRETS_KEY (the provider's keys, cookie keys
 * and the mcp-token-exchange secret sealed in the store): sign in through one replica, tools/call
 * through the others; `imaging idp rotate-keys` seen by all; one replica killed -9 under load and
 * restarted.
 */
const DEMO_APPLICATIONS = ["claims-portal", "payments-service", "storefront-web"];
const REDIRECT = "http://127.0.0.1/callback";
const KEY = randomBytes(32).toString("base64");

describe("three replicas behind HAProxy, embedded identity provider, PostgreSQL", () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let set: ReplicaSet;
  let caDir: string;

  before(async () => {
    store = await createTestStore("postgres");
    documents = await startCimdDocumentServer("/oauth/client-metadata.json", [REDIRECT]);
    caDir = mkdtempSync(join(tmpdir(), "imaging-replicas-ca-"));
    writeFileSync(join(caDir, "ca.pem"), documents.ca);
    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    try {
      await loadDemo(handle.db);
      await seedUsers(handle.db);
      await seedCimdClient(handle.db, "lb-client", documents.clientId);
    } finally {
      await handle.close();
    }
    set = await startReplicas({
      count: 3,
      pinnable: true,
      env: {
        DATABASE_URL: store.databaseUrl as string,
        IMAGING_SECRETS_KEY: KEY,
        IDP_EXTRA_CA_FILE: join(caDir, "ca.pem"),
        KEY_POLL_INTERVAL: "1",
      },
    });
  });
  after(async () => {
    await set?.stop();
    await documents?.close();
    await store?.drop();
    if (caDir) rmSync(caDir, { recursive: true, force: true });
  });

  const signIn = (replica: string, user: keyof typeof USERS = "alice") =>
    signInThrough({
      replica,
      issuer: `${set.base}/auth/realms/imaging`,
      clientId: documents.clientId,
      redirectUri: REDIRECT,
      resource: `${set.base}/mcp`,
      username: user,
      password: USERS[user].password,
    });

  it("signs in through replica a; b and c accept the token for tools/call", async () => {
    const { accessToken } = await signIn("a");
    for (const replica of ["a", "b", "c"]) {
      assert.deepEqual(await callApplications(`${set.base}/mcp`, accessToken, { replica }), {
        ok: true,
        names: DEMO_APPLICATIONS,
      });
    }
    // A viewer's rights hold on every replica too.
    const viewer = await signIn("b", "bob");
    for (const replica of ["a", "c"]) {
      assert.deepEqual(await callApplications(`${set.base}/mcp`, viewer.accessToken, { replica }), {
        ok: true,
        names: ["storefront-web"],
      });
    }
  });

  it("imaging idp rotate-keys: every replica signs with the new key and accepts older tokens", async () => {
    const before = await signIn("a");
    const dataDir = mkdtempSync(join(tmpdir(), "imaging-rotate-"));
    try {
      const cli = await runCliProcess(["idp", "rotate-keys", "--data-dir", dataDir, "--json"], {
        DATABASE_URL: store.databaseUrl,
        IMAGING_SECRETS_KEY: KEY,
      });
      assert.equal(cli.code, 0, cli.stderr);
      const rotation = JSON.parse(cli.stdout) as { current: string };
      const kid = (token: string) =>
        JSON.parse(Buffer.from(token.split(".")[0] ?? "", "base64url").toString()).kid as string;
      // Each replica polls the store every KEY_POLL_INTERVAL (1 s here): a sign-in through each one
      // soon gets a token signed with the new key.
      for (const replica of ["a", "b", "c"]) {
        const deadline = Date.now() + 15_000;
        let token = (await signIn(replica)).accessToken;
        while (kid(token) !== rotation.current) {
          assert.ok(Date.now() < deadline, `replica ${replica} still signs with ${kid(token)}`);
          await new Promise((resolve) => setTimeout(resolve, 500));
          token = (await signIn(replica)).accessToken;
        }
        for (const verifier of ["a", "b", "c"]) {
          for (const presented of [token, before.accessToken]) {
            assert.deepEqual(
              await callApplications(`${set.base}/mcp`, presented, { replica: verifier }),
              { ok: true, names: DEMO_APPLICATIONS },
              `signed through ${replica}, verified by ${verifier}`,
            );
          }
        }
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("kill -9 of a replica under load: only its in-flight requests fail, none after HAProxy removes it; it rejoins", async () => {
    const { accessToken } = await signIn("a");
    await killUnderLoad(set, {
      token: accessToken,
      expected: DEMO_APPLICATIONS,
      victim: "b",
      ...loadKnobs(),
    });
  });
});
