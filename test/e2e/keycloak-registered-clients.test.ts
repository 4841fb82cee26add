import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium } from "playwright-core";
import {
  LAST_USED_AT,
  REGISTERED_AT,
  REGISTERED_FROM,
  sweepKeycloakRegisteredClients,
} from "../../src/idp/keycloak/registered-clients.ts";
import { provisionRegistrationPolicies } from "../../src/idp/keycloak/registration-policies.ts";
import { registrationPolicyOf } from "../../src/idp/registration/endpoint.ts";
import { runCliProcess } from "../support/cli.ts";
import { USERS } from "../support/idp-service.ts";
import {
  type KeycloakService,
  seedKeycloakUsers,
  startKeycloakService,
} from "../support/keycloak-service.ts";
import { CHROMIUM_FLAGS } from "../support/mcp-sign-in.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * Registered clients on Keycloak (IDP=keycloak, DYNAMIC_CLIENT_REGISTRATION=loopback): the gateway
 * records each registration in the client's attributes and names it "Unverified client ..." (what
 * Keycloak's consent page shows); `imaging clients list|show|revoke` work on them through the Admin
 * API; the expiry sweep deletes those never signed in; Max Clients follows the setting.
 */
const CALLBACK = "http://localhost:3334/oauth/callback";
const METADATA = {
  redirect_uris: [CALLBACK],
  token_endpoint_auth_method: "none",
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  client_name: "MCP CLI Proxy",
  application_type: "native",
  scope: "mcp:tools mcp:resources mcp:prompts offline_access",
};

describe("registered clients on Keycloak: imaging clients, expiry, unverified mark, max clients", () => {
  let kc: KeycloakService;
  let browser: Browser;
  let store: TestStore;
  const overrides = { dynamicClientRegistration: "loopback", dynamicClientRegistrationMaxClients: 150 };

  before(async () => {
    store = await createTestStore("sqlite");
    kc = await startKeycloakService({ store, overrides });
    await seedKeycloakUsers(kc.admin);
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  });
  after(async () => {
    await browser?.close();
    await kc?.stop();
    await store?.drop();
  });

  const register = async (body: unknown = METADATA) => {
    const response = await fetch(`${kc.issuer}/clients-registrations/openid-connect`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, unknown>;
    assert.equal(response.status, 201, JSON.stringify(json));
    return String(json.client_id);
  };
  const cli = (args: string[]) => runCliProcess(args, { ...kc.env, IMAGING_CONFIG: "" });
  const anonymousPolicies = async () => {
    const realm = await kc.admin.realms.findOne({ realm: kc.realm });
    const components = await kc.admin.components.find({
      type: "org.keycloak.services.clientregistration.policy.ClientRegistrationPolicy",
      parent: realm?.id,
    });
    return components.filter((c) => c.subType === "anonymous");
  };

  it("start-up sets Keycloak's anonymous Max Clients policy from DYNAMIC_CLIENT_REGISTRATION_MAX_CLIENTS, once", async () => {
    const limits = (await anonymousPolicies()).filter((c) => c.providerId === "max-clients");
    assert.equal(limits.length, 1, "Keycloak's own Max Clients Limit is corrected, not duplicated");
    assert.deepEqual(limits[0]?.config?.["max-clients"], ["150"]);
    assert.ok((kc.service.keycloak?.changes ?? []).some((c) => /Max Clients Limit: max-clients=150/.test(c)));
    const again: string[] = [];
    await provisionRegistrationPolicies(kc.admin, kc.realm, registrationPolicyOf(kc.service.config), again);
    assert.deepEqual(again, [], "a second provisioning changes nothing");
  });

  it("Keycloak refuses registrations beyond Max Clients (counting every client of the realm)", async () => {
    const [limit] = (await anonymousPolicies()).filter((c) => c.providerId === "max-clients");
    const count = (await kc.admin.clients.find({ max: 1000 })).length;
    assert.ok(limit?.id);
    await kc.admin.components.update(
      { id: limit.id },
      { ...limit, config: { ...limit.config, "max-clients": [String(count)] } },
    );
    try {
      const response = await fetch(`${kc.issuer}/clients-registrations/openid-connect`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(METADATA),
      });
      const body = (await response.json()) as Record<string, unknown>;
      assert.equal(response.status, 403, JSON.stringify(body));
      assert.match(String(body.error_description), new RegExp(`max ${count} clients`));
    } finally {
      await kc.admin.components.update({ id: limit.id }, limit);
    }
  });

  let signedIn = "";
  let refreshToken = "";

  it("a registration through the gateway is recorded and named unverified with its redirect host", async () => {
    signedIn = await register();
    const [client] = await kc.admin.clients.find({ clientId: signedIn, max: 1 });
    assert.equal(client?.name, "Unverified client “MCP CLI Proxy” (redirects to localhost)");
    assert.equal(client?.attributes?.[REGISTERED_FROM], "127.0.0.1");
    const at = Date.parse(String(client?.attributes?.[REGISTERED_AT]));
    assert.ok(Math.abs(Date.now() - at) < 60_000, String(client?.attributes?.[REGISTERED_AT]));
  });

  it("Keycloak's consent page shows the unverified mark and the redirect host; the client gets tokens", async () => {
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const authorize = new URL(`${kc.issuer}/protocol/openid-connect/auth`);
    for (const [key, value] of Object.entries({
      client_id: signedIn,
      redirect_uri: CALLBACK,
      response_type: "code",
      scope: "openid mcp:tools",
      state: "s1",
      code_challenge: challenge,
      code_challenge_method: "S256",
    }))
      authorize.searchParams.set(key, value);
    const page = await browser.newPage();
    let code = "";
    try {
      await page.route("http://localhost:3334/**", async (route) => {
        code = new URL(route.request().url()).searchParams.get("code") ?? "";
        await route.fulfill({ status: 200, contentType: "text/plain", body: "done" });
      });
      await page.goto(authorize.href);
      await page.locator('input[name="username"]').fill("alice");
      await page.locator('input[name="password"]').fill(USERS.alice.password);
      await page.locator("#kc-login").click();
      const accept = page.locator('input[name="accept"], button[name="accept"]').first();
      await accept.waitFor({ timeout: 15_000 });
      const text = await page.locator("body").innerText();
      assert.match(text, /Unverified client “MCP CLI Proxy” \(redirects to localhost\)/);
      await accept.click();
      await page.waitForURL((url) => url.host === "localhost:3334", { timeout: 15_000 });
    } finally {
      await page.close();
    }
    assert.ok(code, "the authorization code reached the client's callback");
    const tokens = await fetch(`${kc.issuer}/protocol/openid-connect/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: signedIn,
        code,
        redirect_uri: CALLBACK,
        code_verifier: verifier,
      }),
    });
    const body = (await tokens.json()) as Record<string, unknown>;
    assert.equal(tokens.status, 200, JSON.stringify(body));
    refreshToken = String(body.refresh_token);
  });

  it("a refresh naming a resource the grant does not cover leaves the refresh token usable (Keycloak ignores `resource`)", async () => {
    const refreshWith = (extra: Record<string, string>) =>
      fetch(`${kc.issuer}/protocol/openid-connect/token`, {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "refresh_token",
          client_id: signedIn,
          refresh_token: refreshToken,
          ...extra,
        }),
      });
    // No invalid_target: Keycloak ignores RFC 8707 `resource` (docs/keycloak.md), the token names the
    // audiences it always names, never the one asked for.
    const other = await refreshWith({ resource: "https://evil.example/mcp" });
    const otherBody = (await other.json()) as Record<string, unknown>;
    assert.equal(other.status, 200, JSON.stringify(otherBody));
    const audience = JSON.parse(
      Buffer.from(String(otherBody.access_token).split(".")[1] ?? "", "base64url").toString(),
    );
    assert.ok(!JSON.stringify(audience.aud).includes("evil.example"), JSON.stringify(audience.aud));
    assert.ok(JSON.stringify(audience.aud).includes(`${kc.base}/mcp`), JSON.stringify(audience.aud));
    // The refresh token used is still good (the realm does not revoke used refresh tokens).
    const again = await refreshWith({});
    assert.equal(again.status, 200, await again.text());
  });

  it("the sweep keeps young and signed-in clients and deletes old ones that never signed in", async () => {
    // A long claimed name (the policy allows 1000 characters) still fits Keycloak's 255.
    const unused = await register({ ...METADATA, client_name: "never signs in ".repeat(60) });
    const [stored] = await kc.admin.clients.find({ clientId: unused, max: 1 });
    assert.match(String(stored?.name), /^Unverified client “never signs in .*…” \(redirects to localhost\)$/);
    const young = await sweepKeycloakRegisteredClients(kc.admin, kc.realm, 24 * 60 * 60);
    assert.deepEqual(young.deleted, [], "nothing is 24 hours old");
    assert.deepEqual(young.used, [signedIn]);
    // Every client counts as old with a limit of 0 seconds: only the one never signed in goes.
    const old = await sweepKeycloakRegisteredClients(kc.admin, kc.realm, 0);
    assert.deepEqual(old.deleted, [unused]);
    assert.equal((await kc.admin.clients.find({ clientId: unused, max: 1 })).length, 0);
    const [kept] = await kc.admin.clients.find({ clientId: signedIn, max: 1 });
    assert.ok(kept?.attributes?.[LAST_USED_AT], "the signed-in client is recorded as used");
    assert.equal(
      (await kc.admin.clients.find({ clientId: "mcp-token-exchange", max: 1 })).length,
      1,
      "clients not registered through the gateway are never swept",
    );
  });

  it("imaging clients list and show read the registered clients from Keycloak", async () => {
    const list = await cli(["clients", "list", "--json"]);
    assert.equal(list.code, 0, list.stderr);
    const listed = JSON.parse(list.stdout) as Record<string, unknown>[];
    assert.deepEqual(
      listed.map((c) => c.clientId),
      [signedIn],
    );
    assert.equal(listed[0]?.clientName, "Unverified client “MCP CLI Proxy” (redirects to localhost)");
    assert.deepEqual(listed[0]?.redirectUris, [CALLBACK]);
    assert.equal(listed[0]?.expiresAt, null, "a client that signed in does not expire");
    assert.ok(listed[0]?.lastUsedAt);
    const table = await cli(["clients", "list"]);
    assert.match(table.stdout, new RegExp(signedIn));
    const show = await cli(["clients", "show", "--", signedIn]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /Registered from 127\.0\.0\.1 at/);
    const other = await cli(["clients", "show", "mcp-token-exchange"]);
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, /No registered client 'mcp-token-exchange'/);
  });

  it("imaging clients revoke deletes the client in Keycloak: its refresh token stops working", async () => {
    const refused = await cli(["clients", "revoke", "mcp-token-exchange"]);
    assert.notEqual(refused.code, 0);
    assert.equal((await kc.admin.clients.find({ clientId: "mcp-token-exchange", max: 1 })).length, 1);

    // The refresh token works before (Keycloak rotates it: the new one is kept).
    const before = await fetch(`${kc.issuer}/protocol/openid-connect/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "refresh_token",
        client_id: signedIn,
        refresh_token: refreshToken,
      }),
    });
    const renewed = (await before.json()) as Record<string, unknown>;
    assert.equal(before.status, 200, JSON.stringify(renewed));
    refreshToken = String(renewed.refresh_token ?? refreshToken);

    const revoked = await cli(["clients", "revoke", signedIn]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal((await kc.admin.clients.find({ clientId: signedIn, max: 1 })).length, 0);
    const refresh = await fetch(`${kc.issuer}/protocol/openid-connect/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "refresh_token",
        client_id: signedIn,
        refresh_token: refreshToken,
      }),
    });
    assert.ok(refresh.status === 400 || refresh.status === 401, String(refresh.status));
    const list = await cli(["clients", "list", "--json"]);
    assert.deepEqual(JSON.parse(list.stdout), []);
  });

  it("the gateway's own sweep (at start-up, then every 10 minutes) deletes a client registered over 24 hours ago that never signed in", async () => {
    const stale = await register({ ...METADATA, client_name: "stale" });
    const fresh = await register({ ...METADATA, client_name: "fresh" });
    const [client] = await kc.admin.clients.find({ clientId: stale, max: 1 });
    assert.ok(client?.id);
    const dayAndHourAgo = new Date(Date.now() - 25 * 60 * 60_000).toISOString();
    await kc.admin.clients.update(
      { id: client.id },
      { ...client, attributes: { ...client.attributes, [REGISTERED_AT]: dayAndHourAgo } },
    );
    const port = Number(new URL(kc.base).port);
    await kc.stop();
    kc = await startKeycloakService({ store, realm: kc.realm, port, overrides });
    let remaining = 1;
    for (let attempt = 0; attempt < 60 && remaining > 0; attempt++) {
      remaining = (await kc.admin.clients.find({ clientId: stale, max: 1 })).length;
      if (remaining > 0) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(remaining, 0, "the stale client was deleted by the restarted gateway");
    assert.equal((await kc.admin.clients.find({ clientId: fresh, max: 1 })).length, 1, "a fresh one stays");
  });
});
