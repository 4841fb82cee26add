import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { evaluateAnalysis } from "../../src/domain/gates.ts";
import { ingestAnalysis, loadPublishedVersions, recomputeTouched } from "../../src/domain/package-facts.ts";
import { applyOsvRecords } from "../../src/store/advisories.ts";
import { findApplication } from "../../src/store/applications.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { updateGateRule } from "../../src/store/gates.ts";
import type { AnalysisInput, OsvRecordInput } from "../../src/store/input-records.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const day = (d: string) => `${d}T00:00:00.000Z`;
const published = (...list: [string, string][]) =>
  list.map(([version, d]) => ({ version, releasedAt: day(d) }));
const object = (pkg: string, local: string) => ({
  id: `${pkg}#${local}`,
  package: `npm:${pkg}`,
  name: local,
  fullName: `${pkg}.lib.${local}`,
  mangling: `${local}(x)`,
  type: "JavaScript Function",
  typeId: "JS_FUNCTION",
});
const ref = (to: string) => ({
  from: { id: "main", name: "main", fullName: "app.main", type: "TS Method", typeId: "TS_METHOD" },
  to,
});
const use = (...list: [string, string][]) =>
  list.map(([name, version]) => ({ ecosystem: "npm" as const, name, version }));

const analyses: AnalysisInput[] = [
  {
    analyzedAt: "2024-01-01T00:00:00Z",
    packages: use(["alpha", "1.0.0"], ["beta", "1.0.0"], ["gamma", "1.0.0"]),
    objects: [object("alpha", "a1"), object("beta", "b1"), object("gamma", "g1")],
    references: [ref("alpha#a1"), ref("beta#b1")],
  },
  {
    analyzedAt: "2024-02-01T00:00:00Z",
    packages: use(["alpha", "1.1.0"], ["beta", "1.0.0"], ["gamma", "1.0.0"]),
    objects: [object("alpha", "a1"), object("beta", "b1"), object("gamma", "g1")],
    references: [ref("alpha#a1"), ref("gamma#g1")],
  },
];

const osv = (
  osvId: string,
  modified: string,
  cve: string,
  severity: string,
  affected: OsvRecordInput["advisory"]["affected"],
  withdrawn = false,
): OsvRecordInput => ({
  osvId,
  modified,
  withdrawn,
  advisory: {
    id: cve,
    aliases: [osvId],
    severity,
    cvssScore: null,
    summary: cve,
    publishedAt: null,
    affected,
  },
});

for (const kind of STORE_KINDS) {
  describe(`stored gate verdicts on ${kind}`, () => {
    let test: TestStore;
    let store: StoreHandle;
    let applicationId: number;

    /** Every analysis: the stored verdict (read twice: stored, then reused) equals a full evaluation. */
    async function assertStoredIsFresh(context: string) {
      const verdicts: string[] = [];
      for (let seq = 1; seq <= analyses.length; seq++) {
        const fresh = await evaluateAnalysis(store.db, applicationId, seq, undefined, { fresh: true });
        for (const round of ["computed", "reused"]) {
          assert.deepEqual(
            await evaluateAnalysis(store.db, applicationId, seq),
            fresh,
            `${context}: analysis ${seq}, ${round}`,
          );
        }
        // Pages are read from the stored findings' rows: each the slice of the full evaluation's.
        for (const paging of [
          { limit: 1, skip: 0 },
          { limit: 1, skip: 1 },
          { limit: 2, skip: 1 },
          { limit: 100, skip: 3 },
        ]) {
          assert.deepEqual(
            await evaluateAnalysis(store.db, applicationId, seq, paging),
            await evaluateAnalysis(store.db, applicationId, seq, paging, { fresh: true }),
            `${context}: analysis ${seq}, page ${JSON.stringify(paging)}`,
          );
        }
        const stored = await store.db
          .selectFrom("gate_evaluations")
          .select("generation")
          .where("application_id", "=", applicationId)
          .where("seq", "=", seq)
          .executeTakeFirstOrThrow();
        const current = await store.db
          .selectFrom("gate_facts_generation")
          .select("value")
          .executeTakeFirstOrThrow();
        assert.equal(
          Number(stored.generation),
          Number(current.value),
          `${context}: stored at the current generation`,
        );
        const rows = await store.db
          .selectFrom("gate_findings")
          .select([sql<number>`count(*)`.as("n")])
          .where("application_id", "=", applicationId)
          .where("seq", "=", seq)
          .executeTakeFirstOrThrow();
        assert.equal(
          Number(rows.n),
          fresh.rules.reduce((n, r) => n + r.findingsTotal, 0),
          `${context}: one row per finding, older generations' rows dropped`,
        );
        verdicts.push(`${fresh.verdict} ${fresh.rules.map((r) => `${r.id}:${r.findingsTotal}`).join(" ")}`);
      }
      return verdicts;
    }

    /** What a user checks: the findings of each rule on each analysis, in short. */
    async function summary(seq: number) {
      const e = await evaluateAnalysis(store.db, applicationId, seq);
      return e.rules.flatMap((r) =>
        r.findings.map((f) => `${r.id} ${f.package}@${f.version} ${f.cve ?? ""}`.trim()),
      );
    }

    before(async () => {
      test = await createTestStore(kind);
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      await loadPublishedVersions(
        store.db,
        "npm",
        "alpha",
        published(["1.0.0", "2020-01-01"], ["1.1.0", "2020-06-01"]),
      );
      await loadPublishedVersions(store.db, "npm", "beta", published(["1.0.0", "2020-01-01"]));
      await loadPublishedVersions(
        store.db,
        "npm",
        "gamma",
        published(["1.0.0", "2020-01-01"], ["1.1.0", "2021-01-01"]),
      );
      const touched = new Set<number>();
      await applyOsvRecords(
        store.db,
        [
          osv("GHSA-0001", "2024-01-01T00:00:00Z", "CVE-2099-0001", "HIGH", [
            { ecosystem: "npm", package: "alpha", ranges: [{ introduced: "0", fixed: "1.1.0" }] },
          ]),
        ],
        touched,
      );
      await recomputeTouched(store.db, touched);
      // Every rule on (the releases rule is off by default), so that each kind's stored verdict is kept.
      await updateGateRule(store.db, "max-releases-behind-safest", { enabled: true }, "admin");
      for (const input of analyses) await ingestAnalysis(store.db, "app", input);
      applicationId = (await findApplication(store.db, "app"))?.id as number;
    });
    after(async () => {
      await store?.close();
      await test?.drop();
    });

    it("stores each analysis's verdict after ingestion, equal to a full evaluation", async () => {
      await assertStoredIsFresh("after ingestion");
      assert.deepEqual(await summary(1), ["no-referenced-severe-cve alpha@1.0.0 CVE-2099-0001"]);
      assert.deepEqual(await summary(2), []);
      // A stored page is its rows, not a recomputation: a row changed in place shows in the answer.
      const where = { application_id: applicationId, seq: 1, position: 0 };
      const row = await store.db
        .selectFrom("gate_findings")
        .select(["doc", "rule_id"])
        .where("application_id", "=", where.application_id)
        .where("seq", "=", where.seq)
        .where("position", "=", where.position)
        .executeTakeFirstOrThrow();
      const edited = JSON.stringify({ ...JSON.parse(row.doc), detail: "edited in place" });
      const setDoc = (doc: string) =>
        store.db
          .updateTable("gate_findings")
          .set({ doc })
          .where("application_id", "=", where.application_id)
          .where("seq", "=", where.seq)
          .where("rule_id", "=", row.rule_id)
          .where("position", "=", where.position)
          .execute();
      await setDoc(edited);
      const page = await evaluateAnalysis(store.db, applicationId, 1, { limit: 1, skip: 0 });
      assert.equal(page.rules.find((r) => r.id === row.rule_id)?.findings[0]?.detail, "edited in place");
      await setDoc(row.doc);
    });

    it("follows an advisory imported later, a severity revision and a withdrawal", async () => {
      const touched = new Set<number>();
      // beta has no fix: referred in analysis 1 (severe CVE) and unfixable in both.
      await applyOsvRecords(
        store.db,
        [
          osv("GHSA-0002", "2024-03-01T00:00:00Z", "CVE-2099-0002", "CRITICAL", [
            { ecosystem: "npm", package: "beta", ranges: [{ introduced: "0" }] },
          ]),
        ],
        touched,
      );
      await recomputeTouched(store.db, touched);
      await assertStoredIsFresh("after a later advisory");
      assert.deepEqual(await summary(1), [
        "no-referenced-severe-cve alpha@1.0.0 CVE-2099-0001",
        "no-referenced-severe-cve beta@1.0.0 CVE-2099-0002",
        "no-unfixable-vulnerability beta@1.0.0",
      ]);
      // Only the severity changes: LOW is below the rule's HIGH threshold.
      touched.clear();
      await applyOsvRecords(
        store.db,
        [
          osv("GHSA-0002", "2024-04-01T00:00:00Z", "CVE-2099-0002", "LOW", [
            { ecosystem: "npm", package: "beta", ranges: [{ introduced: "0" }] },
          ]),
        ],
        touched,
      );
      await recomputeTouched(store.db, touched);
      await assertStoredIsFresh("after a severity revision");
      assert.deepEqual(await summary(1), [
        "no-referenced-severe-cve alpha@1.0.0 CVE-2099-0001",
        "no-unfixable-vulnerability beta@1.0.0",
      ]);
      touched.clear();
      await applyOsvRecords(
        store.db,
        [osv("GHSA-0002", "2024-05-01T00:00:00Z", "CVE-2099-0002", "LOW", [], true)],
        touched,
      );
      await recomputeTouched(store.db, touched);
      await assertStoredIsFresh("after a withdrawal");
      assert.deepEqual(await summary(1), ["no-referenced-severe-cve alpha@1.0.0 CVE-2099-0001"]);
    });

    it("follows newly published versions and gate edits", async () => {
      // Twelve releases of gamma after 1.0.0: more than the 10 allowed behind the safest one.
      const later = Array.from(
        { length: 12 },
        (_, i) => [`1.${i + 2}.0`, `2022-0${(i % 9) + 1}-01`] as [string, string],
      );
      await loadPublishedVersions(
        store.db,
        "npm",
        "gamma",
        published(["1.0.0", "2020-01-01"], ["1.1.0", "2021-01-01"], ...later),
      );
      await assertStoredIsFresh("after new versions");
      assert.deepEqual(await summary(2), ["max-releases-behind-safest gamma@1.0.0"]);
      await updateGateRule(
        store.db,
        "max-releases-behind-safest",
        { parameters: { maxReleases: 20 } },
        "admin",
      );
      await assertStoredIsFresh("after raising maxReleases");
      assert.deepEqual(await summary(2), []);
      await updateGateRule(store.db, "no-referenced-severe-cve", { enabled: false }, "admin");
      await assertStoredIsFresh("after disabling a rule");
      assert.deepEqual(await summary(1), []);
      const evaluation = await evaluateAnalysis(store.db, applicationId, 1);
      assert.deepEqual(
        evaluation.rules.map((r) => r.id),
        ["max-releases-behind-safest", "no-unfixable-vulnerability"],
      );
    });
  });
}
