import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type ClientPolicyRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientPolicyRepresentation.js";
import type ClientProfileRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientProfileRepresentation.js";
import type { Check } from "../../src/doctor/check.ts";
import { openStore } from "../../src/store/database.ts";
import { type CliResult, runCli } from "../support/cli.ts";
import { type IdpService, startIdpService } from "../support/idp-service.ts";
import { type KeycloakService, startKeycloakService } from "../support/keycloak-service.ts";
import { storedSecret } from "../support/stored-secrets.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * `imaging doctor` run as an administrator would, against the real service with each identity provider:
 * every check passes on a correct setup, and each mistake of the specification's setup rules and Errors
 * table makes the right check fail with its fix. The mistakes both providers share are one suite looped
 * over them, each made the way that provider's administrator makes it (`imaging cimd` on the embedded
 * provider's store, Keycloak's Admin API as its console would); what only one provider has follows.
 */

/** An identity provider the service runs with, and how its administrator makes the shared mistakes. */
interface DoctorTarget {
  label: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The settings the service was started with, as the administrator's shell would have them. */
  env(extra: Record<string, string>): Record<string, string>;
  unlink(client: string): Promise<void>;
  setPolicyDomains(client: string, domains: string[]): Promise<void>;
  setProfileDomains(client: string, domains: string[]): Promise<void>;
  allowOnlyHttps(client: string): Promise<void>;
  /** What doctor says of each mistake beyond what both providers share (undefined: not checked). */
  expected: {
    linkedFix: string | RegExp;
    policyDomainsDetail: RegExp;
    policyDomainsFix?: string;
    loopbackDetail: RegExp;
    loopbackFix?: string;
    httpsOnlyDetail?: RegExp;
  };
}

type Doctor = ReturnType<typeof doctorOf>;

function doctorOf(target: DoctorTarget) {
  const cli = async (args: string[], extra: Record<string, string> = {}): Promise<CliResult> =>
    runCli(args, target.env(extra));
  const doctor = async (args: string[] = [], extra: Record<string, string> = {}) => {
    const result = await cli(["doctor", "--json", ...args], extra);
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

  /** A client of its own per mistake, correct (HTTP variant, as base_url is http) until the test breaks it. */
  async function addClient(name: string): Promise<string> {
    const clientId = `https://${name}.example.org/oauth/client-metadata.json`;
    const added = await cli(["cimd", "add", name, "--client-id", clientId, "--http"]);
    assert.equal(added.code, 0, added.stderr);
    const before = await doctor(["--client", name]);
    assert.equal(before.code, 0, failing(before.checks).join("\n"));
    return clientId;
  }
  return { cli, doctor, failing, failingIds, addClient };
}

function assertFix(actual: string | null | undefined, expected: string | RegExp | undefined): void {
  if (typeof expected === "string") assert.equal(actual, expected);
  else if (expected) assert.match(actual ?? "", expected);
}

/** The mistakes both identity providers share. */
function sharedMistakes(target: DoctorTarget, { doctor, failingIds, addClient }: Doctor): void {
  describe("Policy exists but CIMD is ignored", () => {
    it("fails cimd-linked when the profile is not among the policy's associated profiles", async () => {
      await addClient("unlinked");
      await target.unlink("unlinked");
      const result = await doctor(["--client", "unlinked"]);
      assert.equal(result.code, 1);
      assert.deepEqual(failingIds(result.checks), ["cimd-linked:unlinked"]);
      const check = result.check("cimd-linked:unlinked");
      assert.match(check.detail, /Policy exists but CIMD is ignored/);
      assertFix(check.fix, target.expected.linkedFix);
    });
  });

  describe("Browser sign-in never opens, or the callback fails", () => {
    it("fails cimd-policy-domains when the client's domain is missing from the policy's list", async () => {
      await addClient("policy-domain");
      await target.setPolicyDomains("policy-domain", ["other.example.org"]);
      const result = await doctor(["--client", "policy-domain"]);
      assert.equal(result.code, 1);
      const check = result.check("cimd-policy-domains:policy-domain");
      assert.equal(check.verdict, "fail");
      assert.match(check.detail, target.expected.policyDomainsDetail);
      assertFix(check.fix, target.expected.policyDomainsFix);
      assert.deepEqual(failingIds(result.checks), ["cimd-policy-domains:policy-domain"]);
    });

    it("fails cimd-profile-domains when localhost and 127.0.0.1 are missing from the profile's list", async () => {
      await addClient("loopback");
      await target.setProfileDomains("loopback", ["loopback.example.org"]);
      const result = await doctor(["--client", "loopback"]);
      assert.equal(result.code, 1);
      const check = result.check("cimd-profile-domains:loopback");
      assert.equal(check.verdict, "fail");
      assert.match(check.detail, target.expected.loopbackDetail);
      assertFix(check.fix, target.expected.loopbackFix);
      assert.deepEqual(failingIds(result.checks), ["cimd-profile-domains:loopback"]);
    });

    it("passes cimd-http-scheme for an HTTPS-variant client on an http deployment (its sign-in works)", async () => {
      await addClient("https-only");
      await target.allowOnlyHttps("https-only");
      const result = await doctor(["--client", "https-only"]);
      const check = result.check("cimd-http-scheme:https-only");
      assert.equal(check.verdict, "pass", check.detail);
      if (target.expected.httpsOnlyDetail) assert.match(check.detail, target.expected.httpsOnlyDetail);
      assert.deepEqual(failingIds(result.checks), []);
      assert.equal(result.code, 0);
    });
  });
}

// The embedded identity provider: the service on a SQLite store of its own.
let store: TestStore;
let idp: IdpService;
let exchangeSecret = "";
const secret = () => exchangeSecret;

const embedded: DoctorTarget = {
  label: "embedded identity provider",
  async start() {
    store = await createTestStore("sqlite");
    idp = await startIdpService(store);
    exchangeSecret = await storedSecret(store, "mcp-token-exchange");
  },
  async stop() {
    await idp?.stop();
    await store?.drop();
  },
  env: (extra) => ({
    IMAGING_DATA_DIR: store.dataDir,
    PUBLIC_URL: idp.base,
    DATABASE_URL: "",
    IDP: "",
    IMAGING_CONFIG: "",
    TOKEN_EXCHANGE_CLIENT_SECRET: "",
    ...extra,
  }),
  unlink: (client) => cimd(embedded, ["unlink", client]),
  setPolicyDomains: (client, domains) =>
    cimd(embedded, ["set", client, "--policy-domains", domains.join(",")]),
  setProfileDomains: (client, domains) =>
    cimd(embedded, ["set", client, "--trusted-domains", domains.join(",")]),
  allowOnlyHttps: (client) => cimd(embedded, ["set", client, "--https"]),
  expected: {
    linkedFix: "Run `imaging cimd link unlinked`.",
    policyDomainsDetail:
      /client domain policy-domain\.example\.org is not in cimd-policy-policy-domain's trusted domains/,
    policyDomainsFix:
      "Run `imaging cimd set policy-domain --policy-domains other.example.org,policy-domain.example.org`.",
    loopbackDetail: /^localhost, 127\.0\.0\.1 are missing from cimd-profile-loopback's trusted domains/,
    loopbackFix:
      "Run `imaging cimd set loopback --trusted-domains loopback.example.org,localhost,127.0.0.1`.",
    httpsOnlyDetail: /HTTPS variant \(Allow http scheme OFF in cimd-profile-https-only\)/,
  },
};

async function cimd(target: DoctorTarget, args: string[]): Promise<void> {
  const result = await runCli(["cimd", ...args], target.env({}));
  assert.equal(result.code, 0, result.stderr);
}

// Keycloak: the service provisioned in a realm of the run's Keycloak; mistakes made through its Admin API.
let kc: KeycloakService;

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

const keycloak: DoctorTarget = {
  label: "Keycloak",
  async start() {
    kc = await startKeycloakService();
  },
  async stop() {
    await kc?.stop();
  },
  env: (extra) => ({
    DATABASE_URL: "",
    IMAGING_CONFIG: "",
    TOKEN_EXCHANGE_CLIENT_SECRET: "",
    ...kc.env,
    ...extra,
  }),
  unlink: (client) =>
    changePolicy(`cimd-policy-${client}`, (policy) => {
      policy.profiles = [];
    }),
  setPolicyDomains: (client, domains) =>
    changePolicy(`cimd-policy-${client}`, (policy) => {
      const condition = policy.conditions?.find((c) => c.condition === "client-id-uri");
      assert.ok(condition);
      condition.configuration = {
        ...condition.configuration,
        "client-id-uri-allow-permitted-domains": domains,
      };
    }),
  setProfileDomains: (client, domains) =>
    changeProfile(`cimd-profile-${client}`, (profile) => {
      const executor = profile.executors?.find((e) => e.executor === "client-id-metadata-document");
      assert.ok(executor);
      executor.configuration = { ...executor.configuration, "cimd-allow-permitted-domains": domains };
    }),
  allowOnlyHttps: (client) =>
    changeProfile(`cimd-profile-${client}`, (profile) => {
      const executor = profile.executors?.find((e) => e.executor === "client-id-metadata-document");
      assert.ok(executor);
      executor.configuration = { ...executor.configuration, "cimd-allow-http-scheme": false };
    }),
  expected: {
    linkedFix:
      /^Run `imaging cimd link unlinked` \(in Keycloak's console, realm .*Associated client profiles: add cimd-profile-unlinked\)\.$/,
    policyDomainsDetail:
      /client domain policy-domain\.example\.org is not in cimd-policy-policy-domain's trusted domains \(other\.example\.org\)/,
    loopbackDetail: /^localhost, 127\.0\.0\.1 are missing/,
  },
};

describe("imaging doctor (embedded identity provider)", () => {
  const h = doctorOf(embedded);
  const { cli, doctor, failing, failingIds, addClient } = h;
  before(() => embedded.start());
  after(() => embedded.stop());

  it("warns, without failing, when no AI client has a CIMD profile and policy", async () => {
    const result = await doctor();
    assert.equal(result.code, 0, failing(result.checks).join("\n"));
    const check = result.check("cimd-clients");
    assert.equal(check.verdict, "warn");
    assert.match(check.fix ?? "", /imaging cimd add claude-code --preset claude-code/);
  });

  it("passes every check on a correct setup and exits 0", async () => {
    const added = await cli(["cimd", "add", "claude-code", "--preset", "claude-code", "--http"]);
    assert.equal(added.code, 0, added.stderr);
    const result = await doctor();
    assert.equal(result.code, 0, failing(result.checks).join("\n"));
    const expected = [
      "windows-public-url",
      "gateway",
      "challenge-mcp",
      "challenge-gatekeeper",
      "resource-metadata-mcp",
      "resource-metadata-gatekeeper",
      "discovery-mcp",
      "discovery-gatekeeper",
      "json-not-found",
      "idp-cimd",
      "dynamic-client-registration",
      "cimd-client-id:claude-code",
      "cimd-profile:claude-code",
      "cimd-linked:claude-code",
      "cimd-policy-domains:claude-code",
      "cimd-profile-domains:claude-code",
      "cimd-http-scheme:claude-code",
      "cimd-profile-switches:claude-code",
      "token-exchange",
      "internal-bind",
    ];
    assert.deepEqual(
      result.checks.map((c) => c.id),
      expected,
    );
    for (const check of result.checks) {
      assert.deepEqual(Object.keys(check), ["id", "title", "verdict", "detail", "fix"]);
      assert.equal(
        check.verdict,
        check.id === "windows-public-url" ? "n/a" : "pass",
        `${check.id}: ${check.detail}`,
      );
    }
    assert.match(
      result.check("challenge-mcp").detail,
      new RegExp(
        `WWW-Authenticate: Bearer resource_metadata="${idp.base}/\\.well-known/oauth-protected-resource/mcp"`,
      ),
    );
    assert.match(result.check("token-exchange").detail, /invalid_grant/);
    assert.ok(!result.stdout.includes(secret()), "the exchange secret is never printed");
  });

  it("prints one line per check for people, with a summary", async () => {
    const result = await cli(["doctor"]);
    assert.equal(result.code, 0, result.stdout);
    assert.match(
      result.stdout,
      new RegExp(`^imaging doctor: base_url ${idp.base}, embedded identity provider`),
    );
    assert.match(
      result.stdout,
      /^PASS {2}challenge-mcp +Unauthenticated POST \/mcp gets the Bearer challenge$/m,
    );
    assert.match(result.stdout, /^N\/A {3}windows-public-url/m);
    assert.match(result.stdout, /^20 checks: 19 passed, 0 failed, 0 warnings, 1 not applicable$/m);
    assert.doesNotMatch(result.stdout, /fix:/);
  });

  it("has --help naming its options", async () => {
    const help = await cli(["doctor", "--help"]);
    assert.equal(help.code, 0);
    for (const flag of ["--client", "--url", "--data-dir", "--config", "--json"])
      assert.ok(help.stdout.includes(flag), flag);
  });

  it("refuses an unknown --client and a --url that is not a base_url", async () => {
    const unknown = await cli(["doctor", "--client", "nope"]);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^imaging: No CIMD client named nope in the platform store \(see: imaging cimd list\)$/m,
    );
    assert.equal(unknown.stdout, "");
    const url = await cli(["doctor", "--url", `${idp.base}/mcp`]);
    assert.equal(url.code, 2);
    assert.match(url.stderr, /--url must be a base_url/);
  });

  it("fails, without creating a store, when run with another data directory than the gateway's", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "imaging-doctor-"));
    try {
      const result = await doctor([], { IMAGING_DATA_DIR: elsewhere });
      assert.equal(result.code, 1);
      assert.deepEqual(failingIds(result.checks), ["cimd-clients", "token-exchange"]);
      assert.match(result.check("cimd-clients").detail, /there is no store at .*imaging\.db/);
      assert.match(result.check("cimd-clients").fix ?? "", /--data-dir/);
      assert.match(result.check("token-exchange").detail, /^no secret for mcp-token-exchange/);
      assert.ok(!existsSync(join(elsewhere, "imaging.db")), "no empty store left behind");
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  sharedMistakes(embedded, h);

  describe("Browser sign-in never opens, or the callback fails (embedded)", () => {
    it("fails cimd-profile-domains when the client's own domain is missing from the profile's list", async () => {
      await addClient("profile-domain");
      assert.equal(
        (await cli(["cimd", "set", "profile-domain", "--trusted-domains", "localhost,127.0.0.1"])).code,
        0,
      );
      const result = await doctor(["--client", "profile-domain"]);
      assert.equal(result.code, 1);
      const check = result.check("cimd-profile-domains:profile-domain");
      assert.equal(check.verdict, "fail");
      assert.match(
        check.detail,
        /profile-domain\.example\.org is missing .*metadata document is not fetched/,
      );
    });

    it("fails cimd-http-scheme for an http client_id when Allow http scheme is OFF", async () => {
      await addClient("plain-http");
      const clientId = "http://plain-http.example.org/oauth/client-metadata.json";
      assert.equal((await cli(["cimd", "set", "plain-http", "--client-id", clientId])).code, 0);
      assert.equal((await cli(["cimd", "set", "plain-http", "--https"])).code, 0);
      const result = await doctor(["--client", "plain-http"]);
      assert.equal(result.code, 1);
      const check = result.check("cimd-http-scheme:plain-http");
      assert.equal(check.verdict, "fail");
      assert.match(
        check.detail,
        /client_id http:\/\/plain-http\.example\.org\/oauth\/client-metadata\.json is http but Allow http scheme is OFF in cimd-profile-plain-http/,
      );
      assert.equal(check.fix, "Run `imaging cimd set plain-http --http`.");
      assert.ok(failingIds(result.checks).includes("cimd-http-scheme:plain-http"));
    });

    it("fails cimd-profile when the profile is missing, and does not pile up failures on it", async () => {
      const clientId = await addClient("no-profile");
      const handle = await openStore({ sqliteFile: store.sqliteFile });
      try {
        // Removed by other means: no imaging path deletes a client's profile alone.
        const deleted = await handle.db
          .deleteFrom("cimd_profiles")
          .where("name", "=", "cimd-profile-no-profile")
          .executeTakeFirst();
        assert.equal(Number(deleted.numDeletedRows), 1);
      } finally {
        await handle.close();
      }
      const result = await doctor(["--client", "no-profile"]);
      assert.equal(result.code, 1);
      const check = result.check("cimd-profile:no-profile");
      assert.equal(check.verdict, "fail");
      assert.match(check.detail, /^profile cimd-profile-no-profile is missing/);
      assert.equal(
        check.fix,
        `Run \`imaging cimd remove no-profile\` then \`imaging cimd add no-profile --client-id ${clientId} --http\`.`,
      );
      assert.deepEqual(
        result.checks.filter((c) => c.id.endsWith(":no-profile")).map((c) => [c.id, c.verdict]),
        [
          ["cimd-client-id:no-profile", "pass"],
          ["cimd-profile:no-profile", "fail"],
          ["cimd-linked:no-profile", "n/a"],
          ["cimd-policy-domains:no-profile", "pass"],
          ["cimd-profile-domains:no-profile", "n/a"],
          ["cimd-http-scheme:no-profile", "n/a"],
          ["cimd-profile-switches:no-profile", "n/a"],
        ],
      );
    });
  });

  describe("Tools return 401 or 403 after successful sign-in", () => {
    it("fails token-exchange when the gateway would exchange with a wrong secret, without printing it", async () => {
      const wrong = "doctor-test-wrong-secret-4711";
      const result = await doctor(["--client", "claude-code"], { TOKEN_EXCHANGE_CLIENT_SECRET: wrong });
      assert.equal(result.code, 1);
      const check = result.check("token-exchange");
      assert.equal(check.verdict, "fail");
      assert.match(check.detail, /secret from TOKEN_EXCHANGE_CLIENT_SECRET.*: 401 invalid_client/);
      assert.match(check.fix ?? "", /TOKEN_EXCHANGE_CLIENT_SECRET/);
      assert.deepEqual(failingIds(result.checks), ["token-exchange"]);
      assert.ok(!result.stdout.includes(wrong) && !result.stdout.includes(secret()), "no secret printed");
    });
  });

  describe("Client reports a JSON parse error on '<' (the client does not point at the gateway)", () => {
    it("fails the gateway, challenge, metadata and discovery checks when pointed at the MCP server", async () => {
      const direct = idp.service.mcpUrls.analysis;
      const result = await doctor(["--client", "claude-code", "--url", direct]);
      assert.equal(result.code, 1);
      for (const id of [
        "gateway",
        "challenge-mcp",
        "challenge-gatekeeper",
        "resource-metadata-mcp",
        "resource-metadata-gatekeeper",
        "discovery-mcp",
        "discovery-gatekeeper",
        "idp-cimd",
      ])
        assert.equal(result.check(id).verdict, "fail", `${id}: ${result.check(id).detail}`);
      const challenge = result.check("challenge-mcp");
      assert.match(challenge.detail, /answered|200/);
      assert.match(
        challenge.detail,
        /an MCP server answered without asking for a token, this is not the gateway/,
      );
      assert.match(challenge.fix ?? "", /never at an MCP server/);
      assert.match(
        result.check("discovery-mcp").detail,
        /not redirected to the identity provider's discovery document/,
      );
      assert.equal(result.check("token-exchange").verdict, "warn");
      assert.equal(result.check("cimd-linked:claude-code").verdict, "pass");
    });
  });

  describe("base_url", () => {
    it("fails the challenge, metadata and discovery checks when PUBLIC_URL is not the gateway's base_url", async () => {
      const other = idp.base.replace("127.0.0.1", "localhost");
      const result = await doctor(["--client", "claude-code"], { PUBLIC_URL: other });
      assert.equal(result.code, 1);
      assert.equal(result.check("gateway").verdict, "pass");
      const metadata = result.check("resource-metadata-mcp");
      assert.equal(metadata.verdict, "fail");
      assert.match(
        metadata.detail,
        new RegExp(
          `the gateway's base_url is ${idp.base}, this command's is ${other} \\(PUBLIC_URL, --local or --port differs\\)`,
        ),
      );
      assert.match(metadata.fix ?? "", /^Set PUBLIC_URL to the address AI clients use/);
      const challenge = result.check("challenge-mcp");
      assert.equal(challenge.verdict, "fail");
      assert.match(
        challenge.detail,
        /the gateway's base_url \(PUBLIC_URL\) is not the address this command uses/,
      );
      assert.equal(result.check("discovery-mcp").verdict, "fail");
      assert.match(
        result.check("discovery-mcp").detail,
        /issuer "http:\/\/127\.0\.0\.1:\d+\/auth\/realms\/imaging", expected http:\/\/localhost/,
      );
    });
  });
});

describe("imaging doctor (Keycloak)", () => {
  const h = doctorOf(keycloak);
  const { cli, doctor, failing, failingIds } = h;
  before(() => keycloak.start());
  after(() => keycloak.stop());

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

  sharedMistakes(keycloak, h);

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
