import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { importAdvisories } from "../../src/scanner/advisories/import.ts";
import { gatherPackageFacts } from "../../src/scanner/facts/index.ts";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { type FakeRegistry, startFakeRegistry } from "../support/fake-registry.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const LOG4J = "org.apache.logging.log4j:log4j-core";
const COMMONS_LANG = "commons-lang:commons-lang";
const SPRING_CORE = "org.springframework:spring-core";
const LOG4SHELL = fileURLToPath(new URL("../fixtures/osv/GHSA-jfh8-c2jp-5v3q.json", import.meta.url));

for (const kind of STORE_KINDS) {
  describe(`package facts from the registries on ${kind}`, () => {
    let store: TestStore;
    let handle: StoreHandle;
    let registry: FakeRegistry;
    let cacheDir: string;
    const options = (offline: boolean) => ({
      fetcher: createRegistryFetcher({ cacheDir, offline }),
      npmRegistryUrl: registry.npmUrl,
      mavenRepositoryUrl: registry.mavenUrl,
      offline,
    });
    const version = async (name: string, v: string) =>
      handle.db
        .selectFrom("package_versions as pv")
        .innerJoin("packages as p", "p.id", "pv.package_id")
        .select(["pv.released_at", "pv.released_at_source", "pv.published", "pv.safer_closest_version"])
        .where("p.name", "=", name)
        .where("pv.version", "=", v)
        .executeTakeFirst();
    const pkg = async (name: string) =>
      handle.db
        .selectFrom("packages")
        .select(["releases_per_year", "safest_version"])
        .where("name", "=", name)
        .executeTakeFirstOrThrow();

    before(async () => {
      store = await createTestStore(kind);
      handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      registry = await startFakeRegistry();
      cacheDir = mkdtempSync(join(tmpdir(), "imaging-facts-cache-"));
      await importAdvisories(handle.db, [LOG4SHELL]);
    });
    after(async () => {
      await registry?.close();
      await handle?.close();
      await store?.drop();
      rmSync(cacheDir, { recursive: true, force: true });
    });

    it("stores npm versions with their publish times from the packument's `time`", async () => {
      const result = await gatherPackageFacts(
        handle.db,
        [{ ecosystem: "npm", name: "ms", version: "2.0.0" }],
        options(false),
      );
      assert.deepEqual(result, { withFacts: 1, missing: [] });
      assert.equal((await version("ms", "2.0.0"))?.released_at, "2017-05-16T12:26:06.610Z");
      assert.equal((await version("ms", "0.1.0"))?.released_at, "2011-12-21T19:38:26.538Z");
      assert.equal((await version("ms", "2.0.0"))?.released_at_source, "registry");
      // `created` and `modified` are dates of the document, not versions.
      assert.equal(await version("ms", "created"), undefined);
      // 18 releases between 2011-12-21 and 2019-06-06 (7.46 years): 2 a year.
      assert.equal((await pkg("ms")).releases_per_year, 2);
      assert.equal((await pkg("ms")).safest_version, "2.1.2");
    });

    it("stores Maven versions from maven-metadata.xml, dated by their POM signatures", async () => {
      const result = await gatherPackageFacts(
        handle.db,
        [{ ecosystem: "maven", name: LOG4J }],
        options(false),
      );
      assert.deepEqual(result, { withFacts: 1, missing: [] });
      assert.equal((await version(LOG4J, "2.14.1"))?.released_at, "2021-03-07T05:12:27Z");
      assert.equal((await version(LOG4J, "2.17.1"))?.released_at, "2021-12-27T23:30:48Z");
      assert.equal((await version(LOG4J, "2.17.1"))?.released_at_source, "signature");
      // No signature served for this one: no date rather than a guessed one.
      assert.equal((await version(LOG4J, "2.0-alpha1"))?.released_at, null);
      assert.equal((await version(LOG4J, "2.0-alpha1"))?.released_at_source, null);
      // Facts recomputed with the advisory imported before: 2.14.1 is affected by Log4Shell, 2.15.0 is not.
      assert.equal((await version(LOG4J, "2.14.1"))?.safer_closest_version, "2.15.0");
      assert.equal((await version(LOG4J, "2.15.0"))?.safer_closest_version, "2.15.0");
    });

    it("prefers a Last-Modified header where the repository sends one, and skips snapshots", async () => {
      await gatherPackageFacts(
        handle.db,
        [{ ecosystem: "maven", name: "com.example:dated" }],
        options(false),
      );
      assert.equal((await version("com.example:dated", "1.0"))?.released_at, "2024-01-02T03:04:05Z");
      assert.equal((await version("com.example:dated", "1.0"))?.released_at_source, "last-modified");
      assert.equal(await version("com.example:dated", "1.1-SNAPSHOT"), undefined);
    });

    it("dates a release by a version-3 OpenPGP signature (GnuPG 1.x), as by a version-4 one", async () => {
      // commons-lang 2.4's POM signature as Maven Central serves it: "Version: GnuPG v1.4.5", a v3 packet.
      await gatherPackageFacts(handle.db, [{ ecosystem: "maven", name: COMMONS_LANG }], options(false));
      const dated = await version(COMMONS_LANG, "2.4");
      assert.deepEqual(
        [dated?.released_at, dated?.released_at_source],
        ["2008-03-16T03:44:34Z", "signature"],
      );
    });

    it("dates a release signed again years later by when its jar was packaged", async () => {
      // spring-core 4.1.9.RELEASE: released 2015-12-17, its POM signature made 2017-03-20
      const jar = "/maven2/org/springframework/spring-core/4.1.9.RELEASE/spring-core-4.1.9.RELEASE.jar";
      await gatherPackageFacts(handle.db, [{ ecosystem: "maven", name: SPRING_CORE }], options(false));
      const dated = await version(SPRING_CORE, "4.1.9.RELEASE");
      assert.deepEqual(
        [dated?.released_at, dated?.released_at_source],
        ["2015-12-17T00:26:38Z", "archive-entries"],
      );
      assert.equal(registry.requests.filter((r) => r === jar).length, 1, "one ranged request of the jar");
      // the answer is kept: offline, and online again, the jar is not asked for a second time
      await gatherPackageFacts(handle.db, [{ ecosystem: "maven", name: SPRING_CORE }], options(true));
      await gatherPackageFacts(handle.db, [{ ecosystem: "maven", name: SPRING_CORE }], options(false));
      assert.equal(registry.requests.filter((r) => r === jar).length, 1);
      assert.equal((await version(SPRING_CORE, "4.1.9.RELEASE"))?.released_at, "2015-12-17T00:26:38Z");
    });

    it("says which packages lack facts, and why", async () => {
      const result = await gatherPackageFacts(
        handle.db,
        [
          { ecosystem: "npm", name: "@scope/not-published" },
          { ecosystem: "maven", name: "org.example:absent" },
        ],
        options(false),
      );
      assert.equal(result.withFacts, 0);
      assert.deepEqual(result.missing, [
        { ecosystem: "npm", name: "@scope/not-published", reason: "not in the registry" },
        { ecosystem: "maven", name: "org.example:absent", reason: "not in the registry" },
      ]);
      assert.ok(registry.requests.includes("/npm/@scope%2fnot-published"), "scoped names are encoded");
    });

    it("offline: uses what was fetched before and reports the rest", async () => {
      const before = registry.requests.length;
      const result = await gatherPackageFacts(
        handle.db,
        [
          { ecosystem: "npm", name: "ms" },
          { ecosystem: "maven", name: LOG4J },
          { ecosystem: "npm", name: "never-fetched" },
        ],
        options(true),
      );
      assert.equal(registry.requests.length, before, "no request offline");
      assert.equal(result.withFacts, 2);
      assert.deepEqual(result.missing, [
        { ecosystem: "npm", name: "never-fetched", reason: "offline, and never fetched before" },
      ]);
      assert.equal((await version(LOG4J, "2.14.1"))?.released_at, "2021-03-07T05:12:27Z");
    });

    it("onlyMissing looks up only packages without published versions", async () => {
      const before = registry.requests.length;
      const result = await gatherPackageFacts(handle.db, [{ ecosystem: "npm", name: "ms" }], {
        ...options(false),
        onlyMissing: true,
      });
      assert.deepEqual(result, { withFacts: 0, missing: [] });
      assert.equal(registry.requests.length, before);
    });
  });
}
