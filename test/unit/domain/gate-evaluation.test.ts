import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { evaluateGates, ruleFindings, statesAt } from "../../../src/domain/gate-evaluation.ts";
import type { GateRule } from "../../../src/domain/gate-kinds.ts";
import type { PackageInterval, PackageState } from "../../../src/store/gate-records.ts";

const rule = (kind: string, parameters: Record<string, unknown> = {}, enabled = true): GateRule => ({
  description: "",
  enabled,
  id: kind,
  kind,
  name: kind,
  parameters,
});

const pkg = (overrides: Partial<PackageState> & { name: string }): PackageState => ({
  packageId: overrides.name.length,
  versionId: overrides.name.length * 10,
  scope: null,
  version: "1.0.0",
  saferClosestVersion: "1.1.0",
  safestVersion: "1.1.0",
  releasesBehind: 1,
  referred: true,
  vulnerabilities: [],
  ...overrides,
});

describe("no-referenced-severe-cve", () => {
  const packages = [
    pkg({
      name: "a",
      vulnerabilities: [
        { cve: "CVE-1", severity: "CRITICAL" },
        { cve: "CVE-2", severity: "HIGH" },
        { cve: "CVE-3", severity: "MEDIUM" },
        { cve: "CVE-4", severity: "UNKNOWN" },
      ],
    }),
    pkg({ name: "b", referred: false, vulnerabilities: [{ cve: "CVE-5", severity: "CRITICAL" }] }),
  ];

  it("finds each CVE at or above minSeverity in referred packages only", () => {
    const findings = ruleFindings(rule("no-referenced-severe-cve", { minSeverity: "HIGH" }), packages);
    assert.deepEqual(
      findings.map((f) => [f.package, f.cve, f.severity]),
      [
        ["a", "CVE-1", "CRITICAL"],
        ["a", "CVE-2", "HIGH"],
      ],
    );
    assert.equal(
      findings[0]?.detail,
      "CVE-1 (CRITICAL) affects a 1.0.0, whose objects the application refers to.",
    );
  });

  it("follows the threshold, and falls back to HIGH when the stored one is invalid", () => {
    const at = (minSeverity: unknown) =>
      ruleFindings(rule("no-referenced-severe-cve", { minSeverity }), packages).map((f) => f.cve);
    assert.deepEqual(at("CRITICAL"), ["CVE-1"]);
    assert.deepEqual(at("LOW"), ["CVE-1", "CVE-2", "CVE-3"], "UNKNOWN severities rank below LOW");
    assert.deepEqual(at("bogus"), ["CVE-1", "CVE-2"]);
  });
});

describe("max-releases-behind-safest", () => {
  it("fails strictly above maxReleases and ignores packages without a safest version", () => {
    const packages = [
      pkg({ name: "ten", releasesBehind: 10, safestVersion: "2.0.0" }),
      pkg({ name: "eleven", releasesBehind: 11, safestVersion: "3.0.0" }),
      pkg({ name: "none", releasesBehind: null, safestVersion: null }),
    ];
    const findings = ruleFindings(rule("max-releases-behind-safest", { maxReleases: 10 }), packages);
    assert.deepEqual(
      findings.map((f) => [f.package, f.detail]),
      [["eleven", "eleven 1.0.0 is 11 releases behind its safest version 3.0.0, more than the 10 allowed."]],
    );
    assert.equal(ruleFindings(rule("max-releases-behind-safest", { maxReleases: 0 }), packages).length, 2);
    assert.equal(ruleFindings(rule("max-releases-behind-safest", {}), packages).length, 1, "default 10");
  });
});

describe("no-unfixable-vulnerability", () => {
  it("finds vulnerable packages without a safer version, with their worst severity", () => {
    const packages = [
      pkg({
        name: "stuck",
        saferClosestVersion: null,
        vulnerabilities: [
          { cve: "CVE-1", severity: "LOW" },
          { cve: "CVE-2", severity: "HIGH" },
        ],
      }),
      pkg({ name: "fixable", vulnerabilities: [{ cve: "CVE-3", severity: "CRITICAL" }] }),
      pkg({ name: "clean", saferClosestVersion: null }),
    ];
    assert.deepEqual(ruleFindings(rule("no-unfixable-vulnerability"), packages), [
      {
        detail: "stuck 1.0.0 is affected by CVE-1, CVE-2 and no upgrade is free of known vulnerabilities.",
        package: "stuck",
        severity: "HIGH",
        version: "1.0.0",
        versionId: 50,
      },
    ]);
  });
});

describe("evaluateGates", () => {
  const stuck = pkg({
    name: "stuck",
    saferClosestVersion: null,
    vulnerabilities: [{ cve: "CVE-1", severity: "LOW" }],
  });

  it("counts only enabled rules, ordered by id, and fails when one has a finding", () => {
    const rules = [
      rule("no-unfixable-vulnerability"),
      rule("max-releases-behind-safest", { maxReleases: 10 }),
      rule("no-referenced-severe-cve", { minSeverity: "HIGH" }, false),
    ];
    const result = evaluateGates(rules, [stuck]);
    assert.deepEqual(
      result.rules.map((r) => [r.id, r.passed, r.findings.length]),
      [
        ["max-releases-behind-safest", true, 0],
        ["no-unfixable-vulnerability", false, 1],
      ],
    );
    assert.equal(result.verdict, "fail");
  });

  it("passes with no enabled rule, and with no package", () => {
    assert.deepEqual(evaluateGates([rule("no-unfixable-vulnerability", {}, false)], [stuck]), {
      rules: [],
      verdict: "pass",
    });
    assert.equal(evaluateGates([rule("no-unfixable-vulnerability")], []).verdict, "pass");
  });

  it("ignores rules of an unknown kind (no findings)", () => {
    assert.equal(evaluateGates([rule("from-the-future")], [stuck]).verdict, "pass");
  });
});

describe("statesAt", () => {
  const interval = (name: string, fromSeq: number, toSeq: number): PackageInterval => {
    const { referred: _referred, ...state } = pkg({ name, versionId: name.charCodeAt(0) });
    return { ...state, fromSeq, toSeq };
  };

  it("keeps the rows valid in the analysis and marks packages whose references cover it", () => {
    const packages = [interval("a", 1, 3), interval("b", 2, 2_147_483_647), interval("c", 3, 4)];
    const references = [
      { versionId: "a".charCodeAt(0), fromSeq: 1, toSeq: 2 },
      { versionId: "b".charCodeAt(0), fromSeq: 3, toSeq: 5 },
    ];
    const at = (seq: number) => statesAt(seq, packages, references).map((p) => [p.name, p.referred]);
    assert.deepEqual(at(1), [["a", true]]);
    assert.deepEqual(at(2), [
      ["a", false],
      ["b", false],
    ]);
    assert.deepEqual(at(3), [
      ["b", true],
      ["c", false],
    ]);
    assert.deepEqual(at(5), [["b", false]]);
    assert.equal("fromSeq" in (statesAt(1, packages, references)[0] ?? {}), false);
  });
});
