/**
 * A Maven release signed again long after it was released, dated as it was released: spring-core
 * 4.1.9.RELEASE (released 2015-12-17; its POM signature made 2017-03-20), scanned as a developer would
 * scan the jar alone, through a relay to Maven Central that records each request. The jar in hand tells
 * its own packaging time; every other version's jar is asked for the end of its central directory, one
 * ranged request each, kept between scans.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { openStore } from "../../src/store/database.ts";
import { type Counted, centralRelay } from "../support/central-relay.ts";
import { runCliProcess } from "../support/cli.ts";
import { centralFile } from "../support/maven-subjects.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const SPRING_CORE = "org.springframework:spring-core";
const FOLDER = "org/springframework/spring-core";

for (const kind of STORE_KINDS) {
  describe(`release dates of Maven versions signed again, on ${kind}`, () => {
    let store: TestStore;
    let relay: Counted;
    before(async () => {
      store = await createTestStore(kind);
      relay = await centralRelay();
    });
    after(async () => {
      relay?.server.close();
      await store?.drop();
    });

    const dateOf = async (version: string) => {
      const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      try {
        return await handle.db
          .selectFrom("package_versions as pv")
          .innerJoin("packages as p", "p.id", "pv.package_id")
          .select(["pv.released_at", "pv.released_at_source"])
          .where("p.name", "=", SPRING_CORE)
          .where("pv.version", "=", version)
          .executeTakeFirst();
      } finally {
        await handle.close();
      }
    };

    it("dates spring-core 4.1.9.RELEASE by its jar (2015-12-17), not by its late signature (2017-03-20)", async () => {
      const jar = await centralFile(`${SPRING_CORE}:4.1.9.RELEASE`, "jar");
      const scan = () =>
        runCliProcess(["scan", jar, "--app", "legacy", "--json", "--data-dir", store.dataDir], {
          DATABASE_URL: store.databaseUrl ?? "",
          MAVEN_REPOSITORY_URL: relay.url,
          MAVEN_SEARCH_URL: "",
        });
      const scanned = await scan();
      assert.equal(scanned.code, 0, scanned.stderr);
      assert.deepEqual(await dateOf("4.1.9.RELEASE"), {
        released_at: "2015-12-17T00:26:38Z",
        released_at_source: "archive-entries",
      });
      // the same for the version before it, dated from the end of its jar, read remotely
      assert.deepEqual(await dateOf("4.1.8.RELEASE"), {
        released_at: "2015-10-15T02:15:14Z",
        released_at_source: "archive-entries",
      });
      // uploaded before Maven Central required signatures: its jar alone dates it
      assert.deepEqual(await dateOf("3.0.0.RELEASE"), {
        released_at: "2009-12-16T18:27:22Z",
        released_at_source: "archive-entries",
      });
      // a reproducible build's jar (every entry at 1980-02-01) says nothing: the signature's time stands
      assert.deepEqual(await dateOf("5.3.30"), {
        released_at: "2023-09-14T07:55:41Z",
        released_at_source: "signature",
      });
      const jars = () => relay.requests.filter((r) => r.startsWith(`${FOLDER}/`) && r.endsWith(".jar"));
      assert.ok(jars().includes(`${FOLDER}/4.1.8.RELEASE/spring-core-4.1.8.RELEASE.jar`), jars().join("\n"));
      assert.ok(
        !jars().includes(`${FOLDER}/4.1.9.RELEASE/spring-core-4.1.9.RELEASE.jar`),
        "the jar in hand is not asked for",
      );
      // scanned again: no jar is asked for a second time
      const asked = jars().length;
      const again = await scan();
      assert.equal(again.code, 0, again.stderr);
      assert.equal(jars().length, asked);
    });
  });
}
