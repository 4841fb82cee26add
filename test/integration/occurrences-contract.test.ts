/**
 * The occurrences page's fast path against its contract, over generated stores (issue 33 point 4). The
 * store writes the page's JSON by hand, splicing each package's object list as stored, never through
 * JSON.stringify: what it writes must parse, hold to the contract's schema (`cvePackage`, the one
 * declaration the OpenAPI document is derived from) and equal the single-query oracle, for any history.
 *
 * fast-check generates the histories: 1 to 3 analyses of packages from a small pool (a package at two
 * versions at once included), objects whose names carry what JSON must escape (quotes, backslashes,
 * control characters, line separators, astral characters), references, and an advisory over some of
 * the pool. The seed is fixed so that every run checks the same cases (FC_SEED and FC_RUNS try others).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { z } from "zod";
import { cvePackage } from "../../src/contracts/resources.ts";
import { ingestAnalysis, loadAdvisory, loadPublishedVersions } from "../../src/domain/package-facts.ts";
import { findApplication } from "../../src/store/applications.ts";
import { openStore } from "../../src/store/database.ts";
import type { AnalysisInput } from "../../src/store/input-records.ts";
import { listOccurrencesJson } from "../../src/store/insights.ts";
import { occurrencesPageForAnswer } from "../../src/store/read-task-runner.ts";
import { findVulnerability } from "../../src/store/vulnerabilities.ts";
import { occurrencesBySingleQuery } from "../support/occurrences-baseline.ts";
import { createTestStore, STORE_KINDS } from "../support/stores.ts";

const PAGE = z.array(cvePackage);
const POOL = ["alpha", "beta", "@scope/gamma"] as const;
const VERSIONS = ["1.0.0", "1.1.0", "2.0.0"] as const;
const CVE = "CVE-2099-4242";

/** Text a name may hold: plain words and the characters a hand-written JSON writer must escape. */
const tricky = fc.oneof(
  fc.constantFrom(
    '"',
    "\\",
    "\t",
    "\n",
    "\u001f",
    "\u007f",
    "\u2028",
    "\u2029",
    "😀",
    "é",
    "</script>",
    "{}",
  ),
  fc.string({ minLength: 1, maxLength: 6, unit: "grapheme-ascii" }),
);
const name = fc.array(tricky, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(""));

interface Use {
  pkg: (typeof POOL)[number];
  version: (typeof VERSIONS)[number];
}

const analysis = fc.record({
  uses: fc.uniqueArray(fc.record({ pkg: fc.constantFrom(...POOL), version: fc.constantFrom(...VERSIONS) }), {
    minLength: 1,
    maxLength: 4,
    selector: (u: Use) => `${u.pkg}@${u.version}`,
  }),
  objects: fc.array(fc.record({ local: name, mangling: name, pick: fc.nat(), referred: fc.boolean() }), {
    maxLength: 8,
  }),
});

const history = fc.record({
  analyses: fc.array(analysis, { minLength: 1, maxLength: 3 }),
  // the advisory: which packages it names, fixed at which version (none: every version)
  affected: fc.uniqueArray(
    fc.record({ pkg: fc.constantFrom(...POOL), fixed: fc.option(fc.constantFrom("1.1.0", "2.0.0")) }),
    { minLength: 1, maxLength: 3, selector: (a) => a.pkg },
  ),
  limit: fc.integer({ min: 1, max: 5 }),
  skip: fc.integer({ min: 0, max: 3 }),
});

type History = typeof history extends fc.Arbitrary<infer T> ? T : never;

/** The analyses as the store takes them: each object of one package version the analysis uses. */
function inputs(h: History): AnalysisInput[] {
  return h.analyses.map((a, i) => {
    const objects = a.objects.map((o, j) => {
      const use = a.uses[o.pick % a.uses.length] as Use;
      return {
        id: `${use.pkg}#${j}`,
        package: `npm:${use.pkg}`,
        version: use.version,
        name: o.local,
        fullName: `${use.pkg}.${o.local}`,
        mangling: o.mangling,
        type: "JavaScript Function",
        typeId: "JS_FUNCTION",
        referred: o.referred,
      };
    });
    return {
      analyzedAt: `2024-0${i + 1}-01T00:00:00Z`,
      packages: a.uses.map((u) => ({ ecosystem: "npm" as const, name: u.pkg, version: u.version })),
      objects: objects.map(({ referred: _referred, ...o }) => o),
      references: objects
        .filter((o) => o.referred)
        .map((o, k) => ({
          from: {
            id: `c${k % 2}`,
            name: `c${k % 2}`,
            fullName: `app.c${k % 2}`,
            type: "TS Method",
            typeId: "TS_METHOD",
          },
          to: o.id,
        })),
    };
  });
}

const runs = Number(process.env.FC_RUNS ?? 0);
const seed = Number(process.env.FC_SEED ?? 20261206);

for (const kind of STORE_KINDS) {
  describe(`the occurrences page against its contract, over generated stores, on ${kind}`, () => {
    it("parses, holds to cvePackage and equals the single-query oracle, as text and as the answer's bytes", async () => {
      // what the generated pages held, so that a generator gone dull fails the test
      let packages = 0;
      let objects = 0;
      await fc.assert(
        fc.asyncProperty(history, async (h) => {
          const test = await createTestStore(kind);
          const store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
          try {
            for (const pkg of POOL) {
              await loadPublishedVersions(
                store.db,
                "npm",
                pkg,
                VERSIONS.map((version, i) => ({ version, releasedAt: `202${i}-01-01T00:00:00.000Z` })),
              );
            }
            await loadAdvisory(store.db, {
              id: CVE,
              aliases: [],
              severity: "HIGH",
              cvssScore: 7.5,
              summary: "generated",
              publishedAt: null,
              affected: h.affected.map((a) => ({
                ecosystem: "npm",
                package: a.pkg,
                ranges: [a.fixed ? { introduced: "0", fixed: a.fixed } : { introduced: "0" }],
              })),
            });
            for (const input of inputs(h)) await ingestAnalysis(store.db, "app", input);
            const applicationId = (await findApplication(store.db, "app"))?.id as number;
            const vulnerabilityId = (await findVulnerability(store.db, CVE))?.id as number;
            for (let seq = 1; seq <= h.analyses.length; seq++) {
              for (const [limit, skip] of [
                [500, 0],
                [h.limit, h.skip],
              ] as const) {
                const query = { applicationId, seq, vulnerabilityId, limit, skip };
                const text = await listOccurrencesJson(store.db, query);
                const parsed = PAGE.safeParse(JSON.parse(text));
                assert.ok(parsed.success, `analysis ${seq}: ${parsed.error?.message}\n${text}`);
                packages += parsed.data.length;
                objects += parsed.data.reduce((n, p) => n + p.objects.length, 0);
                assert.equal(text, JSON.stringify(await occurrencesBySingleQuery(store.db, query)));
                const answer = await occurrencesPageForAnswer(store.db, query);
                if (typeof answer === "string") assert.equal(answer, text);
                else {
                  try {
                    assert.equal(answer.bytes.toString("utf8"), text);
                  } finally {
                    answer.release();
                  }
                }
              }
            }
          } finally {
            await store.close();
            await test.drop();
          }
        }),
        { seed, numRuns: runs || (kind === "sqlite" ? 30 : 12), endOnFailure: true },
      );
      assert.ok(packages >= 10 && objects >= 20, `pages held ${packages} packages, ${objects} objects`);
    });
  });
}
