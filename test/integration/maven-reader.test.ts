/**
 * The Maven input reader on real projects from Maven Central, checked against what real Maven
 * (`mvn dependency:list`, Maven 3.8.7) resolves for the same POMs: parents and grandparents, property
 * interpolation, dependencyManagement, imported BOMs, exclusions (wildcards too), optional, scopes,
 * version ranges, nearest-wins mediation; jar/war/ear archives; missing parents; gradle.lockfile.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { zipSync } from "fflate";
import {
  type Inventory,
  type InventoryPackage,
  type ReaderContext,
  ScanInputError,
} from "../../src/scanner/inventory.ts";
import { resolveDependencies } from "../../src/scanner/maven/dependency-graph.ts";
import { DEFAULT_ENVIRONMENT } from "../../src/scanner/maven/environment.ts";
import { ModelBuilder } from "../../src/scanner/maven/model-builder.ts";
import { parsePom } from "../../src/scanner/maven/pom-xml.ts";
import { mavenReader } from "../../src/scanner/maven/reader.ts";
import { createMavenRepository } from "../../src/scanner/maven/repository.ts";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import {
  CENTRAL,
  centralFile,
  mvnDependencyList,
  mvnDependencyListFailure,
  ORACLE_REPOSITORY,
  type OracleArtifact,
  oracleLine,
  projectDir,
  SCANNER_HTTP_CACHE,
} from "../support/maven-subjects.ts";

/** A Spring Boot application as people write them: starter parent, Spring Cloud BOM, ${revision}... */
const SPRING_BOOT_APP = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>org.springframework.boot</groupId>
    <artifactId>spring-boot-starter-parent</artifactId>
    <version>2.7.18</version>
    <relativePath/>
  </parent>
  <groupId>com.example</groupId>
  <artifactId>demo</artifactId>
  <version>\${revision}</version>
  <properties>
    <revision>1.0.0-SNAPSHOT</revision>
    <log4j2.version>2.14.1</log4j2.version>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>org.springframework.cloud</groupId>
        <artifactId>spring-cloud-dependencies</artifactId>
        <version>2021.0.9</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>org.springframework.boot</groupId>
      <artifactId>spring-boot-starter-web</artifactId>
      <exclusions>
        <exclusion><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-logging</artifactId></exclusion>
      </exclusions>
    </dependency>
    <dependency>
      <groupId>org.springframework.boot</groupId>
      <artifactId>spring-boot-starter-log4j2</artifactId>
    </dependency>
    <dependency>
      <groupId>org.springframework.cloud</groupId>
      <artifactId>spring-cloud-starter-openfeign</artifactId>
      <exclusions>
        <exclusion><groupId>io.github.openfeign</groupId><artifactId>*</artifactId></exclusion>
      </exclusions>
    </dependency>
    <dependency>
      <groupId>org.springframework.boot</groupId>
      <artifactId>spring-boot-starter-test</artifactId>
      <scope>test</scope>
    </dependency>
    <dependency>
      <groupId>com.fasterxml.jackson.core</groupId>
      <artifactId>jackson-databind</artifactId>
      <version>[2.13.0,2.13.3]</version>
      <optional>true</optional>
    </dependency>
    <dependency>
      <groupId>org.postgresql</groupId>
      <artifactId>postgresql</artifactId>
      <scope>runtime</scope>
    </dependency>
    <dependency>
      <groupId>org.projectlombok</groupId>
      <artifactId>lombok</artifactId>
      <scope>provided</scope>
    </dependency>
  </dependencies>
</project>
`;

/**
 * Mediation corner cases: commons-lang3 reached through a test dependency first and through a compile
 * one at the same depth (first version, widest scope); a provided dependency of struts2-core that the
 * project manages to compile scope (still not followed: Maven selects before it manages); a dependency
 * declared twice (the last declaration wins); a classifier.
 */
const EDGE_CASES = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>edge</artifactId>
  <version>1</version>
  <dependencyManagement>
    <dependencies>
      <dependency><groupId>javax.servlet</groupId><artifactId>javax.servlet-api</artifactId><version>4.0.1</version><scope>compile</scope></dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency><groupId>org.apache.commons</groupId><artifactId>commons-text</artifactId><version>1.9</version><scope>test</scope></dependency>
    <dependency><groupId>org.apache.commons</groupId><artifactId>commons-configuration2</artifactId><version>2.8.0</version></dependency>
    <dependency><groupId>org.apache.struts</groupId><artifactId>struts2-core</artifactId><version>2.5.30</version></dependency>
    <dependency><groupId>commons-io</groupId><artifactId>commons-io</artifactId><version>2.6</version></dependency>
    <dependency><groupId>commons-io</groupId><artifactId>commons-io</artifactId><version>2.11.0</version></dependency>
    <dependency><groupId>org.apache.commons</groupId><artifactId>commons-text</artifactId><version>1.10.0</version><scope>runtime</scope><classifier>sources</classifier></dependency>
  </dependencies>
</project>
`;

/** Published projects, each exercising other parts of the model (see the test names). */
const SUBJECTS: { name: string; source: { coordinates: string } | { pomXml: string }; covers: string }[] = [
  {
    name: "webgoat-container-7.0.1",
    source: { coordinates: "org.owasp.webgoat:webgoat-container:7.0.1" },
    covers: "versions pinned by the parent POM, provided and test scopes",
  },
  {
    name: "solr-core-8.9.0",
    source: { coordinates: "org.apache.solr:solr-core:8.9.0" },
    covers: "log4j-core 2.13.2 managed by the grandparent POM, optional dependencies",
  },
  {
    name: "dropwizard-core-4.0.2",
    source: { coordinates: "io.dropwizard:dropwizard-core:4.0.2" },
    covers: "BOMs importing BOMs",
  },
  {
    name: "hadoop-common-3.3.6",
    source: { coordinates: "org.apache.hadoop:hadoop-common:3.3.6" },
    covers: "managed exclusions added to declared ones, test-jar dependencies, profiles",
  },
  {
    name: "quarkus-resteasy-reactive-3.2.0.Final",
    source: { coordinates: "io.quarkus:quarkus-resteasy-reactive:3.2.0.Final" },
    covers: "the Quarkus BOM, an OS-activated profile adding a native library",
  },
  {
    name: "edge-cases",
    source: { pomXml: EDGE_CASES },
    covers: "same-depth mediation with scope widening, managed scope, duplicate declaration, classifier",
  },
  {
    name: "spring-boot-app",
    source: { pomXml: SPRING_BOOT_APP },
    covers:
      "starter parent, imported Spring Cloud BOM, revision property, wildcard exclusion, version range, optional",
  },
];

let workDir: string;

function context(overrides: Partial<ReaderContext> & { root: string }): ReaderContext {
  return {
    fetcher: createRegistryFetcher({ cacheDir: SCANNER_HTTP_CACHE, offline: false }),
    offline: false,
    npmRegistryUrl: "https://registry.npmjs.org",
    mavenRepositoryUrl: CENTRAL,
    // an empty local repository: everything comes from the remote one (through the scanner's cache)
    mavenLocalRepository: join(workDir, "empty-local-repository"),
    progress: () => {},
    ...overrides,
  };
}

/**
 * What the reader makes of an input that several tests check: read end to end by the first test that
 * needs it, then handed to the others (solr-core's POM, webgoat's war: a few seconds each).
 */
const readOnce = new Map<string, Promise<Inventory>>();
function readShared(file: string, root: string): Promise<Inventory> {
  let inventory = readOnce.get(file);
  if (!inventory) {
    inventory = mavenReader.read([file], context({ root }));
    readOnce.set(file, inventory);
  }
  return inventory;
}

const packageKey = (p: { name: string; version: string }) => `${p.name}@${p.version}`;
const oracleKey = (a: OracleArtifact) => `${a.groupId}:${a.artifactId}@${a.version}`;

function assertSameSet(actual: Iterable<string>, expected: Iterable<string>, what: string) {
  const a = new Set(actual);
  const e = new Set(expected);
  const extra = [...a].filter((x) => !e.has(x)).sort();
  const missing = [...e].filter((x) => !a.has(x)).sort();
  assert.deepEqual({ extra, missing }, { extra: [], missing: [] }, `${what} differ from mvn dependency:list`);
}

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), "maven-reader-"));
});
after(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe("pom.xml: the effective dependency tree is the one mvn dependency:list resolves", () => {
  for (const subject of SUBJECTS) {
    test(`${subject.name} (${subject.covers})`, async () => {
      const { dir, pom } = await projectDir(subject.name, subject.source);
      const oracle = (await mvnDependencyList(dir)).get("") ?? [];
      assert.ok(oracle.length > 10, "the oracle resolved a real tree");

      // resolver level: every artifact with its type, classifier, version, scope and optional flag
      const ctx = context({ root: dir });
      const repository = createMavenRepository({
        fetcher: ctx.fetcher,
        remoteUrl: CENTRAL,
        localRepository: ctx.mavenLocalRepository,
      });
      const warnings: string[] = [];
      const builder = new ModelBuilder({
        repository,
        env: DEFAULT_ENVIRONMENT,
        workspace: new Map(),
        warn: (m) => warnings.push(m),
      });
      const model = await builder.buildFile({ path: pom, raw: parsePom(await readFile(pom, "utf8")) });
      const resolved = await resolveDependencies(model, {
        builder,
        repository,
        warn: (m) => warnings.push(m),
      });
      assertSameSet(resolved.map(oracleLine), oracle.map(oracleLine), "artifacts, scopes and optional flags");
      assert.deepEqual(warnings, []);

      // reader level: what imaging scan records
      const inventory = await readShared(pom, dir);
      assertSameSet(inventory.packages.map(packageKey), oracle.map(oracleKey), "packages");
      for (const p of inventory.packages) {
        const scopes = oracle.filter((a) => oracleKey(a) === packageKey(p)).map((a) => a.scope);
        const dev = scopes.every((s) => s === "test" || s === "provided");
        assert.equal(p.dev, dev, `${packageKey(p)} dev flag (scopes ${scopes.join(", ")})`);
        assert.equal(p.ecosystem, "maven");
        assert.equal(p.source, "pom.xml");
      }
      // direct = declared by the project itself (its POM or its parents'); a declared artifact that was
      // relocated (axis:axis-saaj → org.apache.axis:axis-saaj) keeps its artifactId, a range its name
      const declared = new Set(model.dependencies.map((d) => d.artifactId));
      for (const p of inventory.packages) {
        assert.equal(p.direct, declared.has(p.name.split(":")[1] ?? ""), `${packageKey(p)} direct flag`);
      }
      assert.deepEqual(inventory.warnings, []);
    });
  }

  test("solr-core 8.9.0 gets the log4j-core its grandparent pins (2.13.2, affected by CVE-2021-44228)", async () => {
    const { dir, pom } = await projectDir("solr-core-8.9.0", {
      coordinates: "org.apache.solr:solr-core:8.9.0",
    });
    const oracle = (await mvnDependencyList(dir)).get("") ?? [];
    const inventory = await readShared(pom, dir);
    const log4j = inventory.packages.find((p) => p.name === "org.apache.logging.log4j:log4j-core");
    assert.equal(log4j?.version, "2.13.2");
    assert.equal(log4j?.version, oracle.find((a) => a.artifactId === "log4j-core")?.version);
    assert.equal(log4j?.dev, false);
  });

  test("the local repository is read first: offline with an empty cache, ~/.m2 alone answers", async () => {
    const { dir, pom } = await projectDir("webgoat-container-7.0.1", {
      coordinates: "org.owasp.webgoat:webgoat-container:7.0.1",
    });
    const oracle = (await mvnDependencyList(dir)).get("") ?? [];
    const inventory = await mavenReader.read(
      [pom],
      context({
        root: dir,
        offline: true,
        fetcher: createRegistryFetcher({ cacheDir: join(workDir, "never-filled-cache"), offline: true }),
        mavenLocalRepository: ORACLE_REPOSITORY,
      }),
    );
    assertSameSet(inventory.packages.map(packageKey), oracle.map(oracleKey), "packages");
    assert.deepEqual(inventory.warnings, []);
  });

  test("offline with nothing cached: warnings name the missing parent, nothing crashes", async () => {
    const { dir, pom } = await projectDir("webgoat-container-7.0.1", {
      coordinates: "org.owasp.webgoat:webgoat-container:7.0.1",
    });
    const inventory = await mavenReader.read(
      [pom],
      context({
        root: dir,
        offline: true,
        fetcher: createRegistryFetcher({ cacheDir: join(workDir, "never-filled-cache"), offline: true }),
      }),
    );
    const messages = inventory.warnings.map((w) => w.message).join("\n");
    assert.match(
      messages,
      /parent POM org\.owasp\.webgoat:webgoat-parent:7\.0\.1 .*not found.*offline cache/,
    );
    assert.ok(inventory.warnings.every((w) => w.file === "pom.xml"));
  });

  test("webgoat-container 7.1, whose parent is not on Maven Central: a warning naming it, like Maven's error", async () => {
    const { dir, pom } = await projectDir("webgoat-container-7.1", {
      coordinates: "org.owasp.webgoat:webgoat-container:7.1",
    });
    const maven = await mvnDependencyListFailure(dir);
    assert.match(maven, /Non-resolvable parent POM.*org\.owasp\.webgoat:webgoat-parent:(?:pom:)?7\.1/s);

    const inventory = await mavenReader.read([pom], context({ root: dir }));
    const parentWarning = inventory.warnings.find((w) =>
      w.message.includes("org.owasp.webgoat:webgoat-parent:7.1"),
    );
    assert.ok(parentWarning, JSON.stringify(inventory.warnings));
    assert.equal(parentWarning.file, "pom.xml");
    assert.match(parentWarning.message, /not found/);
    // every declared dependency is either resolved or named in a warning (its version came from the
    // missing parent); no version is invented
    assert.ok(inventory.packages.every((p) => p.version !== "" && !p.version.includes("${")));
    const raw = parsePom(await readFile(pom, "utf8"));
    assert.ok(raw.dependencies.length > 10);
    for (const d of raw.dependencies) {
      const name = `${d.groupId}:${d.artifactId}`;
      const named = inventory.warnings.some((w) => w.message.startsWith(`${name}: no version`));
      assert.ok(named || inventory.packages.some((p) => p.name === name), `${name} resolved or named`);
    }
  });

  test("a reactor: modules found by relativePath, revision from .mvn/maven.config, modules not reported", async () => {
    const root = join(workDir, "reactor");
    const pom = (body: string) =>
      `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>${body}</project>`;
    const parentRef = `<parent><groupId>com.example.shop</groupId><artifactId>shop-parent</artifactId><version>\${revision}</version></parent>`;
    const files: Record<string, string> = {
      ".mvn/maven.config": "-Drevision=2.5.0\n",
      "pom.xml":
        pom(`<groupId>com.example.shop</groupId><artifactId>shop-parent</artifactId><version>\${revision}</version>
        <packaging>pom</packaging><modules><module>core</module><module>app</module></modules>
        <properties><jackson.version>2.9.10</jackson.version></properties>
        <dependencyManagement><dependencies>
          <dependency><groupId>com.fasterxml.jackson.core</groupId><artifactId>jackson-databind</artifactId><version>\${jackson.version}</version></dependency>
          <dependency><groupId>org.apache.commons</groupId><artifactId>commons-text</artifactId><version>1.9</version></dependency>
        </dependencies></dependencyManagement>`),
      "core/pom.xml": pom(`${parentRef}<artifactId>shop-core</artifactId><dependencies>
          <dependency><groupId>com.fasterxml.jackson.core</groupId><artifactId>jackson-databind</artifactId></dependency>
          <dependency><groupId>org.apache.commons</groupId><artifactId>commons-text</artifactId></dependency>
        </dependencies>`),
      "app/pom.xml": pom(`${parentRef}<artifactId>shop-app</artifactId><dependencies>
          <dependency><groupId>com.example.shop</groupId><artifactId>shop-core</artifactId><version>\${project.version}</version></dependency>
          <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.14.1</version></dependency>
        </dependencies>`),
      // a test resource of a module is not a project of the reactor
      "core/src/test/resources/broken/pom.xml": "<project><unclosed></project>",
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    const oracleDir = join(dirname(ORACLE_REPOSITORY), "projects", "reactor");
    for (const [path, text] of Object.entries(files)) {
      if (path.includes("/src/")) continue;
      await mkdir(dirname(join(oracleDir, path)), { recursive: true });
      const existing = await readFile(join(oracleDir, path), "utf8").catch(() => "");
      if (existing !== text) {
        await writeFile(join(oracleDir, path), text);
        await rm(join(oracleDir, dirname(path), "mvn-dependency-list.txt"), { force: true });
      }
    }
    // a reactor resolves its modules from their build output: `compile` first
    const lists = await mvnDependencyList(oracleDir, ["", "core", "app"], ["compile"]);
    const expected = [...lists.values()].flat().filter((a) => a.groupId !== "com.example.shop");

    const poms = Object.keys(files)
      .filter((p) => basename(p) === "pom.xml")
      .map((p) => join(root, p));
    const inventory = await mavenReader.read(poms, context({ root }));
    assertSameSet(inventory.packages.map(packageKey), expected.map(oracleKey), "packages");
    assert.ok(!inventory.packages.some((p) => p.name.startsWith("com.example.shop:")));
    const log4j = inventory.packages.find((p) => p.name === "org.apache.logging.log4j:log4j-core");
    assert.deepEqual([log4j?.source, log4j?.direct], ["app/pom.xml", true]);
    assert.deepEqual(inventory.warnings, []);
  });

  test("a BOM that cannot be found: a warning naming it, the rest still resolved", async () => {
    const dir = join(workDir, "missing-bom");
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, "pom.xml"),
      `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
        <groupId>com.example</groupId><artifactId>app</artifactId><version>1</version>
        <dependencyManagement><dependencies>
          <dependency><groupId>com.example.nowhere</groupId><artifactId>platform-bom</artifactId><version>9.9.9</version><type>pom</type><scope>import</scope></dependency>
        </dependencies></dependencyManagement>
        <dependencies>
          <dependency><groupId>com.example.nowhere</groupId><artifactId>managed-by-the-bom</artifactId></dependency>
          <dependency><groupId>org.apache.commons</groupId><artifactId>commons-text</artifactId><version>1.9</version></dependency>
        </dependencies></project>`,
    );
    const inventory = await mavenReader.read([join(dir, "pom.xml")], context({ root: dir }));
    assert.deepEqual(inventory.packages.map(packageKey).sort(), [
      "org.apache.commons:commons-lang3@3.11",
      "org.apache.commons:commons-text@1.9",
    ]);
    const messages = inventory.warnings.map((w) => `${w.file}: ${w.message}`);
    assert.ok(
      messages.some((m) =>
        /^pom\.xml: BOM com\.example\.nowhere:platform-bom:9\.9\.9 imported by .* not found/.test(m),
      ),
      messages.join("\n"),
    );
    assert.ok(
      messages.some((m) => m.startsWith("pom.xml: com.example.nowhere:managed-by-the-bom: no version")),
      messages.join("\n"),
    );
  });

  test("a malformed pom.xml is bad input: file and line, nothing returned", async () => {
    const dir = join(workDir, "malformed");
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, "pom.xml"),
      "<project>\n  <dependencies>\n    <dependency>\n  </dependencies>\n</project>\n",
    );
    await assert.rejects(mavenReader.read([join(dir, "pom.xml")], context({ root: dir })), (error) => {
      assert.ok(error instanceof ScanInputError);
      assert.equal(error.file, "pom.xml");
      assert.equal(typeof error.line, "number");
      assert.match(error.message, /^pom\.xml:\d+: not well-formed XML/);
      return true;
    });
    await writeFile(join(dir, "pom.xml"), "<settings><localRepository/></settings>");
    await assert.rejects(
      mavenReader.read([join(dir, "pom.xml")], context({ root: dir })),
      /pom\.xml: not a Maven POM/,
    );
  });
});

describe("archives", () => {
  test("webgoat-container-7.0.1.war: WEB-INF/lib holds what mvn resolves at compile and runtime scope", async () => {
    const { dir } = await projectDir("webgoat-container-7.0.1", {
      coordinates: "org.owasp.webgoat:webgoat-container:7.0.1",
    });
    const oracle = (await mvnDependencyList(dir)).get("") ?? [];
    const war = await centralFile("org.owasp.webgoat:webgoat-container:7.0.1", "war");
    const inventory = await readShared(war, dirname(war));
    const shipped = oracle.filter((a) => a.scope === "compile" || a.scope === "runtime");
    assertSameSet(inventory.packages.map(packageKey), shipped.map(oracleKey), "packages of the war");
    assert.deepEqual(inventory.warnings, []);
    // the war itself is the application, not one of its packages
    assert.ok(!inventory.packages.some((p) => p.name === "org.owasp.webgoat:webgoat-container"));
    const gson = inventory.packages.find((p) => p.name === "com.google.code.gson:gson");
    // gson 2.3.1's jar embeds no Maven metadata: identified by its SHA-1
    assert.equal(gson?.source, "webgoat-container-7.0.1.war!/WEB-INF/lib/gson-2.3.1.jar");
    assert.ok(inventory.packages.every((p) => p.dev === false));
    assert.equal(
      inventory.packages.find((p) => p.name === "commons-collections:commons-collections")?.version,
      "3.2.1",
    );
  });

  test("a library jar is its own package; an ear's nested war and lib/ jars are read", async () => {
    const log4j = join(ORACLE_REPOSITORY, "org/apache/logging/log4j/log4j-core/2.13.2/log4j-core-2.13.2.jar");
    await projectDir("solr-core-8.9.0", { coordinates: "org.apache.solr:solr-core:8.9.0" }).then(({ dir }) =>
      mvnDependencyList(dir),
    );
    const jarInventory = await mavenReader.read([log4j], context({ root: dirname(log4j) }));
    assert.deepEqual(
      jarInventory.packages.map((p) => [p.name, p.version, p.direct, p.source]),
      [["org.apache.logging.log4j:log4j-core", "2.13.2", true, "log4j-core-2.13.2.jar"]],
    );

    const war = await centralFile("org.owasp.webgoat:webgoat-container:7.0.1", "war");
    const ear = join(workDir, "shop.ear");
    await writeFile(
      ear,
      zipSync({
        "META-INF/application.xml": new TextEncoder().encode("<application/>"),
        "webgoat.war": new Uint8Array(await readFile(war)),
        "lib/log4j-core-2.13.2.jar": new Uint8Array(await readFile(log4j)),
      }),
    );
    const warInventory = await readShared(war, dirname(war));
    const earInventory = await mavenReader.read([ear], context({ root: workDir }));
    assertSameSet(
      earInventory.packages.map(packageKey),
      [...warInventory.packages.map(packageKey), "org.apache.logging.log4j:log4j-core@2.13.2"],
      "packages of the ear",
    );
    const nested = earInventory.packages.find((p) => p.name === "commons-io:commons-io") as InventoryPackage;
    assert.equal(nested.source, "shop.ear!/webgoat.war!/WEB-INF/lib/commons-io-2.4.jar");
  });

  test("a Spring Boot jar is the application: BOOT-INF/lib jars are its packages, its own identity is not", async () => {
    await projectDir("solr-core-8.9.0", { coordinates: "org.apache.solr:solr-core:8.9.0" }).then(({ dir }) =>
      mvnDependencyList(dir),
    );
    const jar = (path: string) => readFile(join(ORACLE_REPOSITORY, path)).then((b) => new Uint8Array(b));
    const bootJar = join(workDir, "app.jar");
    const text = (t: string) => new TextEncoder().encode(t);
    await writeFile(
      bootJar,
      zipSync({
        "META-INF/MANIFEST.MF": text(
          "Manifest-Version: 1.0\r\nMain-Class: org.springframework.boot.loader.JarLauncher\r\n",
        ),
        "META-INF/maven/com.example/app/pom.properties": text(
          "groupId=com.example\nartifactId=app\nversion=1.0.0\n",
        ),
        "BOOT-INF/classes/com/example/App.class": text("not really a class"),
        "BOOT-INF/lib/log4j-core-2.13.2.jar": await jar(
          "org/apache/logging/log4j/log4j-core/2.13.2/log4j-core-2.13.2.jar",
        ),
        "BOOT-INF/lib/log4j-api-2.13.2.jar": await jar(
          "org/apache/logging/log4j/log4j-api/2.13.2/log4j-api-2.13.2.jar",
        ),
      }),
    );
    const inventory = await mavenReader.read([bootJar], context({ root: workDir }));
    assert.deepEqual(inventory.packages.map((p) => [packageKey(p), p.source]).sort(), [
      ["org.apache.logging.log4j:log4j-api@2.13.2", "app.jar!/BOOT-INF/lib/log4j-api-2.13.2.jar"],
      ["org.apache.logging.log4j:log4j-core@2.13.2", "app.jar!/BOOT-INF/lib/log4j-core-2.13.2.jar"],
    ]);
    assert.deepEqual(inventory.warnings, []);
  });

  test("a file that is not a zip archive, scanned by itself, is bad input", async () => {
    const fake = join(workDir, "broken.jar");
    await writeFile(fake, "not a zip");
    await assert.rejects(mavenReader.read([fake], context({ root: workDir, singleFile: true })), (error) => {
      assert.ok(error instanceof ScanInputError);
      assert.match(error.message, /^broken\.jar: not a readable zip archive/);
      return true;
    });
  });

  test("a corrupt archive among a directory's inputs is a warning naming it; the other archives are read", async () => {
    const dir = join(workDir, "mixed-archives");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "broken.jar"), "not a zip");
    // a real jar from the oracle's repository, filled by the Spring Boot test above
    await writeFile(
      join(dir, "log4j-api-2.13.2.jar"),
      await readFile(
        join(ORACLE_REPOSITORY, "org/apache/logging/log4j/log4j-api/2.13.2/log4j-api-2.13.2.jar"),
      ),
    );
    const inventory = await mavenReader.read(
      [join(dir, "broken.jar"), join(dir, "log4j-api-2.13.2.jar")],
      context({ root: dir }),
    );
    assert.deepEqual(
      inventory.packages.map((p) => packageKey(p)),
      ["org.apache.logging.log4j:log4j-api@2.13.2"],
    );
    assert.equal(inventory.warnings.length, 1);
    assert.equal(inventory.warnings[0]?.file, "broken.jar");
    assert.match(
      inventory.warnings[0]?.message ?? "",
      /^not a readable zip archive .*: its packages are not listed$/,
    );
  });
});
