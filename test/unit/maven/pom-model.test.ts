// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Maven ${...} expressions are the literal text under test
import assert from "node:assert/strict";
import { test } from "node:test";
import { compareMavenVersions } from "../../../src/domain/versions/maven-version.ts";
import { artifactOf, conflictKey, excludes } from "../../../src/scanner/maven/coordinates.ts";
import { activeProfiles, DEFAULT_ENVIRONMENT } from "../../../src/scanner/maven/environment.ts";
import { interpolateString } from "../../../src/scanner/maven/model-builder.ts";
import { PomSyntaxError, parsePom } from "../../../src/scanner/maven/pom-xml.ts";
import { parseVersionRange, rangeContains } from "../../../src/scanner/maven/version-range.ts";

test("POM text: versions stay strings, a property written twice keeps the last value, <relativePath/> is none", () => {
  const raw = parsePom(`<?xml version="1.0"?>
    <project xmlns="http://maven.apache.org/POM/4.0.0">
      <parent><groupId>g</groupId><artifactId>p</artifactId><version>1.10</version><relativePath/></parent>
      <artifactId>a</artifactId>
      <properties><v>1.0</v><v>2.0</v><empty/></properties>
      <dependencies><dependency><groupId>x</groupId><artifactId>y</artifactId><version>1.10</version>
        <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>
      </dependency></dependencies>
    </project>`);
  assert.equal(raw.parent?.version, "1.10");
  assert.equal(raw.parent?.relativePath, "");
  assert.equal(raw.properties.get("v"), "2.0");
  assert.equal(raw.properties.get("empty"), "");
  assert.equal(raw.dependencies[0]?.version, "1.10");
  assert.deepEqual(raw.dependencies[0]?.exclusions, [{ groupId: "*", artifactId: "*" }]);
  assert.throws(
    () => parsePom("<project><a></project>"),
    (e) => e instanceof PomSyntaxError && e.line === 1,
  );
});

test("interpolation: recursive, unknown and cyclic expressions left as written", () => {
  const props = new Map([
    ["a", "${b}-x"],
    ["b", "1.0"],
    ["loop", "${loop}"],
  ]);
  const lookup = (name: string) => props.get(name);
  assert.equal(interpolateString("v${a}", lookup), "v1.0-x");
  assert.equal(interpolateString("${missing}", lookup), "${missing}");
  assert.equal(interpolateString("${loop}", lookup), "${loop}");
});

test("version ranges as Maven reads them", () => {
  const range = parseVersionRange("[1.0,2.0),[3.0,)");
  assert.ok(range);
  const inRange = (v: string) => rangeContains(range, v, compareMavenVersions);
  assert.deepEqual(["0.9", "1.0", "1.9.9", "2.0", "2.5", "3.0", "10"].map(inRange), [
    false,
    true,
    true,
    false,
    false,
    true,
    true,
  ]);
  assert.deepEqual(parseVersionRange("[1.2]"), [
    { lower: { version: "1.2", inclusive: true }, upper: { version: "1.2", inclusive: true } },
  ]);
  assert.equal(parseVersionRange("1.0"), undefined);
  assert.equal(parseVersionRange("[1.0,2.0"), undefined);
});

test("profile activation: JDK prefix and range, negation, property, OS, activeByDefault only when alone", () => {
  const profile = (id: string, activation: object | undefined) => ({
    id,
    activation: activation && { activeByDefault: false, ...activation },
    properties: new Map(),
    dependencies: [],
    dependencyManagement: [],
    modules: [],
  });
  const env = {
    ...DEFAULT_ENVIRONMENT,
    javaVersion: "17.0.15",
    userProperties: new Map([["release", "true"]]),
  };
  const ids = (profiles: ReturnType<typeof profile>[]) =>
    activeProfiles(profiles, env, undefined).map((p) => p.id);
  assert.deepEqual(
    ids([
      profile("jdk8", { jdk: "1.8" }),
      profile("jdk17", { jdk: "17" }),
      profile("jdk9plus", { jdk: "[9,)" }),
      profile("not8", { jdk: "!1.8" }),
      profile("release", { property: { name: "release", value: "true" } }),
      profile("noskip", { property: { name: "!skipTests" } }),
      profile("windows", { os: { family: "windows" } }),
      profile("unix", { os: { family: "unix" } }),
      profile("linux-x86_64", { os: { family: "Linux", arch: "amd64" } }),
      profile("linux-aarch64", { os: { family: "Linux", arch: "aarch64" } }),
      profile("default", { activeByDefault: true }),
    ]),
    ["jdk17", "jdk9plus", "not8", "release", "noskip", "unix", "linux-x86_64"],
  );
  assert.deepEqual(ids([profile("jdk8", { jdk: "1.8" }), profile("default", { activeByDefault: true })]), [
    "default",
  ]);
});

test("coordinates: types map to artifacts (test-jar = jar:tests), exclusions with wildcards", () => {
  assert.deepEqual(artifactOf("test-jar", ""), { extension: "jar", classifier: "tests" });
  assert.deepEqual(artifactOf("bundle", ""), { extension: "bundle", classifier: "" });
  assert.equal(
    conflictKey({ groupId: "g", artifactId: "a", type: "test-jar", classifier: "" }),
    conflictKey({ groupId: "g", artifactId: "a", type: "jar", classifier: "tests" }),
  );
  assert.ok(excludes({ groupId: "io.netty", artifactId: "*" }, "io.netty", "netty-handler"));
  assert.ok(excludes({ groupId: "*", artifactId: "*" }, "any", "thing"));
  assert.ok(!excludes({ groupId: "io.netty", artifactId: "netty" }, "io.netty", "netty-handler"));
});
