/**
 * From a built Java application to the occurrences operation, as a user does it with a running platform:
 * the real GHSA record of Log4Shell imported, a Maven project as its build leaves it (pom.xml declaring
 * log4j-core 2.14.1, target/classes compiled by javac against the real jars) scanned from "CI" with
 * `imaging scan --server`, then the occurrences operation and the package's interactions asked through
 * the gateway: log4j-core's classes and methods the application's code uses, and which of its methods
 * call them. (solr-core 8.9.0's 3,045 classes are measured against javap in
 * test/integration/java-code-precision.test.ts; here the platform's own registry lookups stay few.)
 */
import assert from "node:assert/strict";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { RunningService } from "../../src/service.ts";
import { runCliProcess } from "../support/cli.ts";
import { builtLoggingApp } from "../support/java-subjects.ts";
import { ORACLE_REPOSITORY } from "../support/maven-subjects.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

const LOG4SHELL = new URL("../fixtures/osv/GHSA-jfh8-c2jp-5v3q.json", import.meta.url).pathname;
const APP = "logging-app";

interface ExternalObject {
  id: string;
  name: string;
  fullName: string;
  mangling: string;
  type: string;
  typeId: string;
}

interface Occurrence {
  name: string;
  version: string;
  objects: ExternalObject[];
}

interface Interaction {
  source: { fullName: string; name: string; typeId: string };
  target: ExternalObject;
}

describe("a compiled Java application's calls into log4j-core reach the occurrences operation", () => {
  let store: TestStore;
  let service: RunningService;
  let adminKey: string;
  let viewerKey: string;
  let projectDir: string;

  before(async () => {
    store = await createTestStore("sqlite");
    projectDir = join(store.dataDir, "..", "logging-app");
    mkdirSync(projectDir, { recursive: true });
    await builtLoggingApp(projectDir);
    const imported = await runCliProcess([
      "advisories",
      "import",
      LOG4SHELL,
      "--json",
      "--data-dir",
      store.dataDir,
    ]);
    assert.equal(imported.code, 0, imported.stderr);
    service = await startTestService(store, {}, async (handle) => {
      adminKey = (await createApiKey(handle.db, { user: "ci", role: "admin", applications: [] })).key;
      viewerKey = (await createApiKey(handle.db, { user: "dev", role: "viewer", applications: [APP] })).key;
    });
  });
  after(async () => {
    await service?.stop();
    rmSync(projectDir, { recursive: true, force: true });
    await store?.drop();
  });

  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${service.gatewayUrl}${path}`, { headers: { "x-api-key": viewerKey } });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as T;
  };

  it("scans the build from CI and sends the analysis with its external objects", async () => {
    const result = await runCliProcess(
      [
        "scan",
        projectDir,
        "--app",
        APP,
        "--date",
        "2021-07-01T00:00:00Z",
        "--server",
        service.gatewayUrl,
        "--json",
      ],
      {
        IMAGING_API_KEY: adminKey,
        IMAGING_DATA_DIR: join(store.dataDir, "..", "ci-runner"),
        MAVEN_LOCAL_REPOSITORY: ORACLE_REPOSITORY,
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as {
      externalObjects: number;
      references: number;
      vulnerablePackages: number;
      code: { language: string; precision: string }[];
    };
    // seven log4j-core methods, two log4j-api fields (commons-logging is not a dependency of the POM)
    assert.equal(summary.externalObjects, 9, JSON.stringify(summary));
    assert.equal(summary.references, 9);
    assert.ok(summary.vulnerablePackages >= 1);
    assert.deepEqual(
      summary.code.map((c) => [c.language, c.precision]),
      [["java", "bytecode"]],
    );
  });

  it("the occurrences of CVE-2021-44228 list the log4j-core methods the code calls, with their manglings", async () => {
    const list = await get<Occurrence[]>(
      `/rest/applications/${APP}/insights/cve/CVE-2021-44228/occurrences?limit=20`,
    );
    const log4j = list.find((p) => p.name === "org.apache.logging.log4j:log4j-core");
    assert.ok(log4j, JSON.stringify(list.map((p) => p.name)));
    assert.equal(log4j.version, "2.14.1");
    assert.deepEqual(
      log4j.objects.map((o) => `${o.typeId} ${o.type} ${o.name} ${o.fullName} | ${o.mangling}`).sort(),
      [
        "JV_METHOD Java Method getConfiguration org.apache.logging.log4j.core.LoggerContext.getConfiguration | getConfiguration() return org.apache.logging.log4j.core.config.Configuration",
        "JV_METHOD Java Method getContext org.apache.logging.log4j.core.LoggerContext.getContext | getContext() return org.apache.logging.log4j.core.LoggerContext",
        "JV_METHOD Java Method getContext org.apache.logging.log4j.core.LoggerContext.getContext | getContext(boolean) return org.apache.logging.log4j.core.LoggerContext",
        "JV_METHOD Java Method getRootLogger org.apache.logging.log4j.core.config.Configuration.getRootLogger | getRootLogger() return org.apache.logging.log4j.core.config.LoggerConfig",
        "JV_METHOD Java Method setLevel org.apache.logging.log4j.core.config.LoggerConfig.setLevel | setLevel(org.apache.logging.log4j.Level) return void",
        "JV_METHOD Java Method setRootLevel org.apache.logging.log4j.core.config.Configurator.setRootLevel | setRootLevel(org.apache.logging.log4j.Level) return void",
        "JV_METHOD Java Method updateLoggers org.apache.logging.log4j.core.LoggerContext.updateLoggers | updateLoggers() return void",
      ],
    );
    // only log4j-core's own objects: log4j-api's are another package
    assert.ok(log4j.objects.every((o) => o.fullName.startsWith("org.apache.logging.log4j.core.")));
  });

  it("the package's interactions name the application's methods that call them", async () => {
    const interactions = await get<Interaction[]>(
      `/rest/applications/${APP}/interactions?package=org.apache.logging.log4j:log4j-core&limit=500`,
    );
    const callers = (fullName: string, mangling: string) =>
      interactions
        .filter((i) => i.target.fullName === fullName && i.target.mangling === mangling)
        .map((i) => `${i.source.typeId} ${i.source.fullName} (${i.source.name})`);
    assert.deepEqual(
      callers(
        "org.apache.logging.log4j.core.LoggerContext.getContext",
        "getContext(boolean) return org.apache.logging.log4j.core.LoggerContext",
      ),
      ["JV_METHOD com.example.app.LoggingSetup.init (init)"],
    );
    // a method reference (invokedynamic) is a use too, from the method that creates it
    assert.deepEqual(
      callers(
        "org.apache.logging.log4j.core.LoggerContext.getContext",
        "getContext() return org.apache.logging.log4j.core.LoggerContext",
      ),
      ["JV_METHOD com.example.app.LoggingSetup.later (later)"],
    );
  });
});
