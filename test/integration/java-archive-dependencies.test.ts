/**
 * Java archives scanned as users ship them, checked against real Maven (`mvn dependency:list`, Maven
 * 3.8.7) on the same POMs: a library jar scanned on its own (log4j-web 2.14.1, whose POM takes log4j-core
 * from its parent through ${project.version}: the Log4Shell case; jackson-dataformat-yaml 2.13.0, a parent
 * chain importing jackson-bom), a thin war (WebGoat 7.0.1's without WEB-INF/lib) and a thin ear holding
 * it, a Spring Boot fat jar
 * lacking one declared dependency, and a Spring Boot "fully executable" jar built here by Maven (a launch
 * script before the zip data). Recorded in both stores and answered by the occurrences operation.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { unzipSync, zipSync } from "fflate";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { AnalysisDocument } from "../../src/scanner/analysis-document.ts";
import type { ReaderContext } from "../../src/scanner/inventory.ts";
import { mavenReader } from "../../src/scanner/maven/reader.ts";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import type { ScanSummary } from "../../src/scanner/scan.ts";
import { runCli, runCliProcess } from "../support/cli.ts";
import { builtSpringBootApp } from "../support/java-subjects.ts";
import {
  CENTRAL,
  centralFile,
  mvnDependencyList,
  ORACLE_REPOSITORY,
  type OracleArtifact,
  projectDir,
  SCANNER_HTTP_CACHE,
  shareScannerHttpCache,
} from "../support/maven-subjects.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const LOG4SHELL = new URL("../fixtures/osv/GHSA-jfh8-c2jp-5v3q.json", import.meta.url).pathname;
const LOG4J_WEB = "org.apache.logging.log4j:log4j-web:2.14.1";
const JACKSON_YAML = "com.fasterxml.jackson.dataformat:jackson-dataformat-yaml:2.13.0";
const WEBGOAT = "org.owasp.webgoat:webgoat-container:7.0.1";
// Published by Gradle: no META-INF/maven inside the jar.
const KAFKA_CLIENTS = "org.apache.kafka:kafka-clients:3.6.0";

let work: string;
before(() => {
  work = mkdtempSync(join(tmpdir(), "imaging-java-archives-"));
});
after(() => rmSync(work, { recursive: true, force: true }));

function context(root: string, overrides: Partial<ReaderContext> = {}): ReaderContext {
  return {
    fetcher: createRegistryFetcher({ cacheDir: SCANNER_HTTP_CACHE, offline: false }),
    offline: false,
    npmRegistryUrl: "https://registry.npmjs.org",
    mavenRepositoryUrl: CENTRAL,
    mavenLocalRepository: join(work, "empty-local-repository"),
    progress: () => {},
    root,
    singleFile: true,
    ...overrides,
  };
}

const key = (p: { name: string; version: string }) => `${p.name}@${p.version}`;
const oracleKey = (a: OracleArtifact) => `${a.groupId}:${a.artifactId}@${a.version}`;
const shipped = (list: OracleArtifact[]) =>
  list.filter((a) => a.scope === "compile" || a.scope === "runtime").map(oracleKey);

function assertSameSet(actual: Iterable<string>, expected: Iterable<string>, what: string) {
  const a = new Set(actual);
  const e = new Set(expected);
  const extra = [...a].filter((x) => !e.has(x)).sort();
  const missing = [...e].filter((x) => !a.has(x)).sort();
  assert.deepEqual(
    { extra, missing },
    { extra: [], missing: [] },
    `${what}: differences from mvn dependency:list`,
  );
}

/** What mvn dependency:list resolves for a published POM (compile and runtime scopes). */
async function oracle(coordinates: string): Promise<string[]> {
  const { dir } = await projectDir(coordinates.split(":").slice(1).join("-"), { coordinates });
  return shipped((await mvnDependencyList(dir)).get("") ?? []);
}

/** `imaging scan PATH --output`: the summary and the analysis document. */
async function scanToDocument(path: string, extra: string[] = []) {
  const output = join(work, `analysis-${Math.random().toString(36).slice(2)}.json`);
  const dataDir = join(work, `data-${Math.random().toString(36).slice(2)}`);
  shareScannerHttpCache(dataDir);
  const result = await runCli(
    ["scan", path, "--app", "jar-app", "--json", "--output", output, "--data-dir", dataDir, ...extra],
    { MAVEN_LOCAL_REPOSITORY: join(work, "empty-local-repository"), DATABASE_URL: "", MAVEN_SEARCH_URL: "" },
  );
  assert.equal(result.code, 0, result.stderr);
  return {
    summary: JSON.parse(result.stdout) as ScanSummary,
    document: JSON.parse(readFileSync(output, "utf8")) as AnalysisDocument,
  };
}

describe("a library jar scanned on its own: its POM's dependencies, resolved as Maven does", () => {
  it("log4j-web 2.14.1: log4j-core 2.14.1 from its parent through project.version, and the calls into it", async () => {
    const jar = await centralFile(LOG4J_WEB, "jar");
    const inventory = await mavenReader.read([jar], context(join(jar, "..")));
    assertSameSet(
      inventory.packages.map(key),
      [...(await oracle(LOG4J_WEB)), "org.apache.logging.log4j:log4j-web@2.14.1"],
      "log4j-web-2.14.1.jar",
    );
    assert.deepEqual(inventory.warnings, []);
    const core = inventory.packages.find((p) => p.name === "org.apache.logging.log4j:log4j-core");
    assert.deepEqual(core && [core.version, core.direct, core.source], [
      "2.14.1",
      true,
      "log4j-web-2.14.1.jar!/META-INF/maven/org.apache.logging.log4j/log4j-web/pom.xml",
    ]);

    // the jar's own classes are the application's: their calls into log4j-core are external objects
    const { summary, document } = await scanToDocument(jar);
    assert.equal(summary.code[0]?.precision, "bytecode");
    assert.ok((summary.code[0]?.files ?? 0) >= 10, JSON.stringify(summary.code));
    const initializer = document.objects.find(
      (o) =>
        o.package === "maven:org.apache.logging.log4j:log4j-core" &&
        o.fullName === "org.apache.logging.log4j.core.LoggerContext.start",
    );
    assert.ok(initializer, JSON.stringify(document.objects.map((o) => `${o.package} ${o.fullName}`)));
    const callers = document.references.filter((r) => r.to === initializer.id).map((r) => r.from.fullName);
    assert.ok(
      callers.length > 0 && callers.every((c) => c.startsWith("org.apache.logging.log4j.web.")),
      callers.join(),
    );
    assert.ok(!document.objects.some((o) => o.package === "maven:org.apache.logging.log4j:log4j-web"));
  });

  it("jackson-dataformat-yaml 2.13.0: a parent chain importing jackson-bom", async () => {
    const jar = await centralFile(JACKSON_YAML, "jar");
    const inventory = await mavenReader.read([jar], context(join(jar, "..")));
    assertSameSet(
      inventory.packages.map(key),
      [...(await oracle(JACKSON_YAML)), "com.fasterxml.jackson.dataformat:jackson-dataformat-yaml@2.13.0"],
      "jackson-dataformat-yaml-2.13.0.jar",
    );
    assert.deepEqual(inventory.warnings, []);
  });

  it("a jar without META-INF/maven and its .pom beside it (a repository's layout): named and resolved by it", async () => {
    const dir = join(work, "pom-beside");
    mkdirSync(dir);
    const entries = unzipSync(new Uint8Array(readFileSync(await centralFile(LOG4J_WEB, "jar"))));
    const stripped = Object.fromEntries(
      Object.entries(entries).filter(([name]) => !name.startsWith("META-INF/maven/")),
    );
    const jar = join(dir, "log4j-web-2.14.1.jar");
    writeFileSync(jar, zipSync(stripped));
    writeFileSync(join(dir, "log4j-web-2.14.1.pom"), readFileSync(await centralFile(LOG4J_WEB, "pom")));
    const inventory = await mavenReader.read([jar], context(dir));
    assertSameSet(
      inventory.packages.map(key),
      [...(await oracle(LOG4J_WEB)), "org.apache.logging.log4j:log4j-web@2.14.1"],
      "log4j-web-2.14.1.jar beside its .pom",
    );
    assert.deepEqual(inventory.warnings, [], "named by the POM beside it, not 'not identified'");
    const core = inventory.packages.find((p) => p.name === "org.apache.logging.log4j:log4j-core");
    assert.equal(core?.source, "log4j-web-2.14.1.pom");
  });

  it("a jar without Maven metadata (kafka-clients 3.6.0, built by Gradle): named by its checksum, its published POM resolved", async () => {
    const jar = await centralFile(KAFKA_CLIENTS, "jar");
    const entries = unzipSync(new Uint8Array(readFileSync(jar)));
    assert.ok(!Object.keys(entries).some((name) => name.startsWith("META-INF/maven/")));
    const dir = join(work, "gradle-jar");
    mkdirSync(dir);
    const alone = join(dir, "kafka-clients-3.6.0.jar");
    writeFileSync(alone, readFileSync(jar));
    const inventory = await mavenReader.read([alone], context(dir, { mavenSearchUrl: undefined }));
    const expected = await oracle(KAFKA_CLIENTS);
    assert.ok(expected.length >= 4, expected.join(", "));
    assertSameSet(
      inventory.packages.map(key),
      [...expected, "org.apache.kafka:kafka-clients@3.6.0"],
      "kafka-clients-3.6.0.jar alone",
    );
    assert.deepEqual(inventory.warnings, []);
  });

  it("a jar among others in a scanned folder stays a library: its neighbours are its dependencies", async () => {
    const dir = join(work, "lib-folder");
    mkdirSync(dir);
    writeFileSync(join(dir, "log4j-web-2.14.1.jar"), readFileSync(await centralFile(LOG4J_WEB, "jar")));
    const inventory = await mavenReader.read(
      [join(dir, "log4j-web-2.14.1.jar")],
      context(dir, { singleFile: false }),
    );
    assert.deepEqual(inventory.packages.map(key), ["org.apache.logging.log4j:log4j-web@2.14.1"]);
  });
});

describe("containers lacking jars their POM declares", () => {
  /** WebGoat 7.0.1's war from Maven Central, without WEB-INF/lib. */
  async function thinWebGoat(): Promise<Uint8Array> {
    const war = unzipSync(new Uint8Array(readFileSync(await centralFile(WEBGOAT, "war"))));
    return zipSync(
      Object.fromEntries(Object.entries(war).filter(([name]) => !name.startsWith("WEB-INF/lib/"))),
    );
  }

  it("a thin war (no WEB-INF/lib): everything mvn resolves at compile and runtime scope", async () => {
    const path = join(work, "webgoat-thin.war");
    writeFileSync(path, await thinWebGoat());
    const inventory = await mavenReader.read([path], context(work));
    assertSameSet(inventory.packages.map(key), await oracle(WEBGOAT), "webgoat-thin.war");
    assert.ok(!inventory.packages.some((p) => p.name === "org.owasp.webgoat:webgoat-container"));
    const collections = inventory.packages.find((p) => p.name === "commons-collections:commons-collections");
    assert.deepEqual(collections && [collections.version, collections.source], [
      "3.2.1",
      "webgoat-thin.war!/META-INF/maven/org.owasp.webgoat/webgoat-container/pom.xml",
    ]);
  });

  it("a thin ear holding a thin war: the war's POM resolved, the war's calls attributed to those jars", async () => {
    const path = join(work, "webgoat-thin.ear");
    writeFileSync(
      path,
      zipSync({
        "META-INF/application.xml": new TextEncoder().encode(
          "<application><module><web><web-uri>webgoat-container-7.0.1.war</web-uri>" +
            "<context-root>/WebGoat</context-root></web></module></application>",
        ),
        "webgoat-container-7.0.1.war": [await thinWebGoat(), { level: 0 }],
      }),
    );
    const { summary, document } = await scanToDocument(path);
    assertSameSet(
      document.packages.map((p) => key(p)),
      await oracle(WEBGOAT),
      "webgoat-thin.ear",
    );
    assert.equal(summary.code[0]?.precision, "bytecode");
    // guava 18.0 and commons-lang3 3.4 come only from the war's POM: their classes from the repository
    const fromNullable = document.objects.find(
      (o) => o.fullName === "com.google.common.base.Optional.fromNullable",
    );
    assert.equal(fromNullable?.package, "maven:com.google.guava:guava");
    assert.deepEqual(
      document.references
        .filter((r) => r.to === fromNullable?.id)
        .map((r) => r.from.fullName)
        .sort(),
      [
        "org.owasp.webgoat.plugins.Plugin.getLessonSolution",
        "org.owasp.webgoat.plugins.Plugin.getLessonSource",
      ],
    );
    const escapeHtml = document.objects.find(
      (o) => o.fullName === "org.apache.commons.lang3.StringEscapeUtils.escapeHtml4",
    );
    assert.equal(escapeHtml?.package, "maven:org.apache.commons:commons-lang3");
  });

  it("a Spring Boot jar without commons-text in BOOT-INF/lib: listed from its POM, its calls attributed", async () => {
    const { jar } = await builtSpringBootApp();
    // rewritten without one library (Spring Boot's repackager records offsets from the file's start)
    const entries = unzipSync(new Uint8Array(readFileSync(jar)));
    const kept: Record<string, [Uint8Array, { level: 0 }]> = {};
    for (const [name, data] of Object.entries(entries)) {
      if (name !== "BOOT-INF/lib/commons-text-1.9.jar") kept[name] = [data, { level: 0 }];
    }
    mkdirSync(join(work, "boot-lacking"));
    const path = join(work, "boot-lacking", "greeting-service-1.0.0.jar");
    writeFileSync(path, zipSync(kept));
    const { summary, document } = await scanToDocument(path);
    assert.ok(
      document.packages.some((p) => p.name === "org.apache.commons:commons-text" && p.version === "1.9"),
      JSON.stringify(document.packages),
    );
    assert.ok(document.packages.some((p) => p.name === "org.apache.logging.log4j:log4j-core"));
    const replace = document.objects.find(
      (o) => o.fullName === "org.apache.commons.text.StringSubstitutor.replace",
    );
    assert.equal(replace?.package, "maven:org.apache.commons:commons-text");
    assert.deepEqual(
      document.references.filter((r) => r.to === replace?.id).map((r) => r.from.fullName),
      ["com.example.greeting.GreetingApplication.greet"],
    );
    assert.equal(summary.code[0]?.files, 1);
  });
});

describe("a Spring Boot fully executable jar (a launch script before the zip data)", () => {
  it("is read after its script: the packages mvn resolves (and the layer tools Boot adds), its code", async () => {
    const { jar, dir } = await builtSpringBootApp();
    const bytes = readFileSync(jar);
    assert.equal(bytes.subarray(0, 11).toString(), "#!/bin/bash", "the jar starts with its launch script");
    // Maven's repackager records offsets from the file's start; the same script before a plain jar (as
    // `cat launch.script app.jar` and Gradle's bootJar write it) leaves them relative to the zip data,
    // which only the end-of-central-directory record tells: both read alike
    const script = bytes.subarray(0, bytes.indexOf("PK\u0003\u0004"));
    const plain: Record<string, [Uint8Array, { level: 0 | 6 }]> = {};
    for (const [name, data] of Object.entries(unzipSync(new Uint8Array(bytes)))) {
      plain[name] = [data, { level: name.endsWith(".jar") ? 0 : 6 }];
    }
    mkdirSync(join(work, "concatenated"));
    const concatenated = join(work, "concatenated", "greeting-service-1.0.0.jar");
    writeFileSync(concatenated, Buffer.concat([script, zipSync(plain)]));
    const expected = [
      ...shipped((await mvnDependencyList(dir)).get("") ?? []),
      "org.springframework.boot:spring-boot-jarmode-layertools@2.7.18",
    ];
    for (const path of [jar, concatenated]) {
      const { summary, document } = await scanToDocument(path);
      assertSameSet(
        document.packages.map((p) => key(p)),
        expected,
        path,
      );
      assert.deepEqual(
        summary.warnings.filter((w) => /not identified|not a readable/.test(w.message)),
        [],
        "every nested jar is read and identified",
      );
      const getLogger = document.objects.find(
        (o) => o.fullName === "org.apache.logging.log4j.LogManager.getLogger",
      );
      assert.equal(getLogger?.package, "maven:org.apache.logging.log4j:log4j-api");
      assert.deepEqual(
        document.references.filter((r) => r.to === getLogger?.id).map((r) => r.from.fullName),
        ["com.example.greeting.GreetingApplication.<clinit>"],
      );
    }
  });

  it("reads a jar with leading bytes nested in a war", async () => {
    const api = readFileSync(
      join(ORACLE_REPOSITORY, "org/apache/logging/log4j/log4j-api/2.14.1/log4j-api-2.14.1.jar"),
    );
    const prefixed = Buffer.concat([Buffer.from('#!/bin/sh\nexec java -jar "$0" "$@"\n'), api]);
    const path = join(work, "prefixed-inside.war");
    writeFileSync(
      path,
      zipSync({
        "WEB-INF/web.xml": new TextEncoder().encode("<web-app/>"),
        "WEB-INF/lib/log4j-api-2.14.1.jar": prefixed,
      }),
    );
    const inventory = await mavenReader.read([path], context(work));
    assert.deepEqual(inventory.packages.map(key), ["org.apache.logging.log4j:log4j-api@2.14.1"]);
    assert.deepEqual(inventory.warnings, []);
  });

  it("an archive that cannot be read is one line and a non-zero exit; nothing found is not recorded", async () => {
    const broken = join(work, "broken.jar");
    writeFileSync(
      broken,
      Buffer.concat([Buffer.from("#!/bin/bash\n"), Buffer.from("PK\u0003\u0004 truncated")]),
    );
    const dataDir = join(work, "refused-data");
    const refused = await runCli(["scan", broken, "--app", "refused", "--data-dir", dataDir], {
      DATABASE_URL: "",
    });
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr.trim().split("\n").length, 1, refused.stderr);
    assert.match(refused.stderr, /broken\.jar: not a readable zip archive/);

    // a jar of one class, no Maven metadata, known to no repository: no package
    const lone = join(work, "lone", "tool.jar");
    mkdirSync(join(work, "lone"));
    const api = unzipSync(
      new Uint8Array(
        readFileSync(
          join(ORACLE_REPOSITORY, "org/apache/logging/log4j/log4j-api/2.14.1/log4j-api-2.14.1.jar"),
        ),
      ),
      { filter: (f) => f.name === "org/apache/logging/log4j/Level.class" },
    );
    writeFileSync(
      lone,
      zipSync({ "com/example/Tool.class": api["org/apache/logging/log4j/Level.class"] as Uint8Array }),
    );
    const empty = await runCli(
      ["scan", lone, "--app", "lone", "--offline", "--json", "--data-dir", dataDir],
      {
        DATABASE_URL: "",
      },
    );
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /no package found, nothing recorded .*--allow-empty/);
    const allowed = await runCli(
      ["scan", lone, "--app", "lone", "--offline", "--json", "--allow-empty", "--data-dir", dataDir],
      { DATABASE_URL: "" },
    );
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.deepEqual([JSON.parse(allowed.stdout).packages, JSON.parse(allowed.stdout).seq], [0, 1]);
  });
});

for (const kind of STORE_KINDS) {
  describe(`log4j-web 2.14.1 alone, recorded in the ${kind} store`, () => {
    let store: TestStore;
    before(async () => {
      store = await createTestStore(kind);
      shareScannerHttpCache(store.dataDir);
    });
    after(async () => store?.drop());

    it("answers Log4Shell's occurrences with log4j-core 2.14.1 and the methods log4j-web calls", async () => {
      const env = { DATABASE_URL: store.databaseUrl ?? "", MAVEN_SEARCH_URL: "" };
      const imported = await runCliProcess(
        ["advisories", "import", LOG4SHELL, "--data-dir", store.dataDir],
        env,
      );
      assert.equal(imported.code, 0, imported.stderr);
      const jar = await centralFile(LOG4J_WEB, "jar");
      const scanned = await runCliProcess(
        ["scan", jar, "--app", "log4j-web", "--json", "--data-dir", store.dataDir],
        env,
      );
      assert.equal(scanned.code, 0, scanned.stderr);
      const summary = JSON.parse(scanned.stdout) as ScanSummary;
      assert.equal(summary.vulnerablePackages, 1, "log4j-core 2.14.1, from log4j-web's POM");
      const service = await startTestService(store);
      try {
        const { key: apiKey } = await createApiKey(service.store.db, {
          user: "ci",
          role: "admin",
          applications: [],
        });
        const response = await fetch(
          `${service.gatewayUrl}/rest/applications/log4j-web/insights/cve/CVE-2021-44228/occurrences?limit=20`,
          { headers: { "x-api-key": apiKey } },
        );
        assert.equal(response.status, 200, await response.clone().text());
        const page = (await response.json()) as {
          name: string;
          version: string;
          objects: { fullName: string }[];
        }[];
        const core = page.find((p) => p.name === "org.apache.logging.log4j:log4j-core");
        assert.equal(core?.version, "2.14.1");
        assert.ok(
          core?.objects.some((o) => o.fullName === "org.apache.logging.log4j.core.LoggerContext.start"),
          JSON.stringify(core),
        );
      } finally {
        await service.stop();
      }
    });
  });
}
