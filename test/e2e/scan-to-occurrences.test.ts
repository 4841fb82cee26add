/**
 * From a real application to the occurrences operation, as a user does it with a running platform: the
 * real GHSA record of Log4Shell imported with `imaging advisories import`, solr-core 8.9.0's POM (log4j-core
 * 2.13.2 pinned by its grandparent) scanned from "CI" with `imaging scan --server` (POST .../analyses with an
 * admin API key), then the same project after upgrading log4j-core, and the occurrences operation asked
 * through the gateway as of each date of the application's history. The platform runs as `imaging start`
 * in a process of its own, as it does for users: its facts gathering for solr-core's packages (one
 * signature per published Maven version) is promise-heavy, and under the test runner's async hooks
 * (node:test tracks every promise) it cost about 40 % more CPU in this process.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { openStore } from "../../src/store/database.ts";
import { INTERNAL_PORTS_ON_LOOPBACK, runCliProcess, spawnService } from "../support/cli.ts";
import { projectDir, shareScannerHttpCache } from "../support/maven-subjects.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

const LOG4SHELL = new URL("../fixtures/osv/GHSA-jfh8-c2jp-5v3q.json", import.meta.url).pathname;
const APP = "search-portal";

interface Occurrence {
  name: string;
  version: string;
  releaseDate: { dateTime: string } | null;
  saferClosestVersion: string | null;
  objects: unknown[];
}

describe("a scanned application answers the occurrences operation (scan --server into a running platform)", () => {
  let store: TestStore;
  let service: Awaited<ReturnType<typeof spawnService>>;
  let gatewayUrl: string;
  let adminKey: string;
  let viewerKey: string;
  let upgradedDir: string;
  let runnerDir: string;

  before(async () => {
    store = await createTestStore("sqlite");
    // The platform and the CI runner keep their registry caches between analyses, as in production.
    shareScannerHttpCache(store.dataDir);
    runnerDir = join(store.dataDir, "ci-runner");
    shareScannerHttpCache(runnerDir);
    const imported = await runCliProcess([
      "advisories",
      "import",
      LOG4SHELL,
      "--json",
      "--data-dir",
      store.dataDir,
    ]);
    assert.equal(imported.code, 0, imported.stderr);
    assert.equal(JSON.parse(imported.stdout).imported, 1);
    const handle = await openStore({ databaseUrl: undefined, sqliteFile: store.sqliteFile });
    try {
      adminKey = (await createApiKey(handle.db, { user: "ci", role: "admin", applications: [] })).key;
      viewerKey = (await createApiKey(handle.db, { user: "dev", role: "viewer", applications: [APP] })).key;
    } finally {
      await handle.close();
    }
    service = await spawnService(["--data-dir", store.dataDir, "--port", "0"], {
      PUBLIC_URL: "http://127.0.0.1:8090",
      ...INTERNAL_PORTS_ON_LOOPBACK,
      DATABASE_URL: "",
    });
    gatewayUrl = service.summary.gateway;
    // The same project after its maintainers pinned log4j-core 2.17.1 (no longer affected).
    const { pom } = await projectDir("solr-core-8.9.0", { coordinates: "org.apache.solr:solr-core:8.9.0" });
    const original = readFileSync(pom, "utf8");
    const pinned = original.replace(
      "<artifactId>log4j-core</artifactId>\n    </dependency>",
      "<artifactId>log4j-core</artifactId>\n      <version>2.17.1</version>\n    </dependency>",
    );
    assert.notEqual(pinned, original, "solr-core's POM declares log4j-core without a version");
    upgradedDir = join(store.dataDir, "solr-upgraded");
    mkdirSync(upgradedDir, { recursive: true });
    writeFileSync(join(upgradedDir, "pom.xml"), pinned);
  });
  after(async () => {
    await service?.stop();
    await store?.drop();
  });

  const scan = async (dir: string, date: string, key = adminKey) =>
    runCliProcess(["scan", dir, "--app", APP, "--date", date, "--server", gatewayUrl, "--json"], {
      IMAGING_API_KEY: key,
      IMAGING_DATA_DIR: runnerDir,
    });
  const occurrences = async (query: string, key = viewerKey) => {
    const response = await fetch(
      `${gatewayUrl}/rest/applications/${APP}/insights/cve/CVE-2021-44228/occurrences?${query}`,
      { headers: { "x-api-key": key } },
    );
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Occurrence[];
  };

  it("the first scan is recorded by the platform, which counts log4j-core as vulnerable", async () => {
    const { dir } = await projectDir("solr-core-8.9.0", { coordinates: "org.apache.solr:solr-core:8.9.0" });
    const result = await scan(dir, "2021-07-01T00:00:00Z");
    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as {
      application: string;
      packages: number;
      vulnerablePackages: number;
    };
    assert.equal(summary.application, APP);
    assert.ok(summary.packages > 50, `solr-core resolves to many packages, got ${summary.packages}`);
    assert.ok(summary.vulnerablePackages >= 1, JSON.stringify(summary));
  });

  it("a viewer granted the application reads log4j-core 2.13.2 with its facts from Maven Central", async () => {
    // The upload is answered at once; the registries are read after it (scanner/facts/background.ts), and
    // each package says so (factsPending) until its facts are stored: wait for them as a user would.
    const pending = async () => {
      for (let skip = 0; ; skip += 1000) {
        const response = await fetch(
          `${gatewayUrl}/rest/applications/${APP}/packages?limit=1000&skip=${skip}`,
          {
            headers: { "x-api-key": viewerKey },
          },
        );
        assert.equal(response.status, 200, await response.clone().text());
        const page = (await response.json()) as { factsPending: boolean }[];
        if (page.some((p) => p.factsPending)) return true;
        if (page.length < 1000) return false;
      }
    };
    for (let i = 0; i < 1200 && (await pending()); i++) await new Promise((r) => setTimeout(r, 250));
    assert.equal(await pending(), false, "the facts of every package arrived");
    const list = await occurrences("limit=20");
    const log4j = list.find((p) => p.name === "org.apache.logging.log4j:log4j-core");
    assert.ok(log4j, JSON.stringify(list.map((p) => p.name)));
    assert.equal(log4j.version, "2.13.2");
    // CVE-2021-44228 is fixed in 2.15.0 for the 2.13+ line; the release date comes from the signature.
    assert.equal(log4j.saferClosestVersion?.startsWith("2."), true, JSON.stringify(log4j));
    assert.match(log4j.releaseDate?.dateTime ?? "", /^2020-/);
  });

  it("a viewer cannot upload an analysis: one readable line, nothing recorded", async () => {
    const result = await scan(upgradedDir, "2021-08-01T00:00:00Z", viewerKey);
    assert.equal(result.code, 1);
    assert.equal(result.stderr.trimEnd().split("\n").length, 1, result.stderr);
    assert.ok(!result.stderr.includes(viewerKey), "the key is never printed");
    assert.equal((await occurrences("limit=20")).length > 0, true);
  });

  it("after the upgrade the latest analysis has no occurrence, and `date` still shows the old one", async () => {
    const result = await scan(upgradedDir, "2022-01-10T00:00:00Z");
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      (await occurrences("limit=20")).map((p) => p.name),
      [],
    );
    const before = await occurrences("limit=20&date=2021-12-01T00:00:00Z");
    assert.deepEqual(
      before.filter((p) => p.name === "org.apache.logging.log4j:log4j-core").map((p) => p.version),
      ["2.13.2"],
    );
  });

  it("an analysis dated before the latest is refused (409) and recorded nowhere", async () => {
    const { dir } = await projectDir("solr-core-8.9.0", { coordinates: "org.apache.solr:solr-core:8.9.0" });
    const result = await scan(dir, "2021-09-01T00:00:00Z");
    assert.equal(result.code, 1);
    assert.match(result.stderr, /2022-01-10/);
    assert.deepEqual(
      (await occurrences("limit=20&date=2021-09-02T00:00:00Z")).map((p) => p.version),
      (await occurrences("limit=20&date=2021-07-02T00:00:00Z")).map((p) => p.version),
    );
  });
});
