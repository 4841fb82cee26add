import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { resolveCimdClient } from "../../src/idp/cimd/resolve.ts";
import { loadCimdConfig } from "../../src/store/cimd.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { runCli } from "../support/cli.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

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
    const expected = {
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
    assert.equal(result.stdout, `${JSON.stringify(expected, null, 2)}\n`);
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

  it("refuses bad input with one readable line", async () => {
    const cases: [string[], number, RegExp][] = [
      [["add", "x", "--preset", "cursor"], 2, /--preset must be claude-code or vscode, got 'cursor'/],
      [["add", "x"], 2, /--client-id is required/],
      [["add", "x", "--client-id", "https://x.example/cimd.json?a=1"], 2, /must not contain a query string/],
      [["add", "x", "--client-id", "https://x.example"], 2, /must contain a path/],
      [
        ["add", "x", "--client-id", "https://x.example/c.json", "--trusted-domains", "https://x.example"],
        2,
        /must be a host name, not a URL/,
      ],
      [
        ["add", "x", "--client-id", "https://x.example/c.json", "--policy-domains", ""],
        2,
        /at least one domain/,
      ],
      [["add", "bad name", "--preset", "vscode"], 2, /client name 'bad name'/],
      [
        ["add", "claude-code", "--preset", "claude-code"],
        1,
        /CIMD client claude-code already exists: change it with imaging cimd set claude-code/,
      ],
      [["show", "nobody"], 1, /No CIMD client named nobody \(see: imaging cimd list\)/],
      [["link", "nobody"], 1, /No CIMD client named nobody/],
      [["remove", "nobody"], 1, /No CIMD client named nobody/],
      [["set", "vscode"], 2, /nothing to change/],
      [["set", "vscode", "--only-confidential", "maybe"], 2, /--only-confidential must be on or off/],
    ];
    for (const [args, code, message] of cases) {
      const result = await cimd(...args);
      assert.equal(result.code, code, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, message, args.join(" "));
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    }
    const both = await cimd("set", "vscode", "--http", "--https");
    assert.notEqual(both.code, 0);
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
