import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { ingestAnalysis } from "../../src/domain/package-facts.ts";
import {
  findApplication,
  latestAnalyzedAt,
  listAnalyses,
  listApplications,
  resolveAnalysis,
} from "../../src/store/applications.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { preparedQuery } from "../../src/store/prepared-query.ts";
import type { Database } from "../../src/store/schema.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/** name → analysis dates, oldest first (so the listing's count and latest date are known). */
const APPLICATIONS: Record<string, string[]> = {
  alpha: ["2024-01-01T00:00:00Z"],
  bravo: ["2024-01-01T00:00:00Z", "2024-03-01T10:20:30Z"],
  charlie: [],
  delta: ["2023-05-05T05:05:05Z"],
  echo: ["2024-02-02T00:00:00Z", "2024-02-03T00:00:00Z", "2024-02-04T00:00:00Z"],
};
const NAMES = Object.keys(APPLICATIONS).sort();

/** What the listing must answer, computed here from the data above. */
function expected(names: readonly string[] | null, limit: number, skip: number) {
  return NAMES.filter((name) => !names || names.includes(name))
    .slice(skip, skip + limit)
    .map((name) => ({
      name,
      count: (APPLICATIONS[name] as string[]).length,
      latest: (APPLICATIONS[name] as string[]).at(-1) ?? null,
    }));
}

for (const kind of STORE_KINDS) {
  describe(`prepared queries on ${kind}`, () => {
    let test: TestStore;
    let store: StoreHandle;

    before(async () => {
      test = await createTestStore(kind);
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      for (const [name, dates] of Object.entries(APPLICATIONS)) {
        if (dates.length === 0) {
          await store.db
            .insertInto("applications")
            .values({ name, description: "", demo: 0, created_at: "2024-01-01T00:00:00.000Z" })
            .execute();
        }
        for (const analyzedAt of dates) {
          await ingestAnalysis(store.db, name, { analyzedAt, packages: [], objects: [], references: [] });
        }
      }
    });
    after(async () => {
      await store?.close();
      await test?.drop();
    });

    it("lists applications with each call's own limit, skip and names, whatever shape ran before", async () => {
      // Shapes interleaved (all, 1, 2, 3 names, all again) so that a template compiled for one shape
      // or bound with an earlier call's values would show.
      const cases: [readonly string[] | null, number, number][] = [
        [null, 100, 0],
        [null, 2, 0],
        [null, 2, 2],
        [["echo"], 10, 0],
        [["bravo", "delta"], 10, 0],
        [["bravo", "delta"], 1, 1],
        [["alpha", "charlie", "echo"], 2, 1],
        [["nobody"], 5, 0],
        [null, 1, 4],
        [null, 3, 9],
        [["alpha", "charlie", "echo"], 5, 0],
        [["delta", "bravo"], 1, 0],
      ];
      for (const [names, limit, skip] of cases) {
        const rows = await listApplications(store.db, { names, limit, skip });
        const got = rows.map((r) => ({
          name: r.name,
          count: r.analysisCount,
          latest: r.latestAnalysisAt && new Date(r.latestAnalysisAt).toISOString().replace(".000Z", "Z"),
        }));
        assert.deepEqual(got, expected(names, limit, skip), JSON.stringify({ names, limit, skip }));
      }
    });

    it("finds each application and the analysis a date selects, each call with its own arguments", async () => {
      const stamp = (iso: string | undefined) => iso && new Date(iso).toISOString().replace(".000Z", "Z");
      assert.equal(await findApplication(store.db, "nobody"), undefined);
      for (const round of [1, 2]) {
        for (const [name, dates] of Object.entries(APPLICATIONS)) {
          const found = await findApplication(store.db, name);
          assert.equal(found?.name, name, `round ${round}`);
          const id = found?.id as number;
          assert.deepEqual(
            (await listAnalyses(store.db, id)).map((a) => stamp(a.analyzedAt)),
            dates,
          );
          assert.equal(stamp(await latestAnalyzedAt(store.db, id)), dates.at(-1));
          assert.equal(stamp((await resolveAnalysis(store.db, id))?.analyzedAt), dates.at(-1));
          // As of each analysis, and just before the first: the latest one at or before the date.
          for (const date of dates) {
            assert.equal(
              stamp((await resolveAnalysis(store.db, id, date))?.analyzedAt),
              date,
              `${name} ${date}`,
            );
          }
          assert.equal(await resolveAnalysis(store.db, id, "2000-01-01T00:00:00.000Z"), undefined);
        }
      }
    });

    it("refuses a query where an argument is not a bound parameter, naming the SQL", async () => {
      const inlined = preparedQuery((db: import("kysely").Kysely<Database>, name: string) =>
        db
          .selectFrom("applications")
          .select("name")
          .where("name", "=", sql.lit(String(name))),
      );
      await assert.rejects(
        inlined(store.db, "alpha"),
        /preparedQuery: 1 of 1 arguments are not bound parameters of select "name" from "applications"/,
      );
    });
  });
}
