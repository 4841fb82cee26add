/**
 * The registry lookups that follow an upload (scanner/facts/background.ts) when the registry fails: a
 * failed lookup is retried soon, so its packages stop saying factsPending once the registry answers; a
 * package whose registry keeps failing is given up after the last attempt, said in the log; a package the
 * registry does not have leaves the queue at once. On both stores, with a registry double on loopback.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ingestAnalysis } from "../../src/domain/package-facts.ts";
import { type FactsWorker, startFactsWorker } from "../../src/scanner/facts/background.ts";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { type FakeRegistry, startFakeRegistry } from "../support/fake-registry.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const LOG4J = "org.apache.logging.log4j:log4j-core";
const LOG4J_METADATA = "/maven2/org/apache/logging/log4j/log4j-core/maven-metadata.xml";
const MISSING = "com.example:not-published";
const MISSING_METADATA = "/maven2/com/example/not-published/maven-metadata.xml";
// make-fetch-happen retries a 503 twice itself: three answers make one failed lookup.
const REQUESTS_PER_LOOKUP = 3;

for (const kind of STORE_KINDS) {
  describe(`package facts after an upload, when the registry fails, on ${kind}`, () => {
    let store: TestStore;
    let handle: StoreHandle;
    let registry: FakeRegistry;
    let cacheDir: string;
    let worker: FactsWorker | undefined;
    const log: string[] = [];

    before(async () => {
      store = await createTestStore(kind);
      handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      registry = await startFakeRegistry();
      cacheDir = mkdtempSync(join(tmpdir(), "facts-retry-"));
    });
    after(async () => {
      await worker?.stop();
      await handle?.close();
      await registry?.close();
      await store?.drop();
      rmSync(cacheDir, { recursive: true, force: true });
    });

    const start = (firstRetryMs: number) =>
      startFactsWorker(handle.db, {
        fetcher: createRegistryFetcher({ cacheDir, offline: false }),
        npmRegistryUrl: registry.npmUrl,
        mavenRepositoryUrl: registry.mavenUrl,
        pollMs: 20,
        firstRetryMs,
        log: (line) => log.push(line),
      });
    const queued = async () =>
      (await handle.db.selectFrom("package_facts_queue").select("package_id").execute()).length;
    const published = async (name: string) =>
      handle.db
        .selectFrom("package_versions as pv")
        .innerJoin("packages as p", "p.id", "pv.package_id")
        .select(["pv.version", "pv.released_at"])
        .where("p.name", "=", name)
        .where("pv.published", "=", 1)
        .orderBy("pv.version")
        .execute();
    const until = async (what: string, done: () => Promise<boolean>) => {
      for (let i = 0; i < 2400 && !(await done()); i++) await new Promise((r) => setTimeout(r, 25));
      assert.ok(await done(), what);
    };

    it("retries a lookup the registry failed, and stores the facts once it answers", async () => {
      registry.failNext(LOG4J_METADATA, REQUESTS_PER_LOOKUP);
      await ingestAnalysis(
        handle.db,
        "billing",
        {
          analyzedAt: "2024-01-15T10:00:00Z",
          packages: [
            { ecosystem: "maven", name: LOG4J, version: "2.14.1" },
            { ecosystem: "maven", name: MISSING, version: "1.0" },
          ],
          objects: [],
          references: [],
        },
        { queueMissingFacts: true },
      );
      assert.equal(await queued(), 2);
      worker = start(200);
      // The package the repository does not have leaves the queue at once, without facts.
      await until("the unpublished package left the queue", async () => (await queued()) === 1);
      assert.deepEqual(await published(MISSING), []);
      assert.ok(
        log.some((line) =>
          /facts of 1 package\(s\) not looked up, retried later; first: maven:org\.apache/.test(line),
        ),
        log.join("\n"),
      );
      assert.ok(
        log.some((line) => line.includes("answered HTTP 503")),
        log.join("\n"),
      );
      await until("log4j-core's facts arrived after the retry", async () => (await queued()) === 0);
      const versions = await published(LOG4J);
      assert.ok(versions.length > 50, `${versions.length} versions`);
      // The POM signature's time of 2.14.1, read from the recorded repository answer.
      assert.equal(versions.find((v) => v.version === "2.14.1")?.released_at, "2021-03-07T05:12:27Z");
      assert.equal(registry.requests.filter((r) => r === MISSING_METADATA).length, 1);
      await worker.stop();
      worker = undefined;
    });

    it("gives a package up after its last attempt, said once in the log", async () => {
      await worker?.stop();
      log.length = 0;
      const name = "com.example:always-failing";
      registry.failNext("/maven2/com/example/always-failing/maven-metadata.xml", 1_000);
      await ingestAnalysis(
        handle.db,
        "billing",
        {
          analyzedAt: "2024-02-15T10:00:00Z",
          packages: [{ ecosystem: "maven", name, version: "1.0" }],
          objects: [],
          references: [],
        },
        { queueMissingFacts: true },
      );
      assert.equal(await queued(), 1);
      // Retries 1, 3, 9, ... ms apart (each failed lookup also waits for the HTTP client's own two retries).
      worker = start(1);
      await until(`the failing package left the queue ${log.join("\n")}`, async () => (await queued()) === 0);
      const givenUp = log.filter((line) => line.includes(`facts of maven:${name} given up after 8 attempts`));
      assert.equal(givenUp.length, 1, log.join("\n"));
      assert.equal(log.filter((line) => line.includes("retried later")).length, 7, log.join("\n"));
      assert.deepEqual(await published(name), []);
    });
  });
}
