/**
 * Issue 13 point 5 on a store generated before migration 016: opens it (applying 016 and timing it),
 * measures what 016 added on disk, then the other list operations with the previous queries beside the
 * new ones (test/bench/list-operations.ts, which checks their answers equal). Usage, on a benchmark store:
 *   node test/bench/list-search-measure.ts <sqlite file | postgres URL> <meta.json | ->
 * (`-`: the generation report is read from the PostgreSQL database's bench_meta).
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { openStore } from "../../src/store/database.ts";
import type { GenerationReport } from "./generate-store.ts";
import { measureListOperations } from "./list-operations.ts";

const [target, metaFile] = process.argv.slice(2);
if (!target || !metaFile) {
  process.stderr.write(
    "usage: node test/bench/list-search-measure.ts <sqlite file | postgres URL> <meta.json | ->\n",
  );
  process.exit(2);
}
const postgres = /^postgres(ql)?:/.test(target);
const log = (message: string) => process.stdout.write(`${message}\n`);
log(
  `load average at start: ${loadavg()
    .map((n) => n.toFixed(1))
    .join(" ")}`,
);
const started = performance.now();
const store = await openStore(postgres ? { databaseUrl: target, sqliteFile: "" } : { sqliteFile: target });
log(
  `opened in ${((performance.now() - started) / 1000).toFixed(1)} s, migrations applied: ${store.migrated.join(", ") || "none"}; notices: ${store.notices.join(" / ") || "none"}`,
);
try {
  const report: GenerationReport =
    metaFile === "-"
      ? JSON.parse(
          (await sql<{ value: string }>`select value from bench_meta where key = 'report'`.execute(store.db))
            .rows[0]?.value as string,
        )
      : JSON.parse(readFileSync(metaFile, "utf8"));
  const objects = Number(
    (await sql<{ n: number }>`select count(*) as n from external_objects`.execute(store.db)).rows[0]?.n,
  );
  const sizes: [string, string][] = postgres
    ? [
        ["external_objects_page", "pg_relation_size('external_objects_page')"],
        ["external_objects_search", "pg_relation_size('external_objects_search')"],
        ["application_packages_page", "pg_relation_size('application_packages_page')"],
        ["external_objects (table and indexes)", "pg_total_relation_size('external_objects')"],
      ]
    : [
        ["external_objects_page", "(select sum(pgsize) from dbstat where name = 'external_objects_page')"],
        [
          "external_objects_search (FTS5)",
          "(select sum(pgsize) from dbstat where name like 'external_objects_search%')",
        ],
        [
          "application_packages_page",
          "(select sum(pgsize) from dbstat where name = 'application_packages_page')",
        ],
        [
          "external_objects (table and indexes)",
          "(select sum(pgsize) from dbstat where name in (select name from sqlite_schema where tbl_name = 'external_objects'))",
        ],
      ];
  for (const [label, expression] of sizes) {
    const bytes = Number(
      (await sql<{ b: number }>`select ${sql.raw(expression)} as b`.execute(store.db)).rows[0]?.b ?? 0,
    );
    log(
      `${label}: ${(bytes / 2 ** 20).toFixed(1)} MiB, ${(bytes / objects).toFixed(0)} bytes per external_objects row (${objects} rows)`,
    );
  }
  await measureListOperations(store.db, report.facts, log, {
    iterations: 40,
    budgetMs: 8_000,
    ...(process.env.BENCH_ONLY ? { only: new RegExp(process.env.BENCH_ONLY) } : {}),
  });
  log(
    `load average at end: ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")}`,
  );
} finally {
  await store.close();
}
