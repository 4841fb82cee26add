import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { severityRank } from "../../../src/contracts/platform.ts";
import { effectiveGateParameters, mergeGateParameters } from "../../../src/domain/gate-kinds.ts";

describe("gate rule parameters", () => {
  it("merges known keys, normalizing severities to upper case", () => {
    assert.deepEqual(
      mergeGateParameters("no-referenced-severe-cve", { minSeverity: "HIGH" }, { minSeverity: "low" }),
      {
        ok: true,
        value: { minSeverity: "LOW", packages: "production" },
      },
    );
    assert.deepEqual(
      mergeGateParameters("max-releases-behind-safest", { maxReleases: 10 }, { maxReleases: 0 }),
      {
        ok: true,
        value: { maxReleases: 0, packages: "production" },
      },
    );
    assert.deepEqual(mergeGateParameters("max-releases-behind-safest", { maxReleases: 7 }, {}), {
      ok: true,
      value: { maxReleases: 7, packages: "production" },
    });
    assert.deepEqual(mergeGateParameters("no-unfixable-vulnerability", {}, {}), {
      ok: true,
      value: { packages: "production" },
    });
    // Every kind counts production packages by default, all of them when asked.
    assert.deepEqual(mergeGateParameters("no-unfixable-vulnerability", {}, { packages: "all" }), {
      ok: true,
      value: { packages: "all" },
    });
  });

  it("refuses unknown keys and values of the wrong type, naming the key and the expected type", () => {
    const detail = (kind: string, changes: unknown) => {
      const result = mergeGateParameters(kind, {}, changes);
      assert.equal(result.ok, false);
      return result.ok ? "" : result.detail;
    };
    assert.match(
      detail("no-referenced-severe-cve", { minseverity: "HIGH" }),
      /Unknown parameter 'minseverity'.*'minSeverity'/,
    );
    assert.match(
      detail("no-unfixable-vulnerability", { maxReleases: 1 }),
      /Unknown parameter 'maxReleases' for rules of kind 'no-unfixable-vulnerability': expected 'packages'/,
    );
    assert.match(
      detail("no-referenced-severe-cve", { packages: "dev" }),
      /'packages' must be one of "production", "all", got "dev"/,
    );
    assert.match(
      detail("no-referenced-severe-cve", { minSeverity: null }),
      /'minSeverity' must be a string, one of .* got null/,
    );
    assert.match(detail("no-referenced-severe-cve", { minSeverity: ["HIGH"] }), /got an array/);
    assert.match(
      detail("max-releases-behind-safest", { maxReleases: 100_001 }),
      /integer from 0 to 100000, got 100001/,
    );
    assert.match(detail("max-releases-behind-safest", { maxReleases: true }), /got true/);
    assert.match(detail("max-releases-behind-safest", { maxReleases: { n: 1 } }), /got an object/);
    assert.match(detail("max-releases-behind-safest", "x"), /'parameters' must be a JSON object/);
    assert.match(detail("unheard-of", {}), /kind 'unheard-of'/);
    assert.match(detail("no-unfixable-vulnerability", { constructor: 1 }), /Unknown parameter 'constructor'/);
    assert.match(detail("no-referenced-severe-cve", { minSeverity: "x".repeat(100) }), /got "x{40}\.\.\."/);
  });

  it("reads stored parameters over the defaults, dropping what no longer qualifies", () => {
    assert.deepEqual(effectiveGateParameters("no-referenced-severe-cve", {}), {
      minSeverity: "HIGH",
      packages: "production",
    });
    assert.deepEqual(effectiveGateParameters("no-referenced-severe-cve", { minSeverity: "nope" }), {
      minSeverity: "HIGH",
      packages: "production",
    });
    assert.deepEqual(effectiveGateParameters("max-releases-behind-safest", { maxReleases: 3, extra: 1 }), {
      maxReleases: 3,
      packages: "production",
    });
    assert.deepEqual(effectiveGateParameters("max-releases-behind-safest", null), {
      maxReleases: 10,
      packages: "production",
    });
    assert.deepEqual(effectiveGateParameters("unheard-of", { a: 1 }), {});
  });

  it("ranks severities CRITICAL > HIGH > MEDIUM > LOW > anything else", () => {
    assert.deepEqual(["LOW", "critical", "UNKNOWN", "MEDIUM", "HIGH"].map(severityRank), [1, 4, 0, 2, 3]);
  });
});
