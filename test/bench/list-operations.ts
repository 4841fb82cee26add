/**
 * Issue 13 point 5: the REST API's other list operations on the occurrences benchmark's store, in-process
 * (what each endpoint does once the caller is authenticated and the analysis resolved), limit 100.
 */

import { performance } from "node:perf_hooks";
import type { Kysely } from "kysely";
import { evaluateAnalysis } from "../../src/domain/gates.ts";
import { findApplication } from "../../src/store/applications.ts";
import { compareAnalysesPage, countReferenceChanges } from "../../src/store/compare.ts";
import { listCveInsights } from "../../src/store/insights.ts";
import {
  findUsedPackages,
  listInteractions,
  listPackages,
  type ObjectSearch,
  searchExternalObjects,
  searchExternalObjectsByScan,
  vulnerabilitiesOfVersions,
} from "../../src/store/packages.ts";
import type { Database } from "../../src/store/schema.ts";
import { compareFromIntervals } from "../support/compare-oracle.ts";
import { packagePageByJoins } from "../support/list-baselines.ts";
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
  /** The query an operation had before its redesign, measured beside it (not held to the target). */
  before?: true;
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
  options: {
    iterations: number;
    budgetMs: number;
    only?: RegExp;
    /** Cumulative CPU ms of the database server's processes, added to each run's CPU (PostgreSQL). */
    serverCpuMs?: () => number;
  } = { iterations: 40, budgetMs: 5_000 },
): Promise<OperationResult[]> {
  const app = await findApplication(db, facts.application);
  if (!app) throw new Error(`application ${facts.application} missing from the store`);
  const latest = facts.analyses.length;
  const applicationId = app.id;
  const [first] = await findUsedPackages(db, { applicationId, seq: latest, name: "pkg-00001" });
  if (!first) throw new Error("pkg-00001 is not used by the benchmark application");
  const limit = 100;
  // A search word matching one package's objects in one module (the trigram index's case), in the
  // middle of the page order (the walk does not reach it).
  const rare = `pkg-${String(Math.ceil(facts.counts.packages / 2)).padStart(5, "0")}.lib.m3`;
  const search = (q: string): ObjectSearch => ({ applicationId, seq: latest, q, limit, skip: 0 });
  const packagesPage = { applicationId, seq: latest, limit, skip: 0 };
  /** The redesigned operation's answer must be the previous query's. */
  const same = async (what: string, now: () => Promise<unknown[]>, before: () => Promise<unknown[]>) => {
    const [a, b] = [await now(), await before()];
    if (JSON.stringify(a) !== JSON.stringify(b))
      throw new Error(`${what}: the answer differs from the previous query's`);
  };
  const names = async (vulnerable?: boolean) =>
    (await listPackages(db, { ...packagesPage, vulnerable })).map((p) => ({
      ecosystem: p.ecosystem,
      name: p.name,
      version: p.version,
    }));
  /** The previous page query plus the same lookup of the versions' CVEs that listPackages makes. */
  const packagesBefore = async (vulnerable?: boolean) => {
    const rows = await packagePageByJoins(db, { ...packagesPage, vulnerable });
    await vulnerabilitiesOfVersions(
      db,
      rows.map((r) => r.versionId),
    );
    return rows.map(({ versionId, ...p }) => p);
  };
  await same("packages", names, () => packagesBefore());
  await same(
    "packages?vulnerable=true",
    () => names(true),
    () => packagesBefore(true),
  );
  for (const q of ["widget1", rare]) {
    await same(
      `objects?q=${q}`,
      () => searchExternalObjects(db, search(q)),
      () => searchExternalObjectsByScan(db, search(q)),
    );
  }
  const before = (label: string, run: () => Promise<number>): Operation => [`${label} — before`, run, true];
  type Operation = [string, () => Promise<number>, true?];
  const operations: Operation[] = [
    [
      "insights/cve (CVEs of the application), limit 100",
      async () => (await listCveInsights(db, { applicationId, seq: latest, limit, skip: 0 })).length,
    ],
    ["packages, limit 100", async () => (await listPackages(db, packagesPage)).length],
    before("packages, limit 100 (joins, sorts every package)", async () => (await packagesBefore()).length),
    [
      "packages?vulnerable=true, limit 100",
      async () => (await listPackages(db, { ...packagesPage, vulnerable: true })).length,
    ],
    before("packages?vulnerable=true, limit 100", async () => (await packagesBefore(true)).length),
    ["objects?q=widget1, limit 100", async () => (await searchExternalObjects(db, search("widget1"))).length],
    before(
      "objects?q=widget1, limit 100 (scan)",
      async () => (await searchExternalObjectsByScan(db, search("widget1"))).length,
    ),
    [
      `objects?q=${rare} (rare), limit 100`,
      async () => (await searchExternalObjects(db, search(rare))).length,
    ],
    before(
      `objects?q=${rare} (rare), limit 100 (scan)`,
      async () => (await searchExternalObjectsByScan(db, search(rare))).length,
    ),
    [
      "objects?q=no-such-name (no match), limit 100",
      async () => (await searchExternalObjects(db, search("no-such-name"))).length,
    ],
    [
      "interactions of pkg-00001, limit 100",
      async () =>
        (await listInteractions(db, { applicationId, seq: latest, packageId: first.id, limit, skip: 0 }))
          .length,
    ],
    [
      `compare analysis ${latest - 1} → ${latest}, limit 100`,
      async () => {
        const c = await compareAnalysesPage(db, applicationId, latest - 1, latest, { limit, skip: 0 });
        return (
          c.packages.addedTotal +
          c.packages.removedTotal +
          c.references.addedTotal +
          c.references.removedTotal
        );
      },
    ],
    [
      `compare analysis 1 → ${latest}, limit 100`,
      async () => {
        const c = await compareAnalysesPage(db, applicationId, 1, latest, { limit, skip: 0 });
        return (
          c.packages.addedTotal +
          c.packages.removedTotal +
          c.references.addedTotal +
          c.references.removedTotal
        );
      },
    ],
    before(`compare analysis 1 → ${latest}, limit 100, reference totals counted from the log`, async () => {
      // Migration 017's read: the page, and the totals grouped from every change in the range.
      const c = await compareAnalysesPage(db, applicationId, 1, latest, { limit, skip: 0 });
      const counted = await countReferenceChanges(db, applicationId, 1, latest);
      return c.packages.addedTotal + c.packages.removedTotal + counted.plus + counted.minus;
    }),
    [
      `compare analysis ${latest - 1} → ${latest}, whole lists from the intervals (before paging)`,
      async () => {
        const c = await compareFromIntervals(db, applicationId, latest - 1, latest);
        return (
          c.packages.added.length +
          c.packages.removed.length +
          c.references.added.length +
          c.references.removed.length
        );
      },
    ],
    [
      `gate evaluation (analysis ${latest}), limit 100, stored verdict`,
      async () =>
        (await evaluateAnalysis(db, applicationId, latest, { limit, skip: 0 })).rules.reduce(
          (n, r) => n + r.findingsTotal,
          0,
        ),
    ],
    [
      `gate evaluation (analysis ${latest}) from the facts, every finding (before)`,
      async () =>
        (await evaluateAnalysis(db, applicationId, latest, undefined, { fresh: true })).rules.reduce(
          (n, r) => n + r.findings.length,
          0,
        ),
    ],
  ];
  const results: OperationResult[] = [];
  for (const [label, run, wasBefore] of operations) {
    if (options.only && !options.only.test(label)) continue;
    const items = await run();
    await run();
    const times: number[] = [];
    const cpuTimes: number[] = [];
    const started = performance.now();
    for (let i = 0; i < options.iterations; i++) {
      if (i >= 5 && performance.now() - started > options.budgetMs) break;
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const server0 = options.serverCpuMs?.() ?? 0;
      await run();
      const cpu = process.cpuUsage(cpu0);
      times.push(performance.now() - t0);
      cpuTimes.push((cpu.user + cpu.system) / 1000 + ((options.serverCpuMs?.() ?? 0) - server0));
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
      ...(wasBefore || label.endsWith("(before)") || label.includes("(before paging)")
        ? { before: true as const }
        : {}),
    };
    log(
      `${label.padEnd(48)} median ${result.medianMs} ms  p95 ${result.p95Ms} ms  cpu ${result.cpuMedianMs} / ${result.cpuP95Ms} ms  (${items} items, n=${times.length})`,
    );
    results.push(result);
  }
  return results;
}
