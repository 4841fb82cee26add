import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { diagnoseCimdClient } from "../../../src/idp/cimd/diagnostics.ts";
import type { CimdPolicy, CimdProfile } from "../../../src/idp/cimd/model.ts";
import { CLAUDE_CODE_ID, presetConfig } from "./fixtures.ts";

function claude(): { profile: CimdProfile; policy: CimdPolicy } {
  const config = presetConfig("claude-code");
  return { profile: config.profiles[0] as CimdProfile, policy: config.policies[0] as CimdPolicy };
}
const client = { client: "claude-code", clientId: CLAUDE_CODE_ID };

describe("diagnoseCimdClient: the Errors table as list flags", () => {
  it("finds nothing wrong with the preset", () => {
    const { profile, policy } = claude();
    assert.deepEqual(diagnoseCimdClient(client, profile, policy), { problems: [], notes: [] });
  });

  it("flags a policy without its profile: CIMD is ignored", () => {
    const { profile, policy } = claude();
    policy.profiles = [];
    assert.deepEqual(diagnoseCimdClient(client, profile, policy).problems, [
      "CIMD is ignored: link the profile with `imaging cimd link claude-code`",
    ]);
  });

  it("flags the client domain missing from the profile's list", () => {
    const { profile, policy } = claude();
    profile.trustedDomains = ["localhost", "127.0.0.1"];
    const { problems } = diagnoseCimdClient(client, profile, policy);
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? "", /client domain claude\.ai is missing from the profile's trusted domains/);
  });

  it("flags the client domain missing from the policy's list", () => {
    const { profile, policy } = claude();
    policy.trustedDomains = ["vscode.dev"];
    const { problems } = diagnoseCimdClient(client, profile, policy);
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? "", /client domain claude\.ai is missing from the policy's trusted domains/);
  });

  it("flags an http client_id without the HTTP variant, and notes the HTTP variant", () => {
    const { profile, policy } = claude();
    const dev = { client: "dev", clientId: "http://claude.ai/dev/client.json" };
    const problems = diagnoseCimdClient(dev, profile, policy).problems;
    assert.ok(
      problems.some((p) => /Allow http scheme is OFF/.test(p)),
      problems.join("\n"),
    );
    assert.ok(
      problems.some((p) => /policy's URI schemes are https/.test(p)),
      problems.join("\n"),
    );
    profile.allowHttpScheme = true;
    policy.uriSchemes = ["https", "http"];
    const fixed = diagnoseCimdClient(dev, profile, policy);
    assert.deepEqual(fixed.problems, []);
    assert.deepEqual(fixed.notes, [
      "HTTP variant (Allow http scheme ON, URI schemes https, http): for development or test only",
    ]);
  });

  it("flags disabled policies, empty lists, unknown profiles and missing loopback hosts", () => {
    const { profile, policy } = claude();
    policy.enabled = false;
    policy.profiles = [profile.name, "cimd-profile-gone"];
    profile.trustedDomains = ["claude.ai"];
    const { problems, notes } = diagnoseCimdClient(client, profile, policy);
    assert.ok(problems.some((p) => /disabled/.test(p)));
    assert.ok(problems.some((p) => /cimd-profile-gone, which does not exist/.test(p)));
    assert.ok(notes.some((n) => /loopback callback hosts localhost, 127\.0\.0\.1/.test(n)));
    policy.trustedDomains = [];
    assert.ok(diagnoseCimdClient(client, profile, policy).problems.some((p) => /never matches/.test(p)));
  });
});
