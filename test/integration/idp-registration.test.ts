import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { openStore } from "../../src/store/database.ts";
import { createOidcAdapterFactory } from "../../src/store/oidc-adapter.ts";
import {
  expireUnusedRegisteredClients,
  listRegisteredClients,
  recordRegisteredClient,
} from "../../src/store/registered-clients.ts";
import { storeRegistrationCounts } from "../../src/store/registration-counts.ts";
import { follow, formsOf, postForm } from "../support/browserless-session.ts";
import { runCli } from "../support/cli.ts";
import { type IdpService, seedUsers, startIdpService, USERS } from "../support/idp-service.ts";
import {
  authorize,
  type ClientSetup,
  exchangeToken,
  refresh,
  startAuthorization,
} from "../support/oauth-flow.ts";
import { storedSecret } from "../support/stored-secrets.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/** What mcp-remote 0.1.x sends by default (seen on the wire). */
const MCP_REMOTE_METADATA = {
  redirect_uris: ["http://localhost:3334/oauth/callback"],
  token_endpoint_auth_method: "none",
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  client_name: "MCP CLI Proxy",
  client_uri: "https://github.com/modelcontextprotocol/mcp-cli",
  software_id: "2e6dc280-f3c3-4e01-99a7-8181dbd1d23d",
  software_version: "0.1.29",
  application_type: "native",
  scope: "mcp:tools mcp:resources mcp:prompts offline_access",
};

const register = async (url: string, body: unknown, contentType = "application/json") => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": contentType },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: JSON.parse(text) as Record<string, unknown>,
  };
};

const metadataOf = async (issuer: string) =>
  (await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;

describe("dynamic client registration off (the default): nothing changes", () => {
  let store: TestStore;
  let idp: IdpService;
  before(async () => {
    store = await createTestStore("sqlite");
    idp = await startIdpService(store);
  });
  after(async () => {
    await idp?.stop();
    await store?.drop();
  });

  it("advertises no registration endpoint and registers nothing", async () => {
    const metadata = await metadataOf(idp.issuer);
    assert.equal(metadata.registration_endpoint, undefined);
    const atIssuer = await register(`${idp.issuer}/reg`, MCP_REMOTE_METADATA);
    assert.equal(atIssuer.status, 404);
    const atRoot = await register(`${idp.base}/register`, MCP_REMOTE_METADATA);
    assert.equal(atRoot.status, 404);
    assert.match(String(atRoot.body.error_description), /client ID metadata document/);
  });
});

for (const kind of STORE_KINDS) {
  describe(`dynamic client registration, loopback mode, embedded provider (${kind})`, () => {
    let store: TestStore;
    let idp: IdpService;
    let endpoint: string;
    /** What the identity provider logged, by level. */
    const logged: { level: string; message: string }[] = [];
    /** A client registered as mcp-remote registers, signing in at its loopback callback. */
    const mcpRemoteSetup = (clientId: string): ClientSetup => ({
      issuer: idp.issuer,
      clientId,
      redirectUri: "http://localhost:3334/oauth/callback",
      resource: idp.mcp,
    });
    before(async () => {
      store = await createTestStore(kind);
      idp = await startIdpService(store, {
        overrides: { dynamicClientRegistration: "loopback" },
        idp: {
          registration: { perAddress: 100 },
          log: (level, message) => logged.push({ level, message }),
        },
        seed: async (handle) => seedUsers(handle.db),
      });
      endpoint = `${idp.issuer}/reg`;
    });
    /** `imaging clients COMMAND` on this store, its options first (anything after `--` is an argument). */
    const clients = (command: string, ...args: string[]) =>
      runCli(["clients", command, "--data-dir", store.dataDir, ...args], {
        ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
      });
    after(async () => {
      await idp?.stop();
      await store?.drop();
    });

    it("advertises the registration endpoint; /register leads there with a 307", async () => {
      const metadata = await metadataOf(idp.issuer);
      assert.equal(metadata.registration_endpoint, endpoint);
      assert.deepEqual(metadata.code_challenge_methods_supported, ["S256"]);
      const response = await fetch(`${idp.base}/register`, { method: "POST", redirect: "manual" });
      assert.equal(response.status, 307);
      assert.equal(response.headers.get("location"), endpoint);
    });

    it("registers mcp-remote's request as a public client, then it signs in with PKCE, unverified on consent", async () => {
      const registered = await register(endpoint, MCP_REMOTE_METADATA);
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      assert.equal(typeof registered.body.client_id, "string");
      assert.equal(registered.body.client_secret, undefined, "a public client gets no secret");
      assert.equal(registered.body.token_endpoint_auth_method, "none");
      assert.equal(registered.body.registration_access_token, undefined);
      const clientId = String(registered.body.client_id);

      const setup = mcpRemoteSetup(clientId);
      // Without PKCE: refused, as for every client.
      const noPkce = new URL(`${idp.issuer}/auth`);
      noPkce.search = new URLSearchParams({
        client_id: clientId,
        redirect_uri: setup.redirectUri,
        response_type: "code",
        scope: "mcp:tools",
        resource: idp.mcp,
      }).toString();
      const refused = await fetch(noPkce, { redirect: "manual" });
      const location = refused.headers.get("location") ?? "";
      assert.match(new URL(location).searchParams.get("error_description") ?? "", /requires PKCE/, location);

      const tokens = await authorize(setup, { username: "alice", password: USERS.alice.password });
      assert.match(tokens.consentHtml, /Unverified/);
      assert.match(tokens.consentHtml, /MCP CLI Proxy/);
      assert.match(tokens.consentHtml, /localhost:3334/, "the consent page shows the redirect host");
      assert.ok(tokens.accessToken);
      assert.ok(tokens.refreshToken, "refresh tokens, rotated, as for every public client");
      const rotated = await refresh(setup, tokens.refreshToken as string);
      assert.notEqual(rotated.refreshToken, tokens.refreshToken);

      const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      try {
        // Marking it used happens on the provider's event, just after the answer.
        let listed = (await listRegisteredClients(handle.db)).find((c) => c.clientId === clientId);
        for (let i = 0; i < 50 && !listed?.lastUsedAt; i++) {
          await new Promise((r) => setTimeout(r, 50));
          listed = (await listRegisteredClients(handle.db)).find((c) => c.clientId === clientId);
        }
        assert.equal(listed?.clientName, "MCP CLI Proxy");
        assert.deepEqual(listed?.redirectUris, ["http://localhost:3334/oauth/callback"]);
        assert.equal(listed?.sourceAddress, "127.0.0.1");
        assert.ok(listed?.lastUsedAt, "a completed sign-in marks the client used");

        const exchangeClient = {
          clientId: "mcp-token-exchange",
          clientSecret: await storedSecret(store, "mcp-token-exchange"),
        };
        const exchanged = await exchangeToken(idp.issuer, exchangeClient, {
          subject_token: rotated.accessToken,
        });
        assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));

        // Revocation: the refresh token ends, its access tokens are no longer exchanged, the client is unknown.
        const listJson = await clients("list", "--json");
        assert.equal(listJson.code, 0, listJson.stderr);
        const row = (JSON.parse(listJson.stdout) as Record<string, unknown>[]).find(
          (c) => c.clientId === clientId,
        );
        assert.equal(row?.clientName, "MCP CLI Proxy");
        assert.deepEqual(row?.redirectUris, ["http://localhost:3334/oauth/callback"]);
        assert.equal(typeof row?.createdAt, "string");
        assert.equal(typeof row?.lastUsedAt, "string");
        const table = await clients("list");
        assert.match(
          table.stdout,
          new RegExp(`${clientId}\\s+MCP CLI Proxy\\s+http://localhost:3334/oauth/callback`),
        );
        const shown = await clients("show", clientId);
        assert.equal(shown.code, 0, shown.stderr);
        assert.match(shown.stdout, /Registered from 127\.0\.0\.1/);
        const unknown = await clients("show", "no-such-client");
        assert.equal(unknown.code, 1);
        assert.equal(
          unknown.stderr,
          "imaging: No registered client 'no-such-client' (see: imaging clients list)\n",
        );
        const revoked = await clients("revoke", clientId);
        assert.equal(revoked.code, 0, revoked.stderr);
        assert.match(revoked.stdout, new RegExp(`Client ${clientId} revoked`));
        assert.equal((await clients("revoke", clientId)).code, 1, "already revoked");
        const refusedExchange = await exchangeToken(idp.issuer, exchangeClient, {
          subject_token: rotated.accessToken,
        });
        assert.equal(refusedExchange.status, 400);
        assert.match(String(refusedExchange.body.error_description), /revoked/);
        await assert.rejects(
          refresh(setup, rotated.refreshToken as string),
          (error: { cause?: { error?: string } }) => error.cause?.error === "invalid_client",
        );
        const after = await startAuthorization(setup);
        assert.match(after.html, /invalid_client|client is invalid|not found/i);
      } finally {
        await handle.close();
      }
    });

    it("expires registered clients that never complete a sign-in (24 h)", async () => {
      const unused = await register(endpoint, MCP_REMOTE_METADATA);
      const used = await register(endpoint, { ...MCP_REMOTE_METADATA, client_name: "used" });
      const setup = mcpRemoteSetup(String(used.body.client_id));
      await authorize(setup, { username: "alice", password: USERS.alice.password });
      const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      try {
        for (let i = 0; i < 50; i++) {
          const row = (await listRegisteredClients(handle.db)).find((c) => c.clientId === setup.clientId);
          if (row?.lastUsedAt) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.deepEqual(await expireUnusedRegisteredClients(handle.db, 86_400), [], "not before 24 h");
        const expired = await expireUnusedRegisteredClients(handle.db, 86_400, Date.now() + 86_401_000);
        assert.ok(expired.includes(String(unused.body.client_id)));
        assert.ok(!expired.includes(setup.clientId), "a client that signed in stays");
      } finally {
        await handle.close();
      }
      const gone = await startAuthorization({ ...setup, clientId: String(unused.body.client_id) });
      assert.match(gone.html, /invalid_client|client is invalid|not found/i);
    });

    it("generates client ids of letters and digits only; every client command takes `--` before the id", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const registered = await register(endpoint, { ...MCP_REMOTE_METADATA, client_name: `ids ${i}` });
        assert.equal(registered.status, 201, JSON.stringify(registered.body));
        ids.push(String(registered.body.client_id));
      }
      // oidc-provider's own ids (nanoid: 21 characters of A-Z a-z 0-9 _ -) start with `-` once in 64.
      for (const id of ids) assert.match(id, /^[A-Za-z0-9]{22}$/);
      const [first = ""] = ids;
      const shown = await clients("show", "--json", "--", first);
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal(JSON.parse(shown.stdout).clientId, first);
      const revoked = await clients("revoke", "--", first);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal((await clients("show", "--", first)).code, 1, "revoked");
    });

    it("a client registered before the fix with an id starting with `-` still works, named after `--`", async () => {
      // What oidc-provider's default ids looked like, once in 64: stored as the provider stored them.
      const legacy = "-fa7cQ2bR_9x-LmN3pZkY";
      await createOidcAdapterFactory(idp.service.store.db)("Client").upsert(legacy, {
        client_id: legacy,
        client_id_issued_at: Math.floor(Date.now() / 1000),
        client_name: "Legacy client",
        redirect_uris: ["http://localhost:3334/oauth/callback"],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        application_type: "native",
      });
      await recordRegisteredClient(idp.service.store.db, {
        clientId: legacy,
        clientName: "Legacy client",
        redirectUris: ["http://localhost:3334/oauth/callback"],
        sourceAddress: "127.0.0.1",
      });
      const setup = mcpRemoteSetup(legacy);
      const tokens = await authorize(setup, { username: "alice", password: USERS.alice.password });
      assert.ok(tokens.accessToken, "the provider still serves the client");

      const asOption = await clients("show", legacy);
      assert.equal(asOption.code, 1);
      assert.match(asOption.stderr, /unknown option '-fa7cQ2bR_9x-LmN3pZkY'/);
      assert.match(
        asOption.stderr,
        /goes after '--', which ends the options: imaging clients show \[options\] -- -fa7cQ2bR_9x-LmN3pZkY/,
      );
      const shown = await clients("show", "--", legacy);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /Client ID: +-fa7cQ2bR_9x-LmN3pZkY/);
      const listed = await clients("list", "--json");
      assert.ok((JSON.parse(listed.stdout) as { clientId: string }[]).some((c) => c.clientId === legacy));
      const revoked = await clients("revoke", "--json", "--", legacy);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.deepEqual(JSON.parse(revoked.stdout), { clientId: legacy, revoked: true });
      await assert.rejects(
        refresh(setup, tokens.refreshToken as string),
        (error: { cause?: { error?: string } }) => error.cause?.error === "invalid_client",
      );
    });

    it("sends the browser after sign-out only to a registered loopback post_logout_redirect_uri", async () => {
      const registered = await register(endpoint, {
        ...MCP_REMOTE_METADATA,
        post_logout_redirect_uris: ["http://localhost:3334/signed-out"],
      });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      assert.deepEqual(registered.body.post_logout_redirect_uris, ["http://localhost:3334/signed-out"]);
      const clientId = String(registered.body.client_id);
      const setup = mcpRemoteSetup(clientId);
      const { jar } = await authorize(setup, { username: "alice", password: USERS.alice.password });
      const signOut = async (postLogoutRedirectUri: string) => {
        const start = `${idp.issuer}/session/end?${new URLSearchParams({
          client_id: clientId,
          post_logout_redirect_uri: postLogoutRedirectUri,
        })}`;
        const page = await follow(jar, start, "http://localhost:3334/");
        return { page, html: await page.response.text() };
      };
      const elsewhere = await signOut("https://evil.example/phish");
      assert.equal(elsewhere.page.response.status, 400);
      assert.match(elsewhere.html, /post_logout_redirect_uri not registered/);
      const { page, html } = await signOut("http://localhost:3334/signed-out");
      assert.equal(page.response.status, 200);
      const [form] = formsOf(html, page.url);
      assert.ok(form, html);
      const confirmed = await postForm(jar, form, { logout: "yes" });
      assert.equal(confirmed.status, 303);
      assert.equal(new URL(String(confirmed.headers.get("location"))).origin, "http://localhost:3334");
    });

    const refusals: [string, unknown, string, string][] = [
      [
        "a confidential client",
        { ...MCP_REMOTE_METADATA, token_endpoint_auth_method: "client_secret_basic" },
        "invalid_client_metadata",
        "confidential-client-refused",
      ],
      [
        "the client_credentials grant",
        { ...MCP_REMOTE_METADATA, grant_types: ["client_credentials"] },
        "invalid_client_metadata",
        "grant-type-refused",
      ],
      [
        "the implicit grant",
        { ...MCP_REMOTE_METADATA, grant_types: ["implicit"], response_types: ["token"] },
        "invalid_client_metadata",
        "grant-type-refused",
      ],
      [
        "an https redirect URI in loopback mode",
        { ...MCP_REMOTE_METADATA, redirect_uris: ["https://app.example.com/cb"] },
        "invalid_redirect_uri",
        "redirect-uri-not-loopback",
      ],
      [
        "an http redirect URI off loopback",
        { ...MCP_REMOTE_METADATA, redirect_uris: ["http://192.168.1.5:3334/cb"] },
        "invalid_redirect_uri",
        "redirect-uri-not-loopback",
      ],
      [
        "a custom scheme redirect URI",
        { ...MCP_REMOTE_METADATA, redirect_uris: ["cursor://anysphere.cursor-retrieval/oauth/callback"] },
        "invalid_redirect_uri",
        "redirect-uri-not-loopback",
      ],
      [
        "no redirect URI",
        { ...MCP_REMOTE_METADATA, redirect_uris: [] },
        "invalid_redirect_uri",
        "redirect-uri-missing",
      ],
      [
        "a scope other than mcp:*",
        { ...MCP_REMOTE_METADATA, scope: "mcp:tools admin" },
        "invalid_client_metadata",
        "scope-not-allowed",
      ],
      [
        "oversized metadata",
        { ...MCP_REMOTE_METADATA, client_name: "x".repeat(5000) },
        "invalid_client_metadata",
        "metadata-oversized",
      ],
      [
        "a huge body",
        { ...MCP_REMOTE_METADATA, contacts: Array.from({ length: 3000 }, () => "someone@example.com") },
        "invalid_client_metadata",
        "metadata-oversized",
      ],
      [
        "a post-logout redirect URI off loopback (the sign-out page would redirect there)",
        { ...MCP_REMOTE_METADATA, post_logout_redirect_uris: ["https://evil.example/phish"] },
        "invalid_redirect_uri",
        "redirect-uri-not-loopback",
      ],
      [
        "a third-party login URI off loopback",
        { ...MCP_REMOTE_METADATA, initiate_login_uri: "https://evil.example/login" },
        "invalid_client_metadata",
        "redirect-uri-not-loopback",
      ],
      [
        "a sector identifier URI (the provider would fetch it)",
        { ...MCP_REMOTE_METADATA, sector_identifier_uri: "http://127.0.0.1:5432/" },
        "invalid_client_metadata",
        "uri-field-refused",
      ],
      [
        "10 KB of 5,000 nested arrays",
        `{"redirect_uris":["http://localhost:3334/cb"],"contacts":${"[".repeat(5000)}${"]".repeat(5000)}}`,
        "invalid_client_metadata",
        "metadata-too-deep",
      ],
      ["malformed JSON", "{not json", "invalid_client_metadata", "metadata-malformed"],
      ["a JSON array", [MCP_REMOTE_METADATA], "invalid_client_metadata", "metadata-malformed"],
    ];
    for (const [what, body, error, rule] of refusals) {
      it(`refuses ${what}, naming the rule`, async () => {
        const refused = await register(endpoint, body);
        assert.equal(refused.status, 400, JSON.stringify(refused.body));
        assert.equal(refused.body.error, error);
        assert.match(String(refused.body.error_description), new RegExp(`\\[rule ${rule}\\]`));
      });
    }

    it("registers none of the informative URIs (mcp-remote's client_uri among them)", async () => {
      const registered = await register(endpoint, {
        ...MCP_REMOTE_METADATA,
        logo_uri: "https://evil.example/logo.png",
        tos_uri: "https://evil.example/tos",
      });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      for (const field of ["client_uri", "logo_uri", "tos_uri"])
        assert.equal(registered.body[field], undefined);
    });

    it("logged nothing at error level for the clients' bad input", () => {
      assert.deepEqual(
        logged.filter((l) => l.level === "error"),
        [],
      );
    });
  });
}

describe("dynamic client registration, trusted-hosts mode and rate limit", () => {
  let store: TestStore;
  let idp: IdpService;
  before(async () => {
    store = await createTestStore("sqlite");
    idp = await startIdpService(store, {
      overrides: {
        dynamicClientRegistration: "trusted-hosts",
        dynamicClientRegistrationHosts: "app.example.com, tools.example.org",
      },
      idp: { registration: { perAddress: 3 } },
    });
  });
  after(async () => {
    await idp?.stop();
    await store?.drop();
  });

  it("accepts https redirect URIs on trusted hosts, refuses others, then limits the rate per address", async () => {
    const endpoint = `${idp.issuer}/reg`;
    const trusted = await register(endpoint, {
      ...MCP_REMOTE_METADATA,
      redirect_uris: ["https://app.example.com/oauth/callback", "http://127.0.0.1:9000/cb"],
    });
    assert.equal(trusted.status, 201, JSON.stringify(trusted.body));
    assert.equal(trusted.body.application_type, "web");
    const untrusted = await register(endpoint, {
      ...MCP_REMOTE_METADATA,
      redirect_uris: ["https://evil.example.net/oauth/callback"],
    });
    assert.equal(untrusted.status, 400);
    assert.equal(untrusted.body.error, "invalid_redirect_uri");
    assert.match(String(untrusted.body.error_description), /\[rule redirect-uri-host-not-trusted\]/);
    const third = await register(endpoint, MCP_REMOTE_METADATA);
    assert.equal(third.status, 201);
    const limited = await register(endpoint, MCP_REMOTE_METADATA);
    assert.equal(limited.status, 429);
    assert.match(String(limited.body.error_description), /\[rule registration-rate-limit\]/);
    assert.match(String(limited.body.error_description), /too many registrations from 127\.0\.0\.1:/);
    assert.ok(Number(limited.headers.get("retry-after")) > 0);
    // IPv4 senders are counted by address: the next loopback address is another sender.
    const status = await new Promise<number>((resolve, reject) => {
      const sent = request(endpoint, {
        method: "POST",
        localAddress: "127.0.0.2",
        headers: { "content-type": "application/json" },
      });
      sent.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      sent.on("error", reject);
      sent.end(JSON.stringify(MCP_REMOTE_METADATA));
    });
    assert.equal(status, 201);
  });
});

for (const kind of STORE_KINDS) {
  describe(`registration counters in the store (${kind})`, () => {
    let store: TestStore;
    let handle: Awaited<ReturnType<typeof openStore>>;
    before(async () => {
      store = await createTestStore(kind);
      handle = await openStore({
        databaseUrl: store.databaseUrl,
        sqliteFile: store.sqliteFile,
        readWorkers: 0,
      });
    });
    after(async () => {
      await handle?.close();
      await store?.drop();
    });

    it("count per sender in fixed windows, and past the bound forget the oldest windows, not everyone's", async () => {
      const counts = storeRegistrationCounts(handle.db, 3);
      assert.equal(await counts.take("a", 0, 1000, 1), undefined);
      assert.equal(await counts.take("a", 400, 1000, 1), 1, "a waits for the end of its window");
      assert.equal(await counts.take("b", 10, 1000, 1), undefined);
      assert.equal(await counts.take("c", 20, 1000, 1), undefined);
      assert.equal(await counts.take("d", 30, 1000, 1), undefined, "a fourth sender: a, the oldest, goes");
      assert.equal(await counts.take("b", 40, 1000, 1), 1, "b is still counted");
      assert.equal(await counts.take("c", 40, 1000, 1), 1, "c too");
      assert.equal(await counts.take("a", 50, 1000, 1), undefined, "a was forgotten");
      assert.equal(await counts.take("b", 2000, 1000, 1), undefined, "b's new window");
      const senders = await handle.db
        .selectFrom("registration_counts")
        .select("sender")
        .orderBy("sender")
        .execute();
      assert.deepEqual(
        senders.map((r) => r.sender),
        ["b"],
        "the windows that ended were dropped when b started its new one",
      );
    });
  });
}

describe("the registration rate limit is shared by replicas on one store (postgres)", () => {
  let store: TestStore;
  const replicas: IdpService[] = [];
  before(async () => {
    store = await createTestStore("postgres");
    for (let i = 0; i < 2; i++) {
      replicas.push(
        await startIdpService(store, {
          overrides: { dynamicClientRegistration: "loopback" },
          idp: { registration: { perAddress: 3 } },
        }),
      );
    }
  });
  after(async () => {
    for (const replica of replicas) await replica.stop();
    await store?.drop();
  });

  it("counts registrations made on either replica against the same sender", async () => {
    const [one, two] = replicas as [IdpService, IdpService];
    const statuses: number[] = [];
    for (const replica of [one, two, one, two]) {
      statuses.push((await register(`${replica.issuer}/reg`, MCP_REMOTE_METADATA)).status);
    }
    assert.deepEqual(statuses, [201, 201, 201, 429]);
    assert.equal((await register(`${one.issuer}/reg`, MCP_REMOTE_METADATA)).status, 429);
  });
});
