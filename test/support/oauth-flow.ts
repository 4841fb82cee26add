import * as oauth from "oauth4webapi";
import { CookieJar, follow, formsOf, postForm } from "./browserless-session.ts";

/**
 * The OAuth authorization code flow with PKCE as an AI client drives it, the browser's part played by a
 * BrowserlessSession (sign-in and consent forms posted, redirects followed), and the token endpoint calls.
 */

export interface ClientSetup {
  issuer: string;
  clientId: string;
  redirectUri: string;
  resource: string;
  /** Default: the mcp:* scopes and offline_access; null sends no `scope` parameter at all. */
  scope?: string | null;
}

export interface StartedAuthorization {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  jar: CookieJar;
  state: string;
  verifier: string;
  authorizationUrl: URL;
  /** The interaction page the provider sent the browser to. */
  pageUrl: string;
  html: string;
  status: number;
}

export async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(
    url,
    await oauth.discoveryRequest(url, { algorithm: "oidc", [oauth.allowInsecureRequests]: true }),
  );
}

/** Sends the browser to the authorization endpoint and follows it to the first page it must fill. */
export async function startAuthorization(
  setup: ClientSetup,
  jar = new CookieJar(),
): Promise<StartedAuthorization> {
  const as = await discover(setup.issuer);
  const client: oauth.Client = { client_id: setup.clientId };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const authorizationUrl = new URL(as.authorization_endpoint as string);
  authorizationUrl.search = new URLSearchParams({
    client_id: setup.clientId,
    redirect_uri: setup.redirectUri,
    response_type: "code",
    ...(setup.scope === null
      ? {}
      : { scope: setup.scope ?? "mcp:tools mcp:resources mcp:prompts offline_access" }),
    resource: setup.resource,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  }).toString();
  const { url, response } = await follow(jar, authorizationUrl.href, setup.redirectUri);
  return {
    as,
    client,
    jar,
    state,
    verifier,
    authorizationUrl,
    pageUrl: url,
    html: await response.text(),
    status: response.status,
  };
}

export interface Tokens {
  accessToken: string;
  refreshToken?: string;
  expiresIn?: number;
  scope?: string;
  response: oauth.TokenEndpointResponse;
}

/**
 * The whole authorization code flow with PKCE as a browser and an AI client would do it: sign-in
 * form, consent page (approve), code exchanged at the token endpoint with `resource`.
 */
export async function authorize(
  setup: ClientSetup,
  user: { username: string; password: string },
  jar = new CookieJar(),
): Promise<Tokens & { jar: CookieJar; consentHtml: string; callback: URL }> {
  const started = await startAuthorization(setup, jar);
  let { html, pageUrl } = started;
  let consentHtml = "";
  for (let step = 0; step < 4; step++) {
    const [form] = formsOf(html, pageUrl);
    if (!form) throw new Error(`no form on ${pageUrl}: ${html}`);
    let response: Response;
    if (form.action.endsWith("/login")) {
      response = await postForm(jar, form, { username: user.username, password: user.password });
    } else if (form.action.endsWith("/confirm")) {
      consentHtml = html;
      response = await postForm(jar, form, {});
    } else {
      throw new Error(`unexpected form ${form.action}`);
    }
    if (response.status !== 303)
      throw new Error(`form ${form.action} answered ${response.status}: ${await response.text()}`);
    const next = await follow(
      jar,
      new URL(response.headers.get("location") as string, form.action).href,
      setup.redirectUri,
    );
    if (next.callback) {
      const tokens = await exchangeCode(started, setup, next.callback);
      return { ...tokens, jar, consentHtml, callback: next.callback };
    }
    html = await next.response.text();
    pageUrl = next.url;
  }
  throw new Error("the flow did not reach the client's redirect URI");
}

export async function exchangeCode(
  started: StartedAuthorization,
  setup: ClientSetup,
  callback: URL,
): Promise<Tokens> {
  const params = oauth.validateAuthResponse(started.as, started.client, callback, started.state);
  const response = await oauth.authorizationCodeGrantRequest(
    started.as,
    started.client,
    oauth.None(),
    params,
    setup.redirectUri,
    started.verifier,
    { additionalParameters: { resource: setup.resource }, [oauth.allowInsecureRequests]: true },
  );
  const result = await oauth.processAuthorizationCodeResponse(started.as, started.client, response);
  return tokensOf(result);
}

export async function refresh(setup: ClientSetup, refreshToken: string): Promise<Tokens> {
  const as = await discover(setup.issuer);
  const client: oauth.Client = { client_id: setup.clientId };
  const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, {
    additionalParameters: { resource: setup.resource },
    [oauth.allowInsecureRequests]: true,
  });
  return tokensOf(await oauth.processRefreshTokenResponse(as, client, response));
}

function tokensOf(result: oauth.TokenEndpointResponse): Tokens {
  return {
    accessToken: result.access_token,
    refreshToken: result.refresh_token,
    expiresIn: result.expires_in,
    scope: result.scope,
    response: result,
  };
}

/** Payload and header of a JWT, without verifying it (tests look at what was issued). */
export function decodeJwt(token: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const [header = "", payload = ""] = token.split(".");
  return {
    header: JSON.parse(Buffer.from(header, "base64url").toString("utf8")),
    payload: JSON.parse(Buffer.from(payload, "base64url").toString("utf8")),
  };
}

/** A token exchange request as the gateway sends it. */
export async function exchangeToken(
  issuer: string,
  credentials: { clientId: string; clientSecret: string } | undefined,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const as = await discover(issuer);
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (credentials) {
    const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, "+");
    headers.authorization = `Basic ${Buffer.from(`${enc(credentials.clientId)}:${enc(credentials.clientSecret)}`).toString("base64")}`;
  }
  const response = await fetch(as.token_endpoint as string, {
    method: "POST",
    headers,
    body: new URLSearchParams({
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
      requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
      audience: "imaging-api",
      ...form,
    }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
