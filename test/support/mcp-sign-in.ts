import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type CallToolResult,
  Client,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type * as oauth from "oauth4webapi";
import type { Browser } from "playwright-core";
import type { CallbackServer } from "./oauth-callback.ts";

/** Debian's Chromium, headless, without the background traffic a sandboxed machine cannot serve. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export interface SavedOAuthState {
  client?: { client_id: string };
  tokens?: oauth.TokenEndpointResponse;
  verifier?: string;
  discovery?: OAuthDiscoveryState;
}

export interface AiClientState {
  provider: OAuthClientProvider;
  saved: SavedOAuthState;
  /** The query the browser brought back to the loopback callback, once the sign-in was started. */
  callbackParams(): Promise<URLSearchParams> | undefined;
}

/**
 * An AI client's OAuth state as the MCP SDK asks an application to keep it (in memory here), its
 * client_id a client ID metadata document URL and its redirect the loopback callback. The sign-in
 * itself, in a browser, is `signInInBrowser`: it receives the authorization URL the SDK built.
 */
export function aiClientProvider(options: {
  clientMetadataUrl: string;
  callback: CallbackServer;
  signInInBrowser: (authorizationUrl: URL) => Promise<void>;
}): AiClientState {
  const { callback } = options;
  const saved: SavedOAuthState = {};
  let callbackParams: Promise<URLSearchParams> | undefined;
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return callback.url;
    },
    clientMetadataUrl: options.clientMetadataUrl,
    get clientMetadata() {
      return {
        client_name: "Test AI Client",
        redirect_uris: [callback.url],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    clientInformation: () => saved.client,
    saveClientInformation: (info) => {
      saved.client = info as { client_id: string };
    },
    tokens: () => saved.tokens as never,
    saveTokens: (tokens) => {
      saved.tokens = tokens as unknown as oauth.TokenEndpointResponse;
    },
    saveCodeVerifier: (verifier) => {
      saved.verifier = verifier;
    },
    codeVerifier: () => saved.verifier ?? "",
    // Lets the SDK check that the callback comes from the authorization server it started with.
    saveDiscoveryState: (state) => {
      saved.discovery = state;
    },
    discoveryState: () => saved.discovery,
    redirectToAuthorization: async (authorizationUrl: URL) => {
      callbackParams = callback.next();
      await options.signInInBrowser(authorizationUrl);
    },
  };
  return { provider, saved, callbackParams: () => callbackParams };
}

/** Connects like Claude Code: first request, 401, sign-in in the browser, then the real connection. */
export async function connectWithSignIn(
  url: string,
  state: AiClientState,
): Promise<{ client: Client; saved: SavedOAuthState }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: state.provider });
  const first = new Client({ name: "e2e-ai-client", version: "1.0.0" });
  try {
    await first.connect(transport);
    assert.fail("the first connection must ask for sign-in");
  } catch (error) {
    assert.ok(error instanceof UnauthorizedError, `expected the sign-in to be required, got ${error}`);
  }
  const params = await state.callbackParams();
  assert.ok(params, "the browser reached the loopback callback");
  await transport.finishAuth(params);
  const client = new Client({ name: "e2e-ai-client", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: state.provider }));
  return { client, saved: state.saved };
}

/** The names the `applications` tool returns: what the signed-in user may read. */
export async function applicationNames(client: Client): Promise<string[]> {
  const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
  return (result.structuredContent as { applications: { name: string }[] }).applications.map((a) => a.name);
}

/**
 * A user's sign-in on Keycloak's own pages in Chromium, from the authorization URL the AI client built
 * to its loopback callback: the sign-in form (served through the gateway, under `issuer`), then the
 * consent page when Keycloak shows it. Says whether it did.
 */
export async function signInOnKeycloakPages(
  browser: Browser,
  authorizationUrl: URL,
  options: {
    issuer: string;
    username: string;
    password: string;
    callbackUrl: string;
    /** What the consent page must name (the client's client_name). */
    clientName: RegExp;
    /** Where to save screenshots of the sign-in and consent pages (test-artifacts). */
    screenshotsIn?: string;
    artifacts: string;
  },
): Promise<{ consent: boolean }> {
  const page = await browser.newPage();
  try {
    await page.goto(authorizationUrl.href);
    // Keycloak's own sign-in page.
    await page.locator("#kc-form-login").waitFor({ timeout: 15_000 });
    assert.ok(
      page.url().startsWith(options.issuer),
      `the sign-in page is served via the gateway: ${page.url()}`,
    );
    await page.locator('input[name="username"]').fill(options.username);
    await page.locator('input[name="password"]').fill(options.password);
    if (options.screenshotsIn)
      await page.screenshot({ path: join(options.screenshotsIn, "keycloak-sign-in.png"), fullPage: true });
    await page.locator("#kc-login").click();
    // Keycloak asks the user to grant the AI client its scopes (consent) when it decides to.
    const consent = page.locator('input[name="accept"], button[name="accept"]');
    const reached = await Promise.race([
      consent.waitFor({ timeout: 15_000 }).then(() => "consent" as const),
      page
        .waitForURL((url) => url.href.startsWith(options.callbackUrl), { timeout: 15_000 })
        .then(() => "callback" as const),
    ]).catch(async (error) => {
      await page.screenshot({
        path: join(options.artifacts, "keycloak-failed-after-sign-in.png"),
        fullPage: true,
      });
      throw new Error(
        `no consent page nor callback after sign-in: ${page.url()} ${(await page.content()).slice(0, 2000)}`,
        { cause: error },
      );
    });
    if (reached === "consent") {
      assert.match(await page.content(), options.clientName, "the consent page names the client");
      if (options.screenshotsIn)
        await page.screenshot({ path: join(options.screenshotsIn, "keycloak-consent.png"), fullPage: true });
      await consent.first().click();
      await page.waitForURL((url) => url.href.startsWith(options.callbackUrl));
    }
    return { consent: reached === "consent" };
  } finally {
    await page.close();
  }
}
