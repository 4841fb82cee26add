/**
 * Issue 13 point 5, the list operations of this checkout beside another checkout's (e.g. main's), in
 * one process and alternating rounds so both see the same machine load. Each checkout opens its own
 * copy of a benchmark store with its own code (migrations included), so the baseline's schema is its
 * own. Usage:
 *   BENCH_BASELINE=<checkout> node test/bench/list-operations-side-by-side.ts \
 *     <store for this checkout> <store for the baseline> <meta.json | -> [rounds]
 * Stores: SQLite files or PostgreSQL URLs (`-`: the generation report is read from bench_meta).
 * BENCH_ONLY (a regular expression) selects operations.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type Kysely, sql } from "kysely";
import type { GenerationReport } from "./generate-store.ts";
import type { OperationResult } from "./list-operations.ts";
import { serverBackends, serverCpuMs } from "./pg-server-cpu.ts";

const [ownTarget, baseTarget, metaFile, roundsArg] = process.argv.slice(2);
const baseline = process.env.BENCH_BASELINE;
if (!ownTarget || !baseTarget || !metaFile || !baseline) {
  process.stderr.write(
    "usage: BENCH_BASELINE=<checkout> node test/bench/list-operations-side-by-side.ts <store> <baseline store> <meta.json | -> [rounds]\n",
  );
  process.exit(2);
}
const rounds = Number(roundsArg ?? 3);
const log = (message: string) => process.stdout.write(`${message}\n`);
const load = () =>
  loadavg()
    .map((n) => n.toFixed(1))
    .join(" ");

type Measure = (
  db: Kysely<unknown>,
  facts: GenerationReport["facts"],
  log: (message: string) => void,
  options: { iterations: number; budgetMs: number; only?: RegExp; serverCpuMs?: () => number },
) => Promise<OperationResult[]>;
type Open = (options: { databaseUrl?: string; sqliteFile: string }) => Promise<{
  db: Kysely<unknown>;
  migrated: string[];
  close(): Promise<void>;
}>;

async function checkout(root: string, target: string) {
  const from = (path: string) => pathToFileURL(resolve(root, path)).href;
  const { openStore } = (await import(from("src/store/database.ts"))) as { openStore: Open };
  const { measureListOperations } = (await import(from("test/bench/list-operations.ts"))) as {
    measureListOperations: Measure;
  };
  const postgres = /^postgres(ql)?:/.test(target);
  const store = await openStore(postgres ? { databaseUrl: target, sqliteFile: "" } : { sqliteFile: target });
  log(`${root}: opened ${target}, migrations applied: ${store.migrated.join(", ") || "none"}`);
  return { store, measureListOperations, postgres };
}

log(`load average at start: ${load()}`);
const own = await checkout(".", ownTarget);
const base = await checkout(baseline, baseTarget);
try {
  const report: GenerationReport =
    metaFile === "-"
      ? JSON.parse(
          (
            await sql<{ value: string }>`select value from bench_meta where key = 'report'`.execute(
              own.store.db,
            )
          ).rows[0]?.value as string,
        )
      : JSON.parse(readFileSync(metaFile, "utf8"));
  const options = {
    iterations: 40,
    budgetMs: 5_000,
    ...(process.env.BENCH_ONLY ? { only: new RegExp(process.env.BENCH_ONLY) } : {}),
  };
  const results = new Map<string, { own: OperationResult[]; base: OperationResult[] }>();
  for (let round = 1; round <= rounds; round++) {
    for (const [name, side] of [
      ["baseline", base],
      ["this checkout", own],
    ] as const) {
      log(`round ${round}, ${name} (load ${load()}):`);
      // PostgreSQL: the CPU of the database's backends is added to each run's (the pool's connections
      // opened so far; each side has its own database).
      const backends = side.postgres ? await serverBackends(side.store.db as never) : [];
      const measured = await side.measureListOperations(side.store.db, report.facts, (m) => log(`  ${m}`), {
        ...options,
        ...(side.postgres ? { serverCpuMs: () => serverCpuMs(backends) } : {}),
      });
      for (const r of measured) {
        const entry = results.get(r.label) ?? { own: [], base: [] };
        (side === own ? entry.own : entry.base).push(r);
        results.set(r.label, entry);
      }
    }
  }
  const range = (list: OperationResult[], pick: (r: OperationResult) => number) =>
    list.length === 0 ? "—" : `${Math.min(...list.map(pick))}–${Math.max(...list.map(pick))}`;
  log("\n| operation | baseline p95 wall ms | this p95 wall ms | baseline p95 CPU ms | this p95 CPU ms |");
  log("| --- | ---: | ---: | ---: | ---: |");
  for (const [label, { own: o, base: b }] of results) {
    log(
      `| ${label} | ${range(b, (r) => r.p95Ms)} | ${range(o, (r) => r.p95Ms)} | ${range(b, (r) => r.cpuP95Ms)} | ${range(o, (r) => r.cpuP95Ms)} |`,
    );
  }
  log(`load average at end: ${load()}`);
} finally {
  await own.store.close();
  await base.store.close();
}
