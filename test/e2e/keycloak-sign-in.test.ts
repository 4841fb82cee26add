import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import * as oauth from "oauth4webapi";
import { type Browser, chromium } from "playwright-core";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { openStore } from "../../src/store/database.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { runCliProcess } from "../support/cli.ts";
import { USERS } from "../support/idp-service.ts";
import {
  type KeycloakService,
  seedKeycloakCimdClient,
  seedKeycloakUsers,
  startKeycloakService,
} from "../support/keycloak-service.ts";
import {
  aiClientProvider,
  applicationNames,
  CHROMIUM_FLAGS,
  connectWithSignIn,
  signInOnKeycloakPages,
} from "../support/mcp-sign-in.ts";
import { type CallbackServer, startCallbackServer } from "../support/oauth-callback.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * The sign-in journey of the embedded-provider e2e test, with Keycloak as the identity provider: the
 * gateway provisions a real Keycloak at start and fronts it under /auth, the official MCP SDK v2 client
 * signs in through Keycloak's own sign-in and consent pages in headless Chromium, its client ID metadata
 * document served over TLS by a test CA in Keycloak's truststore, and the gateway exchanges its token
 * with Keycloak (standard token exchange) for a platform token carrying the user's roles.
 */
const ARTIFACTS = join(process.cwd(), "test-artifacts");

describe("an AI client signs in through the gateway to Keycloak (headless Chromium, MCP SDK v2)", () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let kc: KeycloakService;
  let browser: Browser;
  let callback: CallbackServer;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    store = await createTestStore("sqlite");
    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    try {
      await loadDemo(handle.db);
    } finally {
      await handle.close();
    }
    kc = await startKeycloakService({ store });
    // Like Claude Code's real document: loopback redirect URIs without a port (RFC 8252).
    documents = await startCimdDocumentServer(
      "/oauth/client-metadata.json",
      ["http://127.0.0.1/callback", "http://localhost/callback"],
      kc.keycloak.certificates,
    );
    callback = await startCallbackServer();
    await seedKeycloakUsers(kc.admin);
    await seedKeycloakCimdClient(kc.admin, "test-ai-client", documents.clientId);
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  });
  after(async () => {
    await browser?.close();
    await kc?.stop();
    await callback?.close();
    await documents?.close();
    await store?.drop();
  });

  /** Every sign-in's authorization request and whether Keycloak showed its consent page (docs/keycloak.md). */
  const signIns: { scope: string | null; prompt: string[]; consent: boolean }[] = [];

  /** The AI client, its sign-in done in Chromium on Keycloak's own pages (through the gateway). */
  const signIn = (user: keyof typeof USERS, url: string, screenshots = false) =>
    connectWithSignIn(
      url,
      aiClientProvider({
        clientMetadataUrl: documents.clientId,
        callback,
        signInInBrowser: async (authorizationUrl) => {
          assert.equal(
            authorizationUrl.origin + authorizationUrl.pathname,
            `${kc.issuer}/protocol/openid-connect/auth`,
            "the browser is sent to Keycloak through the gateway",
          );
          const { consent } = await signInOnKeycloakPages(browser, authorizationUrl, {
            issuer: kc.issuer,
            username: user,
            password: USERS[user].password,
            callbackUrl: callback.url,
            clientName: /Test AI Client/,
            artifacts: ARTIFACTS,
            ...(screenshots ? { screenshotsIn: ARTIFACTS } : {}),
          });
          signIns.push({
            scope: authorizationUrl.searchParams.get("scope"),
            prompt: authorizationUrl.searchParams.getAll("prompt"),
            consent,
          });
        },
      }),
    );

  const claimsOf = (token: string) =>
    JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as Record<string, unknown>;

  it("an admin signs in on Keycloak's page and sees every application (token exchanged by the gateway)", async () => {
    const before = kc.service.exchanger?.requests ?? 0;
    const { client, saved } = await signIn("alice", kc.mcp, true);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(tools.includes("applications") && tools.includes("cve_occurrences"));
      assert.deepEqual(await applicationNames(client), [
        "claims-portal",
        "payments-service",
        "storefront-web",
      ]);
      assert.ok(
        (kc.service.exchanger?.requests ?? 0) > before,
        "the gateway exchanged the token with Keycloak",
      );
      const claims = claimsOf(saved.tokens?.access_token as string);
      assert.equal(claims.iss, kc.issuer, "Keycloak names the gateway as issuer");
      assert.equal(claims.azp, documents.clientId, "the client is the CIMD URL");
      const audiences = [claims.aud].flat();
      for (const audience of [kc.mcp, kc.gatekeeper, "mcp-token-exchange"])
        assert.ok(audiences.includes(audience), `aud has ${audience}`);
      // What Keycloak issues to the SDK client, which asks for every mcp:* scope and offline_access.
      assert.deepEqual(String(claims.scope).split(" ").sort(), [
        "email",
        "mcp:prompts",
        "mcp:resources",
        "mcp:tools",
        "offline_access",
        "profile",
      ]);
      assert.equal(saved.tokens?.scope, claims.scope, "the token response names the same scopes");
      assert.equal(
        claimsOf(saved.tokens?.refresh_token as string).typ,
        "Offline",
        "offline_access makes the refresh token an offline token",
      );
      assert.equal(claims.roles, undefined, "the AI client's token carries no platform roles");
      assert.ok(saved.tokens?.refresh_token, "a refresh token was issued");
    } finally {
      await client.close();
    }
  });

  it("a viewer sees only the applications granted to them", async () => {
    const { client } = await signIn("bob", kc.mcp);
    try {
      assert.deepEqual(await applicationNames(client), ["storefront-web"]);
    } finally {
      await client.close();
    }
  });

  it("the exchanged token has the embedded provider's contract: aud imaging-api, roles, applications", async () => {
    const { client, saved } = await signIn("bob", kc.mcp);
    await client.close();
    const secret = await kc.admin.clients
      .find({ clientId: "mcp-token-exchange" })
      .then(([c]) => kc.admin.clients.getClientSecret({ id: c?.id as string }));
    const as = await oauth.processDiscoveryResponse(
      new URL(kc.issuer),
      await oauth.discoveryRequest(new URL(kc.issuer), { [oauth.allowInsecureRequests]: true }),
    );
    const exchangeClient: oauth.Client = { client_id: "mcp-token-exchange" };
    const response = await oauth.genericTokenEndpointRequest(
      as,
      exchangeClient,
      oauth.ClientSecretBasic(secret.value as string),
      "urn:ietf:params:oauth:grant-type:token-exchange",
      {
        subject_token: saved.tokens?.access_token as string,
        subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
        requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
        audience: "imaging-api",
      },
      { [oauth.allowInsecureRequests]: true },
    );
    const exchanged = await oauth.processGenericTokenEndpointResponse(as, exchangeClient, response);
    const claims = claimsOf(exchanged.access_token);
    assert.deepEqual([claims.aud].flat(), ["imaging-api"]);
    assert.deepEqual(claims.roles, ["viewer"]);
    assert.deepEqual(claims.applications, ["storefront-web"]);
    assert.equal(claims.iss, kc.issuer);
  });

  it("signs in to the gatekeeper server too", async () => {
    const { client } = await signIn("alice", kc.gatekeeper);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(tools, ["compare_analyses", "evaluate_gate", "gate_history", "gates"]);
    } finally {
      await client.close();
    }
  });

  it("renews access with the refresh token", async () => {
    const { client, saved } = await signIn("alice", kc.mcp);
    await client.close();
    const as = await oauth.processDiscoveryResponse(
      new URL(kc.issuer),
      await oauth.discoveryRequest(new URL(kc.issuer), { [oauth.allowInsecureRequests]: true }),
    );
    const aiClient: oauth.Client = { client_id: documents.clientId, token_endpoint_auth_method: "none" };
    const renewed = await oauth.processRefreshTokenResponse(
      as,
      aiClient,
      await oauth.refreshTokenGrantRequest(
        as,
        aiClient,
        oauth.None(),
        saved.tokens?.refresh_token as string,
        {
          [oauth.allowInsecureRequests]: true,
        },
      ),
    );
    const renewedClient = new Client({ name: "e2e-ai-client", version: "1.0.0" });
    await renewedClient.connect(
      new StreamableHTTPClientTransport(new URL(kc.mcp), {
        requestInit: { headers: { authorization: `Bearer ${renewed.access_token}` } },
      }),
    );
    try {
      assert.equal((await applicationNames(renewedClient)).length, 3);
    } finally {
      await renewedClient.close();
    }
  });

  it("a token sent straight to the MCP server, bypassing the gateway, gets a tool error 401/403", async () => {
    const { client, saved } = await signIn("alice", kc.mcp);
    await client.close();
    const direct = new Client({ name: "e2e-ai-client", version: "1.0.0" });
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(`${kc.service.mcpUrls.analysis}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${saved.tokens?.access_token}` } },
      }),
    );
    try {
      const result = (await direct.callTool({ name: "applications", arguments: {} })) as CallToolResult;
      assert.equal(result.isError, true);
      assert.match(JSON.stringify(result.content), /REST API answered 40[13]/);
    } finally {
      await direct.close();
    }
  });

  it("shows the consent page on every sign-in: the SDK client sends prompt=consent with offline_access", () => {
    assert.ok(signIns.length >= 5, `signed in ${signIns.length} times`);
    for (const request of signIns) {
      assert.deepEqual(request.scope?.split(" "), [
        "mcp:tools",
        "mcp:resources",
        "mcp:prompts",
        "offline_access",
      ]);
      assert.deepEqual(request.prompt, ["consent"]);
      assert.equal(request.consent, true, "Keycloak asked again, although the user had consented before");
    }
  });

  it("keeps each CIMD client_id as a realm client; switching its profile's variant removes it and its users' consents", async () => {
    const env = { ...kc.env, DATABASE_URL: "", IMAGING_CONFIG: "" };
    // Made with imaging cimd, which records the client_id (the console-made pair has none).
    assert.equal((await runCliProcess(["cimd", "remove", "test-ai-client"], env)).code, 0);
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
      ],
      env,
    );
    assert.equal(added.code, 0, added.stderr);
    const { client, saved } = await signIn("alice", kc.mcp);
    await client.close();

    const [realmClient] = await kc.admin.clients.find({ clientId: documents.clientId });
    assert.ok(realmClient, "Keycloak lists the client_id among the realm's clients");
    assert.equal(realmClient.consentRequired, true);
    assert.ok(realmClient.attributes?.["cimd.cache.expiry.time.in.sec"], "marked as made from a document");
    const [alice] = await kc.admin.users.find({ username: "alice", exact: true });
    const consents = () =>
      kc.admin.users
        .listConsents({ id: alice?.id as string })
        .then((all) => all.filter((c) => c.clientId === documents.clientId));
    const [consent] = await consents();
    assert.ok(consent?.grantedClientScopes?.includes("mcp:tools"), "alice's consent is recorded");

    const switched = await runCliProcess(["cimd", "set", "test-ai-client", "--http"], env);
    assert.equal(switched.code, 0, switched.stderr);
    assert.deepEqual(await kc.admin.clients.find({ clientId: documents.clientId }), [], "the client is gone");
    assert.deepEqual(await consents(), [], "and with it alice's consent");
    const as = await oauth.processDiscoveryResponse(
      new URL(kc.issuer),
      await oauth.discoveryRequest(new URL(kc.issuer), { [oauth.allowInsecureRequests]: true }),
    );
    const aiClient: oauth.Client = { client_id: documents.clientId, token_endpoint_auth_method: "none" };
    await assert.rejects(
      oauth
        .refreshTokenGrantRequest(as, aiClient, oauth.None(), saved.tokens?.refresh_token as string, {
          [oauth.allowInsecureRequests]: true,
        })
        .then((response) => oauth.processRefreshTokenResponse(as, aiClient, response)),
      (error: unknown) => error instanceof oauth.ResponseBodyError,
      "the refresh token issued before the switch no longer works",
    );

    const again = await signIn("alice", kc.mcp);
    try {
      assert.equal((await applicationNames(again.client)).length, 3, "signing in again works");
    } finally {
      await again.client.close();
    }
    const [recreated] = await kc.admin.clients.find({ clientId: documents.clientId });
    assert.ok(
      recreated?.id && recreated.id !== realmClient.id,
      "Keycloak made a new client from the document",
    );
  });
});
