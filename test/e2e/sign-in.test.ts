import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import * as oauth from "oauth4webapi";
import { type Browser, chromium } from "playwright-core";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { runCliProcess } from "../support/cli.ts";
import { createDemoStore } from "../support/demo-store.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
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
  type SavedOAuthState,
  signInOnKeycloakPages,
} from "../support/mcp-sign-in.ts";
import { type CallbackServer, startCallbackServer } from "../support/oauth-callback.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * The whole journey of a developer connecting an AI client, with real parts only, on each identity
 * provider: `imaging`'s gateway on a real port with the embedded provider, and with a real Keycloak that
 * the gateway provisions at start and fronts under /auth (it exchanges Keycloak's token for a platform
 * token carrying the user's roles). The AI client is the official MCP SDK v2 client (its client ID
 * metadata document served over TLS by a test CA the provider trusts), its sign-in performed in headless
 * Chromium on the provider's own pages. What both providers do is written once (signInJourney) and run
 * against each; each provider's own checks follow it.
 *
 * Run in run-suite's serial group: Keycloak's half must not run beside replicas-keycloak's 200-client load.
 */
const ARTIFACTS = join(process.cwd(), "test-artifacts");

type User = keyof typeof USERS;
type SignedIn = { client: Client; saved: SavedOAuthState };

/** How the shared journey signs in and checks, on one identity provider. */
interface SignInTarget {
  service: RunningService;
  issuer: string;
  mcp: string;
  gatekeeper: string;
  /** The AI client's client_id: its metadata document's URL. */
  clientId: string;
  /** The AI client connecting to `url`, its sign-in done in Chromium on the provider's pages. */
  signIn(user: User, url: string, screenshots?: boolean): Promise<SignedIn>;
  /** Extra parameters of a refresh request (the embedded provider binds the token to a resource). */
  refreshParameters: Record<string, string>;
  /**
   * The provider's own checks of the admin's sign-in: started before it (Keycloak: counts the gateway's
   * token exchanges), finished with its tokens.
   */
  adminSignInChecks?(): (saved: SavedOAuthState) => void;
  /** The provider's own checks of a renewal: the used refresh token and a second use of it. */
  renewalChecks?(renewal: {
    used: string;
    renewed: oauth.TokenEndpointResponse;
    refreshAgain(): Promise<oauth.TokenEndpointResponse>;
  }): Promise<void>;
}

/** The journey both identity providers give the AI client. */
function signInJourney(target: () => SignInTarget): void {
  it("an admin signs in, lists the tools and all applications (screenshots of the provider's pages saved)", async () => {
    const t = target();
    const finishChecks = t.adminSignInChecks?.();
    const { client, saved } = await t.signIn("alice", t.mcp, true);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      assert.ok(tools.includes("applications") && tools.includes("cve_occurrences"));
      assert.deepEqual(await applicationNames(client), [
        "claims-portal",
        "payments-service",
        "storefront-web",
      ]);
      assert.ok(saved.tokens?.refresh_token, "a refresh token was issued");
      finishChecks?.(saved);
    } finally {
      await client.close();
    }
  });

  it("a viewer sees only the applications granted to them", async () => {
    const t = target();
    const { client } = await t.signIn("bob", t.mcp);
    try {
      assert.deepEqual(await applicationNames(client), ["storefront-web"]);
    } finally {
      await client.close();
    }
  });

  it("signs in to the gatekeeper server too", async () => {
    const t = target();
    const { client } = await t.signIn("alice", t.gatekeeper);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
      assert.deepEqual(tools, ["compare_analyses", "evaluate_gate", "gate_history", "gates"]);
    } finally {
      await client.close();
    }
  });

  it("renews access with the refresh token", async () => {
    const t = target();
    const { client, saved } = await t.signIn("alice", t.mcp);
    await client.close();
    const used = saved.tokens?.refresh_token as string;
    const as = await discover(t.issuer);
    const aiClient: oauth.Client = { client_id: t.clientId, token_endpoint_auth_method: "none" };
    const refresh = async () =>
      oauth.processRefreshTokenResponse(
        as,
        aiClient,
        await oauth.refreshTokenGrantRequest(as, aiClient, oauth.None(), used, {
          [oauth.allowInsecureRequests]: true,
          additionalParameters: t.refreshParameters,
        }),
      );
    const renewed = await refresh();
    assert.ok(renewed.access_token);
    await t.renewalChecks?.({ used, renewed, refreshAgain: refresh });

    const renewedClient = new Client({ name: "e2e-ai-client", version: "1.0.0" });
    await renewedClient.connect(
      new StreamableHTTPClientTransport(new URL(t.mcp), {
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
    const t = target();
    const { client, saved } = await t.signIn("alice", t.mcp);
    await client.close();
    const direct = new Client({ name: "e2e-ai-client", version: "1.0.0" });
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(`${t.service.mcpUrls.analysis}/mcp`), {
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
}

const discover = async (issuer: string) =>
  oauth.processDiscoveryResponse(
    new URL(issuer),
    await oauth.discoveryRequest(new URL(issuer), { [oauth.allowInsecureRequests]: true }),
  );

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as Record<string, unknown>;

describe("an AI client signs in through the gateway (headless Chromium, MCP SDK v2)", () => {
  /** One Chromium for both providers; every sign-in has a page in a context of its own (newPage). */
  let browser: Browser;
  let callback: CallbackServer;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    callback = await startCallbackServer();
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  });
  after(async () => {
    await browser?.close();
    await callback?.close();
  });

  describe("with the embedded identity provider", () => {
    let store: TestStore;
    let documents: CimdDocumentServer;
    let idp: IdpService;

    before(async () => {
      documents = await startCimdDocumentServer();
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
    });
    after(async () => {
      await idp?.stop();
      await documents?.close();
      await store?.drop();
    });

    /** The sign-in and consent on the embedded provider's pages. */
    const signInInBrowser = async (authorizationUrl: URL, user: User, screenshots: boolean) => {
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
    };

    signInJourney(() => ({
      service: idp.service,
      issuer: idp.issuer,
      mcp: idp.mcp,
      gatekeeper: idp.gatekeeper,
      clientId: documents.clientId,
      signIn: (user, url, screenshots = false) =>
        connectWithSignIn(
          url,
          aiClientProvider({
            clientMetadataUrl: documents.clientId,
            callback,
            signInInBrowser: (authorizationUrl) => signInInBrowser(authorizationUrl, user, screenshots),
          }),
        ),
      refreshParameters: { resource: idp.mcp },
      renewalChecks: async ({ used, renewed, refreshAgain }) => {
        assert.notEqual(renewed.refresh_token, used, "a new refresh token replaces the old one");
        await assert.rejects(
          refreshAgain(),
          (error: unknown) => error instanceof oauth.ResponseBodyError && error.error === "invalid_grant",
          "the used refresh token is refused",
        );
      },
    }));
  });

  describe("with Keycloak", () => {
    let store: TestStore;
    let documents: CimdDocumentServer;
    let kc: KeycloakService;

    before(async () => {
      store = await createDemoStore("sqlite");
      kc = await startKeycloakService({ store });
      // Like Claude Code's real document: loopback redirect URIs without a port (RFC 8252).
      documents = await startCimdDocumentServer(
        "/oauth/client-metadata.json",
        ["http://127.0.0.1/callback", "http://localhost/callback"],
        kc.keycloak.certificates,
      );
      await seedKeycloakUsers(kc.admin);
      await seedKeycloakCimdClient(kc.admin, "test-ai-client", documents.clientId);
    });
    after(async () => {
      await kc?.stop();
      await documents?.close();
      await store?.drop();
    });

    /** Every sign-in's authorization request and whether Keycloak showed its consent page (docs/keycloak.md). */
    const signIns: { scope: string | null; prompt: string[]; consent: boolean }[] = [];

    /** The AI client, its sign-in done in Chromium on Keycloak's own pages (through the gateway). */
    const signIn = (user: User, url: string, screenshots = false) =>
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

    signInJourney(() => ({
      service: kc.service,
      issuer: kc.issuer,
      mcp: kc.mcp,
      gatekeeper: kc.gatekeeper,
      clientId: documents.clientId,
      signIn,
      refreshParameters: {},
      adminSignInChecks: () => {
        const exchangesBefore = kc.service.exchanger?.requests ?? 0;
        return (saved) => {
          assert.ok(
            (kc.service.exchanger?.requests ?? 0) > exchangesBefore,
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
        };
      },
    }));

    it("the exchanged token has the embedded provider's contract: aud imaging-api, roles, applications", async () => {
      const { client, saved } = await signIn("bob", kc.mcp);
      await client.close();
      const secret = await kc.admin.clients
        .find({ clientId: "mcp-token-exchange" })
        .then(([c]) => kc.admin.clients.getClientSecret({ id: c?.id as string }));
      const as = await discover(kc.issuer);
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
      assert.deepEqual(
        await kc.admin.clients.find({ clientId: documents.clientId }),
        [],
        "the client is gone",
      );
      assert.deepEqual(await consents(), [], "and with it alice's consent");
      const as = await discover(kc.issuer);
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
});
