import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { loadSettings } from "../../src/config/load-config.ts";
import { resolveRuntimeConfig } from "../../src/config/runtime-config.ts";
import { connectKeycloakAdmin, type KeycloakAdmin } from "../../src/idp/keycloak/admin.ts";
import { startService } from "../../src/service.ts";
import { runCliProcess, spawnService } from "../support/cli.ts";
import {
  connectTestAdmin,
  keycloakEnv,
  keycloakSettings,
  type TestKeycloak,
  uniqueRealm,
  useKeycloak,
} from "../support/keycloak.ts";
import { type KeycloakService, startKeycloakService } from "../support/keycloak-service.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * Start-up provisioning against a real Keycloak (DESIGN.md "Identity"; spec "created automatically at
 * start-up"): what a fresh realm gets, that a second start changes nothing and keeps what
 * administrators added, that drift in what the platform owns is corrected, and that the gateway fronts
 * the realm under /auth with the gateway's behaviour unchanged.
 */
describe("Keycloak provisioning at start-up", () => {
  let keycloak: TestKeycloak;
  let store: TestStore;
  let realm: string;
  let first: KeycloakService;
  let admin: KeycloakAdmin;

  before(async () => {
    keycloak = await useKeycloak();
    store = await createTestStore("sqlite");
    realm = uniqueRealm("prov");
    first = await startKeycloakService({ realm, store });
    admin = first.admin;
  });
  after(async () => {
    await first?.stop();
    await store?.drop();
  });

  /** A restart of the same deployment: same realm, same base_url. */
  const restart = async (port = Number(new URL(first.base).port)) => {
    await first.stop();
    first = await startKeycloakService({ realm, store, port });
    return first.service.keycloak;
  };

  it("creates the realm, roles, scopes with their audience mappers, and both clients", async () => {
    const changes = first.service.keycloak?.changes ?? [];
    assert.ok(changes.includes(`realm ${realm}`), changes.join("\n"));
    assert.equal(first.service.keycloak?.cimdSupported, true);

    for (const role of ["admin", "viewer"]) assert.ok(await admin.roles.findOneByName({ name: role }), role);

    const optional = (await admin.clientScopes.listDefaultOptionalClientScopes()).map((s) => s.name);
    for (const name of ["mcp:tools", "mcp:resources", "mcp:prompts"]) {
      assert.ok(optional.includes(name), `${name} is a realm default optional scope`);
      const scope = await admin.clientScopes.findOneByName({ name });
      assert.equal(scope?.protocol, "openid-connect");
      assert.equal(scope?.attributes?.["include.in.token.scope"], "true");
      const mappers = await admin.clientScopes.listProtocolMappers({ id: scope?.id as string });
      const audiences = mappers
        .filter((m) => m.protocolMapper === "oidc-audience-mapper")
        .map((m) => m.config?.["included.client.audience"] ?? m.config?.["included.custom.audience"])
        .sort();
      assert.deepEqual(audiences, [first.mcp, first.gatekeeper, "mcp-token-exchange"].sort());
      for (const m of mappers) assert.equal(m.config?.["access.token.claim"], "true");
    }

    const [exchange] = await admin.clients.find({ clientId: "mcp-token-exchange" });
    assert.equal(exchange?.publicClient, false, "mcp-token-exchange is confidential");
    assert.equal(exchange?.attributes?.["standard.token.exchange.enabled"], "true");
    assert.equal(exchange?.fullScopeAllowed, false, "exchanged tokens carry only the platform roles");
    assert.equal(exchange?.standardFlowEnabled, false);
    const scoped = (await admin.clients.listRealmScopeMappings({ id: exchange?.id as string })).map(
      (r) => r.name,
    );
    assert.deepEqual(scoped.sort(), ["admin", "viewer"]);
    const [api] = await admin.clients.find({ clientId: "imaging-api" });
    assert.ok(api, "the platform audience imaging-api exists as a client");

    const profile = await admin.users.getProfile();
    const applications = profile.attributes?.find((a) => a.name === "applications");
    assert.equal(applications?.multivalued, true);
    assert.deepEqual(
      applications?.permissions?.edit,
      ["admin"],
      "users cannot grant themselves applications",
    );
  });

  it("fronts the realm under /auth: issuer, discovery and metadata all name base_url", async () => {
    const discovery = (await (
      await fetch(`${first.issuer}/.well-known/openid-configuration`)
    ).json()) as Record<string, unknown>;
    assert.equal(discovery.issuer, first.issuer);
    assert.equal(discovery.client_id_metadata_document_supported, true);
    assert.ok((discovery.token_endpoint_auth_methods_supported as string[]).includes("none"));
    assert.ok(String(discovery.authorization_endpoint).startsWith(`${first.base}/auth/realms/${realm}/`));

    const prm = (await (
      await fetch(`${first.base}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as Record<string, unknown>;
    assert.deepEqual(prm.authorization_servers, [first.issuer]);

    const challenge = await fetch(first.mcp, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    assert.equal(challenge.status, 401);
    assert.match(
      challenge.headers.get("www-authenticate") ?? "",
      new RegExp(`^Bearer resource_metadata="${first.base}/\\.well-known/oauth-protected-resource/mcp"`),
    );

    for (const probe of [
      "/.well-known/oauth-authorization-server/mcp",
      "/mcp/.well-known/openid-configuration",
    ]) {
      const response = await fetch(`${first.base}${probe}`);
      assert.match(response.headers.get("content-type") ?? "", /json/, probe);
      assert.equal(((await response.json()) as { issuer: string }).issuer, first.issuer, probe);
    }

    const console = await fetch(`${first.base}/auth/admin/master/console/`);
    assert.equal(console.status, 404, "Keycloak's administration is not published by the gateway");
    assert.match(console.headers.get("content-type") ?? "", /json/);
  });

  it("a second start changes nothing and keeps what administrators added", async () => {
    // An administrator's own client policy, mapper and client attribute.
    const foreignProfile = {
      name: "corporate-profile",
      description: "made in the console",
      executors: [{ executor: "pkce-enforcer", configuration: { "auto-configure": "true" } }],
    };
    const foreignPolicy = {
      name: "corporate-policy",
      description: "made in the console",
      enabled: true,
      conditions: [{ condition: "client-access-type", configuration: { type: ["public"] } }],
      profiles: ["corporate-profile"],
    };
    await admin.clientPolicies.createProfiles({ profiles: [foreignProfile] } as never);
    await admin.clientPolicies.updatePolicy({ policies: [foreignPolicy] } as never);
    const tools = await admin.clientScopes.findOneByName({ name: "mcp:tools" });
    await admin.clientScopes.addProtocolMapper(
      { id: tools?.id as string },
      {
        name: "corporate claim",
        protocol: "openid-connect",
        protocolMapper: "oidc-hardcoded-claim-mapper",
        config: { "claim.name": "corp", "claim.value": "yes", "access.token.claim": "true" },
      },
    );
    const [exchange] = await admin.clients.find({ clientId: "mcp-token-exchange" });
    await admin.clients.update(
      { id: exchange?.id as string },
      { ...exchange, attributes: { ...exchange?.attributes, "corporate.tag": "kept" } },
    );
    const profilesBefore = await admin.clientPolicies.listProfiles({ includeGlobalProfiles: false });
    const policiesBefore = await admin.clientPolicies.listPolicies({ includeGlobalPolicies: false });

    const second = await restart();
    assert.deepEqual(second?.changes, [], "nothing to create or correct the second time");
    assert.deepEqual(second?.warnings, []);

    assert.deepEqual(
      await admin.clientPolicies.listProfiles({ includeGlobalProfiles: false }),
      profilesBefore,
    );
    assert.deepEqual(
      await admin.clientPolicies.listPolicies({ includeGlobalPolicies: false }),
      policiesBefore,
    );
    const mappers = await admin.clientScopes.listProtocolMappers({ id: tools?.id as string });
    assert.ok(
      mappers.some((m) => m.name === "corporate claim"),
      "the administrator's mapper is kept",
    );
    const [after] = await admin.clients.find({ clientId: "mcp-token-exchange" });
    assert.equal(after?.attributes?.["corporate.tag"], "kept");
  });

  it("corrects drift in what the platform owns, and only that", async () => {
    const [exchange] = await admin.clients.find({ clientId: "mcp-token-exchange" });
    await admin.clients.update(
      { id: exchange?.id as string },
      { ...exchange, attributes: { ...exchange?.attributes, "standard.token.exchange.enabled": "false" } },
    );
    const prompts = await admin.clientScopes.findOneByName({ name: "mcp:prompts" });
    const gatekeeperMapper = (
      await admin.clientScopes.listProtocolMappers({ id: prompts?.id as string })
    ).find((m) => m.config?.["included.custom.audience"] === first.gatekeeper);
    await admin.clientScopes.delProtocolMapper({
      id: prompts?.id as string,
      mapperId: gatekeeperMapper?.id as string,
    });

    const third = await restart();
    assert.deepEqual(third?.changes, [
      "client mcp-token-exchange: standard.token.exchange.enabled=true",
      "mapper audience MCP gatekeeper in client scope mcp:prompts",
    ]);
    const [fixed] = await admin.clients.find({ clientId: "mcp-token-exchange" });
    assert.equal(fixed?.attributes?.["standard.token.exchange.enabled"], "true");
    assert.equal(fixed?.attributes?.["corporate.tag"], "kept");
  });

  it("an administrator who made an mcp scope a realm default keeps it that way", async () => {
    const resources = await admin.clientScopes.findOneByName({ name: "mcp:resources" });
    await admin.clientScopes.delDefaultOptionalClientScope({ id: resources?.id as string });
    await admin.clientScopes.addDefaultClientScope({ id: resources?.id as string });
    const again = await restart();
    assert.deepEqual(again?.changes, []);
    const optional = (await admin.clientScopes.listDefaultOptionalClientScopes()).map((s) => s.name);
    assert.ok(!optional.includes("mcp:resources"));
  });

  it("follows a new base_url: audiences and the Frontend URL it set are updated, issuer names the new address", async () => {
    const moved = await restart(await freePort());
    assert.ok(
      moved?.changes.some((c) => c.startsWith(`realm frontend URL ${first.base}/auth`)),
      moved?.changes.join("\n"),
    );
    assert.equal(
      moved?.changes.filter((c) => c.endsWith("(corrected)")).length,
      6,
      "two URL audiences in three scopes",
    );
    const discovery = (await (await fetch(`${first.issuer}/.well-known/openid-configuration`)).json()) as {
      issuer: string;
    };
    assert.equal(discovery.issuer, first.issuer);
    assert.deepEqual((await restart())?.changes, []);
  });

  it("leaves a Frontend URL an administrator set and says what to do", async () => {
    const realmNow = await admin.realms.findOne({ realm });
    await admin.realms.update(
      { realm },
      { attributes: { ...realmNow?.attributes, frontendUrl: "https://sso.example.com/auth" } },
    );
    try {
      const warned = await restart();
      assert.deepEqual(warned?.changes, []);
      assert.match(
        warned?.warnings.join("\n") ?? "",
        /its Frontend URL is https:\/\/sso\.example\.com\/auth; set it to http:\/\/127\.0\.0\.1:\d+\/auth/,
      );
      const after = await admin.realms.findOne({ realm });
      assert.equal(after?.attributes?.frontendUrl, "https://sso.example.com/auth");
    } finally {
      await admin.realms.update({ realm }, { attributes: { ...realmNow?.attributes } });
    }
  });

  it("refuses to start with a clear sentence when Keycloak refuses the administrator or cannot be reached", async () => {
    const start = async (overrides: Record<string, string | number>) => {
      const settings = loadSettings({
        env: {},
        overrides: {
          ...keycloakSettings(keycloak, realm),
          dataDir: store.dataDir,
          port: await freePort(),
          restPort: 0,
          mcpAnalysisPort: 0,
          mcpGatekeeperPort: 0,
          bindAddress: "127.0.0.1",
          publicUrl: "http://127.0.0.1:8090",
          logLevel: "silent",
          ...overrides,
        },
      });
      return startService(await resolveRuntimeConfig(settings));
    };
    await assert.rejects(
      start({ keycloakAdminPassword: "wrong-password" }),
      /Keycloak refused the administrator kc-admin/,
    );
    await assert.rejects(
      start({ keycloakUrl: `http://127.0.0.1:${await freePort()}/auth` }),
      /Cannot reach Keycloak at http:\/\/127\.0\.0\.1:\d+\/auth \(KEYCLOAK_URL\)/,
    );
    await assert.rejects(
      start({ keycloakUrl: keycloak.url.replace(/\/auth$/, "") }),
      /check KEYCLOAK_URL \(with Keycloak's relative path/,
    );
  });

  it("imaging start with IDP=keycloak provisions, says so, and serves the realm's discovery through /auth", async () => {
    const cliRealm = uniqueRealm("cli");
    const port = await freePort();
    const env = {
      ...keycloakEnv(keycloak, cliRealm),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      REST_PORT: "0",
      MCP_ANALYSIS_PORT: "0",
      MCP_GATEKEEPER_PORT: "0",
      IMAGING_BIND_ADDRESS: "127.0.0.1",
    };
    const started = await spawnService(["--data-dir", store.dataDir, "--port", String(port)], env);
    try {
      const summary = started.summary as unknown as {
        keycloak: { realm: string; issuer: string; changes: string[] };
      };
      assert.equal(summary.keycloak.realm, cliRealm);
      assert.equal(summary.keycloak.issuer, `http://127.0.0.1:${port}/auth/realms/${cliRealm}`);
      assert.ok(summary.keycloak.changes.includes("client mcp-token-exchange"));
      const discovery = await fetch(`${summary.keycloak.issuer}/.well-known/openid-configuration`);
      assert.equal(((await discovery.json()) as { issuer: string }).issuer, summary.keycloak.issuer);
    } finally {
      started.child.kill("SIGTERM");
      await new Promise((resolve) => started.child.once("exit", resolve));
    }
  });

  it("imaging start explains missing Keycloak settings instead of starting", async () => {
    const result = await runCliProcess(["start", "--data-dir", store.dataDir], {
      IDP: "keycloak",
      KEYCLOAK_URL: "",
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /KEYCLOAK_URL is required with IDP=keycloak/);
    assert.match(result.stderr, /needs Keycloak admin credentials/);
    assert.doesNotMatch(result.stderr, /at .*\.ts:\d+/, "no stack trace");
  });

  it("works with a service account instead of an administrator, signing in again when its token expires", async () => {
    // A service account in master with realm-management rights, its tokens living 2 s.
    const master = await connectTestAdmin(keycloak, "master");
    const clientId = uniqueRealm("provisioner");
    const { id } = await master.clients.create({
      clientId,
      publicClient: false,
      serviceAccountsEnabled: true,
      standardFlowEnabled: false,
      attributes: { "access.token.lifespan": "2" },
    });
    try {
      const account = await master.clients.getServiceAccountUser({ id });
      const adminRole = await master.roles.findOneByName({ name: "admin" });
      await master.users.addRealmRoleMappings({
        id: account.id as string,
        roles: [{ id: adminRole?.id as string, name: "admin" }],
      });
      const secret = (await master.clients.getClientSecret({ id })).value as string;
      const viaAccount = await connectKeycloakAdmin({
        keycloakUrl: keycloak.url,
        keycloakAdminRealm: "master",
        keycloakAdminClientId: clientId,
        keycloakAdminClientSecret: secret,
        realm,
      });
      assert.ok(await viaAccount.roles.findOneByName({ name: "admin" }));
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      assert.ok(
        await viaAccount.roles.findOneByName({ name: "viewer" }),
        "a call after the token expired succeeds",
      );
    } finally {
      await master.clients.del({ id });
    }
  });
});
