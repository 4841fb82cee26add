import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium } from "playwright-core";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { runCliProcess, spawnService } from "../support/cli.ts";
import { USERS } from "../support/idp-service.ts";
import {
  connectTestAdmin,
  keycloakEnv,
  type TestKeycloak,
  uniqueRealm,
  useKeycloak,
} from "../support/keycloak.ts";
import { seedKeycloakUsers } from "../support/keycloak-service.ts";
import {
  aiClientProvider,
  applicationNames,
  CHROMIUM_FLAGS,
  connectWithSignIn,
  signInOnKeycloakPages,
} from "../support/mcp-sign-in.ts";
import { type CallbackServer, startCallbackServer } from "../support/oauth-callback.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

const ARTIFACTS = join(process.cwd(), "test-artifacts");

/**
 * The loopback trial of docs/keycloak.md, to its end: `imaging start --local --demo` with IDP=keycloak
 * (base_url http://localhost:PORT), the client policy added with `imaging cimd add ... --http` as the
 * page says, and an AI client (MCP SDK v2) signing in on Keycloak's pages in Chromium, then listing
 * the demo applications.
 */
describe("the docs' loopback trial: an AI client signs in to imaging start --local (Keycloak)", () => {
  let keycloak: TestKeycloak;
  let store: TestStore;
  let documents: CimdDocumentServer;
  let callback: CallbackServer;
  let browser: Browser;
  let child: ChildProcess | undefined;
  let base: string;
  let realm: string;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    keycloak = await useKeycloak();
    store = await createTestStore("sqlite");
    realm = uniqueRealm("trial");
    const port = await freePort();
    const env = {
      ...keycloakEnv(keycloak, realm),
      IMAGING_DATA_DIR: store.dataDir,
      PORT: String(port),
      PUBLIC_URL: "",
      IMAGING_BIND_ADDRESS: "",
      DATABASE_URL: "",
      IMAGING_CONFIG: "",
      REST_PORT: "0",
      MCP_ANALYSIS_PORT: "0",
      MCP_GATEKEEPER_PORT: "0",
    };
    const started = await spawnService(["--local", "--demo"], env);
    child = started.child;
    base = started.summary.baseUrl;
    assert.equal(base, `http://localhost:${port}`);
    documents = await startCimdDocumentServer(
      "/oauth/client-metadata.json",
      ["http://127.0.0.1/callback", "http://localhost/callback"],
      keycloak.certificates,
    );
    const added = await runCliProcess(
      [
        "cimd",
        "add",
        "test-ai-client",
        "--client-id",
        documents.clientId,
        "--trusted-domains",
        "127.0.0.1,localhost",
        "--policy-domains",
        "127.0.0.1",
        "--http",
      ],
      env,
    );
    assert.equal(added.code, 0, added.stderr);
    await seedKeycloakUsers(await connectTestAdmin(keycloak, realm));
    callback = await startCallbackServer();
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  });
  after(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await callback?.close();
    await documents?.close();
    await store?.drop();
  });

  it("signs in on Keycloak's pages at http://localhost and sees the demo applications", async () => {
    const issuer = `${base}/auth/realms/${realm}`;
    const { client } = await connectWithSignIn(
      `${base}/mcp`,
      aiClientProvider({
        clientMetadataUrl: documents.clientId,
        callback,
        signInInBrowser: async (authorizationUrl) => {
          assert.equal(authorizationUrl.origin, base, "the browser goes to the gateway on localhost");
          const { consent } = await signInOnKeycloakPages(browser, authorizationUrl, {
            issuer,
            username: "alice",
            password: USERS.alice.password,
            callbackUrl: callback.url,
            clientName: /Test AI Client/,
            artifacts: ARTIFACTS,
          });
          assert.equal(consent, true, "Keycloak asks for consent");
        },
      }),
    );
    try {
      assert.deepEqual(await applicationNames(client), [
        "claims-portal",
        "payments-service",
        "storefront-web",
      ]);
    } finally {
      await client.close();
    }
  });
});
