import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { createDemoStore } from "../support/demo-store.ts";
import { USERS } from "../support/idp-service.ts";
import {
  connectTestAdmin,
  keycloakEnv,
  type TestKeycloak,
  uniqueRealm,
  useKeycloak,
} from "../support/keycloak.ts";
import { seedKeycloakCimdClient, seedKeycloakUsers } from "../support/keycloak-service.ts";
import { callApplications, signInThrough } from "../support/replica-flows.ts";
import { killUnderLoad, loadKnobs } from "../support/replica-scenarios.ts";
import { type ReplicaSet, startReplicas } from "../support/replicas.ts";
import type { TestStore } from "../support/stores.ts";

/**
 * Issue 16 with Keycloak as the identity provider: three real `imaging start` processes on one
 * PostgreSQL behind Debian's HAProxy, each provisioning the same realm, the AI client signing in on
 * Keycloak's pages through one replica and calling tools through the others; a Keycloak key rotation;
 * one replica killed -9 under load and restarted.
 */
const DEMO_APPLICATIONS = ["claims-portal", "payments-service", "storefront-web"];
const REDIRECT = "http://127.0.0.1/callback";

describe("three replicas behind HAProxy, Keycloak as the identity provider, PostgreSQL", () => {
  let keycloak: TestKeycloak;
  let realm: string;
  let store: TestStore;
  let documents: CimdDocumentServer;
  let set: ReplicaSet;

  before(async () => {
    keycloak = await useKeycloak();
    realm = uniqueRealm("lb");
    store = await createDemoStore("postgres");
    documents = await startCimdDocumentServer(
      "/oauth/client-metadata.json",
      [REDIRECT],
      keycloak.certificates,
    );
    set = await startReplicas({
      count: 3,
      pinnable: true,
      env: keycloakEnv(keycloak, realm, { DATABASE_URL: store.databaseUrl as string }),
    });
    const admin = await connectTestAdmin(keycloak, realm);
    await seedKeycloakUsers(admin);
    await seedKeycloakCimdClient(admin, "lb-client", documents.clientId);
  });
  after(async () => {
    await set?.stop();
    await documents?.close();
    await store?.drop();
  });

  const signIn = (replica: string) =>
    signInThrough({
      replica,
      issuer: `${set.base}/auth/realms/${realm}`,
      clientId: documents.clientId,
      redirectUri: REDIRECT,
      resource: `${set.base}/mcp`,
      username: "alice",
      password: USERS.alice.password,
    });

  it("signs in through replica a; b and c accept the token for tools/call", async () => {
    const { accessToken } = await signIn("a");
    for (const replica of ["a", "b", "c"]) {
      assert.deepEqual(await callApplications(`${set.base}/mcp`, accessToken, { replica }), {
        ok: true,
        names: DEMO_APPLICATIONS,
      });
    }
  });

  it("a realm key rotated in Keycloak is picked up by every replica; older tokens keep working", async () => {
    const before = await signIn("a");
    const admin = await connectTestAdmin(keycloak, realm);
    const realmId = (await admin.realms.findOne({ realm }))?.id;
    await admin.components.create({
      name: "rotated-rsa",
      providerId: "rsa-generated",
      providerType: "org.keycloak.keys.KeyProvider",
      parentId: realmId,
      config: { priority: ["1000"], algorithm: ["RS256"] },
    });
    const after = await signIn("b");
    const kid = (token: string) =>
      JSON.parse(Buffer.from(token.split(".")[0] ?? "", "base64url").toString()).kid;
    assert.notEqual(
      kid(after.accessToken),
      kid(before.accessToken),
      "the new token is signed with the new key",
    );
    // Each replica fetches the new key when a token names it, at most once per JWKS cooldown (30 s):
    // the documented bound on how long a rotation takes to reach every replica.
    const deadline = Date.now() + 35_000;
    for (const replica of ["a", "b", "c"]) {
      for (const token of [after.accessToken, before.accessToken]) {
        let answer = await callApplications(`${set.base}/mcp`, token, { replica });
        while (!answer.ok && Date.now() < deadline) {
          assert.match(answer.reason, /unknown key/);
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          answer = await callApplications(`${set.base}/mcp`, token, { replica });
        }
        assert.deepEqual(answer, { ok: true, names: DEMO_APPLICATIONS }, `replica ${replica}`);
      }
    }
  });

  it("kill -9 of a replica under load: only its in-flight requests fail, none after HAProxy removes it; it rejoins", async () => {
    const { accessToken } = await signIn("a");
    await killUnderLoad(set, {
      token: accessToken,
      expected: DEMO_APPLICATIONS,
      victim: "c",
      ...loadKnobs(),
    });
  });
});
