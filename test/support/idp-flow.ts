import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import * as oauth from "oauth4webapi";
import { loadSettings } from "../../src/config/load-config.ts";
import { resolveRuntimeConfig } from "../../src/config/runtime-config.ts";
import type { Settings } from "../../src/config/settings.ts";
import { createUser } from "../../src/domain/users.ts";
import { CIMD_CONDITION, CIMD_EXECUTOR, policyNameOf, profileNameOf } from "../../src/idp/cimd/model.ts";
import type { EmbeddedIdpStartOptions } from "../../src/idp/provider/index.ts";
import { type RunningService, startService } from "../../src/service.ts";
import { createCimdClient } from "../../src/store/cimd.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import type { Database } from "../../src/store/schema.ts";
import { freePort, internalPortsBeside } from "./service.ts";
import type { TestStore } from "./stores.ts";

/**
 * Helpers for the embedded identity provider's tests: a service whose gateway runs the embedded
 * provider, a client metadata document served over TLS by a test CA, a cookie jar, and a browserless
 * driver of the sign-in and consent pages.
 */

export const USERS = {
  alice: { password: "alice-password-1234", role: "admin" as const, applications: [] as string[] },
  bob: { password: "bob-password-123456", role: "viewer" as const, applications: ["storefront-web"] },
};

export async function seedUsers(db: Kysely<Database>): Promise<void> {
  for (const [username, user] of Object.entries(USERS)) {
    await createUser(db, {
      username,
      password: user.password,
      role: user.role,
      applications: user.applications,
    });
  }
}

/** Registers a CIMD client the way `imaging cimd add` does (HTTPS variant), trusting the test host. */
export async function seedCimdClient(db: Kysely<Database>, name: string, clientId: string): Promise<void> {
  const host = new URL(clientId).hostname;
  await createCimdClient(db, {
    client: name,
    clientId,
    profile: {
      name: profileNameOf(name),
      executor: CIMD_EXECUTOR,
      allowHttpScheme: false,
      restrictSameDomain: false,
      onlyAllowConfidentialClient: false,
      trustedDomains: [host, "localhost", "127.0.0.1"],
    },
    policy: {
      name: policyNameOf(name),
      condition: CIMD_CONDITION,
      uriSchemes: ["https"],
      trustedDomains: [host],
      profiles: [profileNameOf(name)],
      enabled: true,
    },
  });
}

export interface IdpService {
  service: RunningService;
  base: string;
  issuer: string;
  mcp: string;
  gatekeeper: string;
  stop(): Promise<void>;
}

/** The real service with the embedded identity provider (no IDP_ISSUER), base_url = its real address. */
export async function startIdpService(
  store: TestStore,
  options: {
    seed?: (store: StoreHandle) => Promise<void>;
    idp?: EmbeddedIdpStartOptions;
    port?: number;
    overrides?: Partial<Record<keyof Settings, string | number | undefined>>;
  } = {},
): Promise<IdpService> {
  if (options.seed) {
    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    try {
      await options.seed(handle);
    } finally {
      await handle.close();
    }
  }
  const port = options.port ?? (await freePort());
  const base =
    typeof options.overrides?.publicUrl === "string"
      ? options.overrides.publicUrl
      : `http://127.0.0.1:${port}`;
  const settings = loadSettings({
    env: {},
    overrides: {
      dataDir: store.dataDir,
      databaseUrl: store.databaseUrl,
      port,
      ...(await internalPortsBeside(port)),
      bindAddress: "127.0.0.1",
      publicUrl: base,
      logLevel: "silent",
      ...options.overrides,
    },
  });
  const service = await startService(await resolveRuntimeConfig(settings), { idp: options.idp });
  return {
    service,
    base,
    issuer: `${base}/auth/realms/imaging`,
    mcp: `${base}/mcp`,
    gatekeeper: `${base}/mcp/gatekeeper`,
    stop: () => service.stop(),
  };
}

export interface CimdDocumentServer {
  /** The client_id: https URL of the document. */
  clientId: string;
  /** PEM of the test CA that signed the server's certificate. */
  ca: string;
  /** Replaces the document served (defaults to a valid one). */
  document: Record<string, unknown>;
  /** Serves another document at `path` on the same host; returns its URL. */
  serve(path: string, document: (url: string) => unknown): string;
  readonly fetches: number;
  close(): Promise<void>;
}

export interface TestCertificates {
  /** PEM of the throwaway CA. */
  ca: string;
  caFile: string;
  /** Server certificate and key for 127.0.0.1 and localhost, signed by the CA. */
  certFile: string;
  keyFile: string;
}

/** A throwaway CA and a server certificate for 127.0.0.1 / localhost, made with the openssl CLI in `dir`. */
export function makeTestCertificates(dir: string): TestCertificates {
  const openssl = (command: string) =>
    execFileSync("openssl", command.split(" "), { cwd: dir, stdio: "pipe" });
  openssl(
    "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=imaging-test-CA " +
      "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign",
  );
  openssl("req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1");
  writeFileSync(
    join(dir, "server.ext"),
    "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n" +
      "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
  );
  openssl(
    "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext",
  );
  return {
    ca: readFileSync(join(dir, "ca.pem"), "utf8"),
    caFile: join(dir, "ca.pem"),
    certFile: join(dir, "server.pem"),
    keyFile: join(dir, "server.key"),
  };
}

/** A client metadata document served over HTTPS on 127.0.0.1, its certificate from a throwaway CA (openssl). */
export async function startCimdDocumentServer(
  path = "/oauth/client-metadata.json",
  redirectUris = ["http://127.0.0.1/callback", "http://localhost/callback"],
  /** Certificates of a CA made beforehand (a Keycloak started with it in its truststore); else a new one. */
  given?: TestCertificates,
): Promise<CimdDocumentServer> {
  const dir = mkdtempSync(join(tmpdir(), "imaging-test-ca-"));
  try {
    const certificates = given ?? makeTestCertificates(dir);
    const ca = certificates.ca;
    const state = { fetches: 0, document: {} as Record<string, unknown> };
    const others = new Map<string, unknown>();
    const server: Server = createServer(
      { key: readFileSync(certificates.keyFile), cert: readFileSync(certificates.certFile) },
      (req, res) => {
        if (req.url !== path && !others.has(req.url ?? "")) {
          res.writeHead(404).end();
          return;
        }
        state.fetches++;
        res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=0" });
        res.end(JSON.stringify(req.url === path ? state.document : others.get(req.url ?? "")));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const clientId = `${origin}${path}`;
    state.document = {
      client_id: clientId,
      client_name: "Test AI Client",
      client_uri: "https://127.0.0.1/",
      redirect_uris: redirectUris,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
    return {
      clientId,
      ca,
      get document() {
        return state.document;
      },
      set document(value) {
        state.document = value;
      },
      get fetches() {
        return state.fetches;
      },
      serve(other, document) {
        others.set(other, document(`${origin}${other}`));
        return `${origin}${other}`;
      },
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface StoredCookie {
  name: string;
  value: string;
  path: string;
}

/** Enough of a browser's cookie jar for one origin: paths honoured, deletions applied. */
export class CookieJar {
  readonly #cookies = new Map<string, StoredCookie>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";").map((p) => p.trim());
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const path = attributes.find((a) => a.toLowerCase().startsWith("path="))?.slice(5) || "/";
      const expires = attributes.find((a) => a.toLowerCase().startsWith("expires="));
      const key = `${name} ${path}`;
      if (value === "" || (expires && Date.parse(expires.slice(8)) < Date.now())) this.#cookies.delete(key);
      else this.#cookies.set(key, { name, value, path });
    }
  }

  header(url: string): string {
    const path = new URL(url).pathname;
    return [...this.#cookies.values()]
      .filter((c) => path === c.path || path.startsWith(c.path.endsWith("/") ? c.path : `${c.path}/`))
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }

  get(name: string): string | undefined {
    return [...this.#cookies.values()].find((c) => c.name === name)?.value;
  }

  /** fetch without following redirects, with this jar's cookies. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.header(url);
    if (cookie) headers.set("cookie", cookie);
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    this.store(response);
    return response;
  }
}

export interface HtmlForm {
  action: string;
  fields: Record<string, string>;
}

const decode = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/** The post forms of a page, with their hidden fields. */
export function formsOf(html: string, pageUrl: string): HtmlForm[] {
  return [...html.matchAll(/<form[^>]*method="post"[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].map(
    (m) => ({
      action: new URL(decode(m[1] ?? ""), pageUrl).href,
      fields: Object.fromEntries(
        [...(m[2] ?? "").matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((f) => [
          f[1] ?? "",
          decode(f[2] ?? ""),
        ]),
      ),
    }),
  );
}

export async function postForm(
  jar: CookieJar,
  form: HtmlForm,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return jar.fetch(form.action, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: new URL(form.action).origin,
      ...headers,
    },
    body: new URLSearchParams({ ...form.fields, ...fields }).toString(),
  });
}

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

/** Follows redirects inside the provider; stops at a page, or at the redirect to the client. */
export async function follow(
  jar: CookieJar,
  start: string,
  redirectUri: string,
): Promise<{ url: string; response: Response; callback?: URL }> {
  let url = start;
  for (let hops = 0; hops < 10; hops++) {
    const response = await jar.fetch(url);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      if (
        `${next.origin}${next.pathname}` === `${new URL(redirectUri).origin}${new URL(redirectUri).pathname}`
      ) {
        return { url, response, callback: next };
      }
      await response.body?.cancel();
      url = next.href;
      continue;
    }
    return { url, response };
  }
  throw new Error(`too many redirects from ${start}`);
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
