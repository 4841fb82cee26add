/**
 * The occurrences page's reads side by side on one existing store, in alternating rounds: what the
 * endpoint does now (findApplication + resolveAnalysis + findVulnerability + listOccurrencesPage: on SQLite
 * the page built in a reader thread; on PostgreSQL the page's facts, then only the lists the process has
 * not kept (object-list-cache.ts), and beside it the one statement reading occurrence_object_lists of
 * migration 015) against the read of migration 012 (the same lookups, then the page and its
 * occurrence_objects rows aggregated per package: two statements). Every answer of both is checked equal. Reports wall clock, this process's CPU and, on
 * PostgreSQL, the CPU of the server's backends of this database (/proc/<pid>/schedstat, nanoseconds), per
 * page: on a shared machine, CPU per page is what the page costs; wall clock includes waiting for a core.
 * Usage, on the benchmark's cached store (applies pending migrations, as the service would):
 *   node test/bench/occurrence-reads.ts <postgres URL | sqlite file> [rounds of limit 50, default 100]
 * BENCH_DEEP_SKIP (default 1500) is the deep page's skip (test/integration/bench-occurrences.test.ts runs
 * this on its tiny stores).
 */
import { loadavg } from "node:os";
import { findApplication, resolveAnalysis } from "../../src/store/applications.ts";
import { openStore } from "../../src/store/database.ts";
import { listOccurrencesJson } from "../../src/store/insights.ts";
import { occurrencesPageForAnswer } from "../../src/store/read-task-runner.ts";
import type { LeasedBytes } from "../../src/store/sqlite-read-pool.ts";
import { findVulnerability } from "../../src/store/vulnerabilities.ts";
import { listOccurrencesPage } from "../support/occurrence-pages.ts";
import { occurrencesByObjectRowsJson } from "../support/occurrences-baseline.ts";
import { serverBackends, serverCpuMs } from "./pg-server-cpu.ts";

const target = process.argv[2];
if (!target) {
  process.stderr.write("usage: node test/bench/occurrence-reads.ts <postgres URL | sqlite file> [rounds]\n");
  process.exit(2);
}
const rounds50 = Number(process.argv[3] ?? "100");
const postgres = /^postgres(ql)?:/.test(target);
const store = await openStore(postgres ? { databaseUrl: target, sqliteFile: "" } : { sqliteFile: target });
const APPLICATION = "bench-app";
const WIDE_CVE = "CVE-2023-20000";
const DATE = "2024-03-01T00:00:00Z";

/** A read's answer: text, or (the HTTP answer's read) the page's bytes in a buffer of the pool. */
type Answer = string | LeasedBytes;
type Read = (...args: Parameters<typeof occurrencesByObjectRowsJson>) => Promise<Answer>;
const variants: [string, Read][] = [
  [postgres ? "cached lists (endpoint)" : "read task (endpoint)", listOccurrencesPage],
  // SQLite: the HTTP answer's read (the route's): the reader writes the page's UTF-8 bytes into a buffer of
  // the pool (grown to the page at limit 500), which the route sends as they are. Timed until the bytes are
  // in hand, as the route has them; decoded only to compare the answers, outside the timed rounds (a 7 MB
  // page's decoding is milliseconds the HTTP answer never spends).
  ...(postgres ? [] : ([["read task as bytes (HTTP answer)", occurrencesPageForAnswer]] as [string, Read][])),
  // SQLite: the same read run from this thread, each statement handed to a reader (what this benchmark
  // measured before 2026-11-25: the rows cross threads as JSON, which the endpoint's task avoids).
  ...(postgres ? [] : ([["statements through the pool", listOccurrencesJson]] as [string, Read][])),
  // The read before the process (on SQLite, the reader thread) kept the lists it read (object-list-cache.ts):
  // every list read and, on SQLite, inflated.
  [
    postgres ? "lists, one statement (015)" : "lists, one statement, none kept (020)",
    (db, q) => listOccurrencesJson(db, q, { cachedLists: false }),
  ],
  ["rows (012)", occurrencesByObjectRowsJson],
];

/** The answer as text (the bytes decoded), its buffer given back to the pool. */
function textOf(answer: Answer): string {
  if (typeof answer === "string") return answer;
  try {
    return answer.bytes.toString("utf8");
  } finally {
    answer.release();
  }
}

/** Whether the answer came as bytes (a pool's buffer) rather than text. */
const asBytes = (answer: Answer) => typeof answer !== "string";

async function page(read: Read, limit: number, skip: number, date: string | undefined): Promise<Answer> {
  const app = await findApplication(store.db, APPLICATION);
  if (!app) throw new Error(`no application ${APPLICATION}`);
  const analysis = await resolveAnalysis(store.db, app.id, date);
  if (!analysis) throw new Error("no analysis");
  const vulnerability = await findVulnerability(store.db, WIDE_CVE);
  if (!vulnerability) throw new Error(`no ${WIDE_CVE}`);
  return read(store.db, {
    applicationId: app.id,
    seq: analysis.seq,
    vulnerabilityId: vulnerability.id,
    limit,
    skip,
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(p * s.length) - 1)] as number;
};
const r2 = (x: number) => Math.round(x * 100) / 100;
const cases: [number, number, string | undefined][] = [];
const DEEP_SKIP = Number(process.env.BENCH_DEEP_SKIP ?? "1500");
for (const limit of [50, 500])
  for (const skip of [0, DEEP_SKIP]) for (const date of [undefined, DATE]) cases.push([limit, skip, date]);

/** The cases whose HTTP answer came as bytes (in every round), not as text. */
const bytesCases: string[] = [];
const load0 = loadavg();
const lines: string[] = [
  `| case | read | packages | wall median / p95 ms | process CPU median / p95 ms | ${postgres ? "server CPU median / p95 ms | total CPU median / p95 ms |" : ""}`,
  `| --- | --- | ---: | ---: | ---: |${postgres ? " ---: | ---: |" : ""}`,
];
for (const [limit, skip, date] of cases) {
  const label = `wide limit ${limit} skip ${skip}${date ? " date" : ""}`;
  const firsts = await Promise.all(variants.map(([, read]) => page(read, limit, skip, date)));
  const kinds = firsts.map(asBytes);
  if (kinds.some(Boolean)) bytesCases.push(label);
  const answers = firsts.map(textOf);
  if (answers.some((a) => a !== answers[0])) throw new Error(`${label}: the reads answer differently`);
  const packages = (JSON.parse(answers[0] as string) as unknown[]).length;
  if (skip === 0 && packages === 0) throw new Error(`${label}: an empty page`);
  for (let i = 0; i < 5; i++) for (const [, read] of variants) textOf(await page(read, limit, skip, date));
  const pids = postgres ? await serverBackends(store.db) : [];
  const m = variants.map(() => ({ wall: [] as number[], cpu: [] as number[], server: [] as number[] }));
  const rounds = limit === 50 ? rounds50 : Math.max(10, Math.round(rounds50 / 4));
  for (let i = 0; i < rounds; i++) {
    for (const [v, [, read]] of variants.entries()) {
      const s0 = serverCpuMs(pids);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const answer = await page(read, limit, skip, date);
      const t1 = performance.now();
      const c = process.cpuUsage(c0);
      const s1 = serverCpuMs(pids);
      if (asBytes(answer) !== kinds[v]) throw new Error(`${label}: an answer came as bytes, then as text`);
      if (typeof answer !== "string") answer.release();
      const x = m[v] as (typeof m)[number];
      x.wall.push(t1 - t0);
      x.cpu.push((c.user + c.system) / 1000);
      x.server.push(s1 - s0);
    }
  }
  for (const [v, [name]] of variants.entries()) {
    const x = m[v] as (typeof m)[number];
    const total = x.cpu.map((c, i) => c + (x.server[i] as number));
    const cell = (xs: number[]) => `${r2(pct(xs, 0.5))} / ${r2(pct(xs, 0.95))}`;
    lines.push(
      `| ${label} | ${name} | ${packages} | ${cell(x.wall)} | ${cell(x.cpu)} |${postgres ? ` ${cell(x.server)} | ${cell(total)} |` : ""}`,
    );
  }
  process.stderr.write(`${lines.at(-2)}\n${lines.at(-1)}\n`);
}
await store.close();
const load1 = loadavg();
process.stdout.write(
  `${postgres ? "PostgreSQL" : "SQLite"}, ${new Date().toISOString()}, load average ${load0.map(r2).join(" ")} at the start, ${load1.map(r2).join(" ")} at the end; every answer of every read equal; the HTTP answer as bytes in ${bytesCases.length === cases.length ? "every case" : `${bytesCases.length} of ${cases.length} cases (the others as text)`}\n\n${lines.join("\n")}\n`,
);
