/**
 * Benchmark of GET /rest/applications/{name}/insights/cve/{id}/occurrences (npm run bench:occurrences).
 *
 * 1. Generates (or reuses, see generate-store.ts) a large SQLite store and a large PostgreSQL store.
 * 2. In-process latency of what the endpoint does (findApplication, resolveAnalysis, findVulnerability,
 *    listOccurrences on the read model of migration 012) for {limit 50, 500} x {skip 0, deep skip} x
 *    {no date, date between analyses 2 and 3}, on both databases, next to the best single SQL query on
 *    the interval tables alone (test/support/occurrences-baseline.ts), checking every answer against the
 *    generator's model and the two methods against each other. Then the other list operations
 *    (list-operations.ts), limit 100.
 * 3. HTTP throughput with autocannon through the gateway of the real service (startService) on the
 *    SQLite store: /mcp/healthcheck as the ceiling, then the occurrences endpoint, same settings.
 * 4. Prints a summary and rewrites the results section of docs/benchmarks.md.
 *
 * Environment: BENCH_POSTGRES_URL (admin URL of the local server), BENCH_POSTGRES_DATABASE and
 * BENCH_DATA_DIR (another cache: database name, directory), BENCH_SCALE (0..1, for trying the
 * benchmark quickly on a smaller data set; the docs are only rewritten at scale 1 unless
 * BENCH_WRITE_DOCS=1), BENCH_HTTP_SECONDS (default 10), BENCH_CONNECTIONS (default 20),
 * BENCH_FORCE_GENERATE=1 (regenerate both stores). For the test suite's tiny run only (the defaults are
 * the real run's): BENCH_ITERATIONS (at most this many timed runs of each in-process case, after at
 * most as many warm-up runs, and of each list operation; default 200 / 50 per case, 40 per operation),
 * BENCH_HTTP_WARMUP_SECONDS (default 2; 0 skips the HTTP warm-ups).
 */

import { deepStrictEqual } from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { PerformanceObserver, performance } from "node:perf_hooks";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import autocannon from "autocannon";
import { Kysely, type SqliteDatabase, SqliteDialect } from "kysely";
import pg from "pg";
import { loadSettings } from "../../src/config/load-config.ts";
import { resolveRuntimeConfig } from "../../src/config/runtime-config.ts";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { startService } from "../../src/service.ts";
import { findApplication, resolveAnalysis } from "../../src/store/applications.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { type CvePackageRecord, listOccurrencesJson } from "../../src/store/insights.ts";
import type { Database } from "../../src/store/schema.ts";
import { findVulnerability } from "../../src/store/vulnerabilities.ts";
import { occurrencesBySingleQuery } from "../support/occurrences-baseline.ts";
import { cannonDuration } from "./bench-kit.ts";
import {
  BENCH_DATA_DIR,
  BENCH_SPEC,
  type BenchFacts,
  GENERATOR_KEY,
  POSTGRES_ADMIN_URL,
  ROOT,
  type StoreInfo,
} from "./generate-store.ts";
import { LIST_TARGET_P95_MS, measureListOperations, type OperationResult } from "./list-operations.ts";
import { serverBackends, serverCpuMs } from "./pg-server-cpu.ts";

const HTTP_SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? "10");
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? "20");
/** Caps the timed runs of each case and list operation (a tiny run needs answers, not percentiles). */
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? Number.POSITIVE_INFINITY);
const HTTP_WARMUP_SECONDS = Number(process.env.BENCH_HTTP_WARMUP_SECONDS ?? "2");
const DEEP_SKIP = Math.round(1_500 * BENCH_SPEC.scale);
const DOCS_FILE = join(ROOT, "docs", "benchmarks.md");
/** Issue 13: p95 of the wide CVE in-process, limit 50 (SQLite / PostgreSQL) and limit 500 (both). */
const TARGET_P95_MS = { sqlite: 5, postgres: 10 } as const;
const TARGET_P95_LIMIT_500_MS = 30;
/** Issue 13: HTTP through the gateway, wide CVE, limit 50 (uncompressed). */
const TARGET_REQUESTS_PER_SECOND = 250;

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------------------------------------------
// Stores
// ---------------------------------------------------------------------------------------------------

/** Runs the generator in a child process (its own heap, released before measuring). */
function generate(kind: "sqlite" | "postgres"): Promise<StoreInfo & { wallSeconds: number }> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const args = ["--max-old-space-size=8192", join(ROOT, "test/bench/generate-store.ts"), kind];
    if (process.env.BENCH_FORCE_GENERATE === "1") args.push("--force");
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"], env: process.env });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("BENCH_STORE "));
      if (code !== 0 || !line) {
        reject(new Error(`generate-store.ts ${kind} failed (exit ${code})`));
        return;
      }
      const info = JSON.parse(line.slice("BENCH_STORE ".length)) as StoreInfo;
      resolvePromise({ ...info, wallSeconds: round((performance.now() - started) / 1000, 1) });
    });
  });
}

// ---------------------------------------------------------------------------------------------------
// In-process latency
// ---------------------------------------------------------------------------------------------------

interface Case {
  label: string;
  cve: string;
  limit: number;
  skip: number;
  date: string | undefined;
  iterations: number;
  warmup: number;
  /** Expected package count, from the generator's model. */
  expected: number;
}

interface CaseResult {
  label: string;
  limit: number;
  skip: number;
  date: boolean;
  cve: string;
  iterations: number;
  medianMs: number;
  /** CPU time of the benchmark process per query (on PostgreSQL the server's CPU is not in it). */
  cpuMedianMs: number;
  cpuP95Ms: number;
  /** PostgreSQL: the server backends' CPU plus this process's, per query (pg-server-cpu.ts). */
  totalCpuMedianMs?: number;
  totalCpuP95Ms?: number;
  p95Ms: number;
  meanMs: number;
  maxMs: number;
  packages: number;
  objects: number;
  jsonBytes: number;
  /** Median time of JSON.stringify of the answer (a lower bound of the HTTP serialization cost). */
  stringifyMs: number;
  /** Garbage-collection pause time per query during the timed iterations. */
  gcMsPerQuery: number;
}

function buildCases(facts: BenchFacts): Case[] {
  const latest = facts.analyses.length;
  const cases: Case[] = [];
  for (const limit of [50, 500]) {
    for (const skip of [0, DEEP_SKIP]) {
      for (const dated of [false, true]) {
        const seq = dated ? 2 : latest;
        const count = facts.wideCounts[seq] as number;
        cases.push({
          label: `wide limit ${limit} skip ${skip}${dated ? " date" : ""}`,
          cve: facts.wideCve,
          limit,
          skip,
          date: dated ? new Date(facts.dateBetween2And3).toISOString() : undefined,
          iterations: Math.min(limit === 50 ? 200 : 50, ITERATIONS),
          warmup: Math.min(limit === 50 ? 20 : 5, ITERATIONS),
          expected: Math.max(0, Math.min(limit, count - skip)),
        });
      }
    }
  }
  cases.push({
    label: "narrow limit 50 skip 0",
    cve: facts.narrowCve,
    limit: 50,
    skip: 0,
    date: undefined,
    iterations: Math.min(200, ITERATIONS),
    warmup: Math.min(20, ITERATIONS),
    expected: Math.min(50, facts.narrowCounts[latest] as number),
  });
  return cases;
}

type Method = "model" | "baseline";

/** What the endpoint does once the caller is authenticated (the page by `method`). */
async function occurrences(
  db: Kysely<Database>,
  application: string,
  c: Case,
  method: Method = "model",
): Promise<CvePackageRecord[] | string> {
  const app = await findApplication(db, application);
  if (!app) throw new Error(`application ${application} missing from the store`);
  const analysis = await resolveAnalysis(db, app.id, c.date);
  if (!analysis) throw new Error(`no analysis of ${application} at ${c.date}`);
  const vulnerability = await findVulnerability(db, c.cve);
  if (!vulnerability) throw new Error(`no vulnerability ${c.cve}`);
  const query = {
    applicationId: app.id,
    seq: analysis.seq,
    vulnerabilityId: vulnerability.id,
    limit: c.limit,
    skip: c.skip,
  };
  // The read model gives the page as the endpoint sends it (JSON text); the baseline gives records.
  return method === "model" ? listOccurrencesJson(db, query) : occurrencesBySingleQuery(db, query);
}

function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[rank - 1] as number;
}

function check(c: Case, result: CvePackageRecord[], kind: string): void {
  if (result.length !== c.expected) {
    throw new Error(`${kind} ${c.label}: expected ${c.expected} packages, got ${result.length}`);
  }
  const empty = result.filter((p) => p.objects.length === 0);
  if (empty.length > 0) {
    throw new Error(`${kind} ${c.label}: ${empty.length} package(s) without objects, e.g. ${empty[0]?.name}`);
  }
  if (
    BENCH_SPEC.scale === 1 &&
    c.limit === 50 &&
    c.skip === 0 &&
    c.label.startsWith("wide") &&
    result.length !== 50
  ) {
    throw new Error(`${kind} ${c.label}: the limit-50 query must return 50 packages, got ${result.length}`);
  }
}

/** Stops a case after this long (the as-ingested SQLite store takes ~300 ms a query), keeping >= MIN_ITERATIONS. */
const CASE_BUDGET_MS = 8_000;
const MIN_ITERATIONS = 20;

async function measureStore(
  variant: string,
  handle: StoreHandle,
  facts: BenchFacts,
  method: Method,
): Promise<{ results: CaseResult[]; answers: Map<string, string> }> {
  const cases = buildCases(facts);
  const results: CaseResult[] = [];
  const answers = new Map<string, string>();
  for (const c of cases) {
    const answer = await occurrences(handle.db, facts.application, c, method);
    const first = typeof answer === "string" ? (JSON.parse(answer) as CvePackageRecord[]) : answer;
    check(c, first, variant);
    const json = JSON.stringify(first);
    answers.set(c.label, json);
    const warmupStart = performance.now();
    for (let i = 0; i < c.warmup && performance.now() - warmupStart < CASE_BUDGET_MS / 5; i++) {
      await occurrences(handle.db, facts.application, c, method);
    }
    const times: number[] = [];
    // CPU time of this process per query: what the query costs when the shared machine preempts it.
    const cpuTimes: number[] = [];
    let gcMs = 0;
    const gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcMs += entry.duration;
    });
    gc.observe({ entryTypes: ["gc"] });
    const backends = handle.kind === "postgres" ? await serverBackends(handle.db) : [];
    const totalCpuTimes: number[] = [];
    const caseStart = performance.now();
    for (let i = 0; i < c.iterations; i++) {
      if (i >= MIN_ITERATIONS && performance.now() - caseStart > CASE_BUDGET_MS) break;
      const server0 = serverCpuMs(backends);
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await occurrences(handle.db, facts.application, c, method);
      const cpu = process.cpuUsage(cpu0);
      times.push(performance.now() - t0);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
      totalCpuTimes.push((cpu.user + cpu.system) / 1000 + serverCpuMs(backends) - server0);
    }
    // GC entries are delivered asynchronously (on a later macrotask): let them arrive before disconnecting.
    await new Promise((r) => setTimeout(r, 50));
    gc.disconnect();
    times.sort((a, b) => a - b);
    const stringify: number[] = [];
    for (let i = 0; i < 9; i++) {
      const t0 = performance.now();
      JSON.stringify(first);
      stringify.push(performance.now() - t0);
    }
    stringify.sort((a, b) => a - b);
    const result: CaseResult = {
      label: c.label,
      limit: c.limit,
      skip: c.skip,
      date: c.date !== undefined,
      cve: c.cve,
      iterations: times.length,
      medianMs: round(percentile(times, 0.5)),
      cpuMedianMs: round(
        percentile(
          cpuTimes.sort((a, b) => a - b),
          0.5,
        ),
      ),
      cpuP95Ms: round(percentile(cpuTimes, 0.95)),
      ...(backends.length > 0
        ? {
            totalCpuMedianMs: round(
              percentile(
                totalCpuTimes.sort((a, b) => a - b),
                0.5,
              ),
            ),
            totalCpuP95Ms: round(percentile(totalCpuTimes, 0.95)),
          }
        : {}),
      p95Ms: round(percentile(times, 0.95)),
      meanMs: round(times.reduce((a, b) => a + b, 0) / times.length),
      maxMs: round(times.at(-1) as number),
      packages: first.length,
      objects: first.reduce((n, p) => n + p.objects.length, 0),
      jsonBytes: Buffer.byteLength(json),
      stringifyMs: round(percentile(stringify, 0.5)),
      gcMsPerQuery: round(gcMs / times.length),
    };
    results.push(result);
    log(
      `${variant.padEnd(22)} ${c.label.padEnd(30)} median ${String(result.medianMs).padStart(7)} ms  ` +
        `p95 ${String(result.p95Ms).padStart(7)} ms  cpu ${result.cpuMedianMs} / ${result.cpuP95Ms} ms  n=${times.length}  gc ${result.gcMsPerQuery} ms/query  ` +
        `(${result.packages} packages, ${result.objects} objects)`,
    );
  }
  // Date-selected answers must differ from the latest ones: analyses 3-5 changed versions and objects.
  for (const c of cases.filter((x) => x.date)) {
    const latest = c.label.replace(" date", "");
    if (answers.get(c.label) === answers.get(latest)) {
      throw new Error(`${variant} ${c.label}: the answer as of analysis 2 equals the latest one`);
    }
  }
  return { results, answers };
}

// ---------------------------------------------------------------------------------------------------
// What-if variants of the SQLite store (copies; the cache is never modified)
// ---------------------------------------------------------------------------------------------------

interface Variant {
  key: string;
  title: string;
  /** What is measured, for the report. */
  change: string;
  kind: "sqlite" | "postgres";
  method: Method;
  dataDir?: string;
  sqliteFile?: string;
  databaseUrl?: string;
  /** SQLite query plans of the page's queries (wide CVE, limit 50, skip 0). */
  plans?: string[];
}

/** A Kysely store on a SQLite file with none of openStore's side effects (PRAGMA optimize, migrations). */
function openSqliteAsIs(
  file: string,
  onQuery?: (sql: string, parameters: readonly unknown[]) => void,
): StoreHandle {
  const raw = new DatabaseSync(file);
  raw.exec("PRAGMA busy_timeout = 10000");
  const database: SqliteDatabase = {
    close: () => raw.close(),
    prepare: (text: string) => {
      const statement = raw.prepare(text);
      const inputs = (parameters: ReadonlyArray<unknown>) => parameters as SQLInputValue[];
      return {
        reader: statement.columns().length > 0,
        all: (parameters) => statement.all(...inputs(parameters)) as unknown[],
        run: (parameters) => {
          const result = statement.run(...inputs(parameters));
          return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
        },
        iterate: (parameters) => statement.iterate(...inputs(parameters)) as IterableIterator<unknown>,
      };
    },
  };
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database }),
    log: (event) => onQuery?.(event.query.sql, event.query.parameters),
  });
  return {
    db,
    kind: "sqlite",
    location: file,
    notices: [],
    migrated: [],
    availability: () => ({ available: true }),
    close: () => db.destroy(),
  };
}

/** EXPLAIN QUERY PLAN of the statements that read the page (wide CVE, limit 50), by method. */
async function capturePlans(file: string, facts: BenchFacts, method: Method): Promise<string[]> {
  const captured: { sql: string; parameters: readonly unknown[] }[] = [];
  const handle = openSqliteAsIs(file, (text, parameters) => captured.push({ sql: text, parameters }));
  try {
    await occurrences(handle.db, facts.application, buildCases(facts)[0] as Case, method);
  } finally {
    await handle.close();
  }
  const raw = new DatabaseSync(file, { readOnly: true });
  try {
    return captured
      .filter((q) => /cve_occurrences|occurrence_objects|version_vulnerabilities/.test(q.sql))
      .map((q) => {
        const name = /occurrence_objects/.test(q.sql)
          ? "objects"
          : /cve_occurrences/.test(q.sql)
            ? "packages"
            : "single query";
        const plan = raw
          .prepare(`explain query plan ${q.sql}`)
          .all(...(q.parameters as SQLInputValue[]))
          .map((r) => (r as { detail: string }).detail);
        return `${name}: ${plan.join("; ")}`;
      });
  } finally {
    raw.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// HTTP throughput
// ---------------------------------------------------------------------------------------------------

interface HttpResult {
  store: string;
  label: string;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  megabytesPerSecond: number;
  total: number;
  /** Share of the wall time the service's event loop was busy (1 = saturated). */
  serviceEventLoopUtilization: number;
}

/**
 * Waits until the service (on this thread) is idle: when autocannon stops, the requests the gateway has
 * already forwarded still run in the REST API, and would otherwise slow down the next run.
 */
async function drained(label: string): Promise<void> {
  const started = performance.now();
  for (;;) {
    const before = performance.eventLoopUtilization();
    await new Promise((r) => setTimeout(r, 250));
    if (performance.eventLoopUtilization(before).utilization < 0.05) return;
    if (performance.now() - started > 180_000)
      throw new Error(`the service is still busy 180 s before "${label}"`);
  }
}

async function cannon(
  store: string,
  label: string,
  url: string,
  headers: Record<string, string>,
  seconds: number,
): Promise<HttpResult> {
  await drained(label);
  const before = performance.eventLoopUtilization();
  // A worker thread: the load generator must not share the service's event loop.
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    ...cannonDuration(seconds),
    workers: 1,
    timeout: 60,
    headers,
  });
  const elu = performance.eventLoopUtilization(before);
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(
      `${label}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers under load`,
    );
  }
  return {
    store,
    label,
    // Completed responses over the run's duration: exact even when an answer takes longer than a second.
    requestsPerSecond: round(result.requests.total / result.duration, 1),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    megabytesPerSecond: round(result.throughput.total / result.duration / 1e6, 1),
    total: result.requests.total,
    serviceEventLoopUtilization: round(elu.utilization, 2),
  };
}

/** The first stored CVE whose occurrences answer `[]` (advisories of packages the application lacks). */
async function knownCveAffectingNothing(
  db: Kysely<Database>,
  get: (cve: string) => Promise<Response>,
): Promise<string> {
  const rows = await db
    .selectFrom("vulnerabilities")
    .select("cve_id")
    .orderBy("id", "desc")
    .limit(500)
    .execute();
  for (const { cve_id } of rows) {
    const response = await get(cve_id);
    if (response.status === 200 && ((await response.json()) as unknown[]).length === 0) return cve_id;
  }
  throw new Error(
    "no stored CVE affects none of the application's packages: the empty answer cannot be measured",
  );
}

async function measureHttp(
  variant: Variant,
  facts: BenchFacts,
  expected: { wide: string; narrow: string },
  options: { restDirect: boolean; empty: boolean },
): Promise<HttpResult[]> {
  // env: {} so that a DATABASE_URL or PORT of the calling shell cannot redirect the benchmark; every
  // listener on 127.0.0.1 and a free port.
  const settings = loadSettings({
    env: {},
    overrides: {
      dataDir: variant.dataDir,
      port: 0,
      restPort: 0,
      mcpAnalysisPort: 0,
      mcpGatekeeperPort: 0,
      logLevel: "silent",
      publicUrl: "http://127.0.0.1:8090",
      bindAddress: "127.0.0.1",
      internalBindAddress: "127.0.0.1",
    },
  });
  const config = await resolveRuntimeConfig(settings);
  const service = await startService(config);
  const created = await createApiKey(service.store.db, {
    user: "occurrences-bench",
    role: "admin",
    applications: [],
  });
  try {
    const headers = { "X-API-KEY": created.key };
    const app = encodeURIComponent(facts.application);
    const occ = (cve: string, base = service.gatewayUrl) =>
      `${base}/rest/applications/${app}/insights/cve/${cve}/occurrences?limit=50&skip=0`;
    const health = `${service.gatewayUrl}/mcp/healthcheck`;
    const emptyCve = await knownCveAffectingNothing(service.store.db, (cve) => fetch(occ(cve), { headers }));

    // The answers over HTTP are the in-process ones.
    for (const [cve, json] of [
      [facts.wideCve, expected.wide],
      [facts.narrowCve, expected.narrow],
      [emptyCve, "[]"],
    ] as const) {
      const response = await fetch(occ(cve), { headers });
      if (response.status !== 200) {
        throw new Error(`GET ${occ(cve)}: HTTP ${response.status} ${await response.text()}`);
      }
      deepStrictEqual(await response.json(), JSON.parse(json));
    }
    // Wait for the gateway's first upstream probe, so the healthcheck says UP.
    for (let i = 0; i < 50; i++) {
      const body = (await (await fetch(health)).json()) as { status: string };
      if (body.status === "UP") break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const store = variant.title;
    const results: HttpResult[] = [];
    if (HTTP_WARMUP_SECONDS > 0) await cannon(store, "warm-up", health, {}, HTTP_WARMUP_SECONDS);
    results.push(await cannon(store, "GET /mcp/healthcheck (ceiling), before", health, {}, HTTP_SECONDS));
    if (HTTP_WARMUP_SECONDS > 0)
      await cannon(store, "warm-up", occ(facts.wideCve), headers, HTTP_WARMUP_SECONDS);
    results.push(
      await cannon(
        store,
        `occurrences, wide ${facts.wideCve}, limit 50`,
        occ(facts.wideCve),
        headers,
        HTTP_SECONDS,
      ),
    );
    results.push(
      await cannon(
        store,
        `occurrences, narrow ${facts.narrowCve}, limit 50`,
        occ(facts.narrowCve),
        headers,
        HTTP_SECONDS,
      ),
    );
    if (options.empty) {
      // A known CVE that affects no package of the application: the endpoint's fixed cost (auth, lookups,
      // proxy), no payload. (An id no advisory names is a 404 unknown-vulnerability since issue 30.)
      results.push(
        await cannon(
          store,
          "occurrences, CVE affecting no package (empty answer)",
          occ(emptyCve),
          headers,
          HTTP_SECONDS,
        ),
      );
    }
    if (options.restDirect) {
      results.push(
        await cannon(
          store,
          `occurrences, wide, limit 50, REST port (no gateway)`,
          occ(facts.wideCve, service.restUrl),
          headers,
          HTTP_SECONDS,
        ),
      );
    }
    // Once more at the end: on a small shared machine the ceiling varies, the higher one is used.
    results.push(await cannon(store, "GET /mcp/healthcheck (ceiling), after", health, {}, HTTP_SECONDS));
    for (const r of results) {
      log(
        `HTTP ${r.store.padEnd(24)} ${r.label.padEnd(50)} ${String(r.requestsPerSecond).padStart(9)} req/s  ` +
          `p50 ${r.latencyP50Ms} ms  p99 ${r.latencyP99Ms} ms  ${r.megabytesPerSecond} MB/s  ELU ${r.serviceEventLoopUtilization}`,
      );
    }
    return results;
  } finally {
    await service.store.db.deleteFrom("api_keys").where("id", "=", created.id).execute();
    await service.stop();
  }
}

// ---------------------------------------------------------------------------------------------------
// Machine and report
// ---------------------------------------------------------------------------------------------------

interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  sqlite: string;
  postgres: string;
}

async function describeMachine(): Promise<Machine> {
  let cpuModel = os.cpus()[0]?.model ?? "unknown";
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    if (line) cpuModel = line.split(":")[1]?.trim() ?? cpuModel;
  } catch {
    // not Linux
  }
  const memory = new DatabaseSync(":memory:");
  const sqlite = (memory.prepare("select sqlite_version() as v").get() as { v: string }).v;
  memory.close();
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  const postgres =
    (await client.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]?.v ??
    "unknown";
  await client.end();
  let nproc = os.availableParallelism();
  try {
    nproc = Number(execFileSync("nproc", { encoding: "utf8" }).trim()) || nproc;
  } catch {
    // no coreutils
  }
  return {
    cpus: nproc,
    cpuModel,
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    sqlite,
    postgres,
  };
}

interface Report {
  date: string;
  machine: Machine;
  generation: Record<string, { reused: boolean; wallSeconds: number; report: StoreInfo["report"] }>;
  variants: Variant[];
  latency: Record<string, CaseResult[]>;
  identicalAnswers: boolean;
  http: HttpResult[];
  /** Issue 13 point 5, per store kind. */
  listOperations: Record<string, OperationResult[]>;
  /** CPU used by other processes than this one during each phase, in cores (PostgreSQL's server included). */
  otherCpu: Record<string, number>;
  totalSeconds: number;
}

/** Starts measuring the CPU that processes other than this one use; the returned function stops, in cores. */
function cpuSampler(): () => number {
  const read = () => {
    try {
      const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
        .trim()
        .split(/\s+/)
        .slice(1)
        .map(Number);
      // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
      const busy = fields.slice(0, 8).reduce((a, b) => a + b, 0) - (fields[3] ?? 0) - (fields[4] ?? 0);
      return busy / 100; // USER_HZ
    } catch {
      return Number.NaN;
    }
  };
  const wall0 = performance.now();
  const busy0 = read();
  const own0 = process.cpuUsage();
  return () => {
    const own = process.cpuUsage(own0);
    const seconds = (performance.now() - wall0) / 1000;
    const other = read() - busy0 - (own.user + own.system) / 1e6;
    return round(Math.max(0, other) / seconds, 2);
  };
}

/** The issue's p95 target of a case on a store, for the read model (the baseline is for comparison). */
function targetOf(v: Variant, r: CaseResult, wideCve: string): number | undefined {
  if (v.method !== "model" || r.cve !== wideCve) return undefined;
  return r.limit === 50 ? TARGET_P95_MS[v.kind] : TARGET_P95_LIMIT_500_MS;
}

const cell = (r: CaseResult | undefined, target: number | undefined) =>
  r ? `${r.medianMs} / ${r.p95Ms}${target === undefined ? "" : r.p95Ms <= target ? " ✅" : " ❌"}` : "–";

function latencyTable(report: Report): string {
  const base = report.latency[report.variants[0]?.key ?? ""] ?? [];
  const wideCve = report.generation.sqlite?.report.facts.wideCve ?? "";
  const rows = base.map((s, i) => {
    const cells = report.variants.map((v) => {
      const r = report.latency[v.key]?.[i];
      return cell(r, r && targetOf(v, r, wideCve));
    });
    return `| ${s.label} | ${s.packages} / ${s.objects} | ${round(s.jsonBytes / 1024, 0)} | ${s.stringifyMs} | ${cells.join(" | ")} |`;
  });
  const cpuRows = base.map((s, i) => {
    const cells = report.variants.map((v) => {
      const r = report.latency[v.key]?.[i];
      if (!r) return "–";
      return v.kind === "sqlite"
        ? `${r.cpuMedianMs} / ${r.cpuP95Ms}`
        : `${r.totalCpuMedianMs ?? "?"} / ${r.totalCpuP95Ms ?? "?"}`;
    });
    return `| ${s.label} | ${cells.join(" | ")} |`;
  });
  return [
    `| case | packages / objects | JSON KiB | JSON.stringify ms | ${report.variants.map((v) => v.title).join(" | ")} |`,
    `| --- | ---: | ---: | ---: | ${report.variants.map(() => "---:").join(" | ")} |`,
    ...rows,
    "",
    "CPU time per query, ms, median / p95, without the time other processes took the cores: on SQLite the " +
      "benchmark process's (SQLite runs in it, read workers included), on PostgreSQL the process's plus the " +
      "server backends' of the store's database (/proc/<pid>/schedstat, test/bench/pg-server-cpu.ts):",
    "",
    `| case | ${report.variants.map((v) => `${v.title} CPU`).join(" | ")} |`,
    `| --- | ${report.variants.map(() => "---:").join(" | ")} |`,
    ...cpuRows,
  ].join("\n");
}

function ceilingOf(report: Report, store: string): number {
  return Math.max(
    ...report.http
      .filter((r) => r.store === store && r.label.includes("healthcheck"))
      .map((r) => r.requestsPerSecond),
  );
}

function httpTable(report: Report): string {
  return [
    "| store | run | requests/s | vs healthcheck (higher run) | latency p50 / p99 ms | MB/s | service event-loop busy |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ...report.http.map((r) => {
      const ceiling = ceilingOf(report, r.store);
      return `| ${r.store} | ${r.label} | ${r.requestsPerSecond} | ${round((100 * r.requestsPerSecond) / ceiling, 1)} % | ${r.latencyP50Ms} / ${r.latencyP99Ms} | ${r.megabytesPerSecond} | ${round(r.serviceEventLoopUtilization * 100, 0)} % |`;
    }),
  ].join("\n");
}

function ratioOf(report: Report, store: string): { ratio: number; occurrences: number; health: number } {
  const runs = report.http.filter((r) => r.store === store);
  const health = ceilingOf(report, store);
  const occurrences =
    runs.find((r) => r.label.startsWith("occurrences, wide"))?.requestsPerSecond ?? Number.NaN;
  return { ratio: occurrences / health, occurrences, health };
}

function listOperationsTable(report: Report): string {
  const kinds = Object.keys(report.listOperations);
  const first = report.listOperations[kinds[0] ?? ""] ?? [];
  const title = (kind: string) => (kind === "sqlite" ? "SQLite" : "PostgreSQL");
  return [
    `| operation | items | ${kinds.map((k) => `${title(k)} median / p95 ms`).join(" | ")} |`,
    `| --- | ---: | ${kinds.map(() => "---:").join(" | ")} |`,
    ...first.map((op, i) => {
      const cells = kinds.map((k) => {
        const r = report.listOperations[k]?.[i];
        return r
          ? `${r.medianMs} / ${r.p95Ms}${r.before ? "" : r.p95Ms <= LIST_TARGET_P95_MS ? " ✅" : " ❌"} (CPU ${r.cpuMedianMs} / ${r.cpuP95Ms})`
          : "–";
      });
      return `| ${op.label} | ${op.items} | ${cells.join(" | ")} |`;
    }),
  ].join("\n");
}

/** Ingest-time cost of the read model and its bytes, from the generator's report. */
function modelCostLines(report: Report): string[] {
  const lines: string[] = [];
  for (const [kind, g] of Object.entries(report.generation)) {
    const r = g.report;
    const title = kind === "sqlite" ? "SQLite" : "PostgreSQL";
    const phases = Object.keys(r.seconds).filter(
      (k) => k.startsWith("analysis") || k === "publishedVersions",
    );
    lines.push(
      `- ${title}, seconds in the read model's statements / whole phase: ${phases
        .map((k) => `${k} ${r.modelSeconds?.[k] ?? "?"} / ${r.seconds[k]}`)
        .join(", ")}`,
    );
    const t = r.storage?.tables;
    if (t) {
      const per = (table: string) => {
        const x = t[table];
        return x
          ? `${round(x.bytes / 2 ** 20, 1)} MiB, ${x.rows} rows, ${round(x.bytes / Math.max(1, x.rows), 0)} B/row`
          : "–";
      };
      lines.push(
        `- ${title}, bytes with indexes: occurrence_objects ${per("occurrence_objects")}; cve_occurrences ${per("cve_occurrences")}; ` +
          (t.occurrence_object_lists
            ? `occurrence_object_lists ${per("occurrence_object_lists")} (${round(t.occurrence_object_lists.bytes / Math.max(1, t.occurrence_objects?.rows ?? 1), 0)} B per occurrence_objects row); `
            : "") +
          `for comparison external_objects ${per("external_objects")}, object_references ${per("object_references")}, application_packages ${per("application_packages")}`,
      );
    }
  }
  return lines;
}

function renderResults(report: Report): string {
  const m = report.machine;
  const gen = (kind: string) => {
    const g = report.generation[kind];
    if (!g) return "–";
    const phases = Object.entries(g.report.seconds)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    return g.reused
      ? `reused from the cache (generated earlier in ${g.report.totalSeconds} s: ${phases})`
      : `generated in this run in ${g.report.totalSeconds} s (${phases})`;
  };
  const facts = report.generation.sqlite?.report.facts as BenchFacts;
  const last = facts.counts.perAnalysis.at(-1);
  const modelVariants = report.variants.filter((v) => v.method === "model");
  const targetRows = [
    ...modelVariants.flatMap((v) =>
      [50, 500].map((limit) => {
        const rows = (report.latency[v.key] ?? []).filter(
          (x) => x.limit === limit && x.cve === facts.wideCve,
        );
        const target = limit === 50 ? TARGET_P95_MS[v.kind] : TARGET_P95_LIMIT_500_MS;
        const worst = rows.reduce((a, b) => (b.p95Ms > a.p95Ms ? b : a));
        const baseline = report.latency[v.key.replace("model", "baseline")]?.find(
          (x) => x.label === worst.label,
        );
        return `| wide CVE p95 <= ${target} ms, limit ${limit}, in-process — ${v.title} | worst case (${worst.label}): ${worst.p95Ms} ms (single-query baseline ${baseline?.p95Ms ?? "–"} ms, × ${baseline ? round(baseline.p95Ms / worst.p95Ms, 1) : "–"}) | ${worst.p95Ms <= target ? "✅ yes" : "❌ no"} |`;
      }),
    ),
    ...[...new Set(report.http.map((r) => r.store))].map((store) => {
      const { occurrences, ratio } = ratioOf(report, store);
      return `| HTTP through the gateway, wide CVE limit 50 >= ${TARGET_REQUESTS_PER_SECOND} requests/s — ${store} (store reads on the service's event loop) | ${occurrences} requests/s (${round(ratio * 100, 2)} % of /mcp/healthcheck) | ${occurrences >= TARGET_REQUESTS_PER_SECOND ? "✅ yes" : "❌ no"} |`;
    }),
    ...Object.entries(report.listOperations).map(([kind, ops]) => {
      const worst = ops.filter((o) => !o.before).reduce((a, b) => (b.p95Ms > a.p95Ms ? b : a));
      return `| other list operations p95 <= ${LIST_TARGET_P95_MS} ms, limit 100 — ${kind === "sqlite" ? "SQLite" : "PostgreSQL"} | worst: ${worst.label} ${worst.p95Ms} ms | ${worst.p95Ms <= LIST_TARGET_P95_MS ? "✅ yes" : "❌ no"} |`;
    }),
  ];
  const changes = report.variants
    .filter((v) => v.change)
    .flatMap((v) => [`- **${v.title}**: ${v.change}.`, ...(v.plans ?? []).map((plan) => `  - \`${plan}\``)]);
  return [
    `Run of ${report.date}, generator ${GENERATOR_KEY}, whole run ${round(report.totalSeconds / 60, 1)} min.`,
    "",
    "#### Machine",
    "",
    `- CPU: ${m.cpus} × ${m.cpuModel} (\`nproc\` = ${m.cpus})`,
    `- Memory: ${m.memoryGiB} GiB`,
    `- OS: ${m.os}`,
    `- Node.js ${m.node}; SQLite ${m.sqlite} (node:sqlite); PostgreSQL ${m.postgres} (local server, default settings)`,
    ...(Math.max(
      ...Object.entries(report.otherCpu)
        .filter(([k]) => k !== "PostgreSQL")
        .map(([, v]) => v),
    ) > 0.25
      ? [
          "- **Warning: other processes used a significant share of the CPU during this run (below); the numbers are " +
            "disturbed, rerun on an idle machine.**",
        ]
      : []),
    `- CPU used by other processes during the measurements, in cores (PostgreSQL's server is one of them): ${Object.entries(
      report.otherCpu,
    )
      .map(([phase, cores]) => `${phase} ${cores}`)
      .join(", ")}`,
    "",
    "#### Data set of this run",
    "",
    `- ${facts.counts.packages} packages with ${facts.counts.publishedVersions} published versions, ${facts.counts.advisories} advisories, ` +
      `${facts.counts.applicationObjects} application objects`,
    `- latest analysis: ${last?.packages} packages, ${last?.objects} external objects, ${last?.references} references; ` +
      `external objects / references per analysis 1-5: ${facts.counts.perAnalysis.map((a) => `${a.objects} / ${a.references}`).join(", ")}`,
    `- wide CVE ${facts.wideCve} affects ${Object.values(facts.wideCounts).join(", ")} of the application's packages in analyses 1-5; ` +
      `narrow CVE ${facts.narrowCve} affects ${facts.narrowCounts[facts.analyses.length]}`,
    `- SQLite store: ${gen("sqlite")}`,
    `- PostgreSQL store: ${gen("postgres")}`,
    "",
    "#### In-process latency (ms, median / p95)",
    "",
    "findApplication + resolveAnalysis + findVulnerability + the page (listOccurrences on the read model, or the " +
      "single-query baseline), one after the other, after a warm-up; " +
      `up to ${Math.min(200, ITERATIONS)} iterations for limit 50 and ${Math.min(50, ITERATIONS)} for limit 500 (a case stops after ${CASE_BUDGET_MS / 1000} s with at least ${MIN_ITERATIONS}). ` +
      `"date" = ${facts.dateBetween2And3}, which selects analysis 2; otherwise the latest analysis (5); deep skip = ${DEEP_SKIP}. ` +
      "Every answer was checked against the generator's model (package count, every package with objects, dated answers " +
      `differ from the latest). All stores gave identical answers: ${report.identicalAnswers ? "yes" : "**no**"}.`,
    "",
    latencyTable(report),
    "",
    `Garbage-collection pauses inside the timed loop, ms per query (wide, limit 50 / limit 500, skip 0, latest): ${report.variants
      .map((v) => {
        const rows = report.latency[v.key] ?? [];
        const at = (limit: number) =>
          rows.find((r) => r.limit === limit && r.skip === 0 && !r.date && r.cve === facts.wideCve)
            ?.gcMsPerQuery;
        return `${v.title} ${at(50)} / ${at(500)}`;
      })
      .join("; ")}. "JSON.stringify ms" is the median time to serialize the answer once.`,
    "",
    ...(changes.length > 0
      ? [
          "What each column measures, with the SQLite plans of the page's statements (EXPLAIN QUERY PLAN, wide CVE, limit 50):",
          "",
          ...changes,
          "",
        ]
      : []),
    "#### Ingest-time cost and size of the read model",
    "",
    "Measured while the stores were generated (ingestAnalysis and loadPublishedVersions, the store's own write path): " +
      "the time of the statements on cve_occurrences and occurrence_objects (Kysely's query log), against the whole phase.",
    "",
    ...modelCostLines(report),
    "",
    `#### Other list operations (limit 100, analysis ${facts.analyses.length})`,
    "",
    "What each endpoint does once the caller is authenticated and the analysis resolved; " +
      `median / p95 of up to ${Math.min(40, ITERATIONS)} runs ` +
      `(at least 5, 5 s per operation), target p95 <= ${LIST_TARGET_P95_MS} ms. Rows marked "before" run the query ` +
      "the operation had before migration 016 on the same store, in the same run (never held to the target); " +
      "the answers of the two were checked equal first.",
    "",
    listOperationsTable(report),
    "",
    "#### HTTP throughput",
    "",
    `autocannon, ${CONNECTIONS} connections, ${HTTP_SECONDS} s per run, in a worker thread of the benchmark process; ` +
      "the service (startService: gateway + REST API on the SQLite store) runs on the main thread of the same process. " +
      "Requests go through the gateway unless stated otherwise; every response was 2xx and the occurrences answers " +
      "equal the in-process ones.",
    "",
    httpTable(report),
    "",
    "#### Targets",
    "",
    "| target | measured | met |",
    "| --- | --- | --- |",
    ...targetRows,
  ].join("\n");
}

const START = "<!-- bench:occurrences:results:start -->";
const END = "<!-- bench:occurrences:results:end -->";

function writeDocs(results: string): void {
  let text: string;
  try {
    text = readFileSync(DOCS_FILE, "utf8");
  } catch {
    text = `# Benchmarks\n\n## Occurrences endpoint\n\n${START}\n${END}\n`;
  }
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  const block = `${START}\n${results}\n${END}`;
  text =
    start >= 0 && end > start
      ? text.slice(0, start) + block + text.slice(end + END.length)
      : `${text}\n${block}\n`;
  writeFileSync(DOCS_FILE, text);
}

// ---------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  const machine = await describeMachine();
  log(
    `${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, ` +
      `SQLite ${machine.sqlite}, PostgreSQL ${machine.postgres}`,
  );

  // Generating both at once peaks at ~12 GB of resident memory at full scale (~7 GB SQLite, ~5 GB PostgreSQL).
  // Free memory, not total: the machine may be shared with other generations.
  // (A reduced scale needs that share of it: the tiny run's stores fit in any machine's free memory.)
  const parallel = os.freemem() >= 14 * 2 ** 30 * BENCH_SPEC.scale;
  log(
    `stores: generating or reusing SQLite and PostgreSQL ${parallel ? "in parallel" : "one after the other"}`,
  );
  const [sqliteStore, postgresStore] = parallel
    ? await Promise.all([generate("sqlite"), generate("postgres")])
    : [await generate("sqlite"), await generate("postgres")];
  for (const s of [sqliteStore, postgresStore]) {
    log(`${s.kind}: ${s.reused ? "reused" : "generated"} in ${s.wallSeconds} s`);
  }
  const facts = sqliteStore.report.facts;
  deepStrictEqual(postgresStore.report.facts, facts);

  const variants: Variant[] = [
    {
      key: "sqlite-model",
      title: "SQLite, read model",
      change:
        "listOccurrences: the page of cve_occurrences in index order, then the page's objects from occurrence_objects, " +
        "one aggregated string per package (migration 012), on the store as written by the store's own code, opened " +
        "with openStore as the service opens it",
      kind: "sqlite",
      method: "model",
      dataDir: sqliteStore.dataDir,
      sqliteFile: sqliteStore.sqliteFile,
    },
    {
      key: "sqlite-baseline",
      title: "SQLite, single query",
      change:
        "the best single SQL statement on the interval tables alone (test/support/occurrences-baseline.ts: the page of " +
        "affected packages, each with its referred objects aggregated to JSON by SQLite), same store and connection",
      kind: "sqlite",
      method: "baseline",
      dataDir: sqliteStore.dataDir,
      sqliteFile: sqliteStore.sqliteFile,
    },
    {
      key: "postgres-model",
      title: "PostgreSQL, read model",
      change: "",
      kind: "postgres",
      method: "model",
      databaseUrl: postgresStore.databaseUrl,
    },
    {
      key: "postgres-baseline",
      title: "PostgreSQL, single query",
      change: "",
      kind: "postgres",
      method: "baseline",
      databaseUrl: postgresStore.databaseUrl,
    },
  ];

  {
    const latency: Record<string, CaseResult[]> = {};
    const answers: Record<string, Map<string, string>> = {};
    const otherCpu: Record<string, number> = {};
    const listOperations: Record<string, OperationResult[]> = {};
    for (const kind of ["sqlite", "postgres"] as const) {
      const first = variants.find((v) => v.kind === kind) as Variant;
      const handle = await openStore({ databaseUrl: first.databaseUrl, sqliteFile: first.sqliteFile ?? "" });
      try {
        for (const v of variants.filter((x) => x.kind === kind)) {
          const cpu = cpuSampler();
          const measured = await measureStore(v.title, handle, facts, v.method);
          latency[v.key] = measured.results;
          answers[v.key] = measured.answers;
          otherCpu[v.title] = cpu();
        }
        log(`${kind}: other list operations, limit 100`);
        const cpu = cpuSampler();
        listOperations[kind] = await measureListOperations(handle.db, facts, log, {
          iterations: Math.min(40, ITERATIONS),
          budgetMs: 5_000,
        });
        otherCpu[`${kind === "sqlite" ? "SQLite" : "PostgreSQL"} list operations`] = cpu();
      } finally {
        await handle.close();
      }
    }
    for (const v of variants.filter((x) => x.kind === "sqlite")) {
      v.plans = await capturePlans(v.sqliteFile as string, facts, v.method);
    }
    let identicalAnswers = true;
    for (const v of variants.slice(1)) {
      for (const [label, json] of answers["sqlite-model"] ?? []) {
        if (answers[v.key]?.get(label) !== json) {
          identicalAnswers = false;
          log(`WARNING: ${v.title} answers "${label}" differently from SQLite, read model`);
        }
      }
    }

    const cases = buildCases(facts);
    const expected = {
      wide: answers["sqlite-model"]?.get((cases[0] as Case).label) as string,
      narrow: answers["sqlite-model"]?.get((cases.at(-1) as Case).label) as string,
    };
    log(`HTTP: ${CONNECTIONS} connections, ${HTTP_SECONDS} s per run, autocannon in a worker thread`);
    const httpCpu = cpuSampler();
    const http = [
      ...(await measureHttp(variants[0] as Variant, facts, expected, { restDirect: true, empty: true })),
    ];
    otherCpu.HTTP = httpCpu();

    const report: Report = {
      date: `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
      machine,
      generation: {
        sqlite: {
          reused: sqliteStore.reused,
          wallSeconds: sqliteStore.wallSeconds,
          report: sqliteStore.report,
        },
        postgres: {
          reused: postgresStore.reused,
          wallSeconds: postgresStore.wallSeconds,
          report: postgresStore.report,
        },
      },
      variants,
      latency,
      identicalAnswers,
      http,
      listOperations,
      otherCpu,
      totalSeconds: round((performance.now() - started) / 1000, 1),
    };
    const results = renderResults(report);
    writeFileSync(join(BENCH_DATA_DIR, "occurrences-last-run.json"), `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`\n${results}\n`);
    if (BENCH_SPEC.scale === 1 || process.env.BENCH_WRITE_DOCS === "1") {
      writeDocs(results);
      log(`results written to ${DOCS_FILE}`);
    } else {
      log(`BENCH_SCALE=${BENCH_SPEC.scale}: ${DOCS_FILE} left as is (BENCH_WRITE_DOCS=1 to write anyway)`);
    }
    if (!identicalAnswers) throw new Error("the stores answered differently: see the warnings above");
  }
}

await main();
