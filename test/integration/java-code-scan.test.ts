/**
 * `imaging scan` on Java applications as users ship them: a Spring Boot fat jar (an application class
 * compiled here by javac against the real log4j-core 2.14.1, log4j-api and commons-logging jars, nested in
 * BOOT-INF/lib with jcl-over-slf4j, which declares the same commons-logging classes), a damaged class file
 * and a damaged nested jar beside them; the same application as sources only (class level); and
 * WebGoat 7.0.1's published war (WEB-INF/classes calling the jars of WEB-INF/lib).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zipSync } from "fflate";
import type { AnalysisDocument } from "../../src/scanner/analysis-document.ts";
import { buildClassIndex } from "../../src/scanner/code/java/class-index.ts";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import type { ScanSummary } from "../../src/scanner/scan.ts";
import { runCli } from "../support/cli.ts";
import {
  COMMONS_LOGGING,
  JCL_OVER_SLF4J,
  LOG4J_API,
  LOG4J_CORE,
  loggingJars,
  LOGGING_APP_POM as POM,
  LOGGING_SETUP_SOURCE as SOURCE,
} from "../support/java-subjects.ts";
import { centralFile, ORACLE_REPOSITORY } from "../support/maven-subjects.ts";

interface Scanned {
  summary: ScanSummary;
  document: AnalysisDocument;
}

describe("imaging scan reads the Java code of fat jars, wars and sources", () => {
  let work: string;
  let classFile: Uint8Array;

  const scan = async (path: string, extra: string[] = []): Promise<Scanned> => {
    const output = join(work, `analysis-${Math.random().toString(36).slice(2)}.json`);
    const result = await runCli(
      [
        "scan",
        path,
        "--app",
        "java-app",
        "--json",
        "--output",
        output,
        "--data-dir",
        join(work, "data"),
        ...extra,
      ],
      { MAVEN_LOCAL_REPOSITORY: ORACLE_REPOSITORY, DATABASE_URL: "" },
    );
    assert.equal(result.code, 0, result.stderr);
    return { summary: JSON.parse(result.stdout), document: JSON.parse(readFileSync(output, "utf8")) };
  };

  const objectsOf = (document: AnalysisDocument, pkg: string) =>
    document.objects.filter((o) => o.package === pkg);
  const callersOf = (document: AnalysisDocument, id: string | undefined) =>
    document.references.filter((r) => r.to === id).map((r) => r.from.fullName);

  before(async () => {
    await loggingJars();
    work = mkdtempSync(join(tmpdir(), "imaging-java-scan-"));
    mkdirSync(join(work, "src", "com", "example", "app"), { recursive: true });
    writeFileSync(join(work, "src", "com", "example", "app", "LoggingSetup.java"), SOURCE);
    execFileSync("javac", [
      "--release",
      "8",
      "-cp",
      [LOG4J_CORE, LOG4J_API, COMMONS_LOGGING].join(":"),
      "-d",
      join(work, "classes"),
      join(work, "src", "com", "example", "app", "LoggingSetup.java"),
    ]);
    classFile = readFileSync(join(work, "classes", "com", "example", "app", "LoggingSetup.class"));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  describe("a Spring Boot fat jar", () => {
    let scanned: Scanned;
    before(async () => {
      const jar = zipSync({
        "META-INF/MANIFEST.MF": new TextEncoder().encode(
          "Manifest-Version: 1.0\nMain-Class: org.springframework.boot.loader.JarLauncher\n",
        ),
        "BOOT-INF/classes/com/example/app/LoggingSetup.class": classFile,
        // a class file cut short, and a nested jar that is not a zip archive
        "BOOT-INF/classes/com/example/app/Broken.class": classFile.subarray(0, 200),
        "BOOT-INF/lib/log4j-core-2.14.1.jar": readFileSync(LOG4J_CORE),
        "BOOT-INF/lib/log4j-api-2.14.1.jar": readFileSync(LOG4J_API),
        "BOOT-INF/lib/commons-logging-1.2.jar": readFileSync(COMMONS_LOGGING),
        "BOOT-INF/lib/jcl-over-slf4j-1.7.24.jar": readFileSync(JCL_OVER_SLF4J),
        "BOOT-INF/lib/broken-1.0.jar": new TextEncoder().encode("not a zip archive"),
      });
      mkdirSync(join(work, "boot"));
      writeFileSync(join(work, "boot", "app.jar"), jar);
      scanned = await scan(join(work, "boot", "app.jar"), ["--offline"]);
    });

    it("lists log4j-core's methods with the application's calling methods and the exact manglings", () => {
      const log4j = objectsOf(scanned.document, "maven:org.apache.logging.log4j:log4j-core");
      const byMangling = (fullName: string, mangling: string) =>
        log4j.find((o) => o.fullName === fullName && o.mangling === mangling);
      const getContext = byMangling(
        "org.apache.logging.log4j.core.LoggerContext.getContext",
        "getContext(boolean) return org.apache.logging.log4j.core.LoggerContext",
      );
      assert.ok(getContext, JSON.stringify(log4j, null, 1));
      assert.deepEqual(
        { name: getContext.name, type: getContext.type, typeId: getContext.typeId },
        { name: "getContext", type: "Java Method", typeId: "JV_METHOD" },
      );
      assert.deepEqual(callersOf(scanned.document, getContext.id), ["com.example.app.LoggingSetup.init"]);
      // the method reference goes through invokedynamic: its target is still found, from `later`
      const viaLambda = byMangling(
        "org.apache.logging.log4j.core.LoggerContext.getContext",
        "getContext() return org.apache.logging.log4j.core.LoggerContext",
      );
      assert.deepEqual(callersOf(scanned.document, viaLambda?.id), ["com.example.app.LoggingSetup.later"]);
      const setRootLevel = byMangling(
        "org.apache.logging.log4j.core.config.Configurator.setRootLevel",
        "setRootLevel(org.apache.logging.log4j.Level) return void",
      );
      assert.deepEqual(callersOf(scanned.document, setRootLevel?.id), ["com.example.app.LoggingSetup.init"]);
      // Level is log4j-api's (attributed by binary name to the jar that declares it)
      const info = scanned.document.objects.find((o) => o.fullName === "org.apache.logging.log4j.Level.INFO");
      assert.deepEqual(info && { package: info.package, typeId: info.typeId, mangling: info.mangling }, {
        package: "maven:org.apache.logging.log4j:log4j-api",
        typeId: "JV_FIELD",
        mangling: "",
      });
    });

    it("attributes a class two jars declare to both, and says so", () => {
      const getLog = scanned.document.objects.filter(
        (o) => o.fullName === "org.apache.commons.logging.LogFactory.getLog",
      );
      assert.deepEqual(getLog.map((o) => o.package).sort(), [
        "maven:commons-logging:commons-logging",
        "maven:org.slf4j:jcl-over-slf4j",
      ]);
      const warning = scanned.summary.warnings.find((w) =>
        w.message.includes("org.apache.commons.logging.LogFactory"),
      );
      assert.ok(warning, JSON.stringify(scanned.summary.warnings));
      assert.match(
        warning.message,
        /declared by commons-logging:commons-logging and org\.slf4j:jcl-over-slf4j/,
      );
    });

    it("names the damaged class file and jar in warnings and reads everything else", () => {
      const files = scanned.summary.warnings.map((w) => `${w.file}: ${w.message}`);
      assert.ok(
        files.some((w) =>
          w.startsWith("app.jar!/BOOT-INF/classes/com/example/app/Broken.class: not a readable class file"),
        ),
        files.join("\n"),
      );
      assert.ok(
        files.some(
          (w) =>
            w.includes("app.jar!/BOOT-INF/lib/broken-1.0.jar") && w.includes("not a readable zip archive"),
        ),
        files.join("\n"),
      );
      assert.deepEqual(scanned.summary.code, [
        { language: "java", precision: "bytecode", files: 2, unreadable: 1, dependenciesListed: 4 },
      ]);
      assert.ok(
        !scanned.document.references.some((r) => r.from.fullName.startsWith("com.example.app.Broken")),
        "nothing is recorded from the damaged class",
      );
    });
  });

  it("reads an ear: the classes of its war, attributed to the jars of the war's WEB-INF/lib", async () => {
    const war = zipSync({
      "WEB-INF/web.xml": new TextEncoder().encode("<web-app/>"),
      "WEB-INF/classes/com/example/app/LoggingSetup.class": classFile,
      "WEB-INF/lib/log4j-core-2.14.1.jar": readFileSync(LOG4J_CORE),
      "WEB-INF/lib/log4j-api-2.14.1.jar": readFileSync(LOG4J_API),
    });
    const ear = zipSync({
      "META-INF/application.xml": new TextEncoder().encode("<application/>"),
      "web.war": war,
    });
    mkdirSync(join(work, "ear"));
    writeFileSync(join(work, "ear", "app.ear"), ear);
    const { summary, document } = await scan(join(work, "ear", "app.ear"), ["--offline"]);
    assert.deepEqual(
      summary.code.map((c) => [
        c.precision,
        c.files,
        "dependenciesListed" in c ? c.dependenciesListed : null,
      ]),
      [["bytecode", 1, 2]],
    );
    const setRootLevel = document.objects.find(
      (o) => o.fullName === "org.apache.logging.log4j.core.config.Configurator.setRootLevel",
    );
    assert.equal(setRootLevel?.package, "maven:org.apache.logging.log4j:log4j-core");
    assert.deepEqual(callersOf(document, setRootLevel?.id), ["com.example.app.LoggingSetup.init"]);
  });

  it("says in one warning which dependency jars an offline scan could not list", async () => {
    const fetcher = createRegistryFetcher({ cacheDir: join(work, "empty-http-cache"), offline: true });
    const pkg = (name: string, version: string) =>
      ({
        ecosystem: "maven",
        name,
        version,
        dev: false,
        scope: "compile",
        direct: true,
        source: "pom.xml",
      }) as const;
    const index = await buildClassIndex(
      [
        pkg("org.apache.logging.log4j:log4j-core", "2.14.1"),
        pkg("org.apache.logging.log4j:log4j-api", "2.14.1"),
      ],
      new Map(),
      {
        fetcher,
        mavenRepositoryUrl: "https://repo.maven.apache.org/maven2",
        mavenLocalRepository: join(work, "no-m2"),
      },
    );
    assert.equal(index.listed, 0);
    assert.deepEqual(index.warnings, [
      {
        file: "pom.xml",
        message:
          "the jars of 2 dependencies are neither in the local repository nor in the offline cache " +
          "(org.apache.logging.log4j:log4j-api:2.14.1, org.apache.logging.log4j:log4j-core:2.14.1): " +
          "calls into them are not reported",
      },
    ]);
  });

  it("records the same objects in the local store, all at once", async () => {
    const dataDir = join(work, "recorded");
    const result = await runCli(
      [
        "scan",
        join(work, "boot", "app.jar"),
        "--app",
        "java-app",
        "--json",
        "--offline",
        "--data-dir",
        dataDir,
      ],
      { MAVEN_LOCAL_REPOSITORY: ORACLE_REPOSITORY, DATABASE_URL: "" },
    );
    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as ScanSummary;
    assert.equal(summary.seq, 1);
    assert.ok(summary.externalObjects > 5, JSON.stringify(summary));
    assert.equal(summary.changes?.externalObjects.added, summary.externalObjects);
    assert.equal(summary.changes?.references.added, summary.references);
  });

  it("falls back to the sources at class level when nothing is compiled, and says so", async () => {
    const project = join(work, "sources-only");
    mkdirSync(join(project, "src", "main", "java", "com", "example", "app"), { recursive: true });
    writeFileSync(join(project, "pom.xml"), POM);
    writeFileSync(join(project, "src", "main", "java", "com", "example", "app", "LoggingSetup.java"), SOURCE);
    writeFileSync(
      join(project, "src", "main", "java", "com", "example", "app", "Broken.java"),
      "package com.example.app;\npublic class Broken {\n  void f( {\n}\n",
    );
    const { summary, document } = await scan(project, ["--offline"]);
    assert.deepEqual(summary.code, [
      { language: "java", precision: "source, class level", files: 1, unreadable: 1, dependenciesListed: 2 },
    ]);
    // each object says its precision in its type (typeId stays JV_CLASS)
    assert.deepEqual([...new Set(document.objects.map((o) => o.type))], ["Java Class (source, class level)"]);
    const classes = document.objects.map((o) => `${o.package} ${o.typeId} ${o.fullName}`).sort();
    assert.deepEqual(classes, [
      "maven:org.apache.logging.log4j:log4j-api JV_CLASS org.apache.logging.log4j.Level",
      "maven:org.apache.logging.log4j:log4j-core JV_CLASS org.apache.logging.log4j.core.LoggerContext",
      "maven:org.apache.logging.log4j:log4j-core JV_CLASS org.apache.logging.log4j.core.config.Configurator",
    ]);
    assert.deepEqual(
      [...new Set(document.references.map((r) => `${r.from.typeId} ${r.from.fullName}`))],
      ["JV_CLASS com.example.app.LoggingSetup"],
    );
    assert.ok(
      summary.warnings.some(
        (w) =>
          w.file === "src/main/java/com/example/app/Broken.java" &&
          w.line === 3 &&
          /does not parse/.test(w.message),
      ),
      JSON.stringify(summary.warnings),
    );
    assert.ok(
      document.warnings.some((w) => w.message.includes('precision "source, class level"')),
      JSON.stringify(document.warnings),
    );
  });

  it("reads WebGoat 7.0.1's war: its WEB-INF/classes calling the jars of WEB-INF/lib", async () => {
    const war = await centralFile("org.owasp.webgoat:webgoat-container:7.0.1", "war");
    const { summary, document } = await scan(war);
    assert.equal(summary.code[0]?.precision, "bytecode");
    assert.ok((summary.code[0]?.files ?? 0) > 50, JSON.stringify(summary.code));
    const spring = document.objects.filter((o) => o.package === "maven:org.springframework:spring-webmvc");
    assert.ok(spring.length > 0, JSON.stringify([...new Set(document.objects.map((o) => o.package))]));
    const callers = document.references
      .filter((r) => spring.some((o) => o.id === r.to))
      .map((r) => r.from.fullName);
    assert.ok(
      callers.length > 0 && callers.every((c) => c.startsWith("org.owasp.webgoat.")),
      callers.join(", "),
    );
  });
});
