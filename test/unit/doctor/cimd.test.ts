import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type CimdCheckContext,
  cimdClientChecks,
  noCimdClientCheck,
  requiredProfileDomains,
} from "../../../src/doctor/cimd.ts";
import type { CimdClientState } from "../../../src/idp/cimd/repository.ts";
import { CLAUDE_CODE_ID } from "../cimd/fixtures.ts";

const HTTP: CimdCheckContext = { idp: "embedded", realm: "imaging", http: true };
const HTTPS: CimdCheckContext = { ...HTTP, http: false };
const KEYCLOAK: CimdCheckContext = { idp: "keycloak", realm: "imaging", http: true };

/** Claude Code, HTTP variant, as `imaging cimd add claude-code --preset claude-code --http` makes it. */
function claude(): CimdClientState {
  return {
    client: {
      client: "claude-code",
      clientId: CLAUDE_CODE_ID,
      profile: "cimd-profile-claude-code",
      policy: "cimd-policy-claude-code",
      createdAt: "",
      updatedAt: "",
    },
    profile: {
      name: "cimd-profile-claude-code",
      executor: "client-id-metadata-document",
      allowHttpScheme: true,
      restrictSameDomain: false,
      onlyAllowConfidentialClient: false,
      trustedDomains: ["claude.ai", "localhost", "127.0.0.1"],
    },
    policy: {
      name: "cimd-policy-claude-code",
      condition: "client-id-uri",
      uriSchemes: ["https", "http"],
      trustedDomains: ["claude.ai"],
      profiles: ["cimd-profile-claude-code"],
      enabled: true,
    },
  };
}
const KNOWN = ["cimd-profile-claude-code"];

function verdicts(state: CimdClientState, context = HTTP): Record<string, string> {
  return Object.fromEntries(
    cimdClientChecks(state, KNOWN, context).map((c) => [c.id.replace(/:claude-code$/, ""), c.verdict]),
  );
}
function only(state: CimdClientState, id: string, context = HTTP) {
  const checks = cimdClientChecks(state, KNOWN, context);
  const failing = checks.filter((c) => c.verdict !== "pass");
  assert.deepEqual(
    failing.map((c) => c.id),
    [`${id}:claude-code`],
    failing.map((c) => c.detail).join("\n"),
  );
  return failing[0] as (typeof checks)[number];
}

describe("per-client CIMD checks", () => {
  it("pass for the preset, HTTP variant on an http deployment", () => {
    assert.deepEqual(Object.values(verdicts(claude())), Array(7).fill("pass"));
  });

  it("cimd-linked fails when the profile is not associated: Policy exists but CIMD is ignored", () => {
    const state = claude();
    (state.policy as { profiles: string[] }).profiles = [];
    const check = only(state, "cimd-linked");
    assert.match(check.detail, /^Policy exists but CIMD is ignored/);
    assert.equal(check.fix, "Run `imaging cimd link claude-code`.");
  });

  it("cimd-linked names Keycloak's console in Keycloak mode", () => {
    const state = claude();
    (state.policy as { profiles: string[] }).profiles = [];
    const check = only(state, "cimd-linked", KEYCLOAK);
    assert.equal(
      check.fix,
      "Run `imaging cimd link claude-code` (in Keycloak's console, realm imaging: Realm Settings > Client Policies > Policies > cimd-policy-claude-code > Associated client profiles: add cimd-profile-claude-code).",
    );
  });

  it("cimd-policy-domains fails when the client's domain is not in the policy's list", () => {
    const state = claude();
    (state.policy as { trustedDomains: string[] }).trustedDomains = ["localhost"];
    const check = only(state, "cimd-policy-domains");
    assert.equal(check.fix, "Run `imaging cimd set claude-code --policy-domains localhost,claude.ai`.");
  });

  it("cimd-profile-domains fails without localhost and 127.0.0.1, or without the client's domain", () => {
    const state = claude();
    (state.profile as { trustedDomains: string[] }).trustedDomains = ["claude.ai"];
    const check = only(state, "cimd-profile-domains");
    assert.match(check.detail, /^localhost, 127\.0\.0\.1 are missing .*loopback callback/);
    const other = claude();
    (other.profile as { trustedDomains: string[] }).trustedDomains = [
      "*.claude.ai",
      "localhost",
      "127.0.0.1",
    ];
    assert.equal(verdicts(other)["cimd-profile-domains"], "pass", "a wildcard covers the domain itself");
  });

  it("requires a known client's extra domains (VS Code's logo host)", () => {
    assert.deepEqual(requiredProfileDomains("https://vscode.dev/oauth/client-metadata.json"), [
      "vscode.dev",
      "code.visualstudio.com",
      "localhost",
      "127.0.0.1",
    ]);
  });

  it("cimd-http-scheme passes the HTTPS variant over http: an https client_id needs no http scheme", () => {
    const state = claude();
    (state.profile as { allowHttpScheme: boolean }).allowHttpScheme = false;
    (state.policy as { uriSchemes: string[] }).uriSchemes = ["https"];
    for (const context of [HTTP, HTTPS, KEYCLOAK]) {
      const check = cimdClientChecks(state, KNOWN, context).find(
        (c) => c.id === "cimd-http-scheme:claude-code",
      );
      assert.equal(check?.verdict, "pass", `${JSON.stringify(context)}: ${check?.detail}`);
    }
  });

  it("cimd-http-scheme fails for an http client_id with Allow http scheme OFF, warns with it ON over https", () => {
    const state = claude();
    (state.client as { clientId: string }).clientId = "http://dev.example.org/oauth/client-metadata.json";
    (state.profile as { allowHttpScheme: boolean }).allowHttpScheme = false;
    const check = cimdClientChecks(state, KNOWN, HTTP).find((c) => c.id === "cimd-http-scheme:claude-code");
    assert.equal(check?.verdict, "fail");
    assert.match(
      check?.detail ?? "",
      /client_id http:\/\/dev\.example\.org\/.* is http but Allow http scheme is OFF/,
    );
    assert.equal(check?.fix, "Run `imaging cimd set claude-code --http`.");
    const https = cimdClientChecks(claude(), KNOWN, HTTPS).find(
      (c) => c.id === "cimd-http-scheme:claude-code",
    );
    assert.equal(https?.verdict, "warn");
    assert.equal(https?.fix, "Run `imaging cimd set claude-code --https`.");
  });

  it("cimd-client-id fails on a query, a fragment or a missing path", () => {
    for (const clientId of [
      "https://claude.ai/oauth/metadata?x=1",
      "https://claude.ai/oauth/metadata#x",
      "https://claude.ai/",
    ]) {
      const state = claude();
      state.client.clientId = clientId;
      const check = cimdClientChecks(state, KNOWN, HTTP).find((c) => c.id === "cimd-client-id:claude-code");
      assert.equal(check?.verdict, "fail", clientId);
    }
  });

  it("cimd-profile fails when the profile is missing; the checks on it do not apply", () => {
    const state = claude();
    state.profile = undefined;
    assert.deepEqual(verdicts(state), {
      "cimd-client-id": "pass",
      "cimd-profile": "fail",
      "cimd-linked": "n/a",
      "cimd-policy-domains": "pass",
      "cimd-profile-domains": "n/a",
      "cimd-http-scheme": "n/a",
      "cimd-profile-switches": "n/a",
    });
    const check = cimdClientChecks(state, [], HTTP)[1];
    assert.equal(
      check?.fix,
      "Run `imaging cimd remove claude-code` then `imaging cimd add claude-code --preset claude-code --http`.",
    );
  });

  it("cimd-profile fails for a disabled policy", () => {
    const state = claude();
    (state.policy as { enabled: boolean }).enabled = false;
    assert.equal(only(state, "cimd-profile").fix, "Run `imaging cimd set claude-code --enable`.");
  });

  it("cimd-profile-switches fails with Restrict same domain or Only Allow Confidential Client ON", () => {
    const state = claude();
    (state.profile as { onlyAllowConfidentialClient: boolean }).onlyAllowConfidentialClient = true;
    assert.match(only(state, "cimd-profile-switches").detail, /public AI clients are refused/);
  });

  it("warns when no client is configured, saying how to add one", () => {
    const check = noCimdClientCheck("the platform store");
    assert.equal(check.verdict, "warn");
    assert.match(check.fix ?? "", /`imaging cimd add claude-code --preset claude-code`/);
  });
});
