import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { ingestAnalysis, loadAdvisory, loadPublishedVersions } from "../../src/domain/package-facts.ts";
import { findApplication } from "../../src/store/applications.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import type { AnalysisInput } from "../../src/store/input-records.ts";
import {
  listPackages,
  type ObjectSearch,
  searchExternalObjects,
  searchExternalObjectsByScan,
} from "../../src/store/packages.ts";
import { packagePageByJoins } from "../support/list-baselines.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/**
 * Issue 13 point 5 (migration 016): the packages list walks application_packages in page order, and the
 * objects search walks the objects in page order, then asks the trigram index (FTS5 on SQLite, pg_trgm
 * on PostgreSQL). Every answer must be the one the previous queries gave: same rows, same order, same
 * matching (ASCII case ignored, anything else exact; LIKE wildcards literal; queries of any length).
 */

const MEMBERS = [
  "Widget1",
  "widget12",
  "WIDGET2",
  "fn_1",
  "fn%1",
  'quote"d',
  "back\\slash",
  "Éclair",
  "éclair",
  "Ünïcode",
  "ab",
  "a, b",
  "NEAR(x)",
  "star*",
];

function objectsOf(pkg: string, ecosystem: "npm" | "maven", variant: number) {
  return MEMBERS.map((member, j) => ({
    id: `${ecosystem}:${pkg}#${j}`,
    package: `${ecosystem}:${pkg}`,
    name: member,
    fullName: `${pkg}.lib.m${j % 3}.${member}`,
    mangling: j % 2 === 0 ? member : `${member}(a, b${variant ? `, opt${variant}` : ""})`,
    type: j % 3 === 0 ? "JavaScript Class" : "JavaScript Function",
    typeId: j % 3 === 0 ? "JS_CLASS" : "JS_FUNCTION",
  }));
}

const source = (i: number) => ({
  id: `s${i}`,
  name: `s${i}`,
  fullName: `app.s${i}`,
  type: "TS Method",
  typeId: "TS_METHOD",
});

/** Analyses with upgrades, two versions of one package at once, objects changed, dropped and unreferenced. */
function analysis(seq: number): AnalysisInput {
  const packages: AnalysisInput["packages"] = [
    { ecosystem: "npm", name: "alpha", version: seq === 1 ? "1.0.0" : "1.1.0" },
    { ecosystem: "npm", name: "beta", version: "1.0.0" },
    { ecosystem: "npm", name: "org.demo:core", version: "1.0.0" },
    { ecosystem: "maven", name: "org.demo:core", version: "2.0" },
    { ecosystem: "npm", name: "zeta_pkg", version: "3.0.0" },
  ];
  if (seq === 2) packages.push({ ecosystem: "npm", name: "alpha", version: "2.0.0" });
  if (seq >= 3) packages.push({ ecosystem: "npm", name: "a%b", version: "0.1.0" });
  // Analysis 2 uses alpha at two versions: its objects are 1.1.0's, the one the code loads.
  const alpha = objectsOf("alpha", "npm", seq % 2).map((o) => (seq === 2 ? { ...o, version: "1.1.0" } : o));
  const objects = [
    ...alpha,
    ...objectsOf("beta", "npm", 0).filter((_, j) => seq < 3 || j % 4 !== 1),
    ...objectsOf("org.demo:core", "npm", 0),
    ...objectsOf("org.demo:core", "maven", seq),
    ...(seq >= 3 ? objectsOf("a%b", "npm", 0) : []),
  ];
  // Every object but every fifth is referred to; which ones shifts with the analysis.
  const references = objects
    .filter((_, i) => (i + seq) % 5 !== 0)
    .map((o, i) => ({ from: source(i % 4), to: o.id }));
  return { analyzedAt: `2024-0${seq}-01T00:00:00Z`, packages, objects, references };
}

const QUERIES = [
  "w",
  "Wi",
  "ab",
  "widget",
  "WIDGET1",
  "get1",
  "1",
  "%",
  "_",
  "fn%",
  "\\",
  '"',
  'quote"d',
  "é",
  "É",
  "éclair",
  "ÉCLAIR",
  "eclair",
  "ünï",
  "ÜNÏ",
  "javascript class",
  "lib.m1.w",
  "a, b",
  "b, opt",
  "NEAR(",
  "*",
  "AND",
  "OR fn",
  "org.demo:",
  "zzz-none",
];

const PAGES = [
  { limit: 100, skip: 0 },
  { limit: 5, skip: 0 },
  { limit: 5, skip: 7 },
  { limit: 1, skip: 0 },
];

for (const kind of STORE_KINDS) {
  describe(`packages list and objects search (migration 016) on ${kind}`, () => {
    let test: TestStore;
    let store: StoreHandle;
    let applicationId: number;

    async function assertSearchAsScan(seqs: number[]): Promise<number> {
      let found = 0;
      for (const seq of seqs) {
        for (const q of QUERIES) {
          for (const typeId of [undefined, "JS_CLASS"]) {
            for (const page of PAGES) {
              const query: ObjectSearch = { applicationId, seq, q, typeId, ...page };
              const expected = await searchExternalObjectsByScan(store.db, query);
              found += expected.length;
              // walkRows 0: straight to the trigram index; 3: a walk too short; default: the walk.
              for (const walkRows of [0, 3, undefined]) {
                const options = walkRows === undefined ? {} : { walkRows };
                assert.deepEqual(
                  await searchExternalObjects(store.db, query, options),
                  expected,
                  `q=${JSON.stringify(q)} type=${typeId} seq=${seq} ${JSON.stringify(page)} walk=${walkRows}`,
                );
              }
            }
          }
        }
      }
      return found;
    }

    async function assertPackagesAsJoins(seqs: number[]): Promise<number> {
      let found = 0;
      for (const seq of seqs) {
        for (const vulnerable of [undefined, true, false]) {
          for (const q of [undefined, "a", "AL", "core", "%", "_", "zz"]) {
            for (const page of [...PAGES, { limit: 2, skip: 3 }]) {
              const query = { applicationId, seq, vulnerable, q, ...page };
              const expected = (await packagePageByJoins(store.db, query)).map(({ versionId, ...p }) => p);
              found += expected.length;
              const actual = (await listPackages(store.db, query)).map((p) => ({
                ecosystem: p.ecosystem,
                name: p.name,
                version: p.version,
              }));
              assert.deepEqual(actual, expected, `packages ${JSON.stringify(query)}`);
            }
          }
        }
      }
      return found;
    }

    before(async () => {
      test = await createTestStore(kind);
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      const released = (version: string, d: string) => ({ version, releasedAt: `${d}T00:00:00.000Z` });
      await loadPublishedVersions(store.db, "npm", "alpha", [
        released("1.0.0", "2020-01-01"),
        released("1.1.0", "2020-06-01"),
        released("2.0.0", "2021-01-01"),
      ]);
      await loadAdvisory(store.db, {
        id: "CVE-2099-2000",
        aliases: [],
        severity: "HIGH",
        cvssScore: 8,
        summary: "alpha below 2",
        publishedAt: null,
        affected: [
          { ecosystem: "npm", package: "alpha", ranges: [{ introduced: "0", fixed: "2.0.0" }] },
          { ecosystem: "maven", package: "org.demo:core", ranges: [{ introduced: "0" }] },
        ],
      });
      for (const seq of [1, 2, 3]) await ingestAnalysis(store.db, "app", analysis(seq));
      applicationId = (await findApplication(store.db, "app"))?.id as number;
    });
    after(async () => {
      await store?.close();
      await test?.drop();
    });

    it("lists packages as the joins did: same rows, same order, every filter and page", async () => {
      assert.ok((await assertPackagesAsJoins([1, 2, 3])) > 100);
      // Same name in two ecosystems: by ecosystem; two versions of alpha in analysis 2: by version order.
      const all = await listPackages(store.db, { applicationId, seq: 2, limit: 100, skip: 0 });
      assert.deepEqual(
        all.map((p) => `${p.ecosystem}:${p.name}@${p.version}`),
        [
          "npm:alpha@1.1.0",
          "npm:alpha@2.0.0",
          "npm:beta@1.0.0",
          "maven:org.demo:core@2.0",
          "npm:org.demo:core@1.0.0",
          "npm:zeta_pkg@3.0.0",
        ],
      );
    });

    it("searches objects as the scan did, through the walk and through the trigram index", async () => {
      assert.ok((await assertSearchAsScan([1, 2, 3])) > 1000);
      const widgets = await searchExternalObjects(
        store.db,
        { applicationId, seq: 3, q: "WIDGET1", limit: 100, skip: 0 },
        { walkRows: 0 },
      );
      assert.ok(widgets.length > 0);
      assert.ok(widgets.every((o) => /widget1/i.test(`${o.name} ${o.fullName} ${o.mangling} ${o.type}`)));
      // ASCII case only: "É" finds "Éclair", never "éclair".
      const accented = await searchExternalObjects(
        store.db,
        { applicationId, seq: 3, q: "É", limit: 100, skip: 0 },
        { walkRows: 0 },
      );
      assert.ok(accented.length > 0);
      assert.ok(accented.every((o) => o.name === "Éclair"));
    });

    it("migrates a store that already holds history, and ingestion keeps the new structures after it", async () => {
      // Undo migration 016 by hand, so that it runs again on this store's data.
      const db = store.db;
      if (kind === "sqlite") {
        for (const trigger of ["insert", "delete", "update"]) {
          await sql`drop trigger ${sql.id(`external_objects_search_${trigger}`)}`.execute(db);
        }
        await sql`drop table external_objects_search`.execute(db);
      } else {
        await sql`drop index external_objects_search`.execute(db);
      }
      await sql`drop index external_objects_page`.execute(db);
      await sql`drop index application_packages_page`.execute(db);
      await sql`alter table application_packages drop column package_name`.execute(db);
      await sql`alter table application_packages drop column package_ecosystem`.execute(db);
      await sql`delete from kysely_migration where name = '016-list-search'`.execute(db);
      await store.close();
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      assert.deepEqual(store.migrated, ["016-list-search"]);
      assert.ok((await assertPackagesAsJoins([1, 2, 3])) > 100);
      assert.ok((await assertSearchAsScan([1, 3])) > 500);
      await ingestAnalysis(store.db, "app", analysis(4));
      assert.ok((await assertPackagesAsJoins([3, 4])) > 50);
      assert.ok((await assertSearchAsScan([4])) > 200);
    });

    if (kind === "postgres") {
      it("builds the trigram index at start when it is missing (pg_trgm installed after migration 016)", async () => {
        await sql`drop index external_objects_search`.execute(store.db);
        await store.close();
        store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
        assert.deepEqual(store.migrated, []);
        assert.deepEqual(store.notices, ["built the trigram index of objects?q= (external_objects_search)"]);
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_indexes
            where indexname = 'external_objects_search'`.execute(store.db);
        assert.equal(rows[0]?.n, 1);
        await store.close();
        store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
        assert.deepEqual(store.notices, []);
        assert.ok((await assertSearchAsScan([4])) > 200);
      });
    }
  });
}
