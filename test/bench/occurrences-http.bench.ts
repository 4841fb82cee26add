/**
 * The occurrences endpoint over HTTP, through the gateway (the HTTP phase of npm run bench:occurrences;
 * alone: node test/bench/occurrences-http.bench.ts). On the benchmark's SQLite store (generate-store.ts,
 * same cache, same BENCH_SCALE), two designs side by side in one run, each the real service
 * (startService: gateway + REST API + MCP servers on free ports of 127.0.0.1):
 * - "reads on the event loop": STORE_READ_WORKERS=0, every query runs on the thread that serves the
 *   gateway, the REST API and the MCP servers (the design before the read pool);
 * - "read pool": the default, SQLite reads in worker threads.
 * In both, the gateway hands `/rest` to the REST API's request listener in-process
 * (src/gateway/rest-direct.ts): a baseline checkout from before that change relays it over loopback HTTP.
 * For each: (1) throughput of GET .../insights/cve/{wide CVE}/occurrences?limit=50 without compression
 * (autocannon, BENCH_CONNECTIONS connections, BENCH_HTTP_SECONDS); (2) isolation: the latency of
 * GET /mcp/healthcheck and of an MCP tools/call (`applications`, 2026-07-28 stateless era, through the
 * gateway with an MCP token) measured by probes at a fixed rate, first alone, then while autocannon
 * loads the occurrences endpoint; (3) bytes on the wire of the wide page with Accept-Encoding br and
 * gzip against identity. Every answer under load must be 2xx, and the page identical in both designs.
 * The clients (autocannon, each probe) run in child processes: this process is the service alone, so
 * its threads' CPU and scheduling are the service's, as in a deployment whose clients are elsewhere.
 *
 * (4) CPU per page: BENCH_CPU_PAGES pages, the CPU time of the service's main thread, of its reader threads (named
 * sqlite-reader) and of the whole process, per page, and the capacity they allow on this machine's cores.
 *
 * Knobs: BENCH_SCALE, BENCH_HTTP_SECONDS (10), BENCH_HTTP_WARMUP_SECONDS (the warm-up per design, min(3, BENCH_HTTP_SECONDS); 0 skips it), BENCH_CONNECTIONS (20), BENCH_PROBE_RATE (50 requests/s
 * per probe), BENCH_CPU_PAGES (300), BENCH_WRITE_DOCS=1 (rewrite docs/benchmarks.md below scale 1),
 * BENCH_HTTP_BASELINE=<checkout> (also measure another checkout's service, e.g. `git archive <commit>`
 * extracted with node_modules linked: its read-pool design, rounds alternating with this tree's),
 * BENCH_HTTP_ROUNDS (1; rounds of baseline and current when a baseline is given), BENCH_LOAD_NICE (0: the
 * load generator's CPU priority that many nice steps below the service's, a stand-in for clients on other
 * machines; the probes keep the service's), BENCH_ISOLATION_ROUNDS (1: windows of probes alone and under
 * load alternate that many times, each BENCH_HTTP_SECONDS long, their samples pooled).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { Session } from "node:inspector/promises";
import os from "node:os";
import { join, resolve } from "node:path";
import { constants, monitorEventLoopDelay, PerformanceObserver, performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadSettings } from "../../src/config/load-config.ts";
import { resolveRuntimeConfig } from "../../src/config/runtime-config.ts";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { type RunningService, startService } from "../../src/service.ts";
import { defaultReadWorkers } from "../../src/store/database.ts";
import { READER_THREAD_NAME } from "../../src/store/sqlite-read-pool.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";
import type { BenchFacts, StoreInfo } from "./generate-store.ts";
import type { ProbeOptions, ProbeResult } from "./latency-probe.ts";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const DOCS_FILE = join(ROOT, "docs", "benchmarks.md");
const REPORT_FILE = join(ROOT, ".bench-data", "occurrences-http-last-run.json");
const PUBLIC_URL = "http://127.0.0.1:8090";
const SUBJECT = "occurrences-http-bench";
const MODERN = "2026-07-28";

export const TARGETS = { requestsPerSecond: 250, isolationRatio: 3, compressedShare: 0.2 };

const log = (message: string) =>
  process.stderr.write(`[bench:occurrences-http] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export interface HttpBenchOptions {
  seconds: number;
  /** The warm-up load before each design is measured, s (default min(3, seconds); 0 skips it). */
  warmupSeconds?: number;
  connections: number;
  probeRate: number;
  /** Pages of the CPU phase (default 300). */
  cpuPages?: number;
  /** Another checkout whose service is measured too (its read-pool design). */
  baseline?: string;
  /** Rounds of baseline and current design (default 1). */
  rounds?: number;
  /** Alternating windows of probes alone and under load, pooled (default 1: one of each). */
  isolationRounds?: number;
  /** How much lower than this process's the load generator's CPU priority is (nice steps; default 0). */
  loadNice?: number;
  /** Environment of the store generator (BENCH_SCALE...). */
  generatorEnv?: NodeJS.ProcessEnv;
}

interface Latency {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface DesignResult {
  design: string;
  readWorkers: number;
  occurrences: {
    requestsPerSecond: number;
    p50Ms: number;
    p99Ms: number;
    serviceEventLoopBusy: number;
    /** CPU time of the service's main thread (gateway, REST API, MCP servers) per answered page. */
    mainThreadCpuMsPerRequest: number;
  };
  alone: { health: Latency; tools: Latency };
  loaded: {
    health: Latency;
    tools: Latency;
    occurrencesRequestsPerSecond: number;
    serviceEventLoopBusy: number;
  };
  bytes: { identity: number; br: number; gzip: number };
  /** CPU time per page (ms) over `pages` pages: the service's main thread, its reader threads, the process. */
  cpu: {
    pages: number;
    /** Reader threads found by name (the baseline's may be unnamed). */
    readerThreads: number;
    mainMsPerPage: number;
    readersMsPerPage: number;
    processMsPerPage: number;
    /** Pages per second the CPU allows: min(one core ÷ main thread, all cores ÷ process). */
    capacityPagesPerSecond: number;
  };
}

export interface HttpBenchReport {
  date: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; os: string; node: string };
  scale: number;
  store: { reused: boolean; packages: number; objects: number; wideCve: string; widePackages: number };
  options: HttpBenchOptions;
  /** CPU used by other processes during the measurements, in cores. */
  otherCpu: number;
  designs: DesignResult[];
}

/** Runs the generator in a child process: the store of the in-process benchmark, from its cache. */
function ensureStore(env: NodeJS.ProcessEnv): Promise<StoreInfo> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      ["--max-old-space-size=8192", join(ROOT, "test/bench/generate-store.ts"), "sqlite"],
      { stdio: ["ignore", "pipe", "inherit"], env },
    );
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("BENCH_STORE "));
      if (code !== 0 || !line) reject(new Error(`generate-store.ts sqlite failed (exit ${code})`));
      else resolvePromise(JSON.parse(line.slice("BENCH_STORE ".length)) as StoreInfo);
    });
  });
}

function percentiles(values: number[]): Latency {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
  return {
    samples: sorted.length,
    p50Ms: round(at(0.5), 2),
    p99Ms: round(at(0.99), 2),
    maxMs: round(sorted.at(-1) ?? Number.NaN, 2),
  };
}

/**
 * The clients run in processes of their own, as a deployment's clients are not threads of the service's
 * process: this process's threads (and V8's helper threads, which collect every isolate's garbage) are
 * then only the service's. `niceOffset` lowers a client's CPU priority below this process's.
 */
function runClient(args: string[], niceOffset: number, what: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    if (niceOffset !== 0 && child.pid !== undefined) {
      try {
        os.setPriority(child.pid, Math.min(19, os.getPriority() + niceOffset));
      } catch {
        // not permitted here: the client keeps this process's priority
      }
    }
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
    });
    child.on("error", reject);
    // "close", not "exit": the child's stdout may still hold data when it has exited.
    child.on("close", (code) => {
      if (code === 0) resolvePromise(out);
      else reject(new Error(`${what}: the client process exited with ${code}`));
    });
  });
}

async function probe(options: ProbeOptions): Promise<ProbeResult> {
  const out = await runClient(
    [fileURLToPath(new URL("./latency-probe.ts", import.meta.url)), JSON.stringify(options)],
    0,
    `probe of ${options.url}`,
  );
  const result = JSON.parse(out) as ProbeResult;
  if (result.failures > 0) {
    throw new Error(`${options.url}: ${result.failures} failed probes, first: ${result.firstFailure}`);
  }
  return result;
}

interface AutocannonResult {
  errors: number;
  timeouts: number;
  non2xx: number;
  duration: number;
  requests: { total: number };
  latency: { p50: number; p99: number };
  /** When the load ran (ISO dates). */
  start: string;
  finish: string;
}

/** autocannon's command line in a child process, for `-d seconds` or `-a pages`; any failed answer throws. */
async function autocannonChild(
  url: string,
  headers: Record<string, string>,
  connections: number,
  until: { seconds: number } | { pages: number },
  niceOffset: number,
): Promise<AutocannonResult> {
  const args = [AUTOCANNON_CLI, "-c", String(connections), "-t", "60", "-j"];
  if ("pages" in until) args.push("-a", String(until.pages));
  else args.push("-d", String(until.seconds));
  for (const [name, value] of Object.entries(headers)) args.push("-H", `${name}=${value}`);
  const result = JSON.parse(await runClient([...args, url], niceOffset, "autocannon")) as AutocannonResult;
  const answers = result.requests.total;
  if (result.errors + result.timeouts + result.non2xx > 0 || ("pages" in until && answers < until.pages)) {
    throw new Error(
      `${url}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx, ${answers} answers`,
    );
  }
  return result;
}

async function load(url: string, headers: Record<string, string>, options: HttpBenchOptions) {
  const result = await autocannonChild(
    url,
    headers,
    options.connections,
    { seconds: options.seconds },
    options.loadNice ?? 0,
  );
  return {
    requestsPerSecond: round(result.requests.total / result.duration, 1),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
    window: { from: Date.parse(result.start), to: Date.parse(result.finish) },
  };
}

/** Waits until the service (on this thread) is idle: forwarded requests outlive a load run. */
async function drained(): Promise<void> {
  const started = performance.now();
  for (;;) {
    const before = performance.eventLoopUtilization();
    await new Promise((r) => setTimeout(r, 250));
    if (performance.eventLoopUtilization(before).utilization < 0.05) return;
    if (performance.now() - started > 180_000) throw new Error("the service is still busy after 180 s");
  }
}

/** The bytes of one answer as they come over the wire (node:http does not decode). */
function wireBytes(
  url: string,
  headers: Record<string, string>,
): Promise<{ bytes: number; encoding: string }> {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on("end", () => {
        if (res.statusCode !== 200) reject(new Error(`${url}: HTTP ${res.statusCode}`));
        else resolvePromise({ bytes, encoding: String(res.headers["content-encoding"] ?? "identity") });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

const toolsCallBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: {
    name: "applications",
    arguments: { limit: 5 },
    _meta: {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientInfo": { name: "occurrences-http-bench", version: "1.0.0" },
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
});

/** What a design's service is started with: this tree's modules, or a baseline checkout's. */
interface ServiceModules {
  loadSettings: typeof loadSettings;
  resolveRuntimeConfig: typeof resolveRuntimeConfig;
  startService: typeof startService;
  createApiKey: typeof createApiKey;
}

const CURRENT: ServiceModules = { loadSettings, resolveRuntimeConfig, startService, createApiKey };

async function baselineModules(checkout: string): Promise<ServiceModules> {
  const from = async <T>(path: string) =>
    (await import(pathToFileURL(join(resolve(checkout), path)).href)) as T;
  return {
    loadSettings: (await from<{ loadSettings: typeof loadSettings }>("src/config/load-config.ts"))
      .loadSettings,
    resolveRuntimeConfig: (
      await from<{ resolveRuntimeConfig: typeof resolveRuntimeConfig }>("src/config/runtime-config.ts")
    ).resolveRuntimeConfig,
    startService: (await from<{ startService: typeof startService }>("src/service.ts")).startService,
    // Key making moved from the store to the domain; a baseline from before the move has it in the store.
    createApiKey: (
      await from<{ createApiKey: typeof createApiKey }>(
        existsSync(join(resolve(checkout), "src/domain/api-keys.ts"))
          ? "src/domain/api-keys.ts"
          : "src/store/api-keys.ts",
      )
    ).createApiKey,
  };
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weak callbacks",
};
const AUTOCANNON_CLI = join(ROOT, "node_modules", "autocannon", "autocannon.js");
const CLOCK_TICK_MS = 10;

/** CPU time (ms) of this process's threads with that name, and their count (Linux /proc; 0 elsewhere). */
function threadCpuMs(name: string): { ms: number; threads: number } {
  let ticks = 0;
  let threads = 0;
  try {
    for (const tid of readdirSync("/proc/self/task")) {
      try {
        if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() !== name) continue;
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        ticks += Number(fields[11]) + Number(fields[12]);
        threads++;
      } catch {
        // the thread ended
      }
    }
  } catch {
    return { ms: 0, threads: 0 };
  }
  return { ms: ticks * CLOCK_TICK_MS, threads };
}

/**
 * Scheduling of this process's threads by name (Linux /proc/self/task/<tid>/schedstat: nanoseconds on a
 * core and waiting for one, in the kernel's own accounting) and their nice values: where a probe's time
 * goes when it waits (a core taken by another thread, or the event loop busy with a page).
 */
function schedByThreadName(): Map<string, { runNs: number; waitNs: number; nice: Set<string> }> {
  const byName = new Map<string, { runNs: number; waitNs: number; nice: Set<string> }>();
  try {
    for (const tid of readdirSync("/proc/self/task")) {
      try {
        const name = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
        const [run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        // nice, and the scheduling policy when not the normal one (5: SCHED_IDLE).
        const policy = Number(fields[38]);
        const nice = policy === 0 ? String(fields[16]) : `${fields[16]} policy ${policy}`;
        const sum = byName.get(name) ?? { runNs: 0, waitNs: 0, nice: new Set<string>() };
        sum.runNs += run ?? 0;
        sum.waitNs += wait ?? 0;
        sum.nice.add(nice);
        byName.set(name, sum);
      } catch {
        // the thread ended
      }
    }
  } catch {
    // not Linux
  }
  return byName;
}

/** What each thread name ran and waited for a core (ms per second of the phase) between two samples. */
function schedDelta(
  before: ReturnType<typeof schedByThreadName>,
  after: ReturnType<typeof schedByThreadName>,
  seconds: number,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, now] of after) {
    const was = before.get(name) ?? { runNs: 0, waitNs: 0 };
    const perSecond = (ns: number) => round(ns / 1e6 / seconds, 0);
    out[name] =
      `nice ${[...now.nice].join("/")}: ran ${perSecond(now.runNs - was.runNs)} ms/s, waited ${perSecond(now.waitNs - was.waitNs)} ms/s`;
  }
  return out;
}

/** CPU time (ms) of this process's threads by name. */
function cpuByThreadName(): Map<string, number> {
  const byName = new Map<string, number>();
  try {
    for (const tid of readdirSync("/proc/self/task")) {
      try {
        const name = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
        if (!byName.has(name)) byName.set(name, threadCpuMs(name).ms);
      } catch {
        // the thread ended
      }
    }
  } catch {
    // not Linux
  }
  return byName;
}

async function cpuPerPage(
  design: string,
  url: string,
  apiKey: string,
  options: HttpBenchOptions,
): Promise<DesignResult["cpu"]> {
  const pages = options.cpuPages ?? 300;
  // BENCH_HTTP_CPU_PROF=<dir>: a CPU profile of the main thread during this phase (cpuprofile-summary.ts).
  const profileDir = process.env.BENCH_HTTP_CPU_PROF;
  const session = profileDir ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  const main0 = process.threadCpuUsage();
  const process0 = process.cpuUsage();
  const readers0 = threadCpuMs(READER_THREAD_NAME).ms;
  // The main thread's garbage collections during the phase, by kind (pauses of this thread).
  const gc = new Map<string, { count: number; ms: number }>();
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as PerformanceEntry & { detail?: { kind?: number } };
      const kind = GC_KINDS[detail?.kind ?? 0] ?? "other";
      const sum = gc.get(kind) ?? { count: 0, ms: 0 };
      sum.count++;
      sum.ms += entry.duration;
      gc.set(kind, sum);
    }
  });
  gcObserver.observe({ entryTypes: ["gc"] });
  const byName0 = cpuByThreadName();
  await autocannonChild(url, { "X-API-KEY": apiKey }, options.connections, { pages }, options.loadNice ?? 0);
  if (session && profileDir) {
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    mkdirSync(profileDir, { recursive: true });
    const file = join(profileDir, `${design.replace(/[^a-z0-9]+/gi, "-")}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    log(`CPU profile of the main thread: ${file}`);
  }
  const main = process.threadCpuUsage(main0);
  const all = process.cpuUsage(process0);
  const mainMs = (main.user + main.system) / 1000;
  const processMs = (all.user + all.system) / 1000;
  gcObserver.disconnect();
  log(
    `main-thread GC per page: ${JSON.stringify(Object.fromEntries([...gc].map(([kind, { count, ms }]) => [kind, `${round(count / pages, 3)} pauses, ${round(ms / pages, 2)} ms`])))}`,
  );
  const readers = threadCpuMs(READER_THREAD_NAME);
  const byName = cpuByThreadName();
  log(
    `CPU ms per page by thread name: ${JSON.stringify(Object.fromEntries([...byName].map(([name, ms]) => [name, round((ms - (byName0.get(name) ?? 0)) / pages, 2)])))}`,
  );
  const readersMs = readers.ms - readers0;
  const perPage = (ms: number) => ms / pages;
  return {
    pages,
    mainMsPerPage: round(perPage(mainMs), 2),
    readerThreads: readers.threads,
    readersMsPerPage: round(perPage(readersMs), 2),
    processMsPerPage: round(perPage(processMs), 2),
    capacityPagesPerSecond: round(
      Math.min(1000 / perPage(mainMs), (os.availableParallelism() * 1000) / perPage(processMs)),
      0,
    ),
  };
}

async function startDesign(
  store: StoreInfo,
  issuer: TestIssuer,
  readWorkers: number,
  modules: ServiceModules,
): Promise<{ service: RunningService; apiKey: string; apiKeyId: string }> {
  const { loadSettings, resolveRuntimeConfig, startService, createApiKey } = modules;
  const settings = loadSettings({
    env: {},
    overrides: {
      dataDir: store.dataDir,
      port: 0,
      restPort: 0,
      mcpAnalysisPort: 0,
      mcpGatekeeperPort: 0,
      logLevel: "silent",
      publicUrl: PUBLIC_URL,
      bindAddress: "127.0.0.1",
      internalBindAddress: "127.0.0.1",
      issuer: issuer.issuer,
      tokenExchangeClientSecret: issuer.clientSecret,
      storeReadWorkers: readWorkers,
    },
  });
  const service = await startService(await resolveRuntimeConfig(settings));
  const created = await createApiKey(service.store.db, { user: SUBJECT, role: "admin", applications: [] });
  return { service, apiKey: created.key, apiKeyId: created.id };
}

async function measureDesign(
  design: string,
  readWorkers: number,
  store: StoreInfo,
  facts: BenchFacts,
  issuer: TestIssuer,
  options: HttpBenchOptions,
  expectedPage: { json?: string },
  modules: ServiceModules = CURRENT,
): Promise<DesignResult> {
  const { service, apiKey, apiKeyId } = await startDesign(store, issuer, readWorkers, modules);
  try {
    const page = `${service.gatewayUrl}/rest/applications/${encodeURIComponent(facts.application)}/insights/cve/${facts.wideCve}/occurrences?limit=50&skip=0`;
    const headers = { "X-API-KEY": apiKey };
    const health = `${service.gatewayUrl}/mcp/healthcheck`;
    const mcpToken = await issuer.signMcp(SUBJECT, `${PUBLIC_URL}/mcp`, { expiresIn: "2h" });
    const mcpHeaders = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": "applications",
      authorization: `Bearer ${mcpToken}`,
    };

    // The answers first: the page equal in both designs and not empty, the tool answering the demo-less store.
    const answer = await fetch(page, { headers });
    const json = await answer.text();
    if (answer.status !== 200) throw new Error(`${page}: HTTP ${answer.status} ${json.slice(0, 300)}`);
    const packages = JSON.parse(json) as { objects: unknown[] }[];
    if (packages.length === 0 || packages.some((p) => p.objects.length === 0)) {
      throw new Error(`${page}: an empty page or a package without objects`);
    }
    if (expectedPage.json === undefined) expectedPage.json = json;
    else if (expectedPage.json !== json)
      throw new Error(`${design}: the page differs from the other design's`);
    const tool = await fetch(`${service.gatewayUrl}/mcp`, {
      method: "POST",
      headers: mcpHeaders,
      body: toolsCallBody,
    });
    const toolText = await tool.text();
    if (tool.status !== 200 || !toolText.includes(facts.application) || toolText.includes('"isError":true')) {
      throw new Error(`tools/call applications: HTTP ${tool.status} ${toolText.slice(0, 300)}`);
    }
    for (let i = 0; i < 50; i++) {
      if (((await (await fetch(health)).json()) as { status: string }).status === "UP") break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const probes = (seconds: number) =>
      Promise.all([
        probe({
          url: health,
          method: "GET",
          headers: {},
          rate: options.probeRate,
          seconds,
          expect: '"status":"UP"',
        }),
        probe({
          url: `${service.gatewayUrl}/mcp`,
          method: "POST",
          headers: mcpHeaders,
          body: toolsCallBody,
          rate: options.probeRate,
          seconds,
          expect: facts.application,
        }),
      ]);

    const warmupSeconds = options.warmupSeconds ?? Math.min(3, options.seconds);
    if (warmupSeconds > 0) {
      log(`${design}: warm-up`);
      await load(page, headers, { ...options, seconds: warmupSeconds });
      await drained();
    }
    log(`${design}: occurrences throughput`);
    let before = performance.eventLoopUtilization();
    const cpuBefore = process.threadCpuUsage();
    const { total, ...occurrences } = await load(page, headers, options);
    const occurrencesElu = performance.eventLoopUtilization(before).utilization;
    // Pages forwarded before the load stopped are still being answered: count their CPU too.
    await drained();
    const cpu = process.threadCpuUsage(cpuBefore);
    // Alone and loaded windows alternate `isolationRounds` times and their samples are pooled: on a shared
    // machine, what other processes do then weighs on both sides of the ratio alike.
    const samples = { healthAlone: [] as number[], toolsAlone: [] as number[] };
    const loadedSamples = { health: [] as number[], tools: [] as number[] };
    let loadedRps = 0;
    let loadedElu = 0;
    const rounds = Math.max(1, options.isolationRounds ?? 1);
    for (let i = 0; i < rounds; i++) {
      log(`${design}: probes alone${rounds > 1 ? ` (window ${i + 1} of ${rounds})` : ""}`);
      const [healthAlone, toolsAlone] = await probes(options.seconds);
      samples.healthAlone.push(...healthAlone.latenciesMs);
      samples.toolsAlone.push(...toolsAlone.latenciesMs);
      await drained();
      log(`${design}: probes while the occurrences endpoint is loaded`);
      before = performance.eventLoopUtilization();
      const sched0 = schedByThreadName();
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      const loadedStarted = performance.now();
      const [loadedRun, [healthLoaded, toolsLoaded]] = await Promise.all([
        load(page, headers, options),
        // The probes start once the load is on, and end before it.
        new Promise((r) => setTimeout(r, 500)).then(() => probes(Math.max(1, options.seconds - 1))),
      ]);
      loadedElu += performance.eventLoopUtilization(before).utilization / rounds;
      loadedRps += loadedRun.requestsPerSecond / rounds;
      // A client process may start late: only the samples sent while the load ran count as loaded.
      const whileLoaded = (probed: ProbeResult) =>
        probed.latenciesMs.filter((_, k) => {
          const at = probed.sentAtMs[k] ?? 0;
          return at >= loadedRun.window.from && at <= loadedRun.window.to;
        });
      loadedSamples.health.push(...whileLoaded(healthLoaded));
      loadedSamples.tools.push(...whileLoaded(toolsLoaded));
      delay.disable();
      log(
        `${design}: loaded, service event-loop delay p50 / p99 / max ${round(delay.percentile(50) / 1e6)} / ${round(delay.percentile(99) / 1e6)} / ${round(delay.max / 1e6)} ms; threads: ${JSON.stringify(schedDelta(sched0, schedByThreadName(), (performance.now() - loadedStarted) / 1000))}`,
      );
      if (i < rounds - 1) await drained();
    }
    await drained();
    log(`${design}: CPU per page`);
    const cpuUsed = await cpuPerPage(design, page, apiKey, options);
    const bytes = {
      identity: (await wireBytes(page, headers)).bytes,
      br: (await wireBytes(page, { ...headers, "accept-encoding": "br" })).bytes,
      gzip: (await wireBytes(page, { ...headers, "accept-encoding": "gzip" })).bytes,
    };
    const result: DesignResult = {
      design,
      readWorkers,
      occurrences: {
        ...occurrences,
        serviceEventLoopBusy: round(occurrencesElu, 2),
        mainThreadCpuMsPerRequest: round((cpu.user + cpu.system) / 1000 / Math.max(1, total), 2),
      },
      alone: { health: percentiles(samples.healthAlone), tools: percentiles(samples.toolsAlone) },
      loaded: {
        health: percentiles(loadedSamples.health),
        tools: percentiles(loadedSamples.tools),
        occurrencesRequestsPerSecond: round(loadedRps, 1),
        serviceEventLoopBusy: round(loadedElu, 2),
      },
      bytes,
      cpu: cpuUsed,
    };
    log(`${design}: ${JSON.stringify(result)}`);
    return result;
  } finally {
    await service.store.db.deleteFrom("api_keys").where("id", "=", apiKeyId).execute();
    await service.stop();
  }
}

/** CPU used by processes other than this one and its clients from now until the returned function is called, in cores. */
function otherCpuSampler(): () => number {
  const read = () => {
    const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return (fields.slice(0, 8).reduce((a, b) => a + b, 0) - (fields[3] ?? 0) - (fields[4] ?? 0)) / 100;
  };
  // The benchmark's own clients (child processes, once ended) are not other processes: cutime + cstime.
  const children = () => {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[13]) + Number(fields[14])) * CLOCK_TICK_MS) / 1000;
  };
  try {
    const wall0 = performance.now();
    const busy0 = read();
    const own0 = process.cpuUsage();
    const children0 = children();
    return () => {
      const own = process.cpuUsage(own0);
      const other = read() - busy0 - (own.user + own.system) / 1e6 - (children() - children0);
      return round(Math.max(0, other) / ((performance.now() - wall0) / 1000), 2);
    };
  } catch {
    return () => Number.NaN;
  }
}

export async function runOccurrencesHttpBench(options: HttpBenchOptions): Promise<HttpBenchReport> {
  const store = await ensureStore({ ...process.env, ...options.generatorEnv });
  const facts = store.report.facts;
  const latest = facts.analyses.length;
  const issuer = await startTestIssuer();
  issuer.setUser(SUBJECT, { roles: ["admin"], applications: [] });
  const cpu = otherCpuSampler();
  const designs: DesignResult[] = [];
  const expectedPage: { json?: string } = {};
  try {
    designs.push(
      await measureDesign("reads on the event loop", 0, store, facts, issuer, options, expectedPage),
    );
    const baseline = options.baseline ? await baselineModules(options.baseline) : undefined;
    for (let round = 0; round < (baseline ? (options.rounds ?? 1) : 1); round++) {
      if (baseline) {
        designs.push(
          await measureDesign(
            "read pool, baseline",
            defaultReadWorkers(),
            store,
            facts,
            issuer,
            options,
            expectedPage,
            baseline,
          ),
        );
      }
      designs.push(
        await measureDesign("read pool", defaultReadWorkers(), store, facts, issuer, options, expectedPage),
      );
    }
  } finally {
    await issuer.close();
  }
  const otherCpu = cpu();
  return {
    date: `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
    machine: {
      cpus: os.availableParallelism(),
      cpuModel: os.cpus()[0]?.model ?? "unknown",
      memoryGiB: round(os.totalmem() / 2 ** 30, 1),
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
    },
    scale: Number((options.generatorEnv ?? process.env).BENCH_SCALE ?? "1"),
    store: {
      reused: store.reused,
      packages: facts.counts.packages,
      objects: facts.counts.perAnalysis.at(-1)?.objects ?? 0,
      wideCve: facts.wideCve,
      widePackages: facts.wideCounts[latest] ?? 0,
    },
    options,
    otherCpu,
    designs,
  };
}

const ratio = (loaded: Latency, alone: Latency) => round(loaded.p99Ms / alone.p99Ms, 1);
const mark = (met: boolean) => (met ? "✅ yes" : "❌ no");

export function renderHttpReport(report: HttpBenchReport): string {
  const m = report.machine;
  const rows = report.designs.map((d) => {
    const share = (n: number) => `${round((100 * n) / d.bytes.identity, 1)} %`;
    return [
      `| ${d.design} (${d.readWorkers} read workers) | ${d.occurrences.requestsPerSecond} | ${d.occurrences.p50Ms} / ${d.occurrences.p99Ms} | ${d.occurrences.mainThreadCpuMsPerRequest}`,
      `${d.alone.health.p99Ms} → ${d.loaded.health.p99Ms} (×${ratio(d.loaded.health, d.alone.health)})`,
      `${d.alone.tools.p99Ms} → ${d.loaded.tools.p99Ms} (×${ratio(d.loaded.tools, d.alone.tools)})`,
      `${d.loaded.occurrencesRequestsPerSecond}`,
      `${round(d.occurrences.serviceEventLoopBusy * 100, 0)} % / ${round(d.loaded.serviceEventLoopBusy * 100, 0)} %`,
      `${d.bytes.identity} / ${d.bytes.br} (${share(d.bytes.br)}) / ${d.bytes.gzip} (${share(d.bytes.gzip)}) |`,
    ].join(" | ");
  });
  const cpuRows = report.designs.map((d) => {
    const others = round(d.cpu.processMsPerPage - d.cpu.mainMsPerPage, 2);
    const readers = d.cpu.readerThreads > 0 ? `${d.cpu.readersMsPerPage}` : "threads not named";
    return `| ${d.design} | ${d.cpu.pages} | ${d.cpu.mainMsPerPage} | ${readers} | ${others} | ${d.cpu.processMsPerPage} | ${d.cpu.capacityPagesPerSecond} |`;
  });
  const pool = report.designs.at(-1) as DesignResult;
  const baseline = report.designs[0] as DesignResult;
  const targets = [
    `| wide CVE, limit 50, through the gateway, uncompressed: ≥ ${TARGETS.requestsPerSecond} requests/s | ${pool.occurrences.requestsPerSecond} requests/s (${round(pool.occurrences.requestsPerSecond / baseline.occurrences.requestsPerSecond, 2)}× the event-loop design); CPU capacity ${pool.cpu.capacityPagesPerSecond} pages/s | ${mark(pool.occurrences.requestsPerSecond >= TARGETS.requestsPerSecond)} |`,
    `| /mcp/healthcheck p99 under occurrences load ≤ ${TARGETS.isolationRatio}× alone | ×${ratio(pool.loaded.health, pool.alone.health)} (event-loop design ×${ratio(baseline.loaded.health, baseline.alone.health)}) | ${mark(ratio(pool.loaded.health, pool.alone.health) <= TARGETS.isolationRatio)} |`,
    `| MCP tools/call p99 under occurrences load ≤ ${TARGETS.isolationRatio}× alone | ×${ratio(pool.loaded.tools, pool.alone.tools)} (event-loop design ×${ratio(baseline.loaded.tools, baseline.alone.tools)}) | ${mark(ratio(pool.loaded.tools, pool.alone.tools) <= TARGETS.isolationRatio)} |`,
    `| br / gzip bytes on the wire ≤ ${TARGETS.compressedShare * 100} % of the uncompressed page | ${round((100 * pool.bytes.br) / pool.bytes.identity, 1)} % / ${round((100 * pool.bytes.gzip) / pool.bytes.identity, 1)} % | ${mark(Math.max(pool.bytes.br, pool.bytes.gzip) <= TARGETS.compressedShare * pool.bytes.identity)} |`,
  ];
  return [
    `Run of ${report.date}, BENCH_SCALE ${report.scale}: ${report.store.packages} packages, ${report.store.objects} external objects in the latest analysis; wide CVE ${report.store.wideCve} affects ${report.store.widePackages} packages (store ${report.store.reused ? "reused from the cache" : "generated in this run"}).`,
    "",
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.os}, Node.js ${m.node}. CPU used by other processes during the measurements: ${report.otherCpu} cores${report.otherCpu > 0.3 ? " — **the machine was not idle: absolute numbers are pessimistic, compare the two designs**" : ""}.`,
    `Load: autocannon, ${report.options.connections} connections, ${report.options.seconds} s per run, in a child process${report.options.loadNice ? ` ${report.options.loadNice} nice steps below the service` : " at the service's CPU priority"}; probes: ${report.options.probeRate} requests/s each, one keep-alive connection, each in a child process at the service's priority${(report.options.isolationRounds ?? 1) > 1 ? `, ${report.options.isolationRounds} alternating windows alone and under load, pooled` : ""}; the service (and nothing else) runs in the benchmark's process.`,
    "",
    "| design | occurrences req/s | occurrences p50 / p99 ms | main-thread CPU ms per page | /mcp/healthcheck p99 ms alone → loaded | tools/call p99 ms alone → loaded | occurrences req/s while probed | service event loop busy (load / load + probes) | page bytes identity / br / gzip |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
    "",
    `CPU per page (autocannon in a child process, ${report.options.connections} connections; ms of CPU per page; capacity = min(one core ÷ main thread, ${m.cpus} cores ÷ whole process), the page rate this CPU cost allows on an otherwise idle machine):`,
    "",
    "| design | pages | main thread (gateway, REST API, MCP) | reader threads | all other threads (readers, GC, libuv) | whole process | capacity, pages/s |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...cpuRows,
    "",
    "| target (read pool) | measured | met |",
    "| --- | --- | --- |",
    ...targets,
  ].join("\n");
}

const START = "<!-- bench:occurrences-http:results:start -->";
const END = "<!-- bench:occurrences-http:results:end -->";

function writeDocs(text: string): void {
  const docs = readFileSync(DOCS_FILE, "utf8");
  const start = docs.indexOf(START);
  const end = docs.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOCS_FILE} has no ${START} … ${END} block`);
  writeFileSync(DOCS_FILE, `${docs.slice(0, start + START.length)}\n${text}\n${docs.slice(end)}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const options: HttpBenchOptions = {
    seconds: Number(process.env.BENCH_HTTP_SECONDS ?? "10"),
    ...(process.env.BENCH_HTTP_WARMUP_SECONDS
      ? { warmupSeconds: Number(process.env.BENCH_HTTP_WARMUP_SECONDS) }
      : {}),
    connections: Number(process.env.BENCH_CONNECTIONS ?? "20"),
    probeRate: Number(process.env.BENCH_PROBE_RATE ?? "50"),
    cpuPages: Number(process.env.BENCH_CPU_PAGES ?? "300"),
    ...(process.env.BENCH_HTTP_BASELINE ? { baseline: process.env.BENCH_HTTP_BASELINE } : {}),
    rounds: Number(process.env.BENCH_HTTP_ROUNDS ?? "1"),
    loadNice: Number(process.env.BENCH_LOAD_NICE ?? "0"),
    isolationRounds: Number(process.env.BENCH_ISOLATION_ROUNDS ?? "1"),
  };
  const report = await runOccurrencesHttpBench(options);
  const text = renderHttpReport(report);
  process.stdout.write(`${text}\n`);
  mkdirSync(join(ROOT, ".bench-data"), { recursive: true });
  writeFileSync(REPORT_FILE, `${JSON.stringify(report, null, 2)}\n`);
  if (report.scale === 1 || process.env.BENCH_WRITE_DOCS === "1") {
    writeDocs(text);
    log(`results written to ${DOCS_FILE}`);
  }
}
