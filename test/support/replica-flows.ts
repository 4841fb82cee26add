import * as oauth from "oauth4webapi";
import { Agent, fetch as undiciFetch } from "undici";
import { CookieJar, formsOf } from "./browserless-session.ts";
import { PIN_HEADER } from "./haproxy.ts";

export const MODERN = "2026-07-28";

/** A browser's cookie jar whose every request HAProxy sends to one replica (the test's pin header). */
export class PinnedJar extends CookieJar {
  readonly replica: string;
  constructor(replica: string) {
    super();
    this.replica = replica;
  }
  override fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set(PIN_HEADER, this.replica);
    return super.fetch(url, { ...init, headers });
  }
}

/**
 * An AI client's sign-in (authorization code + PKCE, `resource` = the MCP URL) with every browser request
 * pinned to one replica: the authorization request, the identity provider's sign-in form and consent page
 * (Keycloak's pages through the gateway's /auth, or the embedded provider's), the code exchange.
 */
export async function signInThrough(options: {
  replica: string;
  issuer: string;
  clientId: string;
  redirectUri: string;
  resource: string;
  username: string;
  password: string;
}): Promise<{ accessToken: string; refreshToken?: string }> {
  const jar = new PinnedJar(options.replica);
  const pinned = { [PIN_HEADER]: options.replica };
  const issuer = new URL(options.issuer);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, {
      algorithm: "oidc",
      headers: pinned,
      [oauth.allowInsecureRequests]: true,
    }),
  );
  const client: oauth.Client = { client_id: options.clientId };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const start = new URL(as.authorization_endpoint as string);
  start.search = new URLSearchParams({
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    response_type: "code",
    scope: "mcp:tools offline_access",
    resource: options.resource,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  }).toString();
  let url = start.href;
  let init: RequestInit = {};
  for (let hop = 0; hop < 20; hop++) {
    const response = await jar.fetch(url, init);
    init = {};
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      const next = new URL(location, url);
      if (next.href.startsWith(options.redirectUri)) {
        const params = oauth.validateAuthResponse(as, client, next, state);
        const tokenResponse = await oauth.authorizationCodeGrantRequest(
          as,
          client,
          oauth.None(),
          params,
          options.redirectUri,
          verifier,
          {
            additionalParameters: { resource: options.resource },
            headers: pinned,
            [oauth.allowInsecureRequests]: true,
          },
        );
        const tokens = await oauth.processAuthorizationCodeResponse(as, client, tokenResponse);
        return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
      }
      url = next.href;
      continue;
    }
    const html = await response.text();
    // The first post form of the page (the sign-in form, or the consent form), with its hidden fields.
    const [form] = formsOf(html, url);
    if (!form) throw new Error(`no form to fill at ${url} (HTTP ${response.status}): ${html.slice(0, 500)}`);
    const login = /name="password"/.test(html);
    const body = new URLSearchParams({
      ...form.fields,
      ...(login ? { username: options.username, password: options.password } : { accept: "Yes" }),
    });
    url = form.action;
    init = {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(url).origin },
      body: body.toString(),
    };
  }
  throw new Error("the sign-in did not reach the client's redirect URI");
}

/** A stateless 2026-07-28 `tools/call` of `applications`, its answer's application names (or the failure). */
export function toolsCallBody(id: number): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name: "applications",
      arguments: {},
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": { name: "replica-load", version: "1.0.0" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
}

export function toolsCallHeaders(token: string, replica?: string): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "applications",
    authorization: `Bearer ${token}`,
    ...(replica ? { [PIN_HEADER]: replica } : {}),
  };
}

/** The JSON-RPC message of an answer sent as JSON or as the first SSE data event with an id. */
export function jsonRpcOf(contentType: string, text: string): { result?: unknown; error?: unknown } {
  if (!contentType.includes("text/event-stream")) return JSON.parse(text);
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    const message = JSON.parse(line.slice(5).trim());
    if (message.id !== undefined) return message;
  }
  throw new Error(`no JSON-RPC answer in the stream: ${text.slice(0, 300)}`);
}

/** The application names a `tools/call` of `applications` answered, or why it failed. */
export async function callApplications(
  url: string,
  token: string,
  options: { replica?: string; dispatcher?: Agent; id?: number } = {},
): Promise<{ ok: true; names: string[] } | { ok: false; reason: string }> {
  try {
    const init = {
      method: "POST",
      headers: toolsCallHeaders(token, options.replica),
      body: toolsCallBody(options.id ?? 1),
      signal: AbortSignal.timeout(30_000),
    };
    // The load's own connection pool (undici's fetch with its Agent); Node's fetch otherwise.
    const response = options.dispatcher
      ? await undiciFetch(url, { ...init, dispatcher: options.dispatcher })
      : await fetch(url, init);
    const text = await response.text();
    if (response.status !== 200)
      return { ok: false, reason: `HTTP ${response.status}: ${text.slice(0, 200)}` };
    const message = jsonRpcOf(response.headers.get("content-type") ?? "", text) as {
      result?: { isError?: boolean; structuredContent?: { applications: { name: string }[] } };
      error?: unknown;
    };
    if (message.error || message.result?.isError || !message.result?.structuredContent) {
      return { ok: false, reason: `JSON-RPC: ${JSON.stringify(message).slice(0, 200)}` };
    }
    return { ok: true, names: message.result.structuredContent.applications.map((a) => a.name).sort() };
  } catch (error) {
    const cause = (error as Error).cause as { code?: string; message?: string } | undefined;
    return {
      ok: false,
      reason: `${(error as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ""}`,
    };
  }
}

export interface LoadRecord {
  start: number;
  end: number;
  ok: boolean;
  reason?: string;
}

/**
 * A bounded load generator: `clients` concurrent clients each sending `tools/call` in a loop for
 * `seconds` (and 5 s past the end of `during`), each answer checked (HTTP 200, a JSON-RPC result naming
 * `expected`). `during` runs beside it (the kill and the restart); every request's times are returned.
 */
export async function runLoad(options: {
  url: string;
  token: string;
  clients: number;
  seconds: number;
  expected: string[];
  during?: (startedAt: number) => Promise<void>;
}): Promise<{ records: LoadRecord[]; duringError?: unknown }> {
  const dispatcher = new Agent({ connections: options.clients, pipelining: 1 });
  const records: LoadRecord[] = [];
  const startedAt = Date.now();
  let until = startedAt + options.seconds * 1000;
  const expected = JSON.stringify([...options.expected].sort());
  let id = 0;
  const client = async () => {
    while (Date.now() < until) {
      const start = Date.now();
      const answer = await callApplications(options.url, options.token, { dispatcher, id: ++id });
      const end = Date.now();
      if (answer.ok && JSON.stringify(answer.names) !== expected) {
        records.push({ start, end, ok: false, reason: `wrong answer ${JSON.stringify(answer.names)}` });
      } else {
        records.push({ start, end, ok: answer.ok, ...(answer.ok ? {} : { reason: answer.reason }) });
      }
    }
  };
  let duringError: unknown;
  // The load goes on at least 5 s after `during` is done (a slow restart must still see traffic).
  const beside = options.during?.(startedAt).then(
    () => {
      until = Math.max(until, Date.now() + 5_000);
    },
    (error) => {
      duringError = error;
    },
  );
  await Promise.all([...Array.from({ length: options.clients }, client), beside]);
  await dispatcher.close();
  return { records, duringError };
}
