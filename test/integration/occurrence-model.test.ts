import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  ingestAnalysis,
  loadAdvisory,
  loadPublishedVersions,
  recomputeTouched,
} from "../../src/domain/package-facts.ts";
import { applyOsvRecords } from "../../src/store/advisories.ts";
import { findApplication, resolveAnalysis } from "../../src/store/applications.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import type { AnalysisInput, OsvRecordInput } from "../../src/store/input-records.ts";
import {
  listCveInsights,
  listOccurrencesJson,
  type OccurrenceQuery,
  writeOccurrencesJson,
} from "../../src/store/insights.ts";
import {
  buildObjectLists,
  buildOccurrenceModel,
  objectListText,
  packObjectList,
} from "../../src/store/occurrence-model.ts";
import { occurrencesPageForAnswer } from "../../src/store/read-task-runner.ts";
import { findVulnerability } from "../../src/store/vulnerabilities.ts";
import { listOccurrences, listOccurrencesPage } from "../support/occurrence-pages.ts";
import {
  cveInsightsByJoins,
  occurrencesByObjectRowsJson,
  occurrencesBySingleQuery,
} from "../support/occurrences-baseline.ts";
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
const from = (id: string) => ({
  id,
  name: id,
  fullName: `app.${id}`,
  type: "TS Method",
  typeId: "TS_METHOD",
});
const refs = (...targets: string[]) => targets.map((to, i) => ({ from: from(`c${i % 3}`), to }));
const use = (...list: [string, string][]) =>
  list.map(([name, version]) => ({ ecosystem: "npm" as const, name, version }));

/** Five analyses: upgrades (out of and into a CVE), two versions of one package (each with its own
 * objects), objects added, removed, changed, unreferenced and referred again, and a version in use that
 * the registry does not list. */
const analyses: AnalysisInput[] = [
  {
    analyzedAt: "2024-01-01T00:00:00Z",
    packages: use(["alpha", "1.0.0"], ["beta", "1.0.0"], ["gamma", "1.0.0"]),
    objects: [
      object("alpha", "a1"),
      object("alpha", "a2"),
      object("alpha", "a3"),
      object("beta", "b1"),
      object("beta", "b2"),
      object("gamma", "g1"),
    ],
    references: refs("alpha#a1", "alpha#a2", "beta#b1", "beta#b2", "gamma#g1"),
  },
  {
    analyzedAt: "2024-02-01T00:00:00Z",
    packages: use(["alpha", "1.0.0"], ["beta", "1.1.0"], ["gamma", "1.0.0"]),
    objects: [
      object("alpha", "a1", "a1(x, y)"),
      object("alpha", "a3"),
      object("alpha", "a4"),
      object("beta", "b1"),
      object("beta", "b2"),
      object("gamma", "g1"),
    ],
    references: refs("alpha#a1", "alpha#a3", "alpha#a4", "beta#b1", "beta#b2", "gamma#g1"),
  },
  {
    analyzedAt: "2024-03-01T00:00:00Z",
    packages: use(["alpha", "1.0.0"], ["alpha", "2.0.0"], ["beta", "1.1.0"], ["gamma", "1.0.0"]),
    // Two versions of alpha: each object belongs to the one its referring code loads.
    objects: [
      { ...object("alpha", "a1", "a1(x, y)"), version: "1.0.0" },
      { ...object("alpha", "a3"), version: "2.0.0" },
      { ...object("alpha", "a4"), version: "2.0.0" },
      object("beta", "b1"),
      object("beta", "b2"),
      object("gamma", "g1"),
    ],
    references: refs("alpha#a1", "alpha#a4", "beta#b1", "beta#b2", "gamma#g1"),
  },
  {
    analyzedAt: "2024-04-01T00:00:00Z",
    packages: use(["alpha", "2.0.0"], ["beta", "1.0.0"], ["gamma", "1.0.5"]),
    objects: [
      object("alpha", "a1", "a1(x, y)"),
      object("alpha", "a3"),
      object("alpha", "a4"),
      object("beta", "b1"),
      object("beta", "b2"),
      object("gamma", "g1"),
    ],
    references: refs("alpha#a1", "alpha#a3", "alpha#a4", "beta#b1", "beta#b2", "gamma#g1"),
  },
  {
    analyzedAt: "2024-05-01T00:00:00Z",
    packages: use(["alpha", "2.0.0"], ["beta", "1.0.0"], ["gamma", "1.0.5"]),
    objects: [
      object("alpha", "a1", "a1(x, y)"),
      object("alpha", "a3"),
      object("beta", "b1"),
      object("beta", "b2"),
      object("gamma", "g1"),
    ],
    references: refs("alpha#a1", "alpha#a3", "beta#b1", "gamma#g1"),
  },
];

const osv = (
  osvId: string,
  modified: string,
  cve: string,
  affected: OsvRecordInput["advisory"]["affected"],
  withdrawn = false,
): OsvRecordInput => ({
  osvId,
  modified,
  withdrawn,
  advisory: {
    id: cve,
    aliases: [osvId],
    severity: "HIGH",
    cvssScore: 7.5,
    summary: `${cve} test`,
    publishedAt: null,
    affected,
  },
});

for (const kind of STORE_KINDS) {
  describe(`occurrence read model on ${kind}`, () => {
    let test: TestStore;
    let store: StoreHandle;
    let applicationId: number;
    /** Analyses ingested so far (the last test adds one). */
    let ingested = analyses.length;

    /** Every vulnerability, analysis and page shape: the read model answers what the joins answer. */
    async function assertSameAsJoins(context: string): Promise<number> {
      const vulnerabilities = await store.db.selectFrom("vulnerabilities").select(["id", "cve_id"]).execute();
      let nonEmpty = 0;
      for (let seq = 1; seq <= ingested; seq++) {
        for (const [limit, skip] of [
          [10, 0],
          [1, 1],
        ] as const) {
          const query = { applicationId, seq, limit, skip };
          assert.deepEqual(
            await listCveInsights(store.db, query),
            await cveInsightsByJoins(store.db, query),
            `${context}: insights/cve analysis ${seq}`,
          );
        }
      }
      for (const v of vulnerabilities) {
        for (let seq = 1; seq <= ingested; seq++) {
          for (const [limit, skip] of [
            [10, 0],
            [1, 0],
            [1, 1],
            [2, 1],
            [5, 3],
          ] as const) {
            const query = { applicationId, seq, vulnerabilityId: v.id, limit, skip };
            const expected = await occurrencesBySingleQuery(store.db, query);
            assert.equal(
              await listOccurrencesJson(store.db, query),
              JSON.stringify(expected),
              `${context}: JSON of ${v.cve_id} analysis ${seq} limit ${limit} skip ${skip}`,
            );
            // The endpoint's read (on SQLite a task in a reader thread, which inflates the lists there).
            assert.equal(
              await listOccurrencesPage(store.db, query),
              JSON.stringify(expected),
              `${context}: endpoint's JSON of ${v.cve_id} analysis ${seq} limit ${limit} skip ${skip}`,
            );
            // The HTTP answer's read (on SQLite the reader writes the page's bytes from the lists it keeps).
            assert.equal(
              await answerText(store.db, query),
              JSON.stringify(expected),
              `${context}: answer's bytes of ${v.cve_id} analysis ${seq} limit ${limit} skip ${skip}`,
            );
            // The read of migration 012 (the benchmark's comparison for PostgreSQL's lists) answers alike.
            assert.equal(
              await occurrencesByObjectRowsJson(store.db, query),
              JSON.stringify(expected),
              `${context}: JSON by object rows of ${v.cve_id} analysis ${seq} limit ${limit} skip ${skip}`,
            );
            if (expected.length > 0) nonEmpty++;
          }
        }
      }
      return nonEmpty;
    }

    /** The endpoint's answer as text: on SQLite it must come as bytes in a pool buffer (then released). */
    async function answerText(db: StoreHandle["db"], query: OccurrenceQuery): Promise<string> {
      const page = await occurrencesPageForAnswer(db, query);
      if (typeof page === "string") {
        assert.equal(kind, "postgres", "on SQLite a page this small comes as bytes");
        return page;
      }
      try {
        return page.bytes.toString("utf8");
      } finally {
        page.release();
      }
    }

    async function page(cve: string, date: string) {
      const vulnerability = await findVulnerability(store.db, cve);
      const analysis = await resolveAnalysis(store.db, applicationId, date);
      if (!vulnerability || !analysis) return undefined;
      return listOccurrences(store.db, {
        applicationId,
        seq: analysis.seq,
        vulnerabilityId: vulnerability.id,
        limit: 10,
        skip: 0,
      });
    }

    before(async () => {
      test = await createTestStore(kind);
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      await loadPublishedVersions(
        store.db,
        "npm",
        "alpha",
        published(["1.0.0", "2020-01-01"], ["1.1.0", "2020-06-01"], ["2.0.0", "2021-01-01"]),
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
        affected: [
          { ecosystem: "npm", package: "alpha", ranges: [{ introduced: "0" }] },
          { ecosystem: "npm", package: "beta", ranges: [{ introduced: "0", fixed: "1.1.0" }] },
        ],
      });
      for (const input of analyses) await ingestAnalysis(store.db, "app", input);
      applicationId = (await findApplication(store.db, "app"))?.id as number;
    });
    after(async () => {
      await store?.close();
      await test?.drop();
    });

    it("answers as the joins do in every analysis, with history as intervals", async () => {
      assert.ok((await assertSameAsJoins("after ingestion")) >= 10);
      // Analysis 3 uses two versions of alpha: both listed, in version order, each with its own objects
      // (a1 is referred to in 1.0.0, a4 in 2.0.0; a3 of 2.0.0 is not referred to).
      const third = await page("CVE-2099-1000", "2024-03-15T00:00:00Z");
      assert.deepEqual(
        third?.map((p) => [p.name, p.version, p.objects.map((o) => `${o.id} ${o.mangling}`)]),
        [
          ["alpha", "1.0.0", ["alpha#a1 a1(x, y)"]],
          ["alpha", "2.0.0", ["alpha#a4 a4(x)"]],
        ],
      );
      // Analysis 1: beta 1.0.0 is affected, a3 is not referred to.
      const first = await page("CVE-2099-1000", "2024-01-15T00:00:00Z");
      assert.deepEqual(
        first?.map((p) => [p.name, p.version, p.objects.map((o) => o.id)]),
        [
          ["alpha", "1.0.0", ["alpha#a1", "alpha#a2"]],
          ["beta", "1.0.0", ["beta#b1", "beta#b2"]],
        ],
      );
      // Unchanged and referred throughout: one row for all five analyses; a3 referred in 2, 4-5: two rows.
      const rows = async (objectId: string) =>
        (
          await store.db
            .selectFrom("occurrence_objects")
            .select(["from_seq", "to_seq"])
            .where("object_id", "=", objectId)
            .orderBy("from_seq")
            .execute()
        ).map((r) => [r.from_seq, r.to_seq]);
      // A row per run of analyses of one version: b1 is beta 1.0.0's, 1.1.0's (2-3), 1.0.0's again.
      assert.deepEqual(await rows("beta#b1"), [
        [1, 2],
        [2, 4],
        [4, 2_147_483_647],
      ]);
      assert.deepEqual(await rows("alpha#a3"), [
        [2, 3],
        [4, 2_147_483_647],
      ]);
      // a1: 1.0.0's (its mangling changed in 2), then 2.0.0's from 4.
      assert.deepEqual(await rows("alpha#a1"), [
        [1, 2],
        [2, 4],
        [4, 2_147_483_647],
      ]);
    });

    it("applies an advisory imported after the analyses to every analysis, and follows its revisions", async () => {
      assert.equal(await page("CVE-2099-2000", "2024-01-15T00:00:00Z"), undefined);
      const touched = new Set<number>();
      await applyOsvRecords(
        store.db,
        [
          osv("GHSA-aaaa-bbbb-cccc", "2025-01-01T00:00:00Z", "CVE-2099-2000", [
            { ecosystem: "npm", package: "gamma", ranges: [{ introduced: "0", fixed: "1.1.0" }] },
            { ecosystem: "npm", package: "alpha", ranges: [{ introduced: "2.0.0" }] },
          ]),
        ],
        touched,
      );
      await recomputeTouched(store.db, touched);
      assert.deepEqual(
        (await page("CVE-2099-2000", "2024-01-15T00:00:00Z"))?.map((p) => `${p.name}@${p.version}`),
        ["gamma@1.0.0"],
      );
      assert.deepEqual(
        (await page("GHSA-aaaa-bbbb-cccc", "2024-05-15T00:00:00Z"))?.map((p) => `${p.name}@${p.version}`),
        ["alpha@2.0.0", "gamma@1.0.5"],
      );
      await assertSameAsJoins("after an import");

      // A newer revision narrows the ranges: gamma 1.0.5 is no longer affected.
      touched.clear();
      await applyOsvRecords(
        store.db,
        [
          osv("GHSA-aaaa-bbbb-cccc", "2025-02-01T00:00:00Z", "CVE-2099-2000", [
            { ecosystem: "npm", package: "gamma", ranges: [{ introduced: "0", fixed: "1.0.5" }] },
          ]),
        ],
        touched,
      );
      await recomputeTouched(store.db, touched);
      assert.deepEqual(
        (await page("CVE-2099-2000", "2024-05-15T00:00:00Z"))?.map((p) => p.name),
        [],
      );
      assert.deepEqual(
        (await page("CVE-2099-2000", "2024-01-15T00:00:00Z"))?.map((p) => p.name),
        ["gamma"],
      );
      await assertSameAsJoins("after a revision");

      // Withdrawn: the advisory and its occurrences are gone.
      touched.clear();
      await applyOsvRecords(
        store.db,
        [osv("GHSA-aaaa-bbbb-cccc", "2025-03-01T00:00:00Z", "CVE-2099-2000", [], true)],
        touched,
      );
      await recomputeTouched(store.db, touched);
      assert.equal(await findVulnerability(store.db, "CVE-2099-2000"), undefined);
      const left = await store.db
        .selectFrom("cve_occurrences")
        .select("vulnerability_id")
        .distinct()
        .execute();
      const known = await store.db.selectFrom("vulnerabilities").select("id").execute();
      assert.deepEqual(
        left.map((r) => r.vulnerability_id).sort(),
        known
          .map((r) => r.id)
          .filter((id) => left.some((r) => r.vulnerability_id === id))
          .sort(),
      );
      await assertSameAsJoins("after a withdrawal");
    });

    it("keeps the version order when the registry publishes versions in between", async () => {
      await loadPublishedVersions(
        store.db,
        "npm",
        "alpha",
        published(
          ["0.9.0", "2019-01-01"],
          ["1.0.0", "2020-01-01"],
          ["1.5.0", "2020-09-01"],
          ["1.1.0", "2020-06-01"],
          ["2.0.0", "2021-01-01"],
        ),
      );
      const ranks = await store.db
        .selectFrom("cve_occurrences as co")
        .innerJoin("package_versions as pv", "pv.id", "co.package_version_id")
        .select(["co.rank as stored", "pv.rank as actual"])
        .execute();
      assert.ok(ranks.length > 0);
      for (const r of ranks) assert.equal(r.stored, r.actual);
      await assertSameAsJoins("after new versions");
    });

    it("builds the same rows from the stored history (migration 021) as ingestion and imports maintain", async () => {
      const dump = async () => ({
        packages: await store.db
          .selectFrom("cve_occurrences")
          .selectAll()
          .orderBy([
            "application_id",
            "vulnerability_id",
            "package_name",
            "rank",
            "version",
            "package_version_id",
            "from_seq",
          ])
          .execute(),
        objects: await store.db
          .selectFrom("occurrence_objects")
          .selectAll()
          .orderBy(["application_id", "package_version_id", "full_name", "object_id", "from_seq"])
          .execute(),
      });
      const maintained = await dump();
      assert.ok(maintained.packages.length > 0 && maintained.objects.length > 0);
      await buildOccurrenceModel(store.db);
      assert.deepEqual(await dump(), maintained);
    });

    it("keeps one object list per package version and run of analyses, built alike from the history and by ingestion", async () => {
      // The lists with their text (SQLite stores it deflated, PostgreSQL as is), by name@version.
      const versionNames = new Map(
        (
          await store.db
            .selectFrom("package_versions as pv")
            .innerJoin("packages as p", "p.id", "pv.package_id")
            .select(["pv.id", "p.name", "pv.version"])
            .execute()
        ).map((v) => [v.id, `${v.name}@${v.version}`]),
      );
      const lists = async () =>
        (
          await store.db
            .selectFrom("occurrence_object_lists")
            .selectAll()
            .orderBy("application_id")
            .orderBy("package_version_id")
            .orderBy("from_seq")
            .execute()
        ).map((l) => ({ ...l, docs: objectListText(l.docs) }));
      const byVersion = (all: Awaited<ReturnType<typeof lists>>) =>
        all
          .map((l) => [
            versionNames.get(l.package_version_id),
            l.from_seq,
            l.to_seq,
            (JSON.parse(l.docs) as { id: string }[]).map((o) => o.id),
          ])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(a[1]) - Number(b[1]));
      const stored = await store.db.selectFrom("occurrence_object_lists").select("docs").execute();
      assert.ok(stored.length > 0);
      for (const { docs } of stored) {
        if (kind === "sqlite") assert.ok(docs instanceof Uint8Array, "SQLite stores the lists deflated");
        else assert.equal(typeof docs, "string");
      }
      const maintained = await lists();
      // Each version its own lists: alpha 1.0.0 up to analysis 3, 2.0.0 from 3; beta back at 1.0.0 in 4.
      assert.deepEqual(byVersion(maintained), [
        ["alpha@1.0.0", 1, 2, ["alpha#a1", "alpha#a2"]],
        ["alpha@1.0.0", 2, 3, ["alpha#a1", "alpha#a3", "alpha#a4"]],
        ["alpha@1.0.0", 3, 4, ["alpha#a1"]],
        ["alpha@2.0.0", 3, 4, ["alpha#a4"]],
        ["alpha@2.0.0", 4, 5, ["alpha#a1", "alpha#a3", "alpha#a4"]],
        ["alpha@2.0.0", 5, 2_147_483_647, ["alpha#a1", "alpha#a3"]],
        ["beta@1.0.0", 1, 2, ["beta#b1", "beta#b2"]],
        ["beta@1.0.0", 4, 5, ["beta#b1", "beta#b2"]],
        ["beta@1.0.0", 5, 2_147_483_647, ["beta#b1"]],
        ["beta@1.1.0", 2, 4, ["beta#b1", "beta#b2"]],
        ["gamma@1.0.0", 1, 4, ["gamma#g1"]],
        ["gamma@1.0.5", 4, 2_147_483_647, ["gamma#g1"]],
      ]);
      // Built from the stored rows (migration 021's way): the same rows.
      await buildObjectLists(store.db);
      assert.deepEqual(await lists(), maintained);

      // Ingestion after the rebuild: gamma is no longer referred to, alpha gains an object.
      await ingestAnalysis(store.db, "app", {
        ...(analyses[4] as AnalysisInput),
        analyzedAt: "2024-06-01T00:00:00Z",
        objects: [...(analyses[4] as AnalysisInput).objects, object("alpha", "a5")],
        references: refs("alpha#a1", "alpha#a3", "alpha#a5", "beta#b1"),
      });
      ingested++;
      const after = await lists();
      assert.deepEqual(
        byVersion(after)
          .filter((l) => String(l[0]).startsWith("gamma"))
          .map((l) => l.slice(0, 3)),
        [
          ["gamma@1.0.0", 1, 4],
          ["gamma@1.0.5", 4, 6],
        ],
      );
      await assertSameAsJoins("after an analysis following a rebuild of the lists");
      await buildObjectLists(store.db);
      assert.deepEqual(await lists(), after);
    });

    it("answers a page's objects from the stored lists", async () => {
      const vulnerability = await findVulnerability(store.db, "CVE-2099-1000");
      const query = {
        applicationId,
        seq: ingested,
        vulnerabilityId: vulnerability?.id as number,
        limit: 10,
        skip: 0,
      };
      const alpha = (
        await store.db
          .selectFrom("packages as p")
          .innerJoin("package_versions as pv", "pv.package_id", "p.id")
          .select("pv.id")
          .where("p.name", "=", "alpha")
          .execute()
      ).map((v) => v.id);
      // Characters of two to four UTF-8 bytes: the page's bytes are the list's bytes, not its characters.
      const edited = JSON.stringify([
        { ...object("alpha", "edited-in-place"), mangling: "only in the list: é ✓ 𝄞" },
      ]);
      // A list row edited in place (a longer text, so PostgreSQL's process cache misses it) shows in the
      // page on both paths: the list is what the page reads, not occurrence_objects.
      await store.db
        .updateTable("occurrence_object_lists")
        .set({ docs: kind === "sqlite" ? packObjectList(edited) : edited })
        .where("application_id", "=", applicationId)
        .where("package_version_id", "in", alpha)
        .where("from_seq", "<=", ingested)
        .where("to_seq", ">", ingested)
        .execute();
      try {
        for (const text of [
          await listOccurrencesJson(store.db, query),
          await listOccurrencesPage(store.db, query),
          await answerText(store.db, query),
        ]) {
          const pages = JSON.parse(text) as { name: string; objects: { id: string }[] }[];
          const objects = pages.filter((p) => p.name === "alpha").map((p) => p.objects.map((o) => o.id));
          assert.ok(objects.length > 0);
          for (const ids of objects) assert.deepEqual(ids, ["alpha#edited-in-place"]);
        }
      } finally {
        await buildObjectLists(store.db);
      }
      await assertSameAsJoins("after rebuilding the lists");
    });
    it("reads (on SQLite: inflates) each stored object list once per process, and the page stays the same", async () => {
      const statements: string[] = [];
      const logged = await openStore({
        databaseUrl: test.databaseUrl,
        sqliteFile: test.sqliteFile,
        log: (event) => statements.push(event.query.sql),
      });
      try {
        const vulnerability = await findVulnerability(logged.db, "CVE-2099-1000");
        const query = {
          applicationId,
          seq: ingested,
          vulnerabilityId: vulnerability?.id as number,
          limit: 10,
          skip: 0,
        };
        const expected = JSON.stringify(await occurrencesBySingleQuery(logged.db, query));
        // A statement that reads lists selects docs (the facts statement only asks their length).
        const readsLists = () =>
          statements.filter(
            (q) =>
              /occurrence_object_lists/.test(q) && /docs/.test(q.replace(/(octet_)?length\([^)]*\)/g, "")),
          );
        statements.length = 0;
        assert.equal(await listOccurrencesJson(logged.db, query), expected);
        assert.equal(readsLists().length, 1, "the first page reads the lists it lacks");
        statements.length = 0;
        assert.equal(await listOccurrencesJson(logged.db, query), expected);
        assert.ok(statements.length > 0, "the page's facts are read again");
        assert.deepEqual(readsLists(), [], "the second page reads no list");
        // As bytes (what a reader thread writes into a pool buffer): from the kept lists, the same bytes.
        const target = new Uint8Array(1024 * 1024);
        statements.length = 0;
        const written = await writeOccurrencesJson(logged.db, query, () => target);
        assert.ok("byteLength" in written, "the page fits the buffer");
        assert.equal(Buffer.from(target.buffer, 0, written.byteLength).toString("utf8"), expected);
        assert.equal(written.byteLength, Buffer.byteLength(expected));
        assert.deepEqual(readsLists(), [], "the byte page reads no list either");
        // A buffer too small for the page: its text instead, the same.
        assert.deepEqual(await writeOccurrencesJson(logged.db, query, () => new Uint8Array(10)), {
          text: expected,
        });
        // Inside a transaction (whose writes may roll back) the page reads its lists in its one statement.
        statements.length = 0;
        assert.equal(
          await logged.db.transaction().execute((trx) => listOccurrencesJson(trx, query)),
          expected,
        );
        assert.equal(readsLists().length, 1);
        assert.ok(JSON.parse(expected).length > 0);
      } finally {
        await logged.close();
      }
    });
  });
}
