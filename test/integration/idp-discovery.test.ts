import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Agent, fetch as undiciFetch } from "undici";
import { verifyCredentials } from "../../src/domain/users.ts";
import { readStoredSecret } from "../../src/idp/stored-secrets.ts";
import { openStore } from "../../src/store/database.ts";
import { listUsers } from "../../src/store/users.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { runCli, spawnService } from "../support/cli.ts";
import { type IdpService, seedCimdClient, seedUsers, startIdpService } from "../support/idp-service.ts";
import { freePort } from "../support/service.ts";
import { withVault } from "../support/stored-secrets.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { makeTestCertificates } from "../support/test-certificates.ts";

type Metadata = Record<string, unknown> & {
  scopes_supported: string[];
  token_endpoint_auth_methods_supported: string[];
};

describe("embedded identity provider: discovery", () => {
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

  const getJson = async (url: string) => {
    const response = await fetch(url);
    assert.equal(response.status, 200, url);
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    return (await response.json()) as Metadata;
  };

  it("serves OpenID Connect discovery at {issuer}/.well-known/openid-configuration", async () => {
    const doc = await getJson(`${idp.issuer}/.well-known/openid-configuration`);
    assert.equal(doc.issuer, idp.issuer);
    assert.equal(idp.issuer, `${idp.base}/auth/realms/imaging`);
    for (const [field, path] of [
      ["authorization_endpoint", "/auth"],
      ["token_endpoint", "/token"],
      ["jwks_uri", "/jwks"],
      ["end_session_endpoint", "/session/end"],
      ["revocation_endpoint", "/token/revocation"],
    ] as const) {
      assert.equal(doc[field], `${idp.issuer}${path}`, field);
    }
    assert.deepEqual(doc.code_challenge_methods_supported, ["S256"]);
    assert.deepEqual(doc.response_types_supported, ["code"]);
    assert.equal(doc.client_id_metadata_document_supported, true);
    assert.equal(doc.authorization_response_iss_parameter_supported, true);
    assert.ok(doc.token_endpoint_auth_methods_supported.includes("none"));
    assert.ok(doc.token_endpoint_auth_methods_supported.includes("client_secret_basic"));
    assert.ok(
      (doc.grant_types_supported as string[]).includes("urn:ietf:params:oauth:grant-type:token-exchange"),
    );
    assert.ok((doc.grant_types_supported as string[]).includes("refresh_token"));
    for (const scope of ["mcp:tools", "mcp:resources", "mcp:prompts", "openid", "offline_access"]) {
      assert.ok(doc.scopes_supported.includes(scope), scope);
    }
    assert.equal(doc.registration_endpoint, undefined, "no dynamic client registration");
  });

  it("serves the same document as RFC 8414 metadata at {issuer}/.well-known/oauth-authorization-server", async () => {
    assert.deepEqual(
      await getJson(`${idp.issuer}/.well-known/oauth-authorization-server`),
      await getJson(`${idp.issuer}/.well-known/openid-configuration`),
    );
  });

  it("is what the gateway's discovery redirects and protected resource metadata point at", async () => {
    const prm = await getJson(`${idp.base}/.well-known/oauth-protected-resource/mcp`);
    assert.deepEqual(prm.authorization_servers, [idp.issuer]);
    for (const probe of [
      "/.well-known/oauth-authorization-server/auth/realms/imaging",
      "/.well-known/openid-configuration/auth/realms/imaging",
      "/.well-known/oauth-authorization-server/mcp",
      "/mcp/.well-known/openid-configuration",
    ]) {
      const redirect = await fetch(`${idp.base}${probe}`, { redirect: "manual" });
      assert.equal(redirect.status, 302, probe);
      const target = redirect.headers.get("location") as string;
      assert.ok(target.startsWith(`${idp.issuer}/.well-known/`), target);
      assert.equal((await getJson(target)).issuer, idp.issuer, probe);
    }
  });

  it("answers JSON, never HTML, for unknown paths under the issuer", async () => {
    const response = await fetch(`${idp.issuer}/.well-known/unknown-document`);
    assert.equal(response.status, 404);
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal(((await response.json()) as { error: string }).error, "not_found");
  });

  it("keeps its secrets sealed in the store, the key that opens them private to the service's user", async () => {
    const names = ["idp-signing-keys", "mcp-token-exchange", "idp-cookie-key", "idp-csrf-key"];
    const values = await withVault(store, async (vault) => {
      const found: string[] = [];
      for (const name of names) {
        const value = await readStoredSecret(vault, name);
        assert.ok(value, `the store holds ${name}`);
        found.push(value);
      }
      return found;
    });
    const rows = await withVault(store, (vault) =>
      vault.db
        .withTables<{ service_secrets: { name: string; sealed: string } }>()
        .selectFrom("service_secrets")
        .selectAll()
        .execute(),
    );
    for (const value of values) {
      assert.ok(!JSON.stringify(rows).includes(value), "no secret is in the database in clear");
    }
    if (process.platform === "win32") return;
    assert.equal(statSync(join(store.dataDir, "secrets", "store-secrets-key.secret")).mode & 0o777, 0o600);
  });
});

describe("embedded identity provider: created at start (imaging start)", () => {
  let store: TestStore;
  before(async () => {
    store = await createTestStore("sqlite");
  });
  after(async () => {
    await store?.drop();
  });

  const start = async (env: Record<string, string> = {}) => {
    const port = await freePort();
    return spawnService(["--data-dir", store.dataDir, "--port", String(port)], {
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      REST_PORT: "0",
      MCP_ANALYSIS_PORT: "0",
      MCP_GATEKEEPER_PORT: "0",
      IMAGING_BIND_ADDRESS: "127.0.0.1",
      IMAGING_ADMIN_PASSWORD: "",
      ...env,
    });
  };
  const stop = async (service: Awaited<ReturnType<typeof start>>) => {
    service.child.kill("SIGTERM");
    await once(service.child, "exit");
  };

  it("creates the admin user on an empty store and prints its generated password once", async () => {
    const first = await start();
    const created = (first.summary as unknown as { adminCreated?: { user: string; password?: string } })
      .adminCreated;
    await stop(first);
    assert.equal(created?.user, "admin");
    assert.ok(created?.password && created.password.length >= 20);
    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    try {
      assert.ok(await verifyCredentials(handle.db, "admin", created.password));
      const [admin] = await listUsers(handle.db);
      assert.deepEqual(admin?.roles, ["admin"]);
    } finally {
      await handle.close();
    }
    const second = await start();
    assert.equal((second.summary as unknown as { adminCreated?: unknown }).adminCreated, undefined);
    await stop(second);
  });

  it("rotate-keys works on the data directory the service uses", async () => {
    const result = await runCli(["idp", "rotate-keys", "--data-dir", store.dataDir, "--json"]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { retired: unknown[] }).retired.length, 1);
  });
});

describe("embedded identity provider: IMAGING_ADMIN_PASSWORD", () => {
  let store: TestStore;
  before(async () => {
    store = await createTestStore("sqlite");
  });
  after(async () => {
    await store?.drop();
  });

  it("gives the admin user that password, and prints none", async () => {
    const port = await freePort();
    const service = await spawnService(["--data-dir", store.dataDir, "--port", String(port)], {
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      REST_PORT: "0",
      MCP_ANALYSIS_PORT: "0",
      MCP_GATEKEEPER_PORT: "0",
      IMAGING_BIND_ADDRESS: "127.0.0.1",
      IMAGING_ADMIN_PASSWORD: "chosen-admin-password",
    });
    const created = (service.summary as unknown as { adminCreated?: { password?: string } }).adminCreated;
    service.child.kill("SIGTERM");
    await once(service.child, "exit");
    assert.ok(created);
    assert.equal(created.password, undefined);
    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    try {
      assert.ok(await verifyCredentials(handle.db, "admin", "chosen-admin-password"));
    } finally {
      await handle.close();
    }
  });
});

describe("embedded identity provider behind HTTPS (TLS_CERT_FILE)", () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let idp: IdpService;
  let dir: string;
  let agent: Agent;

  before(async () => {
    store = await createTestStore("sqlite");
    documents = await startCimdDocumentServer();
    dir = mkdtempSync(join(tmpdir(), "imaging-tls-"));
    const certificates = makeTestCertificates(dir);
    agent = new Agent({ connect: { ca: certificates.ca } });
    const port = await freePort();
    idp = await startIdpService(store, {
      port,
      idp: { cimdCa: documents.ca },
      overrides: {
        publicUrl: `https://127.0.0.1:${port}`,
        tlsCertFile: certificates.certFile,
        tlsKeyFile: certificates.keyFile,
      },
      seed: async (handle) => {
        await seedUsers(handle.db);
        await seedCimdClient(handle.db, "test-ai-client", documents.clientId);
      },
    });
  });
  after(async () => {
    await idp?.stop();
    await agent?.close();
    await documents?.close();
    await store?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("publishes https endpoints from base_url, whatever X-Forwarded-* headers a client sends", async () => {
    const response = await undiciFetch(`${idp.issuer}/.well-known/openid-configuration`, {
      dispatcher: agent,
      headers: { "x-forwarded-host": "evil.example", "x-forwarded-proto": "http" },
    });
    const doc = (await response.json()) as Metadata;
    assert.equal(doc.issuer, idp.issuer);
    assert.ok(idp.issuer.startsWith("https://127.0.0.1:"));
    assert.equal(doc.token_endpoint, `${idp.issuer}/token`);
    assert.equal(doc.authorization_endpoint, `${idp.issuer}/auth`);
  });

  it("sets its cookies Secure (and HttpOnly, SameSite=Lax)", async () => {
    const url = `${idp.issuer}/auth?${new URLSearchParams({
      client_id: documents.clientId,
      redirect_uri: "http://127.0.0.1:49152/callback",
      response_type: "code",
      scope: "mcp:tools",
      resource: idp.mcp,
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    })}`;
    const response = await undiciFetch(url, { dispatcher: agent, redirect: "manual" });
    assert.equal(response.status, 303);
    const cookies = response.headers.getSetCookie();
    assert.ok(
      cookies.some((c) => c.startsWith("imaging_interaction=")),
      cookies.join("\n"),
    );
    for (const cookie of cookies) {
      assert.match(cookie, /; secure/i, cookie);
      assert.match(cookie, /; httponly/i, cookie);
      assert.match(cookie, /; samesite=lax/i, cookie);
    }
  });
});
