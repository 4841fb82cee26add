import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, it } from "node:test";
import type ClientPolicyRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientPolicyRepresentation.js";
import type ClientProfileRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientProfileRepresentation.js";
import { resolveCimdClient } from "../../src/idp/cimd/resolve.ts";
import type { KeycloakAdmin } from "../../src/idp/keycloak/admin.ts";
import { loadCimdConfig } from "../../src/store/cimd.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { type CliResult, runCli } from "../support/cli.ts";
import {
  connectTestAdmin,
  keycloakEnv,
  type TestKeycloak,
  uniqueRealm,
  useKeycloak,
} from "../support/keycloak.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/** What `imaging cimd show claude-code --json` prints after `add --preset claude-code`, on either identity provider. */
const CLAUDE_CODE_SHOWN = {
  profile: {
    name: "cimd-profile-claude-code",
    executor: "client-id-metadata-document",
    allowHttpScheme: false,
    restrictSameDomain: false,
    onlyAllowConfidentialClient: false,
    trustedDomains: ["claude.ai", "localhost", "127.0.0.1"],
  },
  policy: {
    name: "cimd-policy-claude-code",
    condition: "client-id-uri",
    uriSchemes: ["https"],
    trustedDomains: ["claude.ai"],
    profiles: ["cimd-profile-claude-code"],
  },
};

/**
 * `imaging cimd ...` with each identity provider: the embedded one (pairs in the platform store) and
 * Keycloak (the realm's client policies). The refusals both give are written once and run against each
 * (unknownClientRefusals, inputRefusals); the rest checks each provider's own storage and enforcement.
 */

/** How the shared suites run `imaging cimd` against one identity provider. */
interface CimdTarget {
  /** `imaging cimd ...args` with this provider's settings. */
  cimd(...args: string[]): Promise<CliResult>;
  /** The same where the provider cannot be reached (Keycloak down), so a refusal proves it came first. */
  unreachable(...args: string[]): Promise<CliResult>;
}

/** An unknown client, the same with either identity provider: one line, exit code 1. */
function unknownClientRefusals(target: () => CimdTarget): void {
  it("gives one readable line and exit code 1 for unknown clients", async () => {
    for (const args of [
      ["show", "nobody"],
      ["link", "nobody"],
      ["unlink", "nobody"],
      ["remove", "nobody"],
      ["set", "nobody", "--enable"],
    ]) {
      const result = await target().cimd(...args);
      assert.equal(result.code, 1, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, /^imaging: No CIMD client named nobody \(see: imaging cimd list\)\n$/);
    }
  });
}

/** Bad input, the same with either identity provider: one line, exit code 2, before the provider is asked. */
function inputRefusals(target: () => CimdTarget): void {
  it("refuses bad input with one readable line and exit code 2, before reaching the identity provider", async () => {
    const cases: [string[], RegExp][] = [
      [["add", "x", "--preset", "cursor"], /--preset must be claude-code or vscode or codex, got 'cursor'/],
      [["add", "x"], /--client-id is required/],
      [["add", "x", "--client-id", "https://x.example/cimd.json?a=1"], /must not contain a query string/],
      [["add", "x", "--client-id", "https://x.example"], /must contain a path/],
      [
        ["add", "x", "--client-id", "https://x.example/c.json", "--trusted-domains", "https://x.example"],
        /must be a host name, not a URL/,
      ],
      [
        ["add", "x", "--client-id", "https://x.example/c.json", "--policy-domains", ""],
        /at least one domain/,
      ],
      [["add", "bad name", "--preset", "vscode"], /client name 'bad name'/],
      [["set", "claude-code"], /nothing to change/],
      [["set", "claude-code", "--only-confidential", "maybe"], /--only-confidential must be on or off/],
    ];
    for (const [args, message] of cases) {
      const result = await target().unreachable(...args);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, message, args.join(" "));
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    }
    const both = await target().unreachable("set", "claude-code", "--http", "--https");
    assert.notEqual(both.code, 0);
  });
}

const CLAUDE_CODE_ID = "https://claude.ai/oauth/claude-code-client-metadata";

describe("imaging cimd", () => {
  let test: TestStore;
  /** Held open for the whole suite, as the running service holds it. */
  let service: StoreHandle;
  const cimd = (...args: string[]) => runCli(["cimd", ...args, "--data-dir", test.dataDir]);
  const listJson = async () => {
    const result = await cimd("list", "--json");
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as {
      client: string;
      linked: boolean;
      variant: string;
      problems: string[];
      notes: string[];
    }[];
  };
  const entry = async (client: string) => {
    const found = (await listJson()).find((r) => r.client === client);
    assert.ok(found, `${client} listed`);
    return found;
  };

  before(async () => {
    test = await createTestStore("sqlite");
    service = await openStore({ sqliteFile: test.sqliteFile });
  });
  after(async () => {
    await service?.close();
    await test?.drop();
  });

  it("has --help on every command", async () => {
    for (const command of [[], ["add"], ["list"], ["show"], ["remove"], ["link"], ["unlink"], ["set"]]) {
      const result = await runCli(["cimd", ...command, "--help"]);
      assert.equal(result.code, 0, command.join(" "));
      assert.match(result.stdout, /^Usage: imaging cimd/m);
    }
    const add = await runCli(["cimd", "add", "--help"]);
    for (const flag of [
      "--preset",
      "--client-id",
      "--trusted-domains",
      "--policy-domains",
      "--http",
      "--data-dir",
      "--config",
      "--json",
    ])
      assert.ok(add.stdout.includes(flag), flag);
  });

  it("adds Claude Code from its preset: HTTPS variant, linked, no problem", async () => {
    const result = await cimd("add", "claude-code", "--preset", "claude-code");
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^Created cimd-profile-claude-code and cimd-policy-claude-code \(HTTPS variant\), linked, for client_id https:\/\/claude\.ai\/oauth\/claude-code-client-metadata$/m,
    );
    assert.doesNotMatch(result.stdout, /problem:/);
  });

  it("show --json prints exactly the profile and the policy", async () => {
    const result = await cimd("show", "claude-code", "--json");
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${JSON.stringify(CLAUDE_CODE_SHOWN, null, 2)}\n`);
    assert.deepEqual(Object.keys(JSON.parse(result.stdout)), ["profile", "policy"]);
  });

  it("show prints the settings with the console's labels", async () => {
    const result = await cimd("show", "claude-code");
    assert.equal(result.code, 0, result.stderr);
    for (const line of [
      /^Profile cimd-profile-claude-code$/m,
      /^ {2}Allow http scheme +OFF$/m,
      /^ {2}Only Allow Confidential Client +OFF$/m,
      /^ {2}Trusted domains +claude\.ai, localhost, 127\.0\.0\.1$/m,
      /^Policy cimd-policy-claude-code$/m,
      /^ {2}URI scheme +https$/m,
      /^ {2}Associated client profiles +cimd-profile-claude-code$/m,
      /^No problem found\.$/m,
    ])
      assert.match(result.stdout, line);
  });

  it("adds VS Code from its preset", async () => {
    const result = await cimd("add", "vscode", "--preset", "vscode", "--json");
    assert.equal(result.code, 0, result.stderr);
    const body = JSON.parse(result.stdout);
    assert.equal(body.clientId, "https://vscode.dev/oauth/client-metadata.json");
    assert.deepEqual(body.profile.trustedDomains, [
      "vscode.dev",
      "code.visualstudio.com",
      "localhost",
      "127.0.0.1",
    ]);
    assert.deepEqual(body.policy.trustedDomains, ["vscode.dev"]);
    assert.deepEqual(body.problems, []);
  });

  it("unlink reproduces 'Policy exists but CIMD is ignored'; list flags it; link fixes it; the engine follows at once", async () => {
    const context = { config: () => loadCimdConfig(service.db), fetcher: { fetchDocument: async () => [] } };
    const unlinked = await cimd("unlink", "claude-code");
    assert.equal(unlinked.code, 0, unlinked.stderr);
    assert.match(unlinked.stdout, /CIMD is now ignored for this client/);
    const flagged = await entry("claude-code");
    assert.equal(flagged.linked, false);
    assert.deepEqual(flagged.problems, [
      "CIMD is ignored: link the profile with `imaging cimd link claude-code`",
    ]);
    const text = await cimd("list");
    assert.match(
      text.stdout,
      /^claude-code +https:\/\/claude\.ai\/oauth\/claude-code-client-metadata +https +no +yes +1$/m,
    );
    assert.match(
      text.stdout,
      /^ {2}problem: CIMD is ignored: link the profile with `imaging cimd link claude-code`$/m,
    );

    const refused = await resolveCimdClient(CLAUDE_CODE_ID, context);
    assert.equal(refused.ok, false);
    assert.match(refused.ok ? "" : refused.description, /^Policy exists but CIMD is ignored/);

    const linked = await cimd("link", "claude-code");
    assert.equal(linked.code, 0, linked.stderr);
    assert.equal((await entry("claude-code")).linked, true);
    assert.deepEqual((await entry("claude-code")).problems, []);
    const afterLink = await resolveCimdClient(CLAUDE_CODE_ID, context);
    assert.equal(
      afterLink.ok ? "" : afterLink.rule,
      "document-json",
      "policy and profile pass, the fake document does not",
    );
  });

  it("list flags a client domain missing from the profile's or the policy's list", async () => {
    assert.equal(
      (await cimd("set", "vscode", "--trusted-domains", "localhost,127.0.0.1,code.visualstudio.com")).code,
      0,
    );
    const profileMissing = await entry("vscode");
    assert.equal(profileMissing.problems.length, 1);
    assert.match(
      profileMissing.problems[0] ?? "",
      /client domain vscode\.dev is missing from the profile's trusted domains/,
    );

    assert.equal(
      (
        await cimd(
          "set",
          "vscode",
          "--trusted-domains",
          "vscode.dev,code.visualstudio.com,localhost,127.0.0.1",
          "--policy-domains",
          "code.visualstudio.com",
        )
      ).code,
      0,
    );
    const policyMissing = await entry("vscode");
    assert.equal(policyMissing.problems.length, 1);
    assert.match(
      policyMissing.problems[0] ?? "",
      /client domain vscode\.dev is missing from the policy's trusted domains/,
    );

    assert.equal((await cimd("set", "vscode", "--policy-domains", "vscode.dev")).code, 0);
    assert.deepEqual((await entry("vscode")).problems, []);
  });

  it("adds the HTTP variant with --http, notes it, and flags http without Allow http scheme", async () => {
    const refused = await cimd("add", "dev", "--client-id", "http://dev.example.test/oauth/client.json");
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--client-id: client_id must use https, or add --http/);

    const added = await cimd(
      "add",
      "dev",
      "--client-id",
      "http://dev.example.test/oauth/client.json",
      "--http",
    );
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /HTTP variant, development only/);
    const show = JSON.parse((await cimd("show", "dev", "--json")).stdout);
    assert.equal(show.profile.allowHttpScheme, true);
    assert.deepEqual(show.profile.trustedDomains, ["dev.example.test", "localhost", "127.0.0.1"]);
    assert.deepEqual(show.policy.uriSchemes, ["https", "http"]);
    assert.deepEqual(show.policy.trustedDomains, ["dev.example.test"]);
    const dev = await entry("dev");
    assert.equal(dev.variant, "http");
    assert.deepEqual(dev.problems, []);
    assert.ok(dev.notes.some((n) => /HTTP variant .*for development or test only/.test(n)));

    assert.equal((await cimd("set", "dev", "--https")).code, 0);
    const wrong = await entry("dev");
    assert.ok(
      wrong.problems.some((p) => /client_id uses http but Allow http scheme is OFF in the profile/.test(p)),
      wrong.problems.join("\n"),
    );
    assert.ok(
      wrong.problems.some((p) => /policy's URI schemes are https/.test(p)),
      wrong.problems.join("\n"),
    );
  });

  const embedded = (): CimdTarget => ({ cimd, unreachable: cimd });
  unknownClientRefusals(embedded);
  inputRefusals(embedded);

  it("refuses a name taken with exit code 1", async () => {
    const result = await cimd("add", "claude-code", "--preset", "claude-code");
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /^imaging: CIMD client claude-code already exists: change it with imaging cimd set claude-code/,
    );
    assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
  });

  it("remove deletes the profile and the policy; the service's open store sees it", async () => {
    const result = await cimd("remove", "dev");
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), "Removed cimd-profile-dev and cimd-policy-dev");
    const config = await loadCimdConfig(service.db);
    assert.deepEqual(
      config.profiles.map((p) => p.name),
      ["cimd-profile-claude-code", "cimd-profile-vscode"],
    );
    assert.deepEqual(
      (await listJson()).map((r) => r.client),
      ["claude-code", "vscode"],
    );
    const json = await cimd("remove", "vscode", "--json");
    assert.deepEqual(JSON.parse(json.stdout), { client: "vscode", removed: true });
  });
});

/**
 * `imaging cimd ...` with IDP=keycloak: the commands write Keycloak's client policies (Realm Settings >
 * Client Policies) through the Admin REST API. Everything is checked the way an administrator would:
 * the JSON Keycloak returns, what the console's other entries became, and whether Keycloak lets an AI
 * client's client_id in.
 */

const VSCODE_ID = "https://vscode.dev/oauth/client-metadata.json";

/** What an administrator made in the console before the platform came: left alone by every command. */
const FOREIGN_PROFILES: ClientProfileRepresentation[] = [
  {
    name: "foreign-profile-a",
    description: "PKCE for confidential clients (made by hand)",
    executors: [{ executor: "pkce-enforcer", configuration: { "auto-configure": false } }],
  },
  {
    name: "foreign-profile-b",
    description: "made by hand",
    executors: [{ executor: "confidential-client", configuration: {} }],
  },
];
const FOREIGN_POLICIES: ClientPolicyRepresentation[] = [
  {
    name: "foreign-policy-a",
    description: "made by hand",
    enabled: true,
    conditions: [{ condition: "client-access-type", configuration: { type: ["confidential"] } }],
    profiles: ["foreign-profile-a"],
  },
  {
    name: "foreign-policy-b",
    description: "made by hand, switched off",
    enabled: false,
    conditions: [{ condition: "any-client", configuration: {} }],
    profiles: ["foreign-profile-b"],
  },
];
/** A CIMD pair made in the console: no client_id recorded, booleans as strings, profile not linked. */
const CONSOLE_PROFILE: ClientProfileRepresentation = {
  name: "cimd-profile-manual",
  description: "made in the console",
  executors: [
    {
      executor: "client-id-metadata-document",
      configuration: {
        "cimd-allow-http-scheme": "false",
        "cimd-allow-permitted-domains": ["manual.example", "localhost", "127.0.0.1"],
        "cimd-restrict-same-domain": "false",
        "only-allow-confidential-client": "false",
      },
    },
  ],
};
const CONSOLE_POLICY: ClientPolicyRepresentation = {
  name: "cimd-policy-manual",
  description: "made in the console",
  enabled: true,
  conditions: [
    {
      condition: "client-id-uri",
      configuration: {
        "client-id-uri-scheme": ["https"],
        "client-id-uri-allow-permitted-domains": ["manual.example"],
      },
    },
  ],
  profiles: [],
};

interface ListedClient {
  client: string;
  clientId: string;
  variant: string;
  linked: boolean;
  enabled: boolean;
  problems: string[];
  notes: string[];
}

describe("imaging cimd with IDP=keycloak", () => {
  let keycloak: TestKeycloak;
  let admin: KeycloakAdmin;
  let realm: string;
  let dataDir: string;
  let env: Record<string, string>;
  let globalsBefore: { profiles: unknown; policies: unknown };

  const cimd = (...args: string[]) => runCli(["cimd", ...args], env);
  const ok = async (...args: string[]) => {
    const result = await cimd(...args);
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
    return result;
  };
  const profiles = async () =>
    (await admin.clientPolicies.listProfiles({ realm, includeGlobalProfiles: false })).profiles ?? [];
  const policies = async () =>
    (await admin.clientPolicies.listPolicies({ realm, includeGlobalPolicies: false })).policies ?? [];
  const profile = async (name: string) => (await profiles()).find((p) => p.name === name);
  const policy = async (name: string) => (await policies()).find((p) => p.name === name);
  const listed = async () => JSON.parse((await ok("list", "--json")).stdout) as ListedClient[];
  const entry = async (client: string) => {
    const found = (await listed()).find((r) => r.client === client);
    assert.ok(found, `${client} listed`);
    return found;
  };
  const names = (list: { name?: string }[]) => list.map((e) => e.name);

  before(async () => {
    keycloak = await useKeycloak();
    realm = uniqueRealm("cimd-cli");
    admin = await connectTestAdmin(keycloak, realm);
    await admin.realms.create({ realm, enabled: true });
    await admin.clientPolicies.createProfiles({
      realm,
      profiles: [FOREIGN_PROFILES[0], CONSOLE_PROFILE, FOREIGN_PROFILES[1]] as ClientProfileRepresentation[],
    });
    await admin.clientPolicies.updatePolicy({
      realm,
      policies: [FOREIGN_POLICIES[0], CONSOLE_POLICY, FOREIGN_POLICIES[1]] as ClientPolicyRepresentation[],
    });
    const [p, q] = await Promise.all([
      admin.clientPolicies.listProfiles({ realm, includeGlobalProfiles: true }),
      admin.clientPolicies.listPolicies({ realm, includeGlobalPolicies: true }),
    ]);
    globalsBefore = { profiles: p.globalProfiles, policies: q.globalPolicies };
    assert.ok((p.globalProfiles ?? []).length > 0, "Keycloak has built-in global profiles");
    dataDir = mkdtempSync(join(tmpdir(), "imaging-kc-cimd-"));
    env = keycloakEnv(keycloak, realm, { PUBLIC_URL: "http://127.0.0.1:8090", IMAGING_DATA_DIR: dataDir });
  });
  after(async () => {
    await admin?.realms.del({ realm }).catch(() => undefined);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  // After every command: the console's own entries are exactly as made, in the same order.
  afterEach(async () => {
    const foreignProfiles = (await profiles()).filter((p) => p.name?.startsWith("foreign-"));
    const foreignPolicies = (await policies()).filter((p) => p.name?.startsWith("foreign-"));
    assert.deepEqual(foreignProfiles, FOREIGN_PROFILES);
    assert.deepEqual(foreignPolicies, FOREIGN_POLICIES);
  });

  describe("add", () => {
    it("--preset claude-code writes the HTTPS variant's keys and values, linked, after the existing entries", async () => {
      const result = await ok("add", "claude-code", "--preset", "claude-code");
      assert.match(
        result.stdout,
        /^Created cimd-profile-claude-code and cimd-policy-claude-code \(HTTPS variant\), linked, for client_id https:\/\/claude\.ai\/oauth\/claude-code-client-metadata$/m,
      );
      assert.doesNotMatch(result.stdout, /problem:/);

      const written = await profile("cimd-profile-claude-code");
      assert.deepEqual(written?.executors, [
        {
          executor: "client-id-metadata-document",
          configuration: {
            "cimd-allow-http-scheme": false,
            "cimd-allow-permitted-domains": ["claude.ai", "localhost", "127.0.0.1"],
            "cimd-restrict-same-domain": false,
            "only-allow-confidential-client": false,
          },
        },
      ]);
      assert.match(written?.description ?? "", new RegExp(`(^|\\s)client_id=${CLAUDE_CODE_ID}(\\s|$)`));
      const selection = await policy("cimd-policy-claude-code");
      assert.equal(selection?.enabled, true);
      assert.deepEqual(selection?.profiles, ["cimd-profile-claude-code"]);
      assert.deepEqual(selection?.conditions, [
        {
          condition: "client-id-uri",
          configuration: {
            "client-id-uri-scheme": ["https"],
            "client-id-uri-allow-permitted-domains": ["claude.ai"],
          },
        },
      ]);
      assert.deepEqual(names(await profiles()), [
        "foreign-profile-a",
        "cimd-profile-manual",
        "foreign-profile-b",
        "cimd-profile-claude-code",
      ]);
      assert.deepEqual(names(await policies()), [
        "foreign-policy-a",
        "cimd-policy-manual",
        "foreign-policy-b",
        "cimd-policy-claude-code",
      ]);
    });

    it("--preset vscode --http writes the HTTP variant: Allow http scheme ON, URI schemes https and http", async () => {
      const result = await ok("add", "vscode", "--preset", "vscode", "--http", "--json");
      const body = JSON.parse(result.stdout);
      assert.equal(body.clientId, VSCODE_ID);
      assert.deepEqual(body.problems, []);
      assert.deepEqual((await profile("cimd-profile-vscode"))?.executors, [
        {
          executor: "client-id-metadata-document",
          configuration: {
            "cimd-allow-http-scheme": true,
            "cimd-allow-permitted-domains": ["vscode.dev", "code.visualstudio.com", "localhost", "127.0.0.1"],
            "cimd-restrict-same-domain": false,
            "only-allow-confidential-client": false,
          },
        },
      ]);
      const selection = await policy("cimd-policy-vscode");
      assert.deepEqual(selection?.conditions?.[0]?.configuration, {
        "client-id-uri-scheme": ["https", "http"],
        "client-id-uri-allow-permitted-domains": ["vscode.dev"],
      });
      assert.deepEqual(selection?.profiles, ["cimd-profile-vscode"]);
    });

    it("show --json prints the profile and policy as Keycloak holds them", async () => {
      const result = await ok("show", "claude-code", "--json");
      assert.equal(result.stdout, `${JSON.stringify(CLAUDE_CODE_SHOWN, null, 2)}\n`);
      const text = await ok("show", "vscode");
      assert.match(text.stdout, /^ {2}Allow http scheme +ON$/m);
      assert.match(text.stdout, /^ {2}URI scheme +https, http$/m);
    });

    it("refuses a name taken in Keycloak (by imaging or by hand) with exit code 1, changing nothing", async () => {
      const before = { profiles: await profiles(), policies: await policies() };
      for (const [client, preset] of [
        ["claude-code", "claude-code"],
        ["manual", "vscode"],
      ] as const) {
        const result = await cimd("add", client, "--preset", preset);
        assert.equal(result.code, 1, result.stderr);
        assert.equal(
          result.stderr.trim(),
          `imaging: CIMD client ${client} already exists in Keycloak realm ${realm}: change it with imaging cimd set ${client}, or run imaging cimd remove ${client} first`,
        );
      }
      assert.deepEqual({ profiles: await profiles(), policies: await policies() }, before);
    });
  });

  describe("list", () => {
    it("lists imaging's clients and the pair made in the console, diagnosed", async () => {
      const rows = await listed();
      assert.deepEqual(
        rows.map((r) => [r.client, r.clientId, r.variant, r.linked, r.enabled]),
        [
          ["claude-code", CLAUDE_CODE_ID, "https", true, true],
          ["manual", "", "https", false, true],
          ["vscode", VSCODE_ID, "http", true, true],
        ],
      );
      const manual = rows.find((r) => r.client === "manual");
      assert.deepEqual(manual?.problems, [
        "CIMD is ignored: link the profile with `imaging cimd link manual`",
      ]);
      assert.match(manual?.notes[0] ?? "", /^no client_id recorded \(made outside imaging cimd\)/);
      const text = await ok("list");
      assert.match(text.stdout, /^manual +\(not recorded\) +https +no +yes +1$/m);
      assert.match(
        text.stdout,
        /^ {2}problem: CIMD is ignored: link the profile with `imaging cimd link manual`$/m,
      );
    });
  });

  describe("what Keycloak enforces", () => {
    let documents: Server;
    let clientId: string;
    let port: number;
    before(async () => {
      documents = createServer((_request, response) => {
        response.setHeader("content-type", "application/json");
        response.end(
          JSON.stringify({
            client_id: clientId,
            client_name: "Dev AI client",
            redirect_uris: [`http://127.0.0.1:${port}/callback`],
            token_endpoint_auth_method: "none",
            grant_types: ["authorization_code"],
            response_types: ["code"],
          }),
        );
      });
      await new Promise<void>((resolve) => documents.listen(0, "127.0.0.1", resolve));
      port = (documents.address() as { port: number }).port;
      clientId = `http://127.0.0.1:${port}/oauth/client-metadata.json`;
    });
    after(() => documents?.close());

    /** The authorization request an AI client sends: Keycloak's sign-in form, or its error page. */
    const authorize = async () => {
      const url = new URL(`${keycloak.url}/realms/${realm}/protocol/openid-connect/auth`);
      url.search = new URLSearchParams({
        client_id: clientId,
        redirect_uri: `http://127.0.0.1:${port}/callback`,
        response_type: "code",
        scope: "openid",
        state: "s",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
      }).toString();
      const response = await fetch(url, { redirect: "manual" });
      return { status: response.status, html: await response.text() };
    };

    it("lets the client_id in when linked, refuses it unlinked and after remove (no cached client left)", async () => {
      await ok("add", "dev", "--client-id", clientId, "--http");
      const signIn = await authorize();
      assert.equal(signIn.status, 200, signIn.html);
      assert.match(signIn.html, /name="username"/);

      await ok("unlink", "dev");
      const ignored = await authorize();
      assert.equal(ignored.status, 400);
      assert.match(ignored.html, /Client not found/);

      await ok("link", "dev");
      assert.equal((await authorize()).status, 200);

      const removed = await ok("remove", "dev");
      assert.equal(removed.stdout.trim(), "Removed cimd-profile-dev and cimd-policy-dev");
      assert.equal(await profile("cimd-profile-dev"), undefined);
      assert.equal(await policy("cimd-policy-dev"), undefined);
      assert.match((await authorize()).html, /Client not found/);
    });
  });

  describe("set, link, unlink", () => {
    it("unlink empties the policy's associated profiles; link restores them; nothing else moves", async () => {
      const unlinked = await ok("unlink", "claude-code");
      assert.match(unlinked.stdout, /CIMD is now ignored for this client/);
      assert.deepEqual((await policy("cimd-policy-claude-code"))?.profiles, []);
      assert.equal((await entry("claude-code")).linked, false);

      await ok("link", "claude-code");
      assert.deepEqual((await policy("cimd-policy-claude-code"))?.profiles, ["cimd-profile-claude-code"]);
      assert.deepEqual((await entry("claude-code")).problems, []);
      assert.deepEqual(names(await policies()), [
        "foreign-policy-a",
        "cimd-policy-manual",
        "foreign-policy-b",
        "cimd-policy-claude-code",
        "cimd-policy-vscode",
      ]);
    });

    it("changes only the CIMD executor and condition, keeping what an administrator added to them", async () => {
      // An administrator adds an executor and a newer option to the profile, a condition to the policy.
      const current = await profiles();
      await admin.clientPolicies.createProfiles({
        realm,
        profiles: current.map((p) =>
          p.name === "cimd-profile-claude-code"
            ? {
                ...p,
                executors: [
                  {
                    ...p.executors?.[0],
                    configuration: {
                      ...(p.executors?.[0]?.configuration ?? {}),
                      "cimd-required-properties": ["client_name"],
                    },
                  },
                  { executor: "pkce-enforcer", configuration: { "auto-configure": true } },
                ],
              }
            : p,
        ),
      });
      const currentPolicies = await policies();
      await admin.clientPolicies.updatePolicy({
        realm,
        policies: currentPolicies.map((p) =>
          p.name === "cimd-policy-claude-code"
            ? {
                ...p,
                conditions: [
                  ...(p.conditions ?? []),
                  { condition: "client-access-type", configuration: { type: ["public"] } },
                ],
              }
            : p,
        ),
      });

      await ok(
        "set",
        "claude-code",
        "--trusted-domains",
        "claude.ai,localhost,127.0.0.1,anthropic.com",
        "--policy-domains",
        "claude.ai,anthropic.com",
        "--restrict-same-domain",
        "on",
        "--disable",
      );
      const written = await profile("cimd-profile-claude-code");
      assert.deepEqual(written?.executors, [
        {
          executor: "client-id-metadata-document",
          configuration: {
            "cimd-allow-http-scheme": false,
            "cimd-allow-permitted-domains": ["claude.ai", "localhost", "127.0.0.1", "anthropic.com"],
            "cimd-restrict-same-domain": true,
            "only-allow-confidential-client": false,
            "cimd-required-properties": ["client_name"],
          },
        },
        { executor: "pkce-enforcer", configuration: { "auto-configure": true } },
      ]);
      const selection = await policy("cimd-policy-claude-code");
      assert.equal(selection?.enabled, false);
      assert.deepEqual(selection?.conditions, [
        {
          condition: "client-id-uri",
          configuration: {
            "client-id-uri-scheme": ["https"],
            "client-id-uri-allow-permitted-domains": ["claude.ai", "anthropic.com"],
          },
        },
        { condition: "client-access-type", configuration: { type: ["public"] } },
      ]);
      const row = await entry("claude-code");
      assert.equal(row.enabled, false);
      assert.ok(
        row.problems.some((p) => /is disabled: enable it with imaging cimd set claude-code --enable/.test(p)),
      );

      await ok("set", "claude-code", "--enable", "--restrict-same-domain", "off");
      assert.deepEqual((await entry("claude-code")).problems, []);
    });

    it("--http / --https switch the variant in both entries", async () => {
      await ok("set", "vscode", "--https");
      const https = await profile("cimd-profile-vscode");
      assert.equal(https?.executors?.[0]?.configuration?.["cimd-allow-http-scheme" as never], false);
      assert.deepEqual(
        (await policy("cimd-policy-vscode"))?.conditions?.[0]?.configuration?.[
          "client-id-uri-scheme" as never
        ],
        ["https"],
      );
      assert.equal((await entry("vscode")).variant, "https");
    });

    it("records a client_id for the console-made pair and links it, in place", async () => {
      const clientId = "https://manual.example/oauth/client-metadata.json";
      const before = (await profile("cimd-profile-manual"))?.executors;
      await ok("set", "manual", "--client-id", clientId);
      const marked = await profile("cimd-profile-manual");
      assert.match(
        marked?.description ?? "",
        /^made in the console client_id=https:\/\/manual\.example\/oauth\/client-metadata\.json /,
      );
      // Only the description changed: the console's configuration stays as it was written.
      assert.deepEqual(marked?.executors, before);
      await ok("link", "manual");
      const row = await entry("manual");
      assert.equal(row.clientId, clientId);
      assert.deepEqual(row.problems, []);
      assert.deepEqual(names(await profiles()).slice(0, 3), [
        "foreign-profile-a",
        "cimd-profile-manual",
        "foreign-profile-b",
      ]);
      assert.deepEqual(names(await policies()).slice(0, 3), [
        "foreign-policy-a",
        "cimd-policy-manual",
        "foreign-policy-b",
      ]);
    });
  });

  describe("remove", () => {
    it("refuses while another policy names the client's profile, then removes policy and profile", async () => {
      const current = await policies();
      await admin.clientPolicies.updatePolicy({
        realm,
        policies: [
          ...current,
          {
            name: "hand-made-user-of-vscode",
            enabled: false,
            conditions: [{ condition: "any-client", configuration: {} }],
            profiles: ["cimd-profile-vscode"],
          },
        ],
      });
      const refused = await cimd("remove", "vscode");
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        /^imaging: client profile cimd-profile-vscode is also an associated profile of policy hand-made-user-of-vscode in Keycloak realm \S+: remove it there first\n$/,
      );
      assert.ok(await profile("cimd-profile-vscode"));
      assert.ok(await policy("cimd-policy-vscode"));
      await admin.clientPolicies.updatePolicy({ realm, policies: current });

      const removed = await ok("remove", "vscode", "--json");
      assert.deepEqual(JSON.parse(removed.stdout), { client: "vscode", removed: true });
      await ok("remove", "manual");
      assert.deepEqual(names(await profiles()), [
        "foreign-profile-a",
        "foreign-profile-b",
        "cimd-profile-claude-code",
      ]);
      assert.deepEqual(names(await policies()), [
        "foreign-policy-a",
        "foreign-policy-b",
        "cimd-policy-claude-code",
      ]);
      assert.deepEqual(
        (await listed()).map((r) => r.client),
        ["claude-code"],
      );
    });

    it("never writes Keycloak's global profiles and policies into the realm", async () => {
      const [p, q] = await Promise.all([
        admin.clientPolicies.listProfiles({ realm, includeGlobalProfiles: true }),
        admin.clientPolicies.listPolicies({ realm, includeGlobalPolicies: true }),
      ]);
      assert.deepEqual({ profiles: p.globalProfiles, policies: q.globalPolicies }, globalsBefore);
      const globalNames = new Set((p.globalProfiles ?? []).map((g) => g.name));
      assert.deepEqual(
        (p.profiles ?? []).filter((r) => globalNames.has(r.name)),
        [],
        "no global profile copied into the realm's own list",
      );
      const globalPolicyNames = new Set((q.globalPolicies ?? []).map((g) => g.name));
      assert.deepEqual(
        (q.policies ?? []).filter((r) => globalPolicyNames.has(r.name)),
        [],
      );
    });
  });

  describe("refusals", () => {
    const keycloakTarget = (): CimdTarget => ({
      cimd,
      unreachable: async (...args: string[]) =>
        runCli(["cimd", ...args], { ...env, KEYCLOAK_URL: `http://127.0.0.1:${await freePort()}/auth` }),
    });
    unknownClientRefusals(keycloakTarget);
    inputRefusals(keycloakTarget);

    it("says when Keycloak cannot be reached, refuses the administrator or lacks the realm", async () => {
      const cases: [Record<string, string>, RegExp][] = [
        [
          { KEYCLOAK_URL: `http://127.0.0.1:${await freePort()}/auth` },
          /^imaging: Cannot reach Keycloak at http:\/\/127\.0\.0\.1:\d+\/auth \(KEYCLOAK_URL\): .+\n$/,
        ],
        [
          { KEYCLOAK_ADMIN_PASSWORD: "not-the-password" },
          /^imaging: Keycloak refused the administrator kc-admin \(KEYCLOAK_ADMIN_USERNAME\/PASSWORD\) in realm master: check the credentials and KEYCLOAK_ADMIN_REALM\n$/,
        ],
        [
          { KEYCLOAK_REALM: "no-such-realm" },
          /^imaging: Keycloak at \S+ has no realm no-such-realm \(KEYCLOAK_REALM/,
        ],
      ];
      for (const [change, message] of cases) {
        for (const args of [["list"], ["add", "y", "--preset", "vscode"]]) {
          const result = await runCli(["cimd", ...args], { ...env, ...change });
          assert.equal(result.code, 1, result.stderr);
          assert.match(result.stderr, message);
          assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
        }
      }
    });
  });
});
