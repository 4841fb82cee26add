import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium } from "playwright-core";
import type { Check } from "../../src/doctor/check.ts";
import {
  provisionRegistrationPolicies,
  REGISTERED_CLIENTS_POLICY,
  REGISTERED_CLIENTS_PROFILE,
} from "../../src/idp/keycloak/registration-policies.ts";
import { registrationPolicyOf } from "../../src/idp/registration/endpoint.ts";
import { runCliProcess } from "../support/cli.ts";
import { createDemoStore } from "../support/demo-store.ts";
import { USERS } from "../support/idp-service.ts";
import {
  type KeycloakService,
  seedKeycloakUsers,
  startKeycloakService,
} from "../support/keycloak-service.ts";
import { CHROMIUM_FLAGS } from "../support/mcp-sign-in.ts";
import {
  applicationsThroughProxy,
  ensureMcpRemote,
  ensurePythonMcp,
  pathWithoutDesktopBrowser,
  StdioPeer,
} from "../support/real-clients.ts";
import type { TestStore } from "../support/stores.ts";

/**
 * DYNAMIC_CLIENT_REGISTRATION=loopback with Keycloak 26.7 as the identity provider: start-up maps the
 * policy onto Keycloak's client registration policies and a client policy; the gateway applies the
 * same refusals in front of Keycloak's registration endpoint; real clients (mcp-remote, the Python
 * MCP SDK) register, sign in on Keycloak's pages in headless Chromium and call a tool.
 */
const PYTHON_CLIENT = join(process.cwd(), "test", "support", "python", "registering_client.py");
const MCP_REMOTE_METADATA = {
  redirect_uris: ["http://localhost:3334/oauth/callback"],
  token_endpoint_auth_method: "none",
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  client_name: "MCP CLI Proxy",
  application_type: "native",
  scope: "mcp:tools mcp:resources mcp:prompts offline_access",
};

describe("dynamic client registration on Keycloak (DYNAMIC_CLIENT_REGISTRATION=loopback)", () => {
  let store: TestStore;
  let kc: KeycloakService;
  let browser: Browser;
  let mcpRemote: string;
  let python: string;
  const homes: string[] = [];
  const peers: StdioPeer[] = [];

  before(async () => {
    mcpRemote = ensureMcpRemote();
    python = ensurePythonMcp();
    store = await createDemoStore("sqlite");
    kc = await startKeycloakService({
      store,
      overrides: { dynamicClientRegistration: "loopback" },
      // Its refusals count too: more than the 10 an hour the gateway allows one address by default.
      registration: { perAddress: 100 },
    });
    await seedKeycloakUsers(kc.admin);
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  });
  after(async () => {
    for (const peer of peers) await peer.stop();
    await browser?.close();
    await kc?.stop();
    await store?.drop();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });

  const endpoint = () => `${kc.issuer}/clients-registrations/openid-connect`;
  const register = async (url: string, body: unknown) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("start-up set Keycloak's anonymous registration policies and the client policy (a restart changes nothing)", async () => {
    const realm = await kc.admin.realms.findOne({ realm: kc.realm });
    const components = await kc.admin.components.find({
      type: "org.keycloak.services.clientregistration.policy.ClientRegistrationPolicy",
      parent: realm?.id,
    });
    const trusted = components.find((c) => c.subType === "anonymous" && c.providerId === "trusted-hosts");
    assert.deepEqual([...(trusted?.config?.["trusted-hosts"] ?? [])].sort(), [
      "127.0.0.1",
      "::1",
      "localhost",
    ]);
    assert.deepEqual(trusted?.config?.["host-sending-registration-request-must-match"], ["false"]);
    const scopes = components.find(
      (c) => c.subType === "anonymous" && c.providerId === "allowed-client-templates",
    );
    assert.deepEqual([...(scopes?.config?.["allowed-client-scopes"] ?? [])].sort(), [
      "mcp:prompts",
      "mcp:resources",
      "mcp:tools",
    ]);
    const policies = await kc.admin.clientPolicies.listPolicies({
      realm: kc.realm,
      includeGlobalPolicies: false,
    });
    const policy = policies.policies?.find((p) => p.name === REGISTERED_CLIENTS_POLICY);
    assert.deepEqual(policy?.profiles, [REGISTERED_CLIENTS_PROFILE]);
    assert.deepEqual(
      (policy?.conditions?.[0]?.configuration as Record<string, unknown> | undefined)?.[
        "update-client-source"
      ],
      ["ByAnonymous", "ByRegistrationAccessToken"],
    );
    const profiles = await kc.admin.clientPolicies.listProfiles({
      realm: kc.realm,
      includeGlobalProfiles: false,
    });
    const uriChecks = profiles.profiles
      ?.find((p) => p.name === REGISTERED_CLIENTS_PROFILE)
      ?.executors?.filter((e) => e.executor === "secure-client-uris-pattern")
      .map((e) => e.configuration as Record<string, string[]>);
    assert.deepEqual(uriChecks?.[0]?.["client-uri-fields"], ["redirectUris", "postLogoutRedirectUris"]);
    assert.equal(uriChecks?.[0]?.["allowed-patterns"]?.length, 1, "loopback only in loopback mode");
    assert.deepEqual(uriChecks?.[1]?.["allowed-patterns"], [], "the URIs Keycloak would call: none");
    assert.ok(
      (kc.service.keycloak?.changes ?? []).some((c) => /client registration policy Trusted Hosts/.test(c)),
    );
    const again: string[] = [];
    await provisionRegistrationPolicies(kc.admin, kc.realm, registrationPolicyOf(kc.service.config), again);
    assert.deepEqual(again, [], "a second provisioning changes nothing");
  });

  it("advertises Keycloak's registration endpoint, /register leads there, and the gateway refuses what the policy refuses", async () => {
    const metadata = (await (await fetch(`${kc.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(metadata.registration_endpoint, endpoint());
    const redirect = await fetch(`${kc.base}/register`, { method: "POST", redirect: "manual" });
    assert.equal(redirect.status, 307);
    assert.equal(redirect.headers.get("location"), endpoint());

    const confidential = await register(endpoint(), {
      ...MCP_REMOTE_METADATA,
      token_endpoint_auth_method: "client_secret_basic",
    });
    assert.equal(confidential.status, 400);
    assert.match(String(confidential.body.error_description), /\[rule confidential-client-refused\]/);
    const https = await register(endpoint(), {
      ...MCP_REMOTE_METADATA,
      redirect_uris: ["https://app.example.com/cb"],
    });
    assert.equal(https.body.error, "invalid_redirect_uri");
    assert.match(String(https.body.error_description), /\[rule redirect-uri-not-loopback\]/);
    const scope = await register(endpoint(), { ...MCP_REMOTE_METADATA, scope: "mcp:tools admin" });
    assert.match(String(scope.body.error_description), /\[rule scope-not-allowed\]/);
    const other = await register(`${kc.issuer}/clients-registrations/default`, { clientId: "x" });
    assert.equal(other.status, 403);

    // Every URI the browser is sent to is under the policy: the sign-out page's redirect too.
    const postLogout = await register(endpoint(), {
      ...MCP_REMOTE_METADATA,
      post_logout_redirect_uris: ["https://evil.example/phish"],
    });
    assert.equal(postLogout.status, 400, JSON.stringify(postLogout.body));
    assert.equal(postLogout.body.error, "invalid_redirect_uri");
    assert.match(
      String(postLogout.body.error_description),
      /^post_logout_redirect_uris: .*\[rule redirect-uri-not-loopback\]/,
    );
    for (const [field, value, rule] of [
      ["frontchannel_logout_uri", "https://evil.example/logout", "redirect-uri-not-loopback"],
      ["backchannel_logout_uri", "http://127.0.0.1:5432/", "uri-field-refused"],
      ["sector_identifier_uri", "http://127.0.0.1:5432/", "uri-field-refused"],
    ] as const) {
      const refused = await register(endpoint(), { ...MCP_REMOTE_METADATA, [field]: value });
      assert.equal(refused.status, 400, `${field}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.error, "invalid_client_metadata");
      assert.match(String(refused.body.error_description), new RegExp(`\\[rule ${rule}\\]`));
    }
    // 10 KB of 5,000 nested arrays: refused before anything measures (or Keycloak parses) them.
    const nested = await fetch(endpoint(), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"redirect_uris":["http://localhost:3334/cb"],"contacts":${"[".repeat(5000)}${"]".repeat(5000)}}`,
    });
    const nestedBody = (await nested.json()) as Record<string, unknown>;
    assert.equal(nested.status, 400, JSON.stringify(nestedBody));
    assert.equal(nestedBody.error, "invalid_client_metadata");
    assert.match(String(nestedBody.error_description), /\[rule metadata-too-deep\]/);

    // Straight to Keycloak, bypassing the gateway: its own Trusted Hosts policy refuses other hosts.
    const direct = (metadata: Record<string, unknown>) =>
      register(`${kc.keycloak.url}/realms/${kc.realm}/clients-registrations/openid-connect`, {
        ...MCP_REMOTE_METADATA,
        ...metadata,
      });
    const otherHost = await direct({ redirect_uris: ["https://evil.example.net/cb"] });
    assert.ok(otherHost.status >= 400, JSON.stringify(otherHost.body));
    // Keycloak's own client policy (start-up's) refuses the URIs the browser is sent to and those it
    // would call, for registrations that bypass the gateway too: 403 insufficient_scope, its way.
    for (const metadata of [
      { post_logout_redirect_uris: ["https://evil.example/phish"] },
      { post_logout_redirect_uris: ["http://evil.example/phish"] },
      { redirect_uris: ["https://localhost/cb"] },
      { backchannel_logout_uri: "http://127.0.0.1:5432/" },
      { sector_identifier_uri: "https://evil.example/sector" },
    ]) {
      const refused = await direct(metadata);
      assert.equal(refused.status, 403, `${JSON.stringify(metadata)}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.error_description, "invalid_client_metadata");
    }
    assert.equal((await direct({ post_logout_redirect_uris: ["http://127.0.0.1:9/bye"] })).status, 201);
    // Where Keycloak has no check (docs/keycloak.md): only the gateway refuses these.
    for (const metadata of [
      { frontchannel_logout_uri: "https://evil.example/logout" },
      { initiate_login_uri: "https://evil.example/login" },
    ]) {
      assert.equal((await direct(metadata)).status, 201, JSON.stringify(metadata));
    }
    // A registered client updating itself with its registration access token meets the same policy.
    const registered = await register(endpoint(), MCP_REMOTE_METADATA);
    assert.equal(registered.status, 201);
    const update = await fetch(String(registered.body.registration_client_uri), {
      method: "PUT",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${registered.body.registration_access_token}`,
      },
      body: JSON.stringify({ ...registered.body, post_logout_redirect_uris: ["https://evil.example/phish"] }),
    });
    assert.equal(update.status, 403, await update.text());

    // Accepted: a public client with PKCE S256 enforced by the client policy.
    const accepted = await register(endpoint(), MCP_REMOTE_METADATA);
    assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
    assert.equal(accepted.body.client_secret, undefined);
    const [client] = await kc.admin.clients.find({ clientId: String(accepted.body.client_id), max: 1 });
    assert.equal(client?.publicClient, true);
    assert.equal(client?.attributes?.["pkce.code.challenge.method"], "S256");
    assert.equal(client?.consentRequired, true, "Keycloak's Consent Required policy: the user is asked");
  });

  it("in trusted-hosts mode, Keycloak's own policy accepts https URIs on a trusted host only", async () => {
    const direct = (metadata: Record<string, unknown>) =>
      register(`${kc.keycloak.url}/realms/${kc.realm}/clients-registrations/openid-connect`, {
        ...MCP_REMOTE_METADATA,
        ...metadata,
      });
    const trusted = {
      ...registrationPolicyOf(kc.service.config),
      mode: "trusted-hosts" as const,
      trustedHosts: ["app.example.com"],
    };
    await provisionRegistrationPolicies(kc.admin, kc.realm, trusted, []);
    try {
      const accepted = await direct({
        redirect_uris: ["https://app.example.com/cb", "http://127.0.0.1:9/cb"],
        post_logout_redirect_uris: ["https://APP.example.com:8443/bye?x=1"],
      });
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
      for (const metadata of [
        { redirect_uris: ["http://app.example.com/cb"] },
        { post_logout_redirect_uris: ["https://app.example.com.evil.example/bye"] },
        { post_logout_redirect_uris: ["https://evil.example/bye"] },
      ]) {
        const refused = await direct(metadata);
        assert.equal(refused.status, 403, `${JSON.stringify(metadata)}: ${JSON.stringify(refused.body)}`);
      }
    } finally {
      await provisionRegistrationPolicies(kc.admin, kc.realm, registrationPolicyOf(kc.service.config), []);
    }
  });

  it("imaging doctor reports the mode and that Keycloak's metadata and /register agree", async () => {
    const result = await runCliProcess(["doctor", "--json"], {
      ...kc.env,
      IMAGING_CONFIG: "",
      DYNAMIC_CLIENT_REGISTRATION: "loopback",
    });
    const check = (JSON.parse(result.stdout) as Check[]).find((c) => c.id === "dynamic-client-registration");
    assert.equal(check?.verdict, "pass", check?.detail ?? result.stderr);
    assert.match(
      check?.detail ?? "",
      /mode loopback: the issuer advertises registration_endpoint .*clients-registrations\/openid-connect, \/register leads there/,
    );
  });

  const start = (command: string, args: string[]) => {
    const home = mkdtempSync(join(tmpdir(), "imaging-client-home-"));
    homes.push(home);
    const peer = new StdioPeer(command, args, {
      PATH: pathWithoutDesktopBrowser(),
      HOME: home,
      MCP_REMOTE_CONFIG_DIR: join(home, ".mcp-auth"),
    });
    peers.push(peer);
    return peer;
  };

  /** Sign-in on Keycloak's page, then its consent page (registered clients require consent). */
  const signIn = async (authorizationUrl: string) => {
    const page = await browser.newPage();
    try {
      await page.goto(authorizationUrl);
      await page.locator("#kc-form-login").waitFor({ timeout: 15_000 });
      await page.locator('input[name="username"]').fill("alice");
      await page.locator('input[name="password"]').fill(USERS.alice.password);
      await page.locator("#kc-login").click();
      const consent = page.locator('input[name="accept"], button[name="accept"]');
      // The client's loopback callback (the gateway is on loopback too: told apart by the path).
      const loopback = (url: URL) =>
        (url.hostname === "localhost" || url.hostname === "127.0.0.1") && url.pathname.endsWith("/callback");
      const reached = await Promise.race([
        consent.waitFor({ timeout: 15_000 }).then(() => "consent" as const),
        page.waitForURL(loopback, { timeout: 15_000 }).then(() => "callback" as const),
      ]);
      if (reached === "consent") {
        await consent.first().click();
        await page.waitForURL(loopback, { timeout: 15_000 });
      }
      return reached;
    } finally {
      await page.close();
    }
  };

  it("mcp-remote (default flags) registers, signs in on Keycloak and calls a tool", async () => {
    const peer = start(process.execPath, [mcpRemote, kc.mcp]);
    const [, url] = await peer.waitForStderr(/Please authorize this client by visiting:\s*\n(\S+)/, 60_000);
    assert.equal(
      await signIn(url as string),
      "consent",
      "Keycloak asks the user's consent for a registered client",
    );
    assert.deepEqual(await applicationsThroughProxy(peer), [
      "claims-portal",
      "payments-service",
      "storefront-web",
    ]);
  });

  it("the Python MCP SDK's OAuth client registers, signs in on Keycloak and calls a tool", async () => {
    const peer = start(python, [PYTHON_CLIENT, kc.mcp]);
    const [, url] = await peer.waitForStderr(/AUTHORIZE (\S+)/, 60_000);
    await signIn(url as string);
    assert.equal(await peer.exit(60_000), 0, peer.stderr);
    const [output] = peer.messages as {
      client_id: string;
      result: { structuredContent: { applications: { name: string }[] } };
    }[];
    assert.deepEqual(
      output?.result.structuredContent.applications.map((a) => a.name),
      ["claims-portal", "payments-service", "storefront-web"],
    );
  });

  it("turned off again, Keycloak refuses anonymous registration as by default, and the gateway no longer offers it", async () => {
    const port = Number(new URL(kc.base).port);
    // The clients' open streams would hold the gateway's shutdown.
    for (const peer of peers) await peer.stop();
    await kc.stop();
    kc = await startKeycloakService({
      store,
      realm: kc.realm,
      port,
      overrides: { dynamicClientRegistration: "off" },
    });
    assert.ok((kc.service.keycloak?.changes ?? []).some((c) => /removed \(registration off\)/.test(c)));
    const register404 = await fetch(`${kc.base}/register`, { method: "POST" });
    assert.equal(register404.status, 404);
    const refused = await register(endpoint(), MCP_REMOTE_METADATA);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.match(String(refused.body.error_description), /Trusted Hosts/);
  });
});
