import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ingestAnalysis, loadAdvisory, loadPublishedVersions } from "../../src/domain/package-facts.ts";
import { findApplication, resolveAnalysis } from "../../src/store/applications.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { IngestError } from "../../src/store/ingest.ts";
import type { AnalysisInput } from "../../src/store/input-records.ts";
import { listCveInsights } from "../../src/store/insights.ts";
import { findVulnerability } from "../../src/store/vulnerabilities.ts";
import { listOccurrences } from "../support/occurrence-pages.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const versions = [
  { version: "1.0.0", releasedAt: "2020-01-01T00:00:00.000Z" },
  { version: "1.1.0", releasedAt: "2020-06-01T00:00:00.000Z" },
  { version: "1.2.0", releasedAt: "2021-01-01T00:00:00.000Z" },
  { version: "2.0.0", releasedAt: "2022-01-01T00:00:00.000Z" },
];

const object = (id: string, fullName: string, pkg = "npm:left-pad") => ({
  id,
  package: pkg,
  name: fullName.split(".").pop() as string,
  fullName,
  mangling: `${fullName.split(".").pop()}(string, number)`,
  type: "JavaScript Function",
  typeId: "JS_FUNCTION",
});
const caller = (id: string) => ({
  id,
  name: id,
  fullName: `app.src.${id}`,
  type: "JavaScript Function",
  typeId: "JS_FUNCTION",
});

const first: AnalysisInput = {
  analyzedAt: "2024-01-01T00:00:00Z",
  packages: [
    { ecosystem: "npm", name: "left-pad", version: "1.0.0" },
    { ecosystem: "npm", name: "zeta", version: "0.1.0" },
  ],
  objects: [object("10", "left-pad.pad"), object("11", "left-pad.padStart"), object("12", "left-pad.unused")],
  references: [
    { from: caller("a1"), to: "10" },
    { from: caller("a2"), to: "11" },
    { from: caller("a3"), to: "12" },
  ],
};

const second: AnalysisInput = {
  analyzedAt: "2024-02-01T00:00:00Z",
  packages: [
    { ecosystem: "npm", name: "left-pad", version: "1.2.0" },
    { ecosystem: "npm", name: "zeta", version: "0.1.0" },
  ],
  objects: [object("10", "left-pad.pad"), object("11", "left-pad.padStart"), object("12", "left-pad.unused")],
  // a3 no longer calls "unused": the object is still in the analysis but nothing refers to it.
  references: [
    { from: caller("a1"), to: "10" },
    { from: caller("a2"), to: "11" },
  ],
};

for (const kind of STORE_KINDS) {
  describe(`store on ${kind}`, () => {
    let test: TestStore;
    let store: StoreHandle;

    before(async () => {
      test = await createTestStore(kind);
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      await loadPublishedVersions(store.db, "npm", "left-pad", versions);
      await loadAdvisory(store.db, {
        id: "CVE-2099-0001",
        aliases: ["GHSA-2222-3333-4444"],
        severity: "HIGH",
        cvssScore: 7.5,
        summary: "test advisory",
        publishedAt: null,
        affected: [{ ecosystem: "npm", package: "left-pad", ranges: [{ introduced: "0", fixed: "1.1.0" }] }],
      });
      await ingestAnalysis(store.db, "app", first);
      await ingestAnalysis(store.db, "app", second);
    });
    after(async () => {
      await store?.close();
      await test?.drop();
    });

    it("runs migrations once: reopening the store is a no-op", async () => {
      const again = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      await again.close();
    });

    it("lists the affected packages and referred objects as of the first analysis", async () => {
      const app = await findApplication(store.db, "app");
      assert.ok(app);
      const analysis = await resolveAnalysis(store.db, app.id, "2024-01-15T00:00:00.000Z");
      assert.equal(analysis?.seq, 1);
      const vulnerability = await findVulnerability(store.db, "CVE-2099-0001");
      assert.ok(vulnerability);
      const records = await listOccurrences(store.db, {
        applicationId: app.id,
        seq: 1,
        vulnerabilityId: vulnerability.id,
        limit: 10,
        skip: 0,
      });
      assert.deepEqual(records, [
        {
          name: "left-pad",
          objects: [
            {
              fullName: "left-pad.pad",
              id: "10",
              mangling: "pad(string, number)",
              name: "pad",
              type: "JavaScript Function",
              typeId: "JS_FUNCTION",
            },
            {
              fullName: "left-pad.padStart",
              id: "11",
              mangling: "padStart(string, number)",
              name: "padStart",
              type: "JavaScript Function",
              typeId: "JS_FUNCTION",
            },
            {
              fullName: "left-pad.unused",
              id: "12",
              mangling: "unused(string, number)",
              name: "unused",
              type: "JavaScript Function",
              typeId: "JS_FUNCTION",
            },
          ],
          releaseDate: { dateTime: "2020-01-01T00:00:00Z", source: null },
          releasesPerYear: 2,
          saferClosestVersion: "1.1.0",
          safestVersion: "2.0.0",
          scope: "unknown",
          version: "1.0.0",
        },
      ]);
    });

    it("finds nothing affected after the upgrade, and resolves the GHSA alias", async () => {
      const app = await findApplication(store.db, "app");
      const latest = await resolveAnalysis(store.db, app?.id as number);
      assert.equal(latest?.seq, 2);
      const vulnerability = await findVulnerability(store.db, "ghsa-2222-3333-4444");
      assert.equal(vulnerability?.cveId, "CVE-2099-0001");
      const records = await listOccurrences(store.db, {
        applicationId: app?.id as number,
        seq: 2,
        vulnerabilityId: vulnerability?.id as number,
        limit: 10,
        skip: 0,
      });
      assert.deepEqual(records, []);
      const insights = await listCveInsights(store.db, {
        applicationId: app?.id as number,
        seq: 1,
        limit: 10,
        skip: 0,
      });
      assert.deepEqual(insights, [
        {
          affectedPackageCount: 1,
          aliases: ["GHSA-2222-3333-4444"],
          id: "CVE-2099-0001",
          referringObjectCount: 3,
          score: 7.5,
          severity: "HIGH",
          summary: "test advisory",
        },
      ]);
    });

    it("stores history as changes: unchanged rows are not copied", async () => {
      const count = async (
        table: "external_objects" | "object_references" | "application_packages" | "application_objects",
      ) =>
        Number(
          (
            await store.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as("n"))
              .executeTakeFirstOrThrow()
          ).n,
        );
      // Objects belong to a package version: left-pad's upgrade from 1.0.0 to 1.2.0 gives its three objects
      // new rows, and the two references still made new rows too; the application's own objects, unchanged,
      // are not copied.
      assert.equal(await count("external_objects"), 6, "three objects of 1.0.0, the same three of 1.2.0");
      assert.equal(await count("object_references"), 5, "three to 1.0.0's objects, two to 1.2.0's");
      assert.equal(await count("application_objects"), 3, "three application objects unchanged: three rows");
      assert.equal(
        await count("application_packages"),
        3,
        "zeta unchanged, left-pad 1.0.0 closed, 1.2.0 opened",
      );
    });

    it("refuses an analysis older than the latest one, and keeps the store unchanged", async () => {
      await assert.rejects(
        ingestAnalysis(store.db, "app", { ...first, analyzedAt: "2023-12-31T00:00:00Z" }),
        (error: Error) =>
          error instanceof IngestError &&
          error.reason === "out-of-order" &&
          error.message ===
            "Application 'app' already has an analysis at 2024-02-01T00:00:00Z: " +
              "an analysis dated 2023-12-31T00:00:00Z must come later",
      );
      const app = await findApplication(store.db, "app");
      assert.equal((await resolveAnalysis(store.db, app?.id as number))?.seq, 2);
    });

    it("refuses a reference to an unknown object with a clear message", async () => {
      await assert.rejects(
        ingestAnalysis(store.db, "other", { ...first, references: [{ from: caller("x"), to: "404" }] }),
        /points to unknown external object 404/,
      );
      assert.equal(await findApplication(store.db, "other"), undefined);
    });
  });
}
