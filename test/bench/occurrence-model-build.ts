/**
 * Times what migration 012 does on an existing store: buildOccurrenceModel over the stored history, in a
 * transaction that is rolled back (the store is left as it was). Usage, on the benchmark's cached store:
 *   node test/bench/occurrence-model-build.ts <sqlite file | postgres URL>
 */
import { performance } from "node:perf_hooks";
import { openStore } from "../../src/store/database.ts";
import { buildOccurrenceModel } from "../../src/store/occurrence-model.ts";

const target = process.argv[2];
if (!target) {
  process.stderr.write("usage: node test/bench/occurrence-model-build.ts <sqlite file | postgres URL>\n");
  process.exit(2);
}
const postgres = /^postgres(ql)?:/.test(target);
const store = await openStore(postgres ? { databaseUrl: target, sqliteFile: "" } : { sqliteFile: target });
const rolledBack = new Error("rolled back");
let seconds = Number.NaN;
let rows = 0;
try {
  await store.db.transaction().execute(async (trx) => {
    const started = performance.now();
    await buildOccurrenceModel(trx);
    seconds = (performance.now() - started) / 1000;
    const count = await trx
      .selectFrom("occurrence_objects")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    rows = Number(count.n);
    throw rolledBack;
  });
} catch (error) {
  if (error !== rolledBack) throw error;
} finally {
  await store.close();
}
process.stdout.write(
  `${postgres ? "PostgreSQL" : "SQLite"}: buildOccurrenceModel ${seconds.toFixed(1)} s for ${rows} occurrence_objects rows (rolled back)\n`,
);
