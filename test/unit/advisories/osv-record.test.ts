import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { cvssScore, readOsvRecord, severityLabel } from "../../../src/scanner/advisories/osv-record.ts";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/osv/${name}`, import.meta.url), "utf8")) as Record<
    string,
    unknown
  >;
const record = (json: unknown) => {
  const read = readOsvRecord(json);
  assert.equal(read.kind, "record", JSON.stringify(read));
  return (read as Extract<typeof read, { kind: "record" }>).record;
};

describe("readOsvRecord", () => {
  it("lists a GHSA record under its CVE, the GHSA id as alias, with GitHub's severity and the vector's score", () => {
    const r = record(fixture("GHSA-jfh8-c2jp-5v3q.json"));
    assert.equal(r.osvId, "GHSA-jfh8-c2jp-5v3q");
    assert.equal(r.modified, "2022-03-25T20:56:18Z");
    assert.equal(r.advisory.id, "CVE-2021-44228");
    assert.deepEqual(r.advisory.aliases, ["GHSA-jfh8-c2jp-5v3q"]);
    assert.equal(r.advisory.severity, "CRITICAL");
    assert.equal(r.advisory.cvssScore, 10);
    assert.equal(r.advisory.publishedAt, "2021-12-10T00:40:56Z");
    // Three affected entries of one package become one package with three spans.
    assert.deepEqual(r.advisory.affected, [
      {
        ecosystem: "maven",
        package: "org.apache.logging.log4j:log4j-core",
        ranges: [
          { introduced: "2.13.0", fixed: "2.15.0" },
          { introduced: "0", fixed: "2.3.1" },
          { introduced: "2.4", fixed: "2.12.2" },
        ],
      },
    ]);
  });

  it("keeps a record without CVE (malicious-package records) under its own id", () => {
    const r = record({
      id: "MAL-2024-1234",
      modified: "2024-05-01T00:00:00Z",
      summary: "Malicious code in evil-pkg (npm)",
      affected: [{ package: { ecosystem: "npm", name: "evil-pkg" }, versions: ["1.0.0", "1.0.1"] }],
    });
    assert.equal(r.advisory.id, "MAL-2024-1234");
    assert.deepEqual(r.advisory.aliases, []);
    assert.equal(r.advisory.severity, "UNKNOWN");
    assert.deepEqual(r.advisory.affected[0]?.ranges, [{ version: "1.0.0" }, { version: "1.0.1" }]);
  });

  it("stores only the listed versions no range covers, ignores GIT ranges, reads Maven:<repository>", () => {
    const r = record({
      id: "GHSA-aaaa-bbbb-cccc",
      modified: "2024-05-01T00:00:00Z",
      affected: [
        {
          package: { ecosystem: "Maven:https://maven.google.com", name: "androidx.core:core" },
          ranges: [
            {
              type: "GIT",
              repo: "https://example.com/r.git",
              events: [{ introduced: "abc" }, { fixed: "def" }],
            },
            { type: "ECOSYSTEM", events: [{ introduced: "1.0" }, { fixed: "1.2" }] },
          ],
          versions: ["1.0", "1.1", "0.9-special"],
        },
        { package: { ecosystem: "PyPI", name: "other" }, versions: ["1"] },
      ],
    });
    assert.deepEqual(r.advisory.affected, [
      {
        ecosystem: "maven",
        package: "androidx.core:core",
        ranges: [{ introduced: "1.0", fixed: "1.2" }, { version: "0.9-special" }],
      },
    ]);
  });

  it("says other-ecosystem for a record about no npm or Maven package", () => {
    const read = readOsvRecord({
      id: "PYSEC-2024-1",
      modified: "2024-05-01T00:00:00Z",
      affected: [{ package: { ecosystem: "PyPI", name: "x" }, versions: ["1"] }],
    });
    assert.deepEqual(read, { kind: "other-ecosystem", id: "PYSEC-2024-1" });
  });

  it("names the field of a malformed record", () => {
    const cases: [unknown, string][] = [
      [{ modified: "2024-05-01T00:00:00Z" }, "id: "],
      [{ id: "X", modified: "yesterday" }, "modified: expected an RFC 3339 date-time"],
      [
        {
          id: "X",
          modified: "2024-05-01T00:00:00Z",
          affected: [{ ranges: [{ type: "SEMVER", events: [{ fixed: "1" }] }] }],
        },
        "affected[0].ranges[0].events: a range needs an introduced event",
      ],
      [
        {
          id: "X",
          modified: "2024-05-01T00:00:00Z",
          affected: [
            {
              ranges: [
                { type: "SEMVER", events: [{ introduced: "0" }, { fixed: "1" }, { last_affected: "2" }] },
              ],
            },
          ],
        },
        "affected[0].ranges[0].events: a range has fixed or last_affected events, not both",
      ],
      [{ id: "X", modified: "2024-05-01T00:00:00Z", aliases: "CVE-1" }, "aliases: "],
    ];
    for (const [json, reason] of cases) {
      const read = readOsvRecord(json);
      assert.equal(read.kind, "malformed");
      assert.ok(
        read.kind === "malformed" && read.reason.startsWith(reason),
        `${JSON.stringify(read)} / ${reason}`,
      );
    }
  });
});

describe("severity and CVSS", () => {
  it("computes base scores of v4.0, v3.1 and v2 vectors, preferring the newest version", () => {
    assert.equal(cvssScore([{ type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H" }]), 10);
    assert.equal(
      cvssScore([{ type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:H/A:H" }]),
      7.4,
    );
    assert.equal(cvssScore([{ type: "CVSS_V2", score: "AV:N/AC:L/Au:N/C:P/I:P/A:P" }]), 7.5);
    const v4 = "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N";
    assert.equal(
      cvssScore([
        { type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:H/A:H" },
        { type: "CVSS_V4", score: v4 },
      ]),
      9.3,
    );
    assert.equal(cvssScore([{ type: "CVSS_V3", score: "not a vector" }]), null);
  });

  it("takes the database's label first (MODERATE is MEDIUM), else the rating of the score", () => {
    assert.equal(severityLabel("MODERATE", 9.8), "MEDIUM");
    assert.equal(severityLabel(undefined, 9.8), "CRITICAL");
    assert.equal(severityLabel(undefined, 7.4), "HIGH");
    assert.equal(severityLabel(undefined, 5.3), "MEDIUM");
    assert.equal(severityLabel(undefined, 3.1), "LOW");
    assert.equal(severityLabel(undefined, null), "UNKNOWN");
  });
});
