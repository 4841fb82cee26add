import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BODY_CHECK } from "../../../src/rest/body.ts";
import { gateRuleUpdateBody } from "../../../src/rest/gate-schemas.ts";
import {
  parseApplicationName,
  parseBoolean,
  parseEcosystem,
  parseGateRuleId,
  parsePackageName,
  parseSearchText,
  parseTypeId,
} from "../../../src/rest/params.ts";

const reason = (parsed: { ok: boolean; detail?: string }) => (parsed.ok ? "" : (parsed.detail ?? ""));

/** The gate rule update's declared check, as a verdict (the route renders a refusal as 400). */
function parseGateRuleUpdate(body: unknown) {
  try {
    return { ok: true, value: gateRuleUpdateBody[BODY_CHECK](body) };
  } catch (error) {
    return { ok: false, detail: (error as Error).message };
  }
}

describe("package, object and gate parameter rules", () => {
  it("application names refuse control characters (PostgreSQL refuses NUL in text)", () => {
    assert.deepEqual(parseApplicationName("payments-service"), { ok: true, value: "payments-service" });
    assert.match(reason(parseApplicationName("a\u0000b")), /must not contain control characters/);
    assert.match(reason(parseApplicationName("a\tb")), /must not contain control characters/);
  });

  it("vulnerable is true, false or absent", () => {
    assert.deepEqual(parseBoolean("true", "vulnerable"), { ok: true, value: true });
    assert.deepEqual(parseBoolean("false", "vulnerable"), { ok: true, value: false });
    assert.deepEqual(parseBoolean(undefined, "vulnerable"), { ok: true, value: undefined });
    assert.match(reason(parseBoolean("1", "vulnerable")), /'vulnerable' must be true or false, got '1'/);
    assert.match(reason(parseBoolean("TRUE", "vulnerable")), /got 'TRUE'/);
    assert.match(reason(parseBoolean(["true", "false"], "vulnerable")), /more than once/);
  });

  it("search text is 1 to 200 characters, required when the operation says so", () => {
    const q = (raw: unknown, required: boolean) =>
      parseSearchText(raw, { name: "q", required, what: "text" });
    assert.deepEqual(q("Util", true), { ok: true, value: "Util" });
    assert.deepEqual(q(" a b ", true), { ok: true, value: " a b " }, "taken as given");
    assert.deepEqual(q("x".repeat(200), true), { ok: true, value: "x".repeat(200) });
    assert.deepEqual(q(undefined, false), { ok: true, value: undefined });
    assert.deepEqual(q("", false), { ok: true, value: undefined });
    assert.match(reason(q(undefined, true)), /'q' is required: text, 1 to 200 characters/);
    assert.match(reason(q("", true)), /'q' is required/);
    assert.match(reason(q("x".repeat(201), true)), /at most 200 characters, got 201/);
    assert.match(reason(q("a\u0000", true)), /'q' contains control characters/);
  });

  it("ecosystem is npm or maven", () => {
    assert.deepEqual(parseEcosystem("maven"), { ok: true, value: "maven" });
    assert.deepEqual(parseEcosystem(undefined), { ok: true, value: undefined });
    assert.match(reason(parseEcosystem("Maven")), /must be npm or maven, got 'Maven'/);
  });

  it("package is a required name without control characters", () => {
    assert.deepEqual(parsePackageName("org.apache.logging.log4j:log4j-core"), {
      ok: true,
      value: "org.apache.logging.log4j:log4j-core",
    });
    assert.deepEqual(parsePackageName("@scope/pkg"), { ok: true, value: "@scope/pkg" });
    assert.match(reason(parsePackageName(undefined)), /'package' is required/);
    assert.match(reason(parsePackageName("  ")), /'package' is required/);
    assert.match(reason(parsePackageName("a\u0000b")), /control characters/);
    assert.match(reason(parsePackageName("p".repeat(513))), /longer than 512/);
  });

  it("type is an optional exact identifier up to 200 characters", () => {
    assert.deepEqual(parseTypeId("JV_METHOD"), { ok: true, value: "JV_METHOD" });
    assert.deepEqual(parseTypeId(undefined), { ok: true, value: undefined });
    assert.match(reason(parseTypeId("T".repeat(201))), /'type' must be at most 200/);
    assert.match(reason(parseTypeId("JS\n")), /control characters/);
  });

  it("gate rule ids are lower-case letters, digits and dashes", () => {
    assert.deepEqual(parseGateRuleId("no-referenced-severe-cve"), {
      ok: true,
      value: "no-referenced-severe-cve",
    });
    for (const bad of ["", "UPPER", "-lead", "a b", "a/b", "x".repeat(101)]) {
      assert.match(reason(parseGateRuleId(bad)), /is not a gate rule id/, bad);
    }
  });

  it("a rule update sets enabled and/or parameters and nothing else", () => {
    assert.deepEqual(parseGateRuleUpdate({ enabled: false }), { ok: true, value: { enabled: false } });
    assert.deepEqual(parseGateRuleUpdate({ parameters: { maxReleases: 3 }, enabled: true }), {
      ok: true,
      value: { enabled: true, parameters: { maxReleases: 3 } },
    });
    assert.match(reason(parseGateRuleUpdate(undefined)), /must be a JSON object/);
    assert.match(reason(parseGateRuleUpdate(null)), /must be a JSON object/);
    assert.match(reason(parseGateRuleUpdate("text")), /must be a JSON object/);
    assert.match(reason(parseGateRuleUpdate([])), /must be a JSON object/);
    assert.match(reason(parseGateRuleUpdate({})), /must set 'enabled', 'parameters' or both/);
    assert.match(
      reason(parseGateRuleUpdate({ enabled: 1 })),
      /'enabled' must be a boolean \(true or false\), got 1/,
    );
    assert.match(reason(parseGateRuleUpdate({ enabled: null })), /got null/);
    assert.match(
      reason(parseGateRuleUpdate({ parameters: "x" })),
      /'parameters' must be a JSON object, got "x"/,
    );
    assert.match(reason(parseGateRuleUpdate({ parameters: null })), /got null/);
    assert.match(reason(parseGateRuleUpdate({ enabled: true, id: "x" })), /Unknown property 'id'/);
  });
});
