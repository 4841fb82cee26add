import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ingestAnalysis, loadAdvisory, loadPublishedVersions } from "../../src/domain/package-facts.ts";
import { findApplication } from "../../src/store/applications.ts";
import { compareAnalysesPage, rebuildChangeLogs, referenceChangesWalk } from "../../src/store/compare.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import type { AnalysisInput } from "../../src/store/input-records.ts";
import { type Comparison, compareFromIntervals } from "../support/compare-oracle.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const day = (d: string) => `${d}T00:00:00.000Z`;
const published = (...list: [string, string][]) =>
  list.map(([version, d]) => ({ version, releasedAt: day(d) }));

const object = (pkg: string, local: string, mangling = `${local}(x)`) => ({
  id: `${pkg}#${local}`,
  package: `npm:${pkg}`,
  name: local,
  fullName: `${pkg}.lib.${local}`,
  mangling,
  type: "JavaScript Function",
  typeId: "JS_FUNCTION",
});
const source = (id: string, type = "TS Method") => ({
  id,
  name: id,
  fullName: `app.${id}`,
  type,
  typeId: "TS_METHOD",
});
const ref = (from: string, to: string, type?: string) => ({ from: source(from, type), to });
const use = (...list: [string, string][]) =>
  list.map(([name, version]) => ({ ecosystem: "npm" as const, name, version }));

const objects = [
  object("alpha", "a1"),
  object("alpha", "a2"),
  object("alpha", "a3"),
  object("beta", "b1"),
  object("beta", "b2"),
  object("gamma", "g1"),
];

/**
 * Six analyses. References are added, removed, removed and added again (so that comparisons across
 * several analyses must cancel them), and re-stored under new rows without changing identity (a target
 * object's signature changes, a source object's type changes): those are no change. Packages are
 * upgraded, downgraded, and two versions of one package are used at once.
 */
const analyses: AnalysisInput[] = [
  {
    analyzedAt: "2024-01-01T00:00:00Z",
    packages: use(["alpha", "1.0.0"], ["beta", "1.0.0"], ["gamma", "1.0.0"]),
    objects,
    references: [ref("c1", "alpha#a1"), ref("c1", "alpha#a2"), ref("c2", "beta#b1"), ref("c3", "gamma#g1")],
  },
  {
    analyzedAt: "2024-02-01T00:00:00Z",
    packages: use(["alpha", "1.0.0"], ["beta", "1.1.0"], ["gamma", "1.0.0"]),
    objects: objects.map((o) => (o.id === "alpha#a1" ? object("alpha", "a1", "a1(x, y)") : o)),
    references: [ref("c1", "alpha#a1"), ref("c2", "beta#b1"), ref("c2", "beta#b2"), ref("c3", "gamma#g1")],
  },
  {
    analyzedAt: "2024-03-01T00:00:00Z",
    packages: use(["alpha", "1.0.0"], ["alpha", "2.0.0"], ["beta", "1.1.0"], ["gamma", "1.0.0"]),
    // alpha at two versions: each object names the one its referring code loads (a3 is 2.0.0's).
    objects: objects
      .map((o) => (o.id === "alpha#a1" ? object("alpha", "a1", "a1(x, y)") : o))
      .map((o) =>
        o.package === "npm:alpha" ? { ...o, version: o.id === "alpha#a3" ? "2.0.0" : "1.0.0" } : o,
      ),
    references: [
      ref("c1", "alpha#a1", "TS Function"),
      ref("c1", "alpha#a2", "TS Function"),
      ref("c2", "beta#b2"),
      ref("c4", "alpha#a3"),
      ref("c3", "gamma#g1"),
    ],
  },
  {
    analyzedAt: "2024-04-01T00:00:00Z",
    packages: use(["alpha", "2.0.0"], ["beta", "1.0.0"], ["gamma", "1.1.0"]),
    objects,
    references: [ref("c1", "alpha#a1"), ref("c2", "beta#b1"), ref("c4", "alpha#a3"), ref("c3", "gamma#g1")],
  },
  {
    analyzedAt: "2024-05-01T00:00:00Z",
    packages: use(["alpha", "2.0.0"], ["beta", "1.0.0"], ["gamma", "1.1.0"]),
    objects,
    references: [ref("c1", "alpha#a1"), ref("c1", "alpha#a2"), ref("c2", "beta#b1")],
  },
  {
    analyzedAt: "2024-06-01T00:00:00Z",
    packages: use(["alpha", "1.0.0"], ["beta", "1.1.0"], ["gamma", "1.1.0"]),
    objects,
    references: [ref("c1", "alpha#a1"), ref("c2", "beta#b1"), ref("c3", "gamma#g1"), ref("c5", "gamma#g1")],
  },
];

const PAGES = [
  [100, 0],
  [1, 0],
  [1, 1],
  [2, 1],
  [3, 2],
  [5, 100],
] as const;

for (const kind of STORE_KINDS) {
  describe(`compare pages on ${kind}`, () => {
    let test: TestStore;
    let store: StoreHandle;
    let applicationId: number;

    /** Every pair of analyses (both directions) and page shape: a page is the slice of the whole lists. */
    async function assertPagesMatchWhole(context: string): Promise<number> {
      let changed = 0;
      for (let from = 1; from <= analyses.length; from++) {
        for (let to = 1; to <= analyses.length; to++) {
          const whole: Comparison = await compareFromIntervals(store.db, applicationId, from, to);
          if (whole.references.added.length + whole.references.removed.length > 0) changed++;
          for (const [limit, skip] of PAGES) {
            const page = await compareAnalysesPage(store.db, applicationId, from, to, { limit, skip });
            for (const list of ["packages", "references", "vulnerablePackages"] as const) {
              const at = `${context}: ${list} ${from} → ${to} limit ${limit} skip ${skip}`;
              assert.deepEqual(
                { added: page[list].added, removed: page[list].removed },
                {
                  added: whole[list].added.slice(skip, skip + limit),
                  removed: whole[list].removed.slice(skip, skip + limit),
                },
                at,
              );
              assert.equal(page[list].addedTotal, whole[list].added.length, `${at}: addedTotal`);
              assert.equal(page[list].removedTotal, whole[list].removed.length, `${at}: removedTotal`);
            }
          }
        }
      }
      return changed;
    }

    const logRows = async () => ({
      packages: await store.db
        .selectFrom("package_changes")
        .selectAll()
        .orderBy("application_id")
        .orderBy("seq")
        .orderBy("package_version_id")
        .execute(),
      references: await referenceRows(),
    });
    const rangeRows = () =>
      store.db
        .selectFrom("reference_range_totals")
        .select(["application_id", "lo", "hi", "added", "removed"])
        .orderBy("application_id")
        .orderBy("hi")
        .orderBy("lo")
        .execute();
    const referenceRows = () =>
      store.db
        .selectFrom("reference_changes")
        .selectAll()
        .orderBy("application_id")
        .orderBy("seq")
        .orderBy("target_full_name")
        .orderBy("target_object_id")
        .orderBy("source_full_name")
        .orderBy("source_object_id")
        .execute();

    before(async () => {
      test = await createTestStore(kind);
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      await loadPublishedVersions(
        store.db,
        "npm",
        "alpha",
        published(["1.0.0", "2020-01-01"], ["2.0.0", "2021-01-01"]),
      );
      await loadPublishedVersions(
        store.db,
        "npm",
        "beta",
        published(["1.0.0", "2020-01-01"], ["1.1.0", "2020-06-01"]),
      );
      await loadPublishedVersions(
        store.db,
        "npm",
        "gamma",
        published(["1.0.0", "2020-01-01"], ["1.1.0", "2021-01-01"]),
      );
      await loadAdvisory(store.db, {
        id: "CVE-2099-1000",
        aliases: [],
        severity: "HIGH",
        cvssScore: 8,
        summary: "before the analyses",
        publishedAt: null,
        affected: [{ ecosystem: "npm", package: "beta", ranges: [{ introduced: "0", fixed: "1.1.0" }] }],
      });
      for (const input of analyses) await ingestAnalysis(store.db, "app", input);
      // A second application with the same objects: its log must never leak into the first's pages.
      for (const input of analyses.slice(0, 3).reverse().entries()) {
        await ingestAnalysis(store.db, "other", {
          ...input[1],
          analyzedAt: `2023-0${input[0] + 1}-01T00:00:00Z`,
        });
      }
      applicationId = (await findApplication(store.db, "app"))?.id as number;
    });
    after(async () => {
      await store?.close();
      await test?.drop();
    });

    it("pages every comparison as slices of the whole lists, with their totals", async () => {
      assert.ok((await assertPagesMatchWhole("after ingestion")) >= 20);
      // Spot checks of what a user reads: each reference is to an object of one version, so an upgrade
      // moves the uses from the old version to the new. 1 → 2 re-stores c1 → a1 (a1's signature changed):
      // no change; beta 1.0.0 → 1.1.0 moves c2 → b1.
      const first = await compareAnalysesPage(store.db, applicationId, 1, 2, { limit: 100, skip: 0 });
      const show = (list: { source: { id: string }; target: { id: string; version: string } }[]) =>
        list.map((r) => `${r.source.id} -> ${r.target.id}@${r.target.version}`);
      assert.deepEqual(show(first.references.added), ["c2 -> beta#b1@1.1.0", "c2 -> beta#b2@1.1.0"]);
      assert.deepEqual(show(first.references.removed), ["c1 -> alpha#a2@1.0.0", "c2 -> beta#b1@1.0.0"]);
      // 2 → 3 re-stores c1's references (its type changed); alpha is used at 1.0.0 and 2.0.0 at once, and
      // a3 is 2.0.0's.
      const third = await compareAnalysesPage(store.db, applicationId, 2, 3, { limit: 100, skip: 0 });
      assert.deepEqual(show(third.references.added), ["c1 -> alpha#a2@1.0.0", "c4 -> alpha#a3@2.0.0"]);
      assert.deepEqual(show(third.references.removed), ["c2 -> beta#b1@1.1.0"]);
      // 1 → 5: alpha 1.0.0 → 2.0.0 moves c1's uses, c3 → g1 is gone; c1 → a2 (removed in 2, re-added in 3
      // at 1.0.0) cancels out on its own version.
      const across = await compareAnalysesPage(store.db, applicationId, 1, 5, { limit: 100, skip: 0 });
      assert.deepEqual(show(across.references.added), ["c1 -> alpha#a1@2.0.0", "c1 -> alpha#a2@2.0.0"]);
      assert.deepEqual(show(across.references.removed), [
        "c1 -> alpha#a1@1.0.0",
        "c1 -> alpha#a2@1.0.0",
        "c3 -> gamma#g1@1.0.0",
      ]);
      // Backwards: added and removed swap.
      const back = await compareAnalysesPage(store.db, applicationId, 5, 1, { limit: 100, skip: 0 });
      assert.deepEqual(show(back.references.added), show(across.references.removed));
      assert.deepEqual(back.packages.removed, across.packages.added);
      // Vulnerable packages: beta 1.0.0 (affected) goes in 3 → 4, out in 5 → 6.
      const vulnerable = await compareAnalysesPage(store.db, applicationId, 3, 4, { limit: 100, skip: 0 });
      assert.deepEqual(vulnerable.vulnerablePackages.added, [
        { name: "beta", version: "1.0.0", vulnerabilities: ["CVE-2099-1000"] },
      ]);
    });

    it("follows advisories imported after the analyses", async () => {
      await loadAdvisory(store.db, {
        id: "CVE-2099-2000",
        aliases: [],
        severity: "CRITICAL",
        cvssScore: 9.8,
        summary: "after the analyses",
        publishedAt: null,
        affected: [{ ecosystem: "npm", package: "alpha", ranges: [{ introduced: "2.0.0" }] }],
      });
      await assertPagesMatchWhole("after a later advisory");
      const page = await compareAnalysesPage(store.db, applicationId, 2, 3, { limit: 100, skip: 0 });
      assert.deepEqual(page.vulnerablePackages.added, [
        { name: "alpha", version: "2.0.0", vulnerabilities: ["CVE-2099-2000"] },
      ]);
    });

    it("migration 024 rebuilds from the stored history the same logs ingestion maintains", async () => {
      const maintained = await logRows();
      assert.ok(maintained.references.length >= 10 && maintained.packages.length >= 10);
      const ranges = await rangeRows();
      await rebuildChangeLogs(store.db);
      assert.deepEqual(await logRows(), maintained);
      assert.deepEqual(await rangeRows(), ranges);
      await assertPagesMatchWhole("after the rebuild");
    });

    it("the key walk (PostgreSQL's page) gives the same pages, whatever its chunk size", async () => {
      for (let from = 1; from <= analyses.length; from++) {
        for (let to = 1; to <= analyses.length; to++) {
          if (from === to) continue;
          const whole = await compareFromIntervals(store.db, applicationId, from, to);
          const [lo, hi] = [Math.min(from, to), Math.max(from, to)];
          const sign = to > from ? 1 : -1;
          for (const chunk of [1, 2, 3, 1_000]) {
            for (const [limit, skip] of PAGES) {
              const at = `${from} → ${to} chunk ${chunk} limit ${limit} skip ${skip}`;
              assert.deepEqual(
                await referenceChangesWalk(
                  store.db,
                  { applicationId, lo, hi, sign, paging: { limit, skip } },
                  chunk,
                ),
                whole.references.added.slice(skip, skip + limit),
                `added ${at}`,
              );
              assert.deepEqual(
                await referenceChangesWalk(
                  store.db,
                  { applicationId, lo, hi, sign: -sign as 1 | -1, paging: { limit, skip } },
                  chunk,
                ),
                whole.references.removed.slice(skip, skip + limit),
                `removed ${at}`,
              );
            }
          }
        }
      }
    });

    it("non-adjacent totals are stored per pair, each equal to the whole comparison's counts", async () => {
      const maintained = await rangeRows();
      // One row per pair lo < hi - 1 of the six analyses, each equal to the whole comparison's counts
      // (plus one for the other application's three analyses).
      const own = maintained.filter((r) => r.application_id === applicationId);
      assert.equal(own.length, 10);
      assert.equal(maintained.length, 11);
      for (const r of own) {
        const whole = await compareFromIntervals(store.db, applicationId, r.lo, r.hi);
        assert.deepEqual(
          [Number(r.added), Number(r.removed)],
          [whole.references.added.length, whole.references.removed.length],
          `${r.lo} → ${r.hi}`,
        );
      }
      assert.ok(maintained.some((r) => Number(r.added) > 0) && maintained.some((r) => Number(r.removed) > 0));
    });
  });
}
