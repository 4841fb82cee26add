import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type AffectedRange,
  compareVersions,
  isAffected,
  isPrerelease,
} from "../../../src/domain/versions/index.ts";

describe("compareVersions / isPrerelease", () => {
  it("dispatches on the ecosystem", () => {
    // "1.0" and "1.0.0" are the same Maven version; for npm "1.0" is invalid and sorts last.
    assert.equal(compareVersions("maven", "1.0", "1.0.0"), 0);
    assert.equal(compareVersions("npm", "1.0", "1.0.0"), 1);
    assert.equal(compareVersions("maven", "7.32.0.Final", "7.39.0.CR1"), -1);
    assert.equal(compareVersions("npm", "1.0.0-rc.1", "1.0.0"), -1);
    assert.equal(isPrerelease("maven", "2.0-beta9"), true);
    assert.equal(isPrerelease("maven", "2.0.Final"), false);
    assert.equal(isPrerelease("npm", "3.0.0-beta.1"), true);
    assert.equal(isPrerelease("npm", "3.0.0"), false);
  });
});

describe("isAffected", () => {
  const fixedRange: AffectedRange[] = [{ introduced: "1.2.0", fixed: "1.4.0" }];

  it("includes introduced and excludes fixed", () => {
    assert.equal(isAffected("npm", "1.1.9", fixedRange), false);
    assert.equal(isAffected("npm", "1.2.0", fixedRange), true);
    assert.equal(isAffected("npm", "1.3.7", fixedRange), true);
    assert.equal(isAffected("npm", "1.4.0-rc.1", fixedRange), true);
    assert.equal(isAffected("npm", "1.4.0", fixedRange), false);
    assert.equal(isAffected("npm", "2.0.0", fixedRange), false);
  });

  it("includes lastAffected", () => {
    const ranges: AffectedRange[] = [{ introduced: "1.2.0", lastAffected: "1.3.5" }];
    assert.equal(isAffected("npm", "1.3.5", ranges), true);
    assert.equal(isAffected("npm", "1.3.6", ranges), false);
    assert.equal(isAffected("npm", "1.1.0", ranges), false);
  });

  it('reads introduced "0", null or missing as "from the beginning"', () => {
    for (const introduced of ["0", null, undefined, ""]) {
      const ranges: AffectedRange[] = [{ introduced, fixed: "4.17.19" }];
      assert.equal(isAffected("npm", "0.0.1", ranges), true, String(introduced));
      assert.equal(isAffected("npm", "4.17.15", ranges), true, String(introduced));
      assert.equal(isAffected("npm", "4.17.19", ranges), false, String(introduced));
      assert.equal(isAffected("maven", "0.1-alpha", ranges), true, String(introduced));
    }
  });

  it("treats a range without fixed nor lastAffected as open-ended", () => {
    const ranges: AffectedRange[] = [{ introduced: "2.0" }];
    assert.equal(isAffected("maven", "1.9", ranges), false);
    assert.equal(isAffected("maven", "2.0.0", ranges), true);
    assert.equal(isAffected("maven", "99.0", ranges), true);
    assert.equal(isAffected("maven", "1.0", [{}]), true);
  });

  it("is affected when any of several ranges matches", () => {
    const ranges: AffectedRange[] = [
      { introduced: "2.0-beta9", fixed: "2.3.1" },
      { introduced: "2.4", fixed: "2.12.2" },
      { introduced: "2.13.0", fixed: "2.15.0" },
    ];
    const expected: Record<string, boolean> = {
      "2.0-beta7": false,
      "2.0-beta9": true,
      "2.0": true,
      "2.3": true,
      "2.3.1": false,
      "2.3.2": false,
      "2.4": true,
      "2.12.1": true,
      "2.12.2": false,
      "2.12.4": false,
      "2.13.0": true,
      "2.14.1": true,
      "2.15.0": false,
      "2.17.1": false,
    };
    for (const [version, affected] of Object.entries(expected)) {
      assert.equal(isAffected("maven", version, ranges), affected, version);
    }
  });

  it("uses Maven equivalence at the bounds", () => {
    const ranges: AffectedRange[] = [{ introduced: "7.32.0.Final", fixed: "7.39.0.Final" }];
    assert.equal(isAffected("maven", "7.32.0", ranges), true);
    assert.equal(isAffected("maven", "7.39.0.CR1", ranges), true);
    assert.equal(isAffected("maven", "7.39.0", ranges), false);
    assert.equal(isAffected("maven", "7.31.0.Final", ranges), false);
  });

  it("is never affected without ranges", () => {
    assert.equal(isAffected("npm", "1.0.0", []), false);
  });
});
