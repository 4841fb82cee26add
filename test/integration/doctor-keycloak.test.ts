import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type ClientPolicyRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientPolicyRepresentation.js";
import type ClientProfileRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientProfileRepresentation.js";
import type { Check } from "../../src/doctor/check.ts";
import { runCli } from "../support/cli.ts";
import { type KeycloakService, startKeycloakService } from "../support/keycloak-service.ts";

/**
 * `imaging doctor` against the real service in Keycloak mode: it passes on the provisioned setup with a
 * CIMD client, and each mistake made directly in Keycloak (as an administrator would in its console) is
 * detected by the right check.
 */
describe("imaging doctor (Keycloak)", () => {
  let kc: KeycloakService;
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    runCli(args, {
      DATABASE_URL: "",
      IMAGING_CONFIG: "",
      TOKEN_EXCHANGE_CLIENT_SECRET: "",
      ...kc.env,
      ...extra,
    });
  const doctor = async (args: string[] = []) => {
    const result = await cli(["doctor", "--json", ...args]);
    let checks: Check[] = [];
    try {
      checks = JSON.parse(result.stdout) as Check[];
    } catch {
      assert.fail(`doctor --json printed no JSON (exit ${result.code}): ${result.stdout}${result.stderr}`);
    }
    const check = (id: string) => {
      const found = checks.find((c) => c.id === id);
      assert.ok(found, `check ${id} reported (got ${checks.map((c) => c.id).join(", ")})`);
      return found;
    };
    return { ...result, checks, check };
  };
  const failing = (checks: Check[]) =>
    checks.filter((c) => c.verdict === "fail").map((c) => `${c.id}: ${c.detail}`);
  const failingIds = (checks: Check[]) => checks.filter((c) => c.verdict === "fail").map((c) => c.id);

  /** Read, change, write back: Keycloak replaces the whole list on PUT. */
  async function changePolicy(name: string, change: (policy: ClientPolicyRepresentation) => void) {
    const { policies = [] } = await kc.admin.clientPolicies.listPolicies({ includeGlobalPolicies: false });
    const policy = policies.find((p) => p.name === name);
    assert.ok(policy, `policy ${name} exists in Keycloak`);
    change(policy);
    await kc.admin.clientPolicies.updatePolicy({ policies });
  }
  async function changeProfile(name: string, change: (profile: ClientProfileRepresentation) => void) {
    const { profiles = [] } = await kc.admin.clientPolicies.listProfiles({ includeGlobalProfiles: false });
    const profile = profiles.find((p) => p.name === name);
    assert.ok(profile, `profile ${name} exists in Keycloak`);
    change(profile);
    await kc.admin.clientPolicies.createProfiles({ profiles });
  }
  async function setStandardTokenExchange(enabled: boolean) {
    const [client] = await kc.admin.clients.find({ clientId: "mcp-token-exchange" });
    assert.ok(client?.id, "mcp-token-exchange provisioned");
    await kc.admin.clients.update(
      { id: client.id },
      { ...client, attributes: { ...client.attributes, "standard.token.exchange.enabled": String(enabled) } },
    );
  }

  /** A client of its own per mistake, correct (HTTP variant: base_url is http) until the test breaks it. */
  async function addClient(name: string): Promise<void> {
    const clientId = `https://${name}.example.org/oauth/client-metadata.json`;
    const added = await cli(["cimd", "add", name, "--client-id", clientId, "--http"]);
    assert.equal(added.code, 0, added.stderr);
    const before = await doctor(["--client", name]);
    assert.equal(before.code, 0, failing(before.checks).join("\n"));
  }

  before(async () => {
    kc = await startKeycloakService();
  });
  after(async () => {
    await kc?.stop();
  });

  it("passes every check on the provisioned setup with a CIMD client", async () => {
    const added = await cli(["cimd", "add", "claude-code", "--preset", "claude-code", "--http"]);
    assert.equal(added.code, 0, added.stderr);
    const result = await doctor();
    assert.equal(result.code, 0, failing(result.checks).join("\n"));
    for (const check of result.checks)
      assert.equal(
        check.verdict,
        check.id === "windows-public-url" ? "n/a" : "pass",
        `${check.id}: ${check.detail}`,
      );
    assert.ok(result.checks.some((c) => c.id === "cimd-linked:claude-code"));
    assert.match(
      result.check("token-exchange").detail,
      /secret from Keycloak realm .*: 400 invalid_request "Invalid token"/,
    );
    const text = await cli(["doctor"]);
    assert.equal(text.code, 0, text.stdout);
    assert.match(
      text.stdout,
      new RegExp(`^imaging doctor: base_url ${kc.base}, Keycloak, issuer ${kc.issuer}$`, "m"),
    );
  });

  it("fails cimd-linked when the policy's Associated client profiles lose the profile", async () => {
    await addClient("unlinked");
    await changePolicy("cimd-policy-unlinked", (policy) => {
      policy.profiles = [];
    });
    const result = await doctor(["--client", "unlinked"]);
    assert.equal(result.code, 1);
    assert.deepEqual(failingIds(result.checks), ["cimd-linked:unlinked"]);
    const check = result.check("cimd-linked:unlinked");
    assert.match(check.detail, /Policy exists but CIMD is ignored/);
    assert.match(
      check.fix ?? "",
      /^Run `imaging cimd link unlinked` \(in Keycloak's console, realm .*Associated client profiles: add cimd-profile-unlinked\)\.$/,
    );
  });

  it("fails cimd-policy-domains when the client's domain is missing from the policy's trusted domains", async () => {
    await addClient("policy-domain");
    await changePolicy("cimd-policy-policy-domain", (policy) => {
      const condition = policy.conditions?.find((c) => c.condition === "client-id-uri");
      assert.ok(condition);
      condition.configuration = {
        ...condition.configuration,
        "client-id-uri-allow-permitted-domains": ["other.example.org"],
      };
    });
    const result = await doctor(["--client", "policy-domain"]);
    assert.equal(result.code, 1);
    assert.deepEqual(failingIds(result.checks), ["cimd-policy-domains:policy-domain"]);
    assert.match(
      result.check("cimd-policy-domains:policy-domain").detail,
      /client domain policy-domain\.example\.org is not in cimd-policy-policy-domain's trusted domains \(other\.example\.org\)/,
    );
  });

  it("fails cimd-profile-domains when localhost and 127.0.0.1 are missing from the profile's trusted domains", async () => {
    await addClient("loopback");
    await changeProfile("cimd-profile-loopback", (profile) => {
      const executor = profile.executors?.find((e) => e.executor === "client-id-metadata-document");
      assert.ok(executor);
      executor.configuration = {
        ...executor.configuration,
        "cimd-allow-permitted-domains": ["loopback.example.org"],
      };
    });
    const result = await doctor(["--client", "loopback"]);
    assert.equal(result.code, 1);
    assert.deepEqual(failingIds(result.checks), ["cimd-profile-domains:loopback"]);
    assert.match(
      result.check("cimd-profile-domains:loopback").detail,
      /^localhost, 127\.0\.0\.1 are missing/,
    );
  });

  it("passes cimd-http-scheme for an https client_id with Allow http scheme OFF on an http deployment", async () => {
    await addClient("https-only");
    await changeProfile("cimd-profile-https-only", (profile) => {
      const executor = profile.executors?.find((e) => e.executor === "client-id-metadata-document");
      assert.ok(executor);
      executor.configuration = { ...executor.configuration, "cimd-allow-http-scheme": false };
    });
    const result = await doctor(["--client", "https-only"]);
    assert.equal(result.check("cimd-http-scheme:https-only").verdict, "pass");
    assert.deepEqual(failingIds(result.checks), []);
  });

  it("fails token-exchange when Standard token exchange is disabled on mcp-token-exchange", async () => {
    await setStandardTokenExchange(false);
    try {
      const result = await doctor(["--client", "claude-code"]);
      assert.equal(result.code, 1);
      assert.deepEqual(failingIds(result.checks), ["token-exchange"]);
      const check = result.check("token-exchange");
      assert.match(
        check.detail,
        /400 invalid_request "Standard token exchange is not enabled for the requested client"/,
      );
      assert.match(check.fix ?? "", /turn on "Standard token exchange" for client mcp-token-exchange/);
      assert.match(check.fix ?? "", /standard\.token\.exchange\.enabled/);
    } finally {
      await setStandardTokenExchange(true);
    }
    assert.equal((await doctor(["--client", "claude-code"])).code, 0);
  });
});
