import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  compareMavenVersions,
  isMavenPrerelease,
  mavenMajorMinor,
  parseMavenVersion,
} from "../../../src/domain/versions/maven-version.ts";

/** Every earlier entry must sort strictly before every later one, in both argument orders. */
function assertAscending(versions: readonly string[]): void {
  for (let i = 0; i < versions.length; i++) {
    for (let j = i + 1; j < versions.length; j++) {
      const low = versions[i] as string;
      const high = versions[j] as string;
      assert.equal(compareMavenVersions(low, high), -1, `${low} < ${high}`);
      assert.equal(compareMavenVersions(high, low), 1, `${high} > ${low}`);
    }
  }
}

function assertEquivalent(a: string, b: string): void {
  assert.equal(compareMavenVersions(a, b), 0, `${a} == ${b}`);
  assert.equal(compareMavenVersions(b, a), 0, `${b} == ${a}`);
}

describe("compareMavenVersions", () => {
  it("orders the usual qualifiers: alpha < beta < rc = cr < snapshot < release = GA = Final < SP", () => {
    assertAscending([
      "1.0-alpha",
      "1.0-alpha1",
      "1.0-beta9",
      "1.0-RC1",
      "1.0-cr2",
      "1.0-SNAPSHOT",
      "1.0",
      "1.0-SP1",
      "1.0.1",
    ]);
    assertEquivalent("1.0-RC1", "1.0.CR1");
    for (const release of ["1.0.GA", "1.0.Final", "1.0.RELEASE", "1.0.0", "1", "1-0", "1.0-0"]) {
      assertEquivalent("1.0", release);
    }
  });

  it("orders the brief's examples", () => {
    assertEquivalent("1.0", "1.0.0");
    assertAscending(["2.0-beta9", "2.0-rc1", "2.0", "2.0.1"]);
    assertAscending(["7.32.0.Final", "7.39.0.CR1", "7.39.0.Final"]);
    assertEquivalent("7.32.0.Final", "7.32.0");
    assertAscending(["2.0-beta7", "2.0-beta9", "2.0", "2.3.1", "2.3.2", "2.4", "2.12.1", "2.12.4", "2.15.0"]);
  });

  it("orders numbers numerically, including beyond 64 bits and with leading zeros", () => {
    assertAscending(["1.9", "1.10", "1.123"]);
    assertAscending(["20190126.230843", "1234567890.12345", "123456789012345.1H.5-beta"]);
    assertAscending(["12345678901234567890", "12345678901234567891", "123456789012345678901"]);
    assertEquivalent("0001", "1");
    assertEquivalent("000", "0");
  });

  it("matches Maven's own qualifier ordering sequence", () => {
    assertAscending([
      "1-alpha2snapshot",
      "1-alpha2",
      "1-alpha-123",
      "1-beta-2",
      "1-beta123",
      "1-m2",
      "1-m11",
      "1-rc",
      "1-cr2",
      "1-rc123",
      "1-SNAPSHOT",
      "1",
      "1-sp",
      "1-sp2",
      "1-sp123",
      "1-abc",
      "1-def",
      "1-pom-1",
      "1-1-snapshot",
      "1-1",
      "1-2",
      "1-123",
    ]);
  });

  it("matches Maven's own number/separator ordering sequence", () => {
    assertAscending([
      "2.0",
      "2.0.a",
      "2-1",
      "2.0.2",
      "2.0.123",
      "2.1.0",
      "2.1-a",
      "2.1b",
      "2.1-c",
      "2.1-1",
      "2.1.0.1",
      "2.2",
      "2.123",
      "11.a2",
      "11.a11",
      "11.b2",
      "11.b11",
      "11.m2",
      "11.m11",
      "11",
      "11.a",
      "11b",
      "11c",
      "11m",
    ]);
  });

  it("reads a trailing .X as -X (MNG-7644) and a digit/letter transition as a separator", () => {
    assertEquivalent("2.0.a", "2.0.0.a");
    assertEquivalent("1.0.0.X1", "1.0.0-X1");
    assertEquivalent("1a", "1-a");
    assertEquivalent("1.0a", "1-a");
    assertAscending(["1.0.RC2", "1.0-RC3", "1.0.1"]);
    assertAscending(["6.1.0rc3", "6.1.0", "6.1H.5-beta"]);
  });

  it("treats a, b and m as aliases only when a digit follows", () => {
    assertEquivalent("1a1", "1-alpha-1");
    assertEquivalent("1b2", "1-beta-2");
    assertEquivalent("1m3", "1-milestone-3");
    // Without a digit, "a" is an unknown qualifier: after the release, not before it.
    assertAscending(["1-alpha", "1", "1-a"]);
  });

  it("places unknown qualifiers after known ones, lexically and case-insensitively", () => {
    assertAscending(["1-sp", "1-abc", "1-def", "1-jre"]);
    assertAscending(["31.1-android", "31.1-jre"]);
    assertEquivalent("1-ABCdef", "1-abcDEF");
    assertAscending(["2.0.1", "2.0.1-klm", "2.0.1-lmn", "2.0.1-123"]);
  });

  it("compares a whole qualifier sub-list against a missing item (MNG-6964)", () => {
    assertAscending(["1-0.alpha", "1-0.beta", "1", "1-0.1"]);
  });

  it("never throws on odd input and stays safe with prototype-looking words", () => {
    for (const odd of ["", "-", ".", "..", "--", "constructor", "__proto__", "1-toString"]) {
      assert.equal(typeof compareMavenVersions(odd, "1"), "number");
    }
    assertEquivalent("", "0");
    assertAscending(["1", "1-constructor", "1-tostring"]);
  });
});

describe("isMavenPrerelease", () => {
  it("flags alpha, beta, milestone, rc, cr, snapshot, ea and preview", () => {
    for (const v of [
      "2.0-alpha",
      "2.0-a1",
      "2.0-beta9",
      "2.0b2",
      "2.0-M1",
      "2.0-milestone-2",
      "2.0-RC1",
      "7.39.0.CR1",
      "1.0-SNAPSHOT",
      "1.0-alpha-1-SNAPSHOT",
      "21-ea",
      "1.0.0-preview.3",
      "3.0.0-beta1",
    ]) {
      assert.equal(isMavenPrerelease(v), true, v);
    }
  });

  it("does not flag releases, service packs or unknown qualifiers", () => {
    for (const v of [
      "2.0",
      "7.32.0.Final",
      "1.0.GA",
      "5.3.0.RELEASE",
      "1.0-SP1",
      "31.1-jre",
      "1-a",
      "2.17.1",
    ]) {
      assert.equal(isMavenPrerelease(v), false, v);
    }
  });
});

describe("mavenMajorMinor", () => {
  it("takes the leading numeric items, missing ones being 0", () => {
    assert.deepEqual(mavenMajorMinor(parseMavenVersion("2.12.1")), [2n, 12n]);
    assert.deepEqual(mavenMajorMinor(parseMavenVersion("2.0-beta9")), [2n, 0n]);
    assert.deepEqual(mavenMajorMinor(parseMavenVersion("7.39.0.CR1")), [7n, 39n]);
    assert.deepEqual(mavenMajorMinor(parseMavenVersion("3")), [3n, 0n]);
    assert.deepEqual(mavenMajorMinor(parseMavenVersion("RELEASE")), [0n, 0n]);
  });
});
