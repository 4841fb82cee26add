import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  computePackageFacts,
  type PackageAdvisory,
  type PackageFacts,
  type PublishedVersion,
  type VersionFacts,
} from "../../../src/domain/versions/index.ts";

const undated = (...versions: string[]): PublishedVersion[] =>
  versions.map((version) => ({ version, releasedAt: null }));

function factsOf(facts: PackageFacts, version: string): VersionFacts {
  const found = facts.versions.find((v) => v.version === version);
  assert.ok(found, `no facts for ${version}`);
  return found;
}

const closest = (facts: PackageFacts, version: string): string | null =>
  factsOf(facts, version).saferClosestVersion;

describe("computePackageFacts: Log4Shell (log4j-core, Maven)", () => {
  // Deliberately unsorted: the result must be in Maven order.
  const published = undated(
    "2.17.0",
    "2.0-beta9",
    "3.0.0-beta1",
    "2.0",
    "2.3",
    "2.3.1",
    "2.3.2",
    "2.4",
    "2.11.0",
    "2.12.1",
    "2.12.2",
    "2.12.3",
    "2.12.4",
    "2.13.0",
    "2.14.1",
    "2.15.0",
    "2.16.0",
    "2.17.1",
    "2.17.2",
    "2.20.0",
  );
  const advisories: PackageAdvisory[] = [
    {
      id: "CVE-2021-45105",
      ranges: [
        { introduced: "2.0-beta9", fixed: "2.3.1" },
        { introduced: "2.4", fixed: "2.12.3" },
        { introduced: "2.13.0", fixed: "2.17.0" },
      ],
    },
    {
      id: "CVE-2021-44228",
      ranges: [
        { introduced: "2.0-beta9", fixed: "2.3.1" },
        { introduced: "2.4", fixed: "2.12.2" },
        { introduced: "2.13.0", fixed: "2.15.0" },
      ],
    },
    {
      id: "CVE-2021-45046",
      ranges: [
        { introduced: "2.0-beta9", fixed: "2.3.1" },
        { introduced: "2.4", fixed: "2.12.2" },
        { introduced: "2.13.0", fixed: "2.16.0" },
      ],
    },
    {
      id: "CVE-2021-44832",
      ranges: [
        { introduced: "2.0-beta7", fixed: "2.3.2" },
        { introduced: "2.4", fixed: "2.12.4" },
        { introduced: "2.13.0", fixed: "2.17.1" },
      ],
    },
  ];
  const facts = computePackageFacts("maven", published, advisories);

  it("lists the versions in ascending Maven order with ranks 0..n-1", () => {
    assert.deepEqual(
      facts.versions.map((v) => v.version),
      [
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
        "2.12.4",
        "2.13.0",
        "2.14.1",
        "2.15.0",
        "2.16.0",
        "2.17.0",
        "2.17.1",
        "2.17.2",
        "2.20.0",
        "3.0.0-beta1",
      ],
    );
    assert.deepEqual(
      facts.versions.map((v) => v.rank),
      facts.versions.map((_, i) => i),
    );
  });

  it("lists the affecting advisories, sorted", () => {
    assert.deepEqual(factsOf(facts, "2.14.1").affectedBy, [
      "CVE-2021-44228",
      "CVE-2021-44832",
      "CVE-2021-45046",
      "CVE-2021-45105",
    ]);
    assert.deepEqual(factsOf(facts, "2.15.0").affectedBy, [
      "CVE-2021-44832",
      "CVE-2021-45046",
      "CVE-2021-45105",
    ]);
    assert.deepEqual(factsOf(facts, "2.17.0").affectedBy, ["CVE-2021-44832"]);
    assert.deepEqual(factsOf(facts, "2.12.2").affectedBy, ["CVE-2021-44832", "CVE-2021-45105"]);
    assert.deepEqual(factsOf(facts, "2.3.1").affectedBy, ["CVE-2021-44832"]);
    assert.deepEqual(factsOf(facts, "2.17.1").affectedBy, []);
    assert.deepEqual(factsOf(facts, "3.0.0-beta1").affectedBy, []);
  });

  it("finds the safer closest version, same major.minor first", () => {
    assert.equal(closest(facts, "2.14.1"), "2.17.1");
    assert.equal(closest(facts, "2.12.1"), "2.12.4");
    assert.equal(closest(facts, "2.12.2"), "2.12.4");
    assert.equal(closest(facts, "2.3"), "2.3.2");
    assert.equal(closest(facts, "2.0-beta9"), "2.3.2");
    assert.equal(closest(facts, "2.11.0"), "2.12.4");
    assert.equal(closest(facts, "2.16.0"), "2.17.1");
    assert.equal(closest(facts, "2.17.0"), "2.17.1");
  });

  it("keeps unaffected versions as their own safer closest version", () => {
    assert.equal(closest(facts, "2.17.1"), "2.17.1");
    assert.equal(closest(facts, "2.12.4"), "2.12.4");
    assert.equal(closest(facts, "3.0.0-beta1"), "3.0.0-beta1");
  });

  it("picks the newest unaffected release as safest, not the 3.0.0 beta", () => {
    assert.equal(facts.safestVersion, "2.20.0");
    assert.equal(factsOf(facts, "3.0.0-beta1").prerelease, true);
    assert.equal(factsOf(facts, "2.0-beta9").prerelease, true);
    assert.equal(factsOf(facts, "2.20.0").prerelease, false);
  });

  it("has no release cadence without release dates", () => {
    assert.equal(facts.releasesPerYear, null);
  });
});

describe("computePackageFacts: lodash (npm)", () => {
  const published: PublishedVersion[] = [
    { version: "4.17.15", releasedAt: "2019-07-19T02:28:46.584Z" },
    { version: "4.17.16", releasedAt: "2020-07-08T17:14:40.000Z" },
    { version: "4.17.19", releasedAt: "2020-07-08T17:14:40.000Z" },
    { version: "4.17.20", releasedAt: "2020-08-13T16:53:54.152Z" },
    { version: "4.17.21", releasedAt: "2021-02-20T15:42:16.891Z" },
  ];
  const advisories: PackageAdvisory[] = [
    { id: "CVE-2021-23337", ranges: [{ introduced: "0", fixed: "4.17.21" }] },
    { id: "CVE-2020-8203", ranges: [{ introduced: "0", fixed: "4.17.19" }] },
  ];
  const facts = computePackageFacts("npm", published, advisories);

  it("recommends 4.17.21 for 4.17.15", () => {
    assert.deepEqual(factsOf(facts, "4.17.15").affectedBy, ["CVE-2020-8203", "CVE-2021-23337"]);
    assert.equal(closest(facts, "4.17.15"), "4.17.21");
    assert.equal(closest(facts, "4.17.19"), "4.17.21");
    assert.equal(closest(facts, "4.17.21"), "4.17.21");
    assert.equal(facts.safestVersion, "4.17.21");
  });

  it("counts the releases per year over the published history", () => {
    // 5 releases between 2019-07-19 and 2021-02-20 (about 1.59 years): 3.14 -> 3.
    assert.equal(facts.releasesPerYear, 3);
  });
});

describe("computePackageFacts: candidates", () => {
  it("returns null when no fix is available, never inventing one", () => {
    const facts = computePackageFacts("npm", undated("1.0.0", "1.1.0", "2.0.0"), [
      { id: "GHSA-open", ranges: [{ introduced: "0" }] },
    ]);
    assert.equal(facts.safestVersion, null);
    for (const v of facts.versions) assert.equal(v.saferClosestVersion, null, v.version);
  });

  it("returns null when the fixed version is not published", () => {
    const facts = computePackageFacts("npm", undated("1.0.0", "1.1.0"), [
      { id: "GHSA-future", ranges: [{ introduced: "0", fixed: "1.2.0" }] },
    ]);
    assert.equal(closest(facts, "1.1.0"), null);
    assert.equal(facts.safestVersion, null);
  });

  it("never recommends a prerelease", () => {
    const facts = computePackageFacts("maven", undated("1.0", "1.1-RC1", "1.1-SNAPSHOT"), [
      { id: "CVE-X", ranges: [{ introduced: "0", fixed: "1.1-RC1" }] },
    ]);
    assert.equal(closest(facts, "1.0"), null);
    assert.equal(closest(facts, "1.1-RC1"), "1.1-RC1");
    assert.equal(facts.safestVersion, null);
  });

  it("falls back to a later major when the current one has no fix", () => {
    const facts = computePackageFacts("npm", undated("1.0.0", "1.5.0", "2.0.0", "2.1.0", "3.0.0"), [
      { id: "CVE-1x", ranges: [{ introduced: "0", fixed: "2.0.0" }] },
      { id: "CVE-2x", ranges: [{ introduced: "2.0.0", fixed: "2.1.0" }] },
    ]);
    assert.equal(closest(facts, "1.0.0"), "2.1.0");
    assert.equal(closest(facts, "2.0.0"), "2.1.0");
    assert.equal(facts.safestVersion, "3.0.0");
  });

  it("never recommends a version older than the one in use", () => {
    const facts = computePackageFacts("npm", undated("1.0.0", "1.1.0", "1.2.0"), [
      { id: "CVE-late", ranges: [{ introduced: "1.2.0" }] },
    ]);
    assert.equal(closest(facts, "1.2.0"), null);
    assert.equal(facts.safestVersion, "1.1.0");
  });

  it("never takes a date-stamped Maven build for the newest release (commons-codec 20041127.091804)", () => {
    // Central's commons-codec versions, abridged: the 2004 build outranks 1.17.1 in Maven's order
    const versions = undated("1.2", "1.10", "1.11", "1.15", "1.17.1", "20041127.091804");
    const facts = computePackageFacts("maven", versions, [
      { id: "CVE-X", ranges: [{ introduced: "0", fixed: "1.11" }] },
    ]);
    assert.equal(facts.versions.at(-1)?.version, "20041127.091804", "it stays in the list, ranked last");
    assert.equal(facts.safestVersion, "1.17.1");
    assert.equal(closest(facts, "1.10"), "1.11");
    assert.equal(closest(facts, "1.2"), "1.11");
    // alone, or for a version that is itself date-stamped, it is what there is
    const only = computePackageFacts("maven", undated("1.0", "20030203.000550"), [
      { id: "CVE-Y", ranges: [{ introduced: "0", fixed: "20030203.000550" }] },
    ]);
    assert.equal(only.safestVersion, "20030203.000550");
    const stamped = computePackageFacts("maven", undated("20030101", "1.0", "20030203.000550"), [
      { id: "CVE-Z", ranges: [{ introduced: "20030101", fixed: "20030203.000550" }] },
    ]);
    assert.equal(closest(stamped, "20030101"), "20030203.000550");
    assert.equal(stamped.safestVersion, "1.0");
    // npm has no such builds: a semver major of eight digits is a version like another
    assert.equal(
      computePackageFacts("npm", undated("1.0.0", "20041127.0.0"), []).safestVersion,
      "20041127.0.0",
    );
  });

  it("skips unparseable npm versions as candidates", () => {
    const facts = computePackageFacts("npm", undated("1.0.0", "latest"), [
      { id: "CVE-1", ranges: [{ introduced: "0", fixed: "1.0.1" }] },
    ]);
    assert.deepEqual(
      facts.versions.map((v) => v.version),
      ["1.0.0", "latest"],
    );
    assert.equal(closest(facts, "1.0.0"), null);
    assert.equal(facts.safestVersion, null);
  });
});

describe("computePackageFacts: extraVersions", () => {
  const published: PublishedVersion[] = [
    { version: "1.0.0", releasedAt: "2020-01-01T00:00:00Z" },
    { version: "1.2.0", releasedAt: "2020-06-01T00:00:00Z" },
  ];
  const advisories: PackageAdvisory[] = [{ id: "CVE-A", ranges: [{ introduced: "0", fixed: "1.2.0" }] }];

  it("includes unpublished versions in use, undated, with their own facts", () => {
    const facts = computePackageFacts("npm", published, advisories, ["1.1.5", "2.0.0-internal.1"]);
    assert.deepEqual(
      facts.versions.map((v) => [v.version, v.rank, v.releasedAt]),
      [
        ["1.0.0", 0, "2020-01-01T00:00:00Z"],
        ["1.1.5", 1, null],
        ["1.2.0", 2, "2020-06-01T00:00:00Z"],
        ["2.0.0-internal.1", 3, null],
      ],
    );
    assert.deepEqual(factsOf(facts, "1.1.5").affectedBy, ["CVE-A"]);
    assert.equal(closest(facts, "1.1.5"), "1.2.0");
    assert.equal(factsOf(facts, "2.0.0-internal.1").prerelease, true);
    assert.equal(closest(facts, "2.0.0-internal.1"), "2.0.0-internal.1");
  });

  it("never turns an extra version into a candidate nor a release", () => {
    const facts = computePackageFacts("npm", published, advisories, ["1.3.0"]);
    assert.equal(facts.safestVersion, "1.2.0");
    assert.equal(closest(facts, "1.3.0"), "1.3.0");
    const onlyAffected = computePackageFacts("npm", [{ version: "1.0.0", releasedAt: null }], advisories, [
      "1.2.0",
    ]);
    assert.equal(closest(onlyAffected, "1.0.0"), null);
    assert.equal(onlyAffected.safestVersion, null);
    assert.equal(onlyAffected.releasesPerYear, null);
  });

  it("merges versions that compare equal, keeping the published spelling and date", () => {
    const facts = computePackageFacts(
      "maven",
      [
        { version: "1.0.0", releasedAt: "2021-03-01T00:00:00Z" },
        { version: "1.0", releasedAt: "2021-01-01T00:00:00Z" },
        { version: "1.1.Final", releasedAt: null },
      ],
      [],
      ["1", "1.1", "1.0.0", "0.9"],
    );
    assert.deepEqual(
      facts.versions.map((v) => [v.version, v.releasedAt]),
      [
        ["0.9", null],
        ["1.0.0", "2021-01-01T00:00:00Z"],
        ["1.1.Final", null],
      ],
    );
    assert.equal(facts.safestVersion, "1.1.Final");
    assert.equal(facts.releasesPerYear, 1);
  });
});

describe("computePackageFacts: releasesPerYear", () => {
  const dated = (...dates: (string | null)[]): PublishedVersion[] =>
    dates.map((releasedAt, i) => ({ version: `1.${i}.0`, releasedAt }));
  const perYear = (published: PublishedVersion[], extra: string[] = []): number | null =>
    computePackageFacts("npm", published, [], extra).releasesPerYear;

  it("floors the span at one year", () => {
    assert.equal(perYear(dated("2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z")), 3);
    assert.equal(perYear(dated("2024-01-01T00:00:00Z")), 1);
  });

  it("divides by the span in 365.25-day years and rounds", () => {
    // 2020-01-01 .. 2022-01-01 is 731 days, about 2.001 years.
    const tenOverTwoYears = dated(
      "2020-01-01T00:00:00Z",
      ...Array.from({ length: 8 }, (_, i) => `2020-0${i + 2}-15T00:00:00Z`),
      "2022-01-01T00:00:00Z",
    );
    assert.equal(perYear(tenOverTwoYears), 5);
    // 1460 days, about 4 years: 5 releases -> 1.25 -> 1, 7 releases -> 1.75 -> 2.
    const start = "2020-01-01T00:00:00Z";
    const end = "2023-12-31T00:00:00Z"; // 2020-01-01 + 1460 days
    assert.equal(
      perYear(dated(start, "2021-06-01T00:00:00Z", "2022-06-01T00:00:00Z", "2023-06-01T00:00:00Z", end)),
      1,
    );
    assert.equal(
      perYear(
        dated(
          start,
          "2020-06-01T00:00:00Z",
          "2021-06-01T00:00:00Z",
          "2022-01-01T00:00:00Z",
          "2022-06-01T00:00:00Z",
          "2023-06-01T00:00:00Z",
          end,
        ),
      ),
      2,
    );
  });

  it("counts only published versions with a known release date", () => {
    assert.equal(perYear(dated("2024-01-01T00:00:00Z", null, "2024-05-01T00:00:00Z", "not a date")), 2);
    assert.equal(perYear(dated("2024-01-01T00:00:00Z", "2024-05-01T00:00:00Z"), ["9.9.9", "8.0.0"]), 2);
    assert.equal(perYear(dated(null, null)), null);
    assert.equal(perYear([]), null);
  });
});
