import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compareVersions, type Ecosystem, isAffected } from "../../../src/domain/versions/index.ts";
import { type OsvEvent, spansOfOsvRange } from "../../../src/domain/versions/osv-range.ts";

/**
 * The OSV schema's evaluation pseudocode, transcribed literally ("Evaluation" in ossf/osv-schema):
 * the oracle the stored spans must agree with on every version.
 */
function osvIncludes(ecosystem: Ecosystem, v: string, events: readonly OsvEvent[]): boolean {
  const cmp = (a: string, b: string) => {
    if (a === "0" || b === "0") return a === b ? 0 : a === "0" ? -1 : 1;
    return compareVersions(ecosystem, a, b);
  };
  const limits = events.flatMap((e) => ("limit" in e ? [e.limit] : []));
  const beforeLimits =
    limits.length === 0 || limits.some((l) => l.includes("*") || compareVersions(ecosystem, v, l) < 0);
  if (!beforeLimits) return false;
  const versionOf = (e: OsvEvent) => Object.values(e)[0] as string;
  const sorted = events.filter((e) => !("limit" in e)).sort((a, b) => cmp(versionOf(a), versionOf(b)));
  let vulnerable = false;
  for (const e of sorted) {
    if ("introduced" in e && (e.introduced === "0" || compareVersions(ecosystem, v, e.introduced) >= 0))
      vulnerable = true;
    else if ("fixed" in e && compareVersions(ecosystem, v, e.fixed) >= 0) vulnerable = false;
    else if ("last_affected" in e && compareVersions(ecosystem, v, e.last_affected) > 0) vulnerable = false;
  }
  return vulnerable;
}

const NPM_VERSIONS = [
  "0.0.1",
  "0.9.0",
  "1.0.0-beta.1",
  "1.0.0",
  "1.0.1",
  "1.1.0",
  "1.2.0",
  "1.2.5",
  "1.3.0",
  "1.9.9",
  "2.0.0-rc.1",
  "2.0.0",
  "2.0.1",
  "2.1.0",
  "2.5.0",
  "3.0.0",
  "3.1.0",
  "3.2.5",
  "4.0.0",
  "9.9.9",
];
const MAVEN_VERSIONS = [
  "1.0",
  "2.0-beta9",
  "2.0",
  "2.3",
  "2.3.1",
  "2.3.2",
  "2.4",
  "2.11.0",
  "2.12.1",
  "2.12.2",
  "2.12.3",
  "2.13.0",
  "2.14.1",
  "2.15.0",
  "2.16.0",
  "2.17.1",
  "3.0.0-beta3",
  "3.0.0",
];

const CASES: { name: string; ecosystem: Ecosystem; events: OsvEvent[] }[] = [
  { name: "from the start", ecosystem: "npm", events: [{ introduced: "0" }] },
  { name: "introduced/fixed", ecosystem: "npm", events: [{ introduced: "1.0.0" }, { fixed: "1.2.0" }] },
  { name: "last_affected", ecosystem: "npm", events: [{ introduced: "0" }, { last_affected: "2.0.0" }] },
  {
    name: "several pairs in one range, out of order",
    ecosystem: "npm",
    events: [{ introduced: "3.0.0" }, { fixed: "3.2.5" }, { introduced: "1.0.0" }, { fixed: "1.0.2" }],
  },
  {
    name: "two introduced before one fix",
    ecosystem: "npm",
    events: [{ introduced: "1.0.0" }, { introduced: "1.2.0" }, { fixed: "2.0.0" }],
  },
  {
    name: "a fix without a later introduction, then reintroduced",
    ecosystem: "npm",
    events: [{ introduced: "0" }, { fixed: "1.0.0" }, { introduced: "2.0.0" }],
  },
  { name: "limit", ecosystem: "npm", events: [{ introduced: "1.0.0" }, { limit: "2.0.1" }] },
  {
    name: "several limits: below the highest",
    ecosystem: "npm",
    events: [{ introduced: "0" }, { limit: "1.1.0" }, { limit: "3.0.0" }, { fixed: "3.1.0" }],
  },
  { name: "limit '*' is infinity", ecosystem: "npm", events: [{ introduced: "2.0.0" }, { limit: "*" }] },
  {
    name: "last_affected then introduced at the same version",
    ecosystem: "npm",
    events: [{ introduced: "1.0.0" }, { last_affected: "2.0.0" }, { introduced: "2.0.0" }],
  },
  {
    name: "introduced and last_affected at one version",
    ecosystem: "npm",
    events: [{ introduced: "1.2.5" }, { last_affected: "1.2.5" }],
  },
  {
    name: "Log4Shell's three ranges in one",
    ecosystem: "maven",
    events: [
      { introduced: "2.13.0" },
      { fixed: "2.15.0" },
      { introduced: "0" },
      { fixed: "2.3.1" },
      { introduced: "2.4" },
      { fixed: "2.12.2" },
    ],
  },
  {
    name: "Maven last_affected with a limit",
    ecosystem: "maven",
    events: [{ introduced: "2.0-beta9" }, { last_affected: "2.16.0" }, { limit: "2.14.1" }],
  },
];

describe("spansOfOsvRange: OSV's evaluation algorithm", () => {
  for (const c of CASES) {
    it(`agrees with the OSV pseudocode on every version: ${c.name}`, () => {
      const spans = spansOfOsvRange(c.ecosystem, c.events);
      const versions = c.ecosystem === "npm" ? NPM_VERSIONS : MAVEN_VERSIONS;
      const events = Object.values(c.events).flatMap((e) => Object.values(e) as string[]);
      for (const v of [...versions, ...events.filter((e) => e !== "0" && e !== "*")]) {
        assert.equal(
          isAffected(c.ecosystem, v, spans),
          osvIncludes(c.ecosystem, v, c.events),
          `${v} with spans ${JSON.stringify(spans)}`,
        );
      }
    });
  }

  it("writes a plain range as one span", () => {
    assert.deepEqual(spansOfOsvRange("npm", [{ introduced: "0" }, { fixed: "4.17.21" }]), [
      { introduced: "0", fixed: "4.17.21" },
    ]);
    assert.deepEqual(spansOfOsvRange("npm", [{ introduced: "0" }, { last_affected: "4.5.0" }]), [
      { introduced: "0", lastAffected: "4.5.0" },
    ]);
    assert.deepEqual(spansOfOsvRange("npm", [{ introduced: "1.0.0" }, { limit: "2.0.0" }]), [
      { introduced: "1.0.0", limit: "2.0.0" },
    ]);
  });

  it("orders by the ecosystem's version order, not by text", () => {
    // "2.10.0" sorts after "2.9.0" for both ecosystems; as text it would come first.
    const spans = spansOfOsvRange("maven", [{ fixed: "2.10.0" }, { introduced: "2.9.0" }]);
    assert.deepEqual(spans, [{ introduced: "2.9.0", fixed: "2.10.0" }]);
    assert.equal(isAffected("maven", "2.9.5", spans), true);
    assert.equal(isAffected("maven", "2.10.0", spans), false);
  });
});

describe("isAffected: listed versions (OSV versions[])", () => {
  it("matches the exact listed string only", () => {
    assert.equal(isAffected("maven", "1.0", [{ version: "1.0" }]), true);
    // Maven orders 1.0 and 1.0.0 equal, but OSV compares listed versions as strings.
    assert.equal(isAffected("maven", "1.0.0", [{ version: "1.0" }]), false);
    assert.equal(isAffected("npm", "1.2.3", [{ version: "1.2.4" }]), false);
  });
});
