import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  compareNpmVersions,
  isNpmPrerelease,
  npmMajorMinor,
  parseNpmVersion,
} from "../../../src/domain/versions/npm-version.ts";

function assertAscending(versions: readonly string[]): void {
  for (let i = 0; i < versions.length; i++) {
    for (let j = i + 1; j < versions.length; j++) {
      const low = versions[i] as string;
      const high = versions[j] as string;
      assert.equal(compareNpmVersions(low, high), -1, `${low} < ${high}`);
      assert.equal(compareNpmVersions(high, low), 1, `${high} > ${low}`);
    }
  }
}

describe("compareNpmVersions", () => {
  it("follows semver precedence, prereleases before their release", () => {
    assertAscending([
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "1.0.1",
      "1.2.0",
      "1.10.0",
      "2.0.0-0",
      "2.0.0",
    ]);
    assertAscending(["4.17.15", "4.17.19", "4.17.21"]);
  });

  it("ignores build metadata and accepts loose spellings", () => {
    assert.equal(compareNpmVersions("1.0.0+build.1", "1.0.0+build.2"), 0);
    assert.equal(compareNpmVersions("v1.2.3", "1.2.3"), 0);
    assert.equal(compareNpmVersions("=1.2.3", "1.2.3"), 0);
    assert.equal(compareNpmVersions(" 1.2.3 ", "1.2.3"), 0);
    assert.equal(compareNpmVersions("1.2.3beta", "1.2.3-beta"), 0);
  });

  it("orders invalid versions after valid ones, lexically, without throwing", () => {
    assertAscending(["0.0.1", "99.0.0", "1.2", "latest", "not a version"]);
    assert.equal(compareNpmVersions("", ""), 0);
    assert.equal(compareNpmVersions("garbage", "garbage"), 0);
  });
});

describe("isNpmPrerelease", () => {
  it("is true only for valid versions with a prerelease tag", () => {
    assert.equal(isNpmPrerelease("1.0.0-beta.1"), true);
    assert.equal(isNpmPrerelease("2.0.0-0"), true);
    assert.equal(isNpmPrerelease("1.2.3beta"), true);
    assert.equal(isNpmPrerelease("1.0.0"), false);
    assert.equal(isNpmPrerelease("1.0.0+build"), false);
    assert.equal(isNpmPrerelease("1.0-beta"), false);
    assert.equal(isNpmPrerelease("garbage"), false);
  });
});

describe("npmMajorMinor", () => {
  it("uses semver fields, or the first digit runs of an invalid string", () => {
    assert.deepEqual(npmMajorMinor(parseNpmVersion("4.17.21")), [4n, 17n]);
    assert.deepEqual(npmMajorMinor(parseNpmVersion("v3.1.0-rc.1")), [3n, 1n]);
    assert.deepEqual(npmMajorMinor(parseNpmVersion("4.17")), [4n, 17n]);
    assert.deepEqual(npmMajorMinor(parseNpmVersion("7")), [7n, 0n]);
    assert.deepEqual(npmMajorMinor(parseNpmVersion("latest")), [0n, 0n]);
  });
});
