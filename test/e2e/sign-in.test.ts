import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import * as oauth from "oauth4webapi";
import { type Browser, chromium } from "playwright-core";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
import {
  aiClientProvider,
  applicationNames,
  CHROMIUM_FLAGS,
  connectWithSignIn,
} from "../support/mcp-sign-in.ts";
import { type CallbackServer, startCallbackServer } from "../support/oauth-callback.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * The whole journey of a developer connecting an AI client, with real parts only: `imaging`'s gateway
 * and embedded identity provider on real ports, the official MCP SDK v2 client as the AI client
 * (its client ID metadata document served over TLS by a test CA the provider trusts), and the
 * sign-in performed in headless Chromium.
 */
const ARTIFACTS = join(process.cwd(), "test-artifacts");

describe("an AI client signs in through the gateway (headless Chromium, MCP SDK v2)", () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let idp: IdpService;
  let browser: Browser;
  let callback: CallbackServer;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    documents = await startCimdDocumentServer();
    callback = await startCallbackServer();
    store = await createTestStore("sqlite");
    // The operator's setting, as a deployment with an internal PKI would use it.
    const caFile = join(store.dataDir, "test-ca.pem");
    writeFileSync(caFile, documents.ca);
    idp = await startIdpService(store, {
      overrides: { idpExtraCaFile: caFile },
      seed: async (handle) => {
        await loadDemo(handle.db);
        await seedUsers(handle.db);
        await seedCimdClient(handle.db, "test-ai-client", documents.clientId);
      },
    });
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  });
  after(async () => {
    await browser?.close();
    await idp?.stop();
    await callback?.close();
    await documents?.close();
    await store?.drop();
  });

  /** The AI client, its sign-in done in Chromium on the embedded provider's pages. */
  const signIn = (user: keyof typeof USERS, url: string, screenshots = false) =>
    connectWithSignIn(
      url,
      aiClientProvider({
        clientMetadataUrl: documents.clientId,
        callback,
        signInInBrowser: async (authorizationUrl) => {
          const page = await browser.newPage();
          try {
            await page.goto(authorizationUrl.href);
            await page.locator('input[name="username"]').fill(user);
            if (screenshots) await page.screenshot({ path: join(ARTIFACTS, "sign-in.png"), fullPage: true });
            await page.locator('input[name="password"]').fill(USERS[user].password);
            await page.locator('input[name="password"]').press("Enter");
            await page
              .locator("#approve")
              .waitFor({ timeout: 10_000 })
              .catch(async (error) => {
                await page.screenshot({ path: join(ARTIFACTS, "failed-after-sign-in.png"), fullPage: true });
                throw new Error(
                  `no consent page after sign-in: ${page.url()} ${(await page.content()).slice(0, 2000)}`,
                  { cause: error },
                );
              });
            const consent = await page.content();
            assert.match(consent, /Test AI Client/, "the consent page names the client");
            assert.match(consent, /127\.0\.0\.1/, "the consent page shows the redirect host");
            if (screenshots) await page.screenshot({ path: join(ARTIFACTS, "consent.png"), fullPage: true });
            await page.locator("#approve").click();
            await page.waitForURL((url) => url.href.startsWith(callback.url));
          } finally {
            await page.close();
          }
        },
      }),
    );

  it("an admin signs in, lists the tools and all applications (screenshots of both pages saved)", async () => {
    const { client, saved } = await signIn("alice", idp.mcp, true);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(tools.includes("applications") && tools.includes("cve_occurrences"));
      assert.deepEqual(await applicationNames(client), [
        "claims-portal",
        "payments-service",
        "storefront-web",
      ]);
      assert.ok(saved.tokens?.refresh_token, "a refresh token was issued");
    } finally {
      await client.close();
    }
  });

  it("a viewer sees only the applications granted to them", async () => {
    const { client } = await signIn("bob", idp.mcp);
    try {
      assert.deepEqual(await applicationNames(client), ["storefront-web"]);
    } finally {
      await client.close();
    }
  });

  it("signs in to the gatekeeper server too", async () => {
    const { client } = await signIn("alice", idp.gatekeeper);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(tools, ["compare_analyses", "evaluate_gate", "gate_history", "gates"]);
    } finally {
      await client.close();
    }
  });

  it("renews access with the refresh token, which rotates", async () => {
    const { client, saved } = await signIn("alice", idp.mcp);
    await client.close();
    const refreshToken = saved.tokens?.refresh_token as string;
    const as = await oauth.processDiscoveryResponse(
      new URL(idp.issuer),
      await oauth.discoveryRequest(new URL(idp.issuer), { [oauth.allowInsecureRequests]: true }),
    );
    const aiClient: oauth.Client = { client_id: documents.clientId, token_endpoint_auth_method: "none" };
    const refresh = () =>
      oauth.refreshTokenGrantRequest(as, aiClient, oauth.None(), refreshToken, {
        [oauth.allowInsecureRequests]: true,
        additionalParameters: { resource: idp.mcp },
      });
    const renewed = await oauth.processRefreshTokenResponse(as, aiClient, await refresh());
    assert.ok(renewed.access_token);
    assert.notEqual(renewed.refresh_token, refreshToken, "a new refresh token replaces the old one");
    await assert.rejects(
      oauth.processRefreshTokenResponse(as, aiClient, await refresh()),
      (error: unknown) => error instanceof oauth.ResponseBodyError && error.error === "invalid_grant",
      "the used refresh token is refused",
    );

    const transport = new StreamableHTTPClientTransport(new URL(idp.mcp), {
      requestInit: { headers: { authorization: `Bearer ${renewed.access_token}` } },
    });
    const renewedClient = new Client({ name: "e2e-ai-client", version: "1.0.0" });
    await renewedClient.connect(transport);
    try {
      assert.equal((await applicationNames(renewedClient)).length, 3);
    } finally {
      await renewedClient.close();
    }
  });

  it("a token sent straight to the MCP server, bypassing the gateway, gets a tool error 401/403", async () => {
    const { client, saved } = await signIn("alice", idp.mcp);
    await client.close();
    const direct = new Client({ name: "e2e-ai-client", version: "1.0.0" });
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(`${idp.service.mcpUrls.analysis}/mcp`), {
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
});
