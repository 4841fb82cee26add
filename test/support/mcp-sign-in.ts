import assert from "node:assert/strict";
import {
  type CallToolResult,
  Client,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import type * as oauth from "oauth4webapi";
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
