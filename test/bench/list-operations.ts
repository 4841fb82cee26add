/**
 * Issue 13 point 5: the REST API's other list operations on the occurrences benchmark's store, in-process
 * (what each endpoint does once the caller is authenticated and the analysis resolved), limit 100.
 */

import { performance } from "node:perf_hooks";
import type { Kysely } from "kysely";
import { findApplication } from "../../src/store/applications.ts";
import { compareAnalyses } from "../../src/store/compare.ts";
import { evaluateAnalysis } from "../../src/store/gates.ts";
import { listCveInsights } from "../../src/store/insights.ts";
import {
  findUsedPackages,
  listInteractions,
  listPackages,
  searchExternalObjects,
} from "../../src/store/packages.ts";
import type { Database } from "../../src/store/schema.ts";
import type { BenchFacts } from "./generate-store.ts";

export const LIST_TARGET_P95_MS = 50;

export interface OperationResult {
  label: string;
  iterations: number;
  medianMs: number;
  p95Ms: number;
  /** CPU time of this process per run (the store's share on SQLite; not PostgreSQL's server). */
  cpuMedianMs: number;
  cpuP95Ms: number;
  /** Size of the answer: items listed (or changes, findings). */
  items: number;
}

const round = (n: number) => Math.round(n * 100) / 100;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1] as number;
}

/** Every operation, each after a warm-up, up to `iterations` times or `budgetMs` (at least 5). */
export async function measureListOperations(
  db: Kysely<Database>,
  facts: BenchFacts,
  log: (message: string) => void,
  options = { iterations: 40, budgetMs: 5_000 },
): Promise<OperationResult[]> {
  const app = await findApplication(db, facts.application);
  if (!app) throw new Error(`application ${facts.application} missing from the store`);
  const latest = facts.analyses.length;
  const applicationId = app.id;
  const [first] = await findUsedPackages(db, { applicationId, seq: latest, name: "pkg-00001" });
  if (!first) throw new Error("pkg-00001 is not used by the benchmark application");
  const limit = 100;
  const operations: [string, () => Promise<number>][] = [
    [
      "insights/cve (CVEs of the application), limit 100",
      async () => (await listCveInsights(db, { applicationId, seq: latest, limit, skip: 0 })).length,
    ],
    [
      "packages, limit 100",
      async () => (await listPackages(db, { applicationId, seq: latest, limit, skip: 0 })).length,
    ],
    [
      "packages?vulnerable=true, limit 100",
      async () =>
        (await listPackages(db, { applicationId, seq: latest, limit, skip: 0, vulnerable: true })).length,
    ],
    [
      "objects?q=widget1, limit 100",
      async () =>
        (await searchExternalObjects(db, { applicationId, seq: latest, q: "widget1", limit, skip: 0 }))
          .length,
    ],
    [
      "interactions of pkg-00001, limit 100",
      async () =>
        (await listInteractions(db, { applicationId, seq: latest, packageId: first.id, limit, skip: 0 }))
          .length,
    ],
    [
      `compare analysis ${latest - 1} → ${latest}`,
      async () => {
        const c = await compareAnalyses(db, applicationId, latest - 1, latest);
        return (
          c.packages.added.length +
          c.packages.removed.length +
          c.references.added.length +
          c.references.removed.length
        );
      },
    ],
    [
      `gate evaluation (analysis ${latest})`,
      async () =>
        (await evaluateAnalysis(db, applicationId, latest)).rules.reduce((n, r) => n + r.findings.length, 0),
    ],
  ];
  const results: OperationResult[] = [];
  for (const [label, run] of operations) {
    const items = await run();
    await run();
    const times: number[] = [];
    const cpuTimes: number[] = [];
    const started = performance.now();
    for (let i = 0; i < options.iterations; i++) {
      if (i >= 5 && performance.now() - started > options.budgetMs) break;
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await run();
      const cpu = process.cpuUsage(cpu0);
      times.push(performance.now() - t0);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
    }
    times.sort((a, b) => a - b);
    cpuTimes.sort((a, b) => a - b);
    const result = {
      label,
      iterations: times.length,
      medianMs: round(percentile(times, 0.5)),
      p95Ms: round(percentile(times, 0.95)),
      cpuMedianMs: round(percentile(cpuTimes, 0.5)),
      cpuP95Ms: round(percentile(cpuTimes, 0.95)),
      items,
    };
    log(
      `${label.padEnd(48)} median ${result.medianMs} ms  p95 ${result.p95Ms} ms  cpu ${result.cpuMedianMs} / ${result.cpuP95Ms} ms  (${items} items, n=${times.length})`,
    );
    results.push(result);
  }
  return results;
}
