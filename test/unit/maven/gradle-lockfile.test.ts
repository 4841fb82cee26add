import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ScanInputError } from "../../../src/scanner/inventory.ts";
import { parseGradleLockfile } from "../../../src/scanner/maven/gradle-lockfile.ts";
import { mavenReader } from "../../../src/scanner/maven/reader.ts";
import { createRegistryFetcher } from "../../../src/scanner/registry/cached-fetch.ts";

const FIXTURE = join(import.meta.dirname, "../../fixtures/gradle/vulnerable-java-application");

test("a real gradle.lockfile: every locked module, dev when no production runtime classpath locks it", () => {
  const text = readFileSync(join(FIXTURE, "gradle.lockfile"), "utf8");
  const modules = parseGradleLockfile(text, "gradle.lockfile");
  const lines = text.split("\n").filter((l) => /^[^#=]+:[^=]+=/.test(l) && !l.startsWith("empty="));
  assert.equal(modules.length, lines.length);
  const find = (name: string) => modules.find((m) => `${m.groupId}:${m.artifactId}` === name);
  assert.deepEqual(find("org.apache.tomcat.embed:tomcat-embed-core"), {
    groupId: "org.apache.tomcat.embed",
    artifactId: "tomcat-embed-core",
    version: "10.1.20",
    configurations: [
      "compileClasspath",
      "productionRuntimeClasspath",
      "runtimeClasspath",
      "testCompileClasspath",
      "testRuntimeClasspath",
    ],
    dev: false,
    scope: "compile",
  });
  assert.equal(find("org.mockito:mockito-core")?.dev, true); // tests only
  assert.equal(find("org.mockito:mockito-core")?.scope, "test");
  assert.equal(find("org.projectlombok:lombok")?.dev, true); // compileOnly + annotationProcessor: not shipped
  assert.equal(find("org.projectlombok:lombok")?.scope, "provided");
  assert.equal(find("org.yaml:snakeyaml")?.version, "2.2");
});

test("the older per-configuration lockfiles, and malformed lines named with their line number", () => {
  const legacy = parseGradleLockfile(
    "# comment\norg.slf4j:slf4j-api:1.7.30\n",
    "x.lockfile",
    "testRuntimeClasspath",
  );
  assert.deepEqual(
    legacy.map((m) => [m.artifactId, m.configurations, m.dev]),
    [["slf4j-api", ["testRuntimeClasspath"], true]],
  );
  assert.throws(
    () =>
      parseGradleLockfile(
        "org.slf4j:slf4j-api:1.7.30=runtimeClasspath\nthis is not a lockfile\n",
        "gradle.lockfile",
      ),
    (error) =>
      error instanceof ScanInputError &&
      error.line === 2 &&
      /^gradle\.lockfile:2: not a Gradle lockfile line/.test(error.message),
  );
});

test("the reader: gradle.lockfile packages, direct when the build script declares them", async () => {
  const root = mkdtempSync(join(tmpdir(), "gradle-lock-"));
  try {
    cpSync(FIXTURE, root, { recursive: true });
    writeFileSync(join(root, "settings.gradle"), "rootProject.name = 'app'\n");
    assert.ok(
      mavenReader.claims("gradle.lockfile") &&
        mavenReader.claims("sub/gradle/dependency-locks/compileClasspath.lockfile"),
    );
    assert.ok(
      !mavenReader.claims("gradle/wrapper/gradle-wrapper.jar") && !mavenReader.claims("build.gradle"),
    );
    const inventory = await mavenReader.read([join(root, "gradle.lockfile")], {
      root,
      fetcher: createRegistryFetcher({ cacheDir: join(root, "cache"), offline: true }),
      offline: true,
      npmRegistryUrl: "https://registry.npmjs.org",
      mavenRepositoryUrl: "https://repo.maven.apache.org/maven2",
      mavenLocalRepository: join(root, "m2"),
      progress: () => {},
    });
    const direct = inventory.packages
      .filter((p) => p.direct)
      .map((p) => p.name)
      .sort();
    assert.deepEqual(direct, [
      "net.logstash.logback:logstash-logback-encoder",
      "org.junit.platform:junit-platform-launcher",
      "org.projectlombok:lombok",
      "org.springframework.boot:spring-boot-starter-test",
      "org.springframework.boot:spring-boot-starter-web",
    ]);
    assert.ok(inventory.packages.every((p) => p.ecosystem === "maven" && p.source === "gradle.lockfile"));
    assert.equal(inventory.packages.length, 68);
    assert.deepEqual(inventory.warnings, []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
