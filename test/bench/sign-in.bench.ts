/**
 * Benchmark of the sign-in journey and of the token exchange grant (npm run bench:sign-in).
 *
 * Set-up, as test/e2e/sign-in.test.ts does it: the real service (startService: gateway with the embedded
 * identity provider, REST API, both MCP servers) on loopback ports of this process, a SQLite store in a
 * temporary directory with the demo data, the users alice and bob, and a CIMD client whose client ID
 * metadata document is served over TLS by a throwaway CA that the provider trusts through the
 * IDP_EXTRA_CA_FILE setting; headless Chromium (/usr/bin/chromium, the e2e test's flags) launched once.
 *
 * 1. Full sign-in, BENCH_SIGNIN_RUNS times after BENCH_SIGNIN_WARMUP warm-up runs, each with a fresh browser
 *    context (no cookies): the MCP SDK v2 client's first request → 401 → discovery → sign-in page and consent
 *    page in Chromium → loopback callback → finishAuth (code exchange) → a new connection → the first
 *    `tools/call applications`, whose answer is checked. Wall time (performance.now()), CPU time of this
 *    process (process.cpuUsage(): the service, the SDK client and Playwright's driver, which runs in this
 *    process) and of Chromium (every descendant process, from /proc/<pid>/stat), the time of each phase, and
 *    the wall time the gateway spent answering the browser's and the client's requests (node:http's
 *    diagnostics channels).
 * 2. A browserless reference: the same provider flow with fetch (the `authorize` helper), then the SDK
 *    client's connection with the token and the first tool call.
 * 3. Token exchange grant: one MCP access token for alice (browserless `authorize`), then
 *    BENCH_EXCHANGE_SEQUENTIAL sequential exchanges (unloaded latency) and autocannon for
 *    BENCH_EXCHANGE_SECONDS at BENCH_EXCHANGE_CONNECTIONS connections against the token endpoint as
 *    `mcp-token-exchange` (client_secret_basic, its secret sealed in the store).
 *    autocannon runs in a worker thread of this process (this same file) so that it does not share the
 *    service's event loop; every response must be 200 with a new access token (checked in the worker).
 * 4. Prints the report, writes .bench-data/sign-in-last-run.json and the results block of the "Sign-in and
 *    token exchange" section of docs/benchmarks.md (only with the default settings, or BENCH_WRITE_DOCS=1).
 *
 * Everything goes to 127.0.0.1; the run is bounded by a watchdog; the browser, the service and the
 * temporary directories are cleaned up on success and on failure.
 */

import diagnostics from "node:diagnostics_channel";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { join, resolve } from "node:path";
// Node's own (the DOM lib the console tests reference declares another `performance` without it).
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import {
  type CallToolResult,
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import autocannon from "autocannon";
import { type Browser, type BrowserContext, chromium } from "playwright-core";
import { ACCESS_TOKEN_TYPE, PLATFORM_AUDIENCE, TOKEN_EXCHANGE_GRANT } from "../../src/contracts/platform.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
import { aiClientProvider, CHROMIUM_FLAGS } from "../support/mcp-sign-in.ts";
import { type CallbackServer, startCallbackServer } from "../support/oauth-callback.ts";
import { authorize, type ClientSetup, decodeJwt, discover } from "../support/oauth-flow.ts";
import { storedSecret } from "../support/stored-secrets.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { CLOCK_TICKS, knob } from "./bench-kit.ts";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const DOCS_FILE = join(ROOT, "docs", "benchmarks.md");
const REPORT_FILE = join(ROOT, ".bench-data", "sign-in-last-run.json");
const SECTION_TITLE = "## Sign-in and token exchange";
const MARK_START = "<!-- bench:sign-in:results:start -->";
const MARK_END = "<!-- bench:sign-in:results:end -->";

const DEFAULTS = {
  runs: 10,
  warmup: 1,
  exchangeSeconds: 10,
  exchangeConnections: 10,
  exchangeSequential: 200,
};

const CHROMIUM = "/usr/bin/chromium";
const USER = "alice" as const;
/** What `applications` answers to alice (admin): the demo applications. */
const EXPECTED_APPLICATIONS = ["claims-portal", "payments-service", "storefront-web"];
const EXCHANGE_CLIENT_ID = "mcp-token-exchange";

/** A whole journey that takes longer than this fails the run. */
const JOURNEY_TIMEOUT_MS = 60_000;
/** autocannon's per-request timeout (s). */
const REQUEST_TIMEOUT_S = 10;
const WORKER_KIND = "sign-in-bench-autocannon";
/** Share of one core used by other processes above which a measurement is flagged as disturbed. */
const DISTURBED_SHARE = 0.15;

const log = (message: string) => process.stderr.write(`[bench:sign-in] ${message}\n`);
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------------

interface Stats {
  median: number;
  p90: number;
  min: number;
  max: number;
}

/** Median (mean of the two middle values for an even count), p90 by nearest rank, min, max. */
function stats(values: number[], digits = 1): Stats {
  if (values.length === 0) return { median: Number.NaN, p90: Number.NaN, min: Number.NaN, max: Number.NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (i: number) => sorted[Math.min(sorted.length - 1, Math.max(0, i))] as number;
  const mid = sorted.length / 2;
  const median = sorted.length % 2 === 0 ? (at(mid - 1) + at(mid)) / 2 : at(Math.floor(mid));
  return {
    median: round(median, digits),
    p90: round(at(Math.ceil(0.9 * sorted.length) - 1), digits),
    min: round(at(0), digits),
    max: round(at(sorted.length - 1), digits),
  };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
};

// ---------------------------------------------------------------------------------------------------
// CPU
// ---------------------------------------------------------------------------------------------------

/** CPU ms of this process so far (all its threads: main, libuv pool, workers). */
const processCpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** CPU ms of this thread only. */
const threadCpuMs = () => {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
};

interface MachineCpu {
  /** user + nice + system of every process (and kernel work done on their behalf), ms. */
  tasks: number;
  /** Interrupt and softirq time (loopback networking lands here, not in any process), ms. */
  interrupts: number;
  /** Time the hypervisor gave to other guests, ms. */
  steal: number;
}

/** CPU ms of the whole machine (all cores) so far, from /proc/stat. */
function machineCpu(): MachineCpu {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  // cpu user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const ms = (ticks: number) => (ticks * 1000) / CLOCK_TICKS;
  return { tasks: ms(user + nice + system), interrupts: ms(irq + softirq), steal: ms(steal) };
}

const machineDelta = (before: MachineCpu): MachineCpu => {
  const now = machineCpu();
  return {
    tasks: now.tasks - before.tasks,
    interrupts: now.interrupts - before.interrupts,
    steal: now.steal - before.steal,
  };
};

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  /** utime + stime + cutime + cstime, in ms (cutime/cstime: children that exited and were reaped). */
  cpuMs: number;
}

function readProcStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const fields = text.slice(close + 2).split(" ");
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
    stats.push({ pid: Number(entry), ppid: Number(fields[1]), comm, cpuMs: (ticks * 1000) / CLOCK_TICKS });
  }
  return stats;
}

/**
 * CPU ms used so far by the descendants of this process (Chromium: its browser, zygote, GPU/network
 * utility and renderer processes; renderers that exited count through their reaping parent's cutime).
 * Resolution: one clock tick (10 ms at CLK_TCK = 100).
 */
function descendantsCpu(): { cpuMs: number; processes: number; names: string[] } {
  const all = readProcStats();
  const byParent = new Map<number, ProcStat[]>();
  for (const stat of all) byParent.set(stat.ppid, [...(byParent.get(stat.ppid) ?? []), stat]);
  let cpuMs = 0;
  let processes = 0;
  const names = new Set<string>();
  const queue = [...(byParent.get(process.pid) ?? [])];
  while (queue.length > 0) {
    const stat = queue.shift() as ProcStat;
    cpuMs += stat.cpuMs;
    processes++;
    names.add(stat.comm);
    queue.push(...(byParent.get(stat.pid) ?? []));
  }
  return { cpuMs, processes, names: [...names].sort() };
}

// ---------------------------------------------------------------------------------------------------
// Server-side request timing (node:http diagnostics channels, gateway port only)
// ---------------------------------------------------------------------------------------------------

const ORIGINS = {
  browser: "Chromium",
  client: "the SDK client",
  gateway: "the gateway's own token exchange (inside the client's first authorized `POST /mcp`)",
} as const;

interface ServedRequest {
  /** Chromium (by its user agent), the gateway's exchanger (Basic-authenticated token request), the client. */
  from: keyof typeof ORIGINS;
  route: string;
  status: number;
  ms: number;
}

const pending = new WeakMap<ServerResponse, { at: number; from: ServedRequest["from"]; route: string }>();
let gatewayPort = -1;
/** Requests the gateway answered since the collector was (re)set. */
let served: ServedRequest[] | undefined;

/** Method and path, identifiers replaced (interaction uids, etc.). */
function routeOf(req: IncomingMessage): string {
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  const generic = path
    .split("/")
    .map((segment) =>
      segment.length >= 16 && /^[A-Za-z0-9_-]+$/.test(segment) && /[0-9A-Z_]/.test(segment) ? ":id" : segment,
    )
    .join("/");
  return `${req.method} ${generic}`;
}

function watchGateway(): void {
  diagnostics.subscribe("http.server.request.start", (message) => {
    const { request, response, server } = message as {
      request: IncomingMessage;
      response: ServerResponse;
      server: Server;
    };
    if (!served || (server.address() as AddressInfo | null)?.port !== gatewayPort) return;
    const agent = request.headers["user-agent"] ?? "";
    const basic = /^Basic /i.test(request.headers.authorization ?? "");
    pending.set(response, {
      at: performance.now(),
      from: /Chrome/.test(agent) ? "browser" : basic ? "gateway" : "client",
      route: routeOf(request),
    });
  });
  diagnostics.subscribe("http.server.response.finish", (message) => {
    const { response } = message as { response: ServerResponse };
    const start = pending.get(response);
    if (!start || !served) return;
    pending.delete(response);
    served.push({
      from: start.from,
      route: start.route,
      status: response.statusCode,
      ms: performance.now() - start.at,
    });
  });
}

// ---------------------------------------------------------------------------------------------------
// Cleanup, bounded time
// ---------------------------------------------------------------------------------------------------

/** Synchronous cleanups, run on exit whatever happened (the async ones run first when they can). */
const exitCleanups = new Set<() => void>();
process.once("exit", () => {
  for (const cleanup of exitCleanups) {
    try {
      cleanup();
    } catch {
      // best effort
    }
  }
});

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took more than ${ms / 1000} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------------
// The AI client's side: loopback callback and OAuth state
// ---------------------------------------------------------------------------------------------------

/** Timestamps (performance.now()) of one journey. */
interface Marks {
  start: number;
  redirect?: number;
  signInPage?: number;
  consentPage?: number;
  callback?: number;
  pageClosed?: number;
  unauthorized?: number;
  tokens?: number;
  connected?: number;
  toolResult?: number;
}

const PHASES: { key: string; from: keyof Marks; to: keyof Marks; label: string }[] = [
  {
    key: "discovery",
    from: "start",
    to: "redirect",
    label: "first request → 401 → discovery (client)",
  },
  {
    key: "signInPage",
    from: "redirect",
    to: "signInPage",
    label: "new tab → authorization endpoint → sign-in page loaded (browser)",
  },
  {
    key: "consentPage",
    from: "signInPage",
    to: "consentPage",
    label: "fill in, submit → consent page shown (browser; scrypt check)",
  },
  {
    key: "callback",
    from: "consentPage",
    to: "callback",
    label: "approve → loopback callback loaded (browser)",
  },
  { key: "pageClose", from: "callback", to: "pageClosed", label: "tab closed (browser)" },
  { key: "unauthorized", from: "pageClosed", to: "unauthorized", label: "SDK returns UnauthorizedError" },
  { key: "tokens", from: "unauthorized", to: "tokens", label: "finishAuth: code → tokens (client)" },
  {
    key: "connect",
    from: "tokens",
    to: "connected",
    label: "new connection: initialize with the token (client)",
  },
  { key: "toolCall", from: "connected", to: "toolResult", label: "first tools/call applications (client)" },
];

interface Bench {
  idp: IdpService;
  documents: CimdDocumentServer;
  callback: CallbackServer;
  browser: Browser;
}

/** The AI client (the e2e tests' provider), its sign-in timed phase by phase in Chromium. */
function clientProvider(bench: Bench, context: BrowserContext, marks: Marks) {
  return aiClientProvider({
    clientMetadataUrl: bench.documents.clientId,
    callback: bench.callback,
    signInInBrowser: async (authorizationUrl) => {
      marks.redirect = performance.now();
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      try {
        await page.goto(authorizationUrl.href);
        const username = page.locator('input[name="username"]');
        await username.waitFor();
        marks.signInPage = performance.now();
        await username.fill(USER);
        await page.locator('input[name="password"]').fill(USERS[USER].password);
        await page.locator('input[name="password"]').press("Enter");
        await page
          .locator("#approve")
          .waitFor({ timeout: 10_000 })
          .catch(async (error) => {
            throw new Error(
              `no consent page after sign-in: ${page.url()} ${(await page.content()).slice(0, 1000)}`,
              { cause: error },
            );
          });
        marks.consentPage = performance.now();
        const consent = await page.content();
        if (!consent.includes("Test AI Client")) throw new Error("the consent page does not name the client");
        await page.locator("#approve").click();
        await page.waitForURL((url) => url.href.startsWith(bench.callback.url));
        marks.callback = performance.now();
      } finally {
        await page.close();
        marks.pageClosed = performance.now();
      }
    },
  });
}

const applicationsOf = (result: CallToolResult) =>
  ((result.structuredContent as { applications?: { name: string }[] } | undefined)?.applications ?? [])
    .map((a) => a.name)
    .sort();

function checkApplications(result: CallToolResult): void {
  const names = applicationsOf(result);
  if (result.isError || JSON.stringify(names) !== JSON.stringify(EXPECTED_APPLICATIONS)) {
    throw new Error(
      `the first tool call answered ${JSON.stringify(result.content).slice(0, 300)} instead of ${EXPECTED_APPLICATIONS.join(", ")}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// 1. The full journey
// ---------------------------------------------------------------------------------------------------

interface JourneyResult {
  wallMs: number;
  processCpuMs: number;
  chromiumCpuMs: number;
  /** CPU of the machine's other processes during the run: should be ~0. */
  otherCpuMs: number;
  /** Interrupt + softirq time of the machine during the run (the loopback traffic, mostly). */
  interruptsMs: number;
  /** Stolen by the hypervisor during the run. */
  stealMs: number;
  phasesMs: Record<string, number>;
  served: ServedRequest[];
  documentFetches: number;
}

async function journey(bench: Bench): Promise<JourneyResult> {
  const context = await bench.browser.newContext();
  try {
    const url = new URL(bench.idp.mcp);
    const marks: Marks = { start: 0 };
    const state = clientProvider(bench, context, marks);
    const fetchesBefore = bench.documents.fetches;
    let connected: Client | undefined;
    served = [];
    const machineBefore = machineCpu();
    const chromiumBefore = descendantsCpu().cpuMs;
    const cpuBefore = processCpuMs();
    marks.start = performance.now();
    try {
      const run = async () => {
        const transport = new StreamableHTTPClientTransport(url, { authProvider: state.provider });
        const client = new Client({ name: "bench-ai-client", version: "1.0.0" });
        try {
          await client.connect(transport);
          throw new Error("the first connection did not ask for sign-in");
        } catch (error) {
          if (!(error instanceof UnauthorizedError)) throw error;
        }
        marks.unauthorized = performance.now();
        const params = await state.callbackParams();
        if (!params) throw new Error("the browser did not reach the loopback callback");
        await transport.finishAuth(params);
        marks.tokens = performance.now();
        connected = new Client({ name: "bench-ai-client", version: "1.0.0" });
        await connected.connect(new StreamableHTTPClientTransport(url, { authProvider: state.provider }));
        marks.connected = performance.now();
        const result = (await connected.callTool({ name: "applications", arguments: {} })) as CallToolResult;
        marks.toolResult = performance.now();
        return result;
      };
      const result = await withTimeout(run(), JOURNEY_TIMEOUT_MS, "the sign-in journey");
      const wallMs = (marks.toolResult as number) - marks.start;
      const cpu = processCpuMs() - cpuBefore;
      const chromium = descendantsCpu().cpuMs - chromiumBefore;
      const machine = machineDelta(machineBefore);
      const other = Math.max(0, machine.tasks - cpu - chromium);
      const requests = served;
      served = undefined;
      checkApplications(result);
      const phasesMs: Record<string, number> = {};
      for (const phase of PHASES) {
        const from = marks[phase.from];
        const to = marks[phase.to];
        if (from === undefined || to === undefined) throw new Error(`phase ${phase.key} not reached`);
        phasesMs[phase.key] = to - from;
      }
      return {
        wallMs,
        processCpuMs: cpu,
        chromiumCpuMs: chromium,
        otherCpuMs: other,
        interruptsMs: machine.interrupts,
        stealMs: machine.steal,
        phasesMs,
        served: requests,
        documentFetches: bench.documents.fetches - fetchesBefore,
      };
    } finally {
      served = undefined;
      await connected?.close().catch(() => {});
    }
  } finally {
    await context.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// 2. The browserless reference
// ---------------------------------------------------------------------------------------------------

async function browserless(
  bench: Bench,
  setup: ClientSetup,
): Promise<{ wallMs: number; processCpuMs: number }> {
  const cpuBefore = processCpuMs();
  const start = performance.now();
  const run = async () => {
    const tokens = await authorize(setup, { username: USER, password: USERS[USER].password });
    const client = new Client({ name: "bench-ai-client", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(bench.idp.mcp), {
        requestInit: { headers: { authorization: `Bearer ${tokens.accessToken}` } },
      }),
    );
    try {
      return (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
    } finally {
      await client.close();
    }
  };
  const result = await withTimeout(run(), JOURNEY_TIMEOUT_MS, "the browserless sign-in");
  const wallMs = performance.now() - start;
  const cpu = processCpuMs() - cpuBefore;
  checkApplications(result);
  return { wallMs, processCpuMs: cpu };
}

// ---------------------------------------------------------------------------------------------------
// 3. Token exchange: the load generator (worker thread) and its driver
// ---------------------------------------------------------------------------------------------------

interface CannonJob {
  kind: typeof WORKER_KIND;
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  seconds: number;
}

interface CannonOutcome {
  requestsTotal: number;
  durationS: number;
  latency: { p50: number; p90: number; p99: number; mean: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  statusCodes: Record<string, number>;
  /** Responses checked: 200-style body with a Bearer access token of the right type. */
  verified: number;
  rejected: number;
  firstRejected?: string;
  /** Distinct access tokens among the verified responses (by signature). */
  distinctTokens: number;
  /** CPU of the worker thread (autocannon and the body checks) during the run. */
  workerCpuMs: number;
}

/** Runs in the worker thread: autocannon on this thread's own event loop, every body checked. */
async function runCannonWorker(job: CannonJob): Promise<void> {
  const cpuBefore = threadCpuMs();
  let verified = 0;
  let rejected = 0;
  let firstRejected: string | undefined;
  const signatures = new Set<string>();
  const verifyBody = (body: string): boolean => {
    try {
      const answer = JSON.parse(body) as Record<string, unknown>;
      const token = answer.access_token;
      if (
        typeof token === "string" &&
        token.split(".").length === 3 &&
        answer.token_type === "Bearer" &&
        answer.issued_token_type === ACCESS_TOKEN_TYPE
      ) {
        verified++;
        signatures.add(token.slice(token.lastIndexOf(".") + 1));
        return true;
      }
    } catch {
      // not JSON
    }
    rejected++;
    firstRejected ??= body.slice(0, 300);
    return false;
  };
  const options = {
    url: job.url,
    method: "POST",
    headers: job.headers,
    body: job.body,
    connections: job.connections,
    duration: job.seconds,
    timeout: REQUEST_TIMEOUT_S,
    verifyBody,
  };
  type Result = Awaited<ReturnType<typeof autocannon>> & {
    mismatches?: number;
    statusCodeStats?: Record<string, { count: number }>;
  };
  // Off the main thread autocannon returns its raw, encoded histograms: aggregated here as the main thread
  // would (the package's own aggregateResult, not in its type declarations).
  const raw = await autocannon(options);
  const { aggregateResult } = autocannon as unknown as {
    aggregateResult(results: unknown[], opts: Record<string, unknown>): Result;
  };
  const result = aggregateResult([raw], options);
  const outcome: CannonOutcome = {
    requestsTotal: result.requests.total,
    durationS: result.duration,
    latency: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      mean: result.latency.mean,
      max: result.latency.max,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches ?? 0,
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]),
    ),
    verified,
    rejected,
    ...(firstRejected === undefined ? {} : { firstRejected }),
    distinctTokens: signatures.size,
    workerCpuMs: threadCpuMs() - cpuBefore,
  };
  parentPort?.postMessage(outcome);
}

function runCannon(job: Omit<CannonJob, "kind">): Promise<CannonOutcome> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { ...job, kind: WORKER_KIND } });
  const stop = () => void worker.terminate();
  exitCleanups.add(stop);
  return withTimeout(
    new Promise<CannonOutcome>((resolvePromise, reject) => {
      worker.once("message", (outcome: CannonOutcome) => resolvePromise(outcome));
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the load worker exited (${code}) without a result`)));
    }),
    (job.seconds + 60) * 1000,
    "the load run",
  ).finally(() => {
    exitCleanups.delete(stop);
    void worker.terminate();
  });
}

interface ExchangeResult {
  sequential: { requests: number; p50Ms: number; p99Ms: number; meanMs: number };
  load: CannonOutcome & {
    connections: number;
    seconds: number;
    requestsPerSecond: number;
    /** CPU in % of one core: the service = this process minus the load worker (its main thread, where
     * the HTTP and SQLite work runs, and libuv's pool, where WebCrypto signs and verifies the JWTs). */
    cpuPct: {
      service: number;
      serviceMainThread: number;
      loadWorker: number;
      /** The idle browser, still running. */
      chromium: number;
      /** Other processes. */
      other: number;
      /** irq + softirq of the machine: the loopback traffic, mostly. */
      interrupts: number;
      steal: number;
    };
    eventLoopUtilization: number;
  };
  tokenLifetimeS: number;
}

async function exchangeBenchmark(
  bench: Bench,
  setup: ClientSetup,
  store: TestStore,
  settings: Settings,
): Promise<ExchangeResult> {
  const secret = await storedSecret(store, "mcp-token-exchange");
  const subject = await authorize(setup, { username: USER, password: USERS[USER].password });
  const subjectClaims = decodeJwt(subject.accessToken).payload;
  const audience = subjectClaims.aud;
  if (!Array.isArray(audience) || !audience.includes(EXCHANGE_CLIENT_ID)) {
    throw new Error(`the MCP token's audience ${JSON.stringify(audience)} lacks ${EXCHANGE_CLIENT_ID}`);
  }
  const tokenEndpoint = (await discover(bench.idp.issuer)).token_endpoint as string;
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, "+");
  const headers = {
    "content-type": "application/x-www-form-urlencoded",
    authorization: `Basic ${Buffer.from(`${enc(EXCHANGE_CLIENT_ID)}:${enc(secret)}`).toString("base64")}`,
  };
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    subject_token: subject.accessToken,
    subject_token_type: ACCESS_TOKEN_TYPE,
    requested_token_type: ACCESS_TOKEN_TYPE,
    audience: PLATFORM_AUDIENCE,
  }).toString();

  const exchangeOnce = async (): Promise<Record<string, unknown>> => {
    const response = await fetch(tokenEndpoint, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    if (response.status !== 200 || typeof answer.access_token !== "string") {
      throw new Error(`token exchange answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    }
    return answer;
  };
  const checkExchanged = (answer: Record<string, unknown>) => {
    const { header, payload } = decodeJwt(String(answer.access_token));
    if (
      header.typ !== "at+jwt" ||
      payload.aud !== PLATFORM_AUDIENCE ||
      payload.sub !== subjectClaims.sub ||
      JSON.stringify(payload.roles) !== JSON.stringify(["admin"])
    ) {
      throw new Error(`unexpected exchanged token: ${JSON.stringify({ header, payload })}`);
    }
    return payload;
  };

  // Real answers, each a new token (no cache in the grant: see token-exchange-grant.ts).
  const first = checkExchanged(await exchangeOnce());
  const second = checkExchanged(await exchangeOnce());
  if (first.jti === second.jti) throw new Error("two exchanges returned the same token: cached?");
  log(`token endpoint ${tokenEndpoint}: exchanges answer 200 with a new platform token each time`);

  // Unloaded latency.
  const latencies: number[] = [];
  for (let i = 0; i < settings.exchangeSequential; i++) {
    const start = performance.now();
    await exchangeOnce();
    latencies.push(performance.now() - start);
  }
  const sequential = {
    requests: latencies.length,
    p50Ms: round(percentile(latencies, 0.5), 2),
    p99Ms: round(percentile(latencies, 0.99), 2),
    meanMs: round(latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length), 2),
  };
  log(`sequential: ${sequential.requests} exchanges, p50 ${sequential.p50Ms} ms, p99 ${sequential.p99Ms} ms`);

  // Under load.
  const elu0 = performance.eventLoopUtilization();
  const thread0 = threadCpuMs();
  const process0 = processCpuMs();
  const machine0 = machineCpu();
  const chromium0 = descendantsCpu().cpuMs;
  const start = performance.now();
  const outcome = await runCannon({
    url: tokenEndpoint,
    headers,
    body,
    connections: settings.exchangeConnections,
    seconds: settings.exchangeSeconds,
  });
  const wallMs = performance.now() - start;
  const processMs = processCpuMs() - process0;
  const chromiumMs = descendantsCpu().cpuMs - chromium0;
  const machine = machineDelta(machine0);
  const pct = (ms: number) => round((100 * ms) / wallMs, 0);
  const load = {
    ...outcome,
    connections: settings.exchangeConnections,
    seconds: settings.exchangeSeconds,
    requestsPerSecond: round(outcome.requestsTotal / outcome.durationS, 1),
    cpuPct: {
      service: pct(processMs - outcome.workerCpuMs),
      serviceMainThread: pct(threadCpuMs() - thread0),
      loadWorker: pct(outcome.workerCpuMs),
      chromium: pct(chromiumMs),
      other: pct(Math.max(0, machine.tasks - processMs - chromiumMs)),
      interrupts: pct(machine.interrupts),
      steal: pct(machine.steal),
    },
    eventLoopUtilization: round(performance.eventLoopUtilization(elu0).utilization, 2),
  };
  log(
    `load: ${load.requestsPerSecond} req/s, p50 ${load.latency.p50} ms, p99 ${load.latency.p99} ms, ` +
      `non-2xx ${load.non2xx}, errors ${load.errors}, timeouts ${load.timeouts}, ` +
      `bodies checked ${load.verified} (rejected ${load.rejected}), distinct tokens ${load.distinctTokens}`,
  );
  // Still right after the load.
  checkExchanged(await exchangeOnce());
  const failures = load.non2xx + load.errors + load.timeouts + load.mismatches + load.rejected;
  if (failures > 0 || load.requestsTotal === 0) {
    throw new Error(
      `token exchange under load: ${failures} failures (non-2xx ${load.non2xx}, errors ${load.errors}, ` +
        `timeouts ${load.timeouts}, bad bodies ${load.rejected}${load.firstRejected ? `: ${load.firstRejected}` : ""})`,
    );
  }
  if (load.distinctTokens !== load.verified) {
    throw new Error(`${load.verified} tokens received but only ${load.distinctTokens} distinct: cached?`);
  }
  return { sequential, load, tokenLifetimeS: Number(first.exp) - Number(first.iat) };
}

// ---------------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------------

interface Settings {
  runs: number;
  warmup: number;
  exchangeSeconds: number;
  exchangeConnections: number;
  exchangeSequential: number;
}

interface Machine {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  chromium: string;
  playwright: string;
  sdk: string;
  loadAverage: number[];
}

interface RouteSummary {
  route: string;
  from: ServedRequest["from"];
  perRun: number;
  medianMs: number;
}

interface Report {
  date: string;
  settings: Settings;
  machine: Machine;
  runs: JourneyResult[];
  warmupWallMs: number[];
  signIn: {
    wallMs: Stats;
    processCpuMs: Stats;
    chromiumCpuMs: Stats;
    totalCpuMs: Stats;
    otherCpuMs: Stats;
    interruptsMs: Stats;
    stealMs: Stats;
    phasesMs: Record<string, Stats>;
    gateway: {
      /** Per origin: requests per sign-in and the server wall time spent on them. */
      byOrigin: Record<ServedRequest["from"], { requests: Stats; ms: Stats }>;
      routes: RouteSummary[];
    };
    documentFetches: Stats;
    chromiumProcesses: { count: number; names: string[] };
  };
  browserless: { wallMs: Stats; processCpuMs: Stats };
  exchange: ExchangeResult;
  totalSeconds: number;
}

function describeMachine(browser: Browser): Machine {
  let cpuModel = os.cpus()[0]?.model ?? "unknown";
  try {
    cpuModel = /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? cpuModel;
  } catch {
    // not Linux
  }
  const versionOf = (pkg: string) => {
    try {
      return (
        JSON.parse(readFileSync(join(ROOT, "node_modules", pkg, "package.json"), "utf8")) as {
          version: string;
        }
      ).version;
    } catch {
      return "unknown";
    }
  };
  return {
    nproc: os.availableParallelism(),
    cpuModel,
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    chromium: browser.version(),
    playwright: versionOf("playwright-core"),
    sdk: versionOf("@modelcontextprotocol/client"),
    loadAverage: os.loadavg().map((l) => round(l, 2)),
  };
}

function summarizeRoutes(runs: JourneyResult[]): RouteSummary[] {
  const byRoute = new Map<string, { from: ServedRequest["from"]; route: string; ms: number[] }>();
  for (const run of runs) {
    for (const request of run.served) {
      const key = `${request.from} ${request.route}`;
      const entry = byRoute.get(key) ?? { from: request.from, route: request.route, ms: [] };
      entry.ms.push(request.ms);
      byRoute.set(key, entry);
    }
  }
  return [...byRoute.values()]
    .map((e) => ({
      route: e.route,
      from: e.from,
      perRun: round(e.ms.length / runs.length, 1),
      medianMs: stats(e.ms, 1).median,
    }))
    .sort((a, b) => b.medianMs * b.perRun - a.medianMs * a.perRun);
}

const fmt = (n: number) => (Number.isFinite(n) ? String(n) : "–");
const statsRow = (label: string, s: Stats) =>
  `| ${label} | ${fmt(s.median)} | ${fmt(s.p90)} | ${fmt(s.min)} | ${fmt(s.max)} |`;

function renderResults(report: Report): string {
  const m = report.machine;
  const s = report.signIn;
  const x = report.exchange;
  const runs = report.runs.length;
  const lines = [
    `Run of ${report.date}, whole run ${report.totalSeconds} s.`,
    "",
    "#### Machine",
    "",
    `- CPU: ${m.nproc} × ${m.cpuModel} (\`nproc\` = ${m.nproc})`,
    `- Memory: ${m.memoryGiB} GiB`,
    `- OS: ${m.os}; Node.js ${m.node}`,
    `- Chromium ${m.chromium} (${CHROMIUM}, headless) driven by playwright-core ${m.playwright}; MCP SDK client ${m.sdk}`,
    `- Load average before the run: ${m.loadAverage.join(" / ")}`,
    "",
    `#### Full sign-in (${runs} runs after ${report.settings.warmup} warm-up)`,
    "",
    "First request of the MCP SDK client to the first tool result, the sign-in and consent done in headless " +
      "Chromium with a fresh browser context per run (ms). p90 by nearest rank (with 10 runs: the 9th value).",
    "",
    "| measure (ms) | median | p90 | min | max |",
    "| --- | ---: | ---: | ---: | ---: |",
    statsRow("**wall time**, first request → first tool result", s.wallMs),
    statsRow("CPU of the bench process (service + SDK client + Playwright driver)", s.processCpuMs),
    statsRow(`CPU of Chromium (${s.chromiumProcesses.count} processes, /proc/<pid>/stat)`, s.chromiumCpuMs),
    statsRow("CPU, both", s.totalCpuMs),
    statsRow("CPU of the machine's other processes (/proc/stat minus the above; should be ~0)", s.otherCpuMs),
    statsRow("interrupts + softirq of the machine (loopback networking, mostly)", s.interruptsMs),
    statsRow("stolen by the hypervisor", s.stealMs),
    "",
    "Phases (wall time, ms):",
    "",
    "| phase | median | p90 | min | max |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...PHASES.map((phase) => statsRow(phase.label, s.phasesMs[phase.key] as Stats)),
    "",
    "Time the gateway's port (identity provider included) spent answering, per sign-in: wall time from " +
      "request to response finished, by who asked (the gateway's upstream calls to the MCP servers are inside " +
      "the client's requests).",
    "",
    "| requests from | requests (median) | server wall time ms: median | p90 | min | max |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...(Object.keys(ORIGINS) as ServedRequest["from"][]).map((origin) => {
      const { requests, ms } = s.gateway.byOrigin[origin];
      return `| ${ORIGINS[origin]} | ${fmt(requests.median)} | ${fmt(ms.median)} | ${fmt(ms.p90)} | ${fmt(ms.min)} | ${fmt(ms.max)} |`;
    }),
    "",
    "Costliest requests (median server time × requests per sign-in):",
    "",
    "| from | request | per sign-in | median ms |",
    "| --- | --- | ---: | ---: |",
    ...s.gateway.routes
      .slice(0, 8)
      .map((r) => `| ${r.from} | \`${r.route}\` | ${fmt(r.perRun)} | ${fmt(r.medianMs)} |`),
    "",
    `Client ID metadata document fetched by the provider per sign-in: ${fmt(s.documentFetches.median)} ` +
      `(min ${fmt(s.documentFetches.min)}, max ${fmt(s.documentFetches.max)}). Warm-up run(s): ` +
      `${report.warmupWallMs.map((w) => `${round(w, 0)} ms`).join(", ")} wall.`,
    "",
    "Per run:",
    "",
    "| run | wall ms | bench process CPU ms | Chromium CPU ms | other processes CPU ms | gateway requests (browser + client + gateway) |",
    "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ...report.runs.map(
      (r, i) =>
        `| ${i + 1} | ${round(r.wallMs, 0)} | ${round(r.processCpuMs, 0)} | ${round(r.chromiumCpuMs, 0)} | ` +
        `${round(r.otherCpuMs, 0)} | ` +
        (Object.keys(ORIGINS) as ServedRequest["from"][])
          .map((origin) => r.served.filter((q) => q.from === origin).length)
          .join(" + ") +
        " |",
    ),
    "",
    `Browserless reference (${runs} runs): the same provider flow with fetch (\`authorize\` helper: ` +
      "authorization request, sign-in form, consent form, code exchange), then the SDK client's connection " +
      "with the token and the first tool call; no Chromium, no SDK discovery.",
    "",
    "| measure (ms) | median | p90 | min | max |",
    "| --- | ---: | ---: | ---: | ---: |",
    statsRow("wall time", report.browserless.wallMs),
    statsRow("CPU of the bench process", report.browserless.processCpuMs),
    "",
    "#### Token exchange grant",
    "",
    `\`POST ${"{issuer}"}/token\`, \`grant_type=urn:ietf:params:oauth:grant-type:token-exchange\` as ` +
      "`mcp-token-exchange` (client_secret_basic), the same MCP access token of alice as `subject_token`, " +
      `\`audience=imaging-api\`. Every response checked: 200, a Bearer access token (platform tokens live ` +
      `${x.tokenLifetimeS} s here, bounded by the subject token's expiry).`,
    "",
    "| load | requests/s | latency p50 / p90 / p99 / max ms | requests | 200 with a token | distinct tokens | " +
      "non-2xx | errors | timeouts | service CPU (main thread) | event loop busy |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    `| autocannon, ${x.load.connections} connections, ${x.load.seconds} s | **${x.load.requestsPerSecond}** | ` +
      `${x.load.latency.p50} / ${x.load.latency.p90} / ${x.load.latency.p99} / ${x.load.latency.max} | ` +
      `${x.load.requestsTotal} | ${x.load.verified} | ${x.load.distinctTokens} | ${x.load.non2xx} | ${x.load.errors} | ` +
      `${x.load.timeouts} | ${x.load.cpuPct.service} % (${x.load.cpuPct.serviceMainThread} %) | ` +
      `${Math.round(x.load.eventLoopUtilization * 100)} % |`,
    "",
    `Unloaded, one exchange at a time (${x.sequential.requests} requests, keep-alive fetch): p50 ` +
      `${x.sequential.p50Ms} ms, p99 ${x.sequential.p99Ms} ms, mean ${x.sequential.meanMs} ms. ` +
      `CPU during the load, in % of one core: the service ${x.load.cpuPct.service} % (this process minus the ` +
      `load worker: its main thread ${x.load.cpuPct.serviceMainThread} %, the rest in libuv's pool, where ` +
      `WebCrypto verifies and signs the JWTs), autocannon's worker thread ${x.load.cpuPct.loadWorker} %, the idle ` +
      `Chromium ${x.load.cpuPct.chromium} %, the machine's interrupts and softirqs (the loopback traffic) ` +
      `${x.load.cpuPct.interrupts} %, other processes ${x.load.cpuPct.other} %, stolen by the hypervisor ` +
      `${x.load.cpuPct.steal} %. ` +
      `Status codes: ${JSON.stringify(x.load.statusCodes)}.`,
  ];
  const disturbed = [
    ...((s.otherCpuMs.median + s.stealMs.median) / s.wallMs.median > DISTURBED_SHARE
      ? [`the sign-in runs (median ${fmt(s.otherCpuMs.median + s.stealMs.median)} ms per run)`]
      : []),
    ...(x.load.cpuPct.other + x.load.cpuPct.steal > DISTURBED_SHARE * 100
      ? [`the token exchange load (${x.load.cpuPct.other + x.load.cpuPct.steal} % of a core)`]
      : []),
  ];
  if (disturbed.length > 0) {
    lines.push(
      "",
      `**Disturbed:** other processes (or the hypervisor) took more than ${DISTURBED_SHARE * 100} % of a core during ` +
        `${disturbed.join(" and ")}; the figures of this run are not reliable.`,
    );
  }
  return lines.join("\n");
}

function writeDocs(results: string): void {
  const block = `${MARK_START}\n${results}\n${MARK_END}`;
  const current = readFileSync(DOCS_FILE, "utf8");
  const start = current.indexOf(MARK_START);
  const end = current.indexOf(MARK_END);
  let next: string;
  if (start >= 0 && end > start) {
    next = current.slice(0, start) + block + current.slice(end + MARK_END.length);
  } else {
    // No section yet: appended at the end, nothing else touched.
    next = `${current.replace(/\s*$/, "\n")}\n${SECTION_TITLE}\n\n### Results\n\n${block}\n`;
  }
  writeFileSync(DOCS_FILE, next);
}

// ---------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------

async function main(settings: Settings, fullRun: boolean): Promise<void> {
  const started = performance.now();
  let store: TestStore | undefined;
  let documents: CimdDocumentServer | undefined;
  let callback: CallbackServer | undefined;
  let idp: IdpService | undefined;
  let browser: Browser | undefined;
  try {
    documents = await startCimdDocumentServer();
    callback = await startCallbackServer();
    store = await createTestStore("sqlite");
    const dataDir = store.dataDir;
    exitCleanups.add(() => rmSync(dataDir, { recursive: true, force: true }));
    // The operator's setting, as a deployment with an internal PKI would use it.
    const caFile = join(store.dataDir, "test-ca.pem");
    writeFileSync(caFile, documents.ca);
    const clientId = documents.clientId;
    idp = await startIdpService(store, {
      overrides: { idpExtraCaFile: caFile },
      seed: async (handle) => {
        await loadDemo(handle.db);
        await seedUsers(handle.db);
        await seedCimdClient(handle.db, "test-ai-client", clientId);
      },
    });
    gatewayPort = Number(new URL(idp.base).port);
    watchGateway();
    log(`service at ${idp.base} (data in ${store.dataDir}); launching ${CHROMIUM}`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, timeout: 30_000 });
    const machine = describeMachine(browser);
    log(
      `${machine.nproc} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, ` +
        `Chromium ${machine.chromium}`,
    );
    const bench: Bench = { idp, documents, callback, browser };

    // 1. Full sign-in.
    const warmupWallMs: number[] = [];
    for (let i = 0; i < settings.warmup; i++) {
      const result = await journey(bench);
      warmupWallMs.push(result.wallMs);
      log(`warm-up ${i + 1}: ${round(result.wallMs, 0)} ms`);
    }
    const runs: JourneyResult[] = [];
    for (let i = 0; i < settings.runs; i++) {
      const result = await journey(bench);
      runs.push(result);
      log(
        `sign-in ${String(i + 1).padStart(2)}: wall ${round(result.wallMs, 0)} ms, bench process CPU ` +
          `${round(result.processCpuMs, 0)} ms, Chromium CPU ${round(result.chromiumCpuMs, 0)} ms, ` +
          `${result.served.length} gateway requests`,
      );
    }
    const chromiumNow = descendantsCpu();

    // 2. Browserless reference.
    const setup: ClientSetup = {
      issuer: idp.issuer,
      clientId: documents.clientId,
      redirectUri: "http://127.0.0.1:49152/callback",
      resource: idp.mcp,
    };
    await browserless(bench, setup); // warm-up
    const reference: { wallMs: number; processCpuMs: number }[] = [];
    for (let i = 0; i < settings.runs; i++) reference.push(await browserless(bench, setup));
    log(`browserless: median ${stats(reference.map((r) => r.wallMs)).median} ms wall`);

    // 3. Token exchange.
    const exchange = await exchangeBenchmark(bench, setup, store, settings);

    const pick = (f: (r: JourneyResult) => number) => stats(runs.map(f));
    const report: Report = {
      date: `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
      settings,
      machine,
      runs: runs.map((r) => ({ ...r, served: r.served.map((q) => ({ ...q, ms: round(q.ms, 2) })) })),
      warmupWallMs,
      signIn: {
        wallMs: pick((r) => r.wallMs),
        processCpuMs: pick((r) => r.processCpuMs),
        chromiumCpuMs: pick((r) => r.chromiumCpuMs),
        totalCpuMs: pick((r) => r.processCpuMs + r.chromiumCpuMs),
        otherCpuMs: pick((r) => r.otherCpuMs),
        interruptsMs: pick((r) => r.interruptsMs),
        stealMs: pick((r) => r.stealMs),
        phasesMs: Object.fromEntries(
          PHASES.map((p) => [p.key, pick((r) => r.phasesMs[p.key] ?? Number.NaN)]),
        ),
        gateway: {
          byOrigin: Object.fromEntries(
            (Object.keys(ORIGINS) as ServedRequest["from"][]).map((origin) => {
              const of = (r: JourneyResult) => r.served.filter((q) => q.from === origin);
              return [
                origin,
                {
                  requests: pick((r) => of(r).length),
                  ms: pick((r) => of(r).reduce((sum, q) => sum + q.ms, 0)),
                },
              ];
            }),
          ) as Report["signIn"]["gateway"]["byOrigin"],
          routes: summarizeRoutes(runs),
        },
        documentFetches: pick((r) => r.documentFetches),
        chromiumProcesses: { count: chromiumNow.processes, names: chromiumNow.names },
      },
      browserless: {
        wallMs: stats(reference.map((r) => r.wallMs)),
        processCpuMs: stats(reference.map((r) => r.processCpuMs)),
      },
      exchange,
      totalSeconds: 0,
    };
    report.totalSeconds = round((performance.now() - started) / 1000, 1);
    const results = renderResults(report);
    mkdirSync(join(ROOT, ".bench-data"), { recursive: true });
    writeFileSync(REPORT_FILE, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`\n${results}\n`);
    if (fullRun || process.env.BENCH_WRITE_DOCS === "1") {
      writeDocs(results);
      log(`results written to ${DOCS_FILE}`);
    } else {
      log(`not the default settings: ${DOCS_FILE} left as is (BENCH_WRITE_DOCS=1 to write anyway)`);
    }
  } finally {
    served = undefined;
    await browser?.close().catch((error: unknown) => log(`browser not closed: ${String(error)}`));
    await idp?.stop().catch((error: unknown) => log(`service not stopped: ${String(error)}`));
    await callback?.close();
    await documents?.close();
    await store?.drop();
  }
}

if (!isMainThread && (workerData as { kind?: string } | null)?.kind === WORKER_KIND) {
  await runCannonWorker(workerData as CannonJob);
} else if (isMainThread) {
  const settings: Settings = {
    runs: knob("BENCH_SIGNIN_RUNS", DEFAULTS.runs, 1),
    warmup: knob("BENCH_SIGNIN_WARMUP", DEFAULTS.warmup),
    exchangeSeconds: knob("BENCH_EXCHANGE_SECONDS", DEFAULTS.exchangeSeconds, 1),
    exchangeConnections: knob("BENCH_EXCHANGE_CONNECTIONS", DEFAULTS.exchangeConnections, 1),
    exchangeSequential: knob("BENCH_EXCHANGE_SEQUENTIAL", DEFAULTS.exchangeSequential),
  };
  const fullRun = Object.entries(DEFAULTS).every(([k, v]) => settings[k as keyof Settings] === v);
  // Everything is bounded: a run that hangs is stopped (Playwright kills its browser when this process
  // exits; the exit hook removes the data directory).
  const budgetS = 120 + 2 * (settings.runs + settings.warmup) * 30 + settings.exchangeSeconds + 120;
  const watchdog = setTimeout(() => {
    log(`the run exceeded ${budgetS} s: stopping`);
    process.exit(1);
  }, budgetS * 1000);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping`);
      process.exit(130);
    });
  }
  try {
    await main(settings, fullRun);
  } catch (error) {
    log(`failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
  }
}
