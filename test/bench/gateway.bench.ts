/**
 * Benchmark of the gateway's MCP path (npm run bench:gateway): the same stateless 2026-07-28
 * `tools/call` sent straight to the analysis MCP server (with a platform token exchanged exactly as the
 * gateway exchanges it) and through the gateway (with the client's MCP token), side by side in one run.
 *
 * Process layout, so that the gateway's memory and CPU are its own:
 * - this process: the stand-in identity provider (test/support/test-issuer.ts) on its main thread,
 *   autocannon in a worker thread;
 * - child 1, the real CLI: `imaging start --demo`, every part in one process (the default deployment): its
 *   gateway hands `/mcp` to its MCP server in-process (src/gateway/mcp-direct.ts), the "one process" path;
 *   its MCP server's own port is the direct path (with BENCH_GATEWAY_IDP=embedded: `--only rest --only
 *   mcp-analysis --only mcp-gatekeeper`, and no one-process path);
 * - child 2, the real CLI: `imaging start --only gateway`, its upstreams taken from child 1's summary: the
 *   gateway of a split deployment, with its HTTP hop ("gateway").
 *
 * - nginx (the Debian package; test/bench/nginx-proxy.ts), its own generated configuration on a free
 *   loopback port, in front of the same MCP server: the reference proxy path (platform token, no checks).
 * - the bare Node.js proxy (test/bench/node-floor-proxy.ts: node:http + the gateway's forwarding code, no
 *   framework, no check), in front of the same MCP server: the floor of a Node.js hop.
 *
 * 1. Checks the answers: every path must return the demo applications, byte for byte the same body
 *    (which every response under load is then compared with).
 * 2. Unloaded latency: one client, sequential requests, BENCH_GATEWAY_SEQUENTIAL_BLOCKS alternating blocks of
 *    every path; what a proxy adds is taken block by block against the direct path in the same block and
 *    reported as the median of the blocks with their range, with the machine's other CPU per block.
 * 3. Side by side: BENCH_GATEWAY_CONNECTIONS connections for BENCH_GATEWAY_SECONDS per run, alternated
 *    direct, gateway, nginx, nginx, gateway, direct... (BENCH_GATEWAY_ROUNDS rounds) to cancel drift; the
 *    CPU of each proxy per request it served; the ratio to nginx's per round, its median and range.
 * 4. Soak: BENCH_GATEWAY_SOAK_CONNECTIONS connections for BENCH_GATEWAY_SOAK_SECONDS through the gateway
 *    (then the same through the baseline gateway, when there is one); every non-2xx, error, timeout or
 *    unexpected body counts; the gateway child's VmRSS is sampled every second (and its VmHWM read at the
 *    end); where answers waited: the accept queues of the gateway's and the MCP server's ports, and per
 *    client connection (test/bench/soak-trace-client.cjs).
 * 5. Stops the children with SIGTERM right after the soak and times their exit (graceful stop).
 * 6. Prints the report, writes .bench-data/gateway-last-run.json (or BENCH_GATEWAY_REPORT) and the results block of the "Gateway"
 *    section of docs/benchmarks.md (only with the default settings, or with BENCH_WRITE_DOCS=1).
 *
 * Knobs: BENCH_GATEWAY_SECONDS (15; this and the soak's may be fractions), BENCH_GATEWAY_ROUNDS (3),
 * BENCH_GATEWAY_CONNECTIONS (20),
 * BENCH_GATEWAY_WARMUP_SECONDS (3), BENCH_GATEWAY_SOAK_SECONDS (60), BENCH_GATEWAY_SOAK_CONNECTIONS (200),
 * BENCH_GATEWAY_SEQUENTIAL (3000 requests per path; 0 skips), BENCH_GATEWAY_SEQUENTIAL_BLOCKS (12), BENCH_GATEWAY_IDP=embedded (the real embedded
 * identity provider in the gateway child, see EMBEDDED_IDP), BENCH_GATEWAY_STORE_READ_WORKERS (the gateway
 * child's STORE_READ_WORKERS, embedded mode), BENCH_GATEWAY_CPU_PROF=<dir> (children run
 * with --cpu-prof, profiles written there at exit), BENCH_GATEWAY_NODE_ARGS (extra Node.js flags for the
 * gateway child, for what-if runs), BENCH_GATEWAY_BASELINE=<another checkout, with node_modules> (its
 * gateway as another path, and its whole service in one process as the path "baselineOne", for before/after
 * ratios of both hops in one run), BENCH_GATEWAY_REPORT=<file>,
 * BENCH_GATEWAY_SOAK_TRACE=<dir> (every soak answer's time, latency and connection, as float64 triples),
 * BENCH_GATEWAY_RATE=<requests/s> (side-by-side runs at a fixed rate, see RATE),
 * BENCH_GATEWAY_QUEUE_TRACE=<dir> (the gateway alone times each request's wait for a connection of its
 * upstream pool and the upstream's answer, test/bench/upstream-queue-trace.ts),
 * BENCH_WRITE_DOCS=1. The children also get the Node.js flags of the
 * CLI's shebang line, as the installed `imaging` command does.
 * A quick try: BENCH_GATEWAY_SECONDS=3 BENCH_GATEWAY_ROUNDS=1 BENCH_GATEWAY_SOAK_SECONDS=5 npm run bench:gateway
 */

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { createServer } from "node:net";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BroadcastChannel } from "node:worker_threads";
import autocannon from "autocannon";
import { issuerMetadata } from "../../src/auth/issuer-metadata.ts";
import { createTokenExchanger, type TokenExchanger } from "../../src/auth/token-exchange.ts";
import { PLATFORM_AUDIENCE } from "../../src/contracts/platform.ts";
import { createUser } from "../../src/domain/users.ts";
import { openStore } from "../../src/store/database.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { seedCimdClient } from "../support/idp-service.ts";
import { authorize, decodeJwt } from "../support/oauth-flow.ts";
import { storedSecret } from "../support/stored-secrets.ts";
import { EXCHANGE_CLIENT_ID, startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";
import {
  acceptQueue,
  cannonDuration,
  cleanEnv,
  exitedWithin,
  knob,
  listenDrops,
  machineBusySeconds,
  round,
  secondsKnob,
  sleep,
  threadCpuSeconds,
  writeResultsSection,
} from "./bench-kit.ts";
import { findNginx, NGINX_MISSING, type RunningNginx, startNginx } from "./nginx-proxy.ts";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const CLI = join(ROOT, "src", "cli", "main.ts");
const DOCS_FILE = join(ROOT, "docs", "benchmarks.md");
const REPORT_FILE = process.env.BENCH_GATEWAY_REPORT
  ? resolve(process.env.BENCH_GATEWAY_REPORT)
  : join(ROOT, ".bench-data", "gateway-last-run.json");

const DEFAULTS = {
  seconds: 15,
  rounds: 3,
  connections: 20,
  warmupSeconds: 3,
  soakSeconds: 60,
  soakConnections: 200,
  sequential: 3000,
  sequentialBlocks: 12,
};
const SETTINGS = {
  seconds: secondsKnob("BENCH_GATEWAY_SECONDS", DEFAULTS.seconds),
  rounds: knob("BENCH_GATEWAY_ROUNDS", DEFAULTS.rounds, 1),
  connections: knob("BENCH_GATEWAY_CONNECTIONS", DEFAULTS.connections, 1),
  warmupSeconds: knob("BENCH_GATEWAY_WARMUP_SECONDS", DEFAULTS.warmupSeconds),
  soakSeconds: secondsKnob("BENCH_GATEWAY_SOAK_SECONDS", DEFAULTS.soakSeconds),
  soakConnections: knob("BENCH_GATEWAY_SOAK_CONNECTIONS", DEFAULTS.soakConnections, 1),
  sequential: knob("BENCH_GATEWAY_SEQUENTIAL", DEFAULTS.sequential),
  sequentialBlocks: knob("BENCH_GATEWAY_SEQUENTIAL_BLOCKS", DEFAULTS.sequentialBlocks, 1),
};
const SEQUENTIAL_BLOCKS = SETTINGS.sequentialBlocks;
/**
 * BENCH_GATEWAY_IDP=embedded: the gateway child runs the real embedded identity provider (no IDP_ISSUER):
 * the MCP token comes from a real sign-in (authorization code + PKCE, a CIMD client) and the gateway
 * exchanges it in-process, as an installation with the default identity provider does. Default
 * `stand-in`: test/support/test-issuer.ts in this process.
 */
const EMBEDDED_IDP = process.env.BENCH_GATEWAY_IDP === "embedded";
const CPU_PROF_DIR = process.env.BENCH_GATEWAY_CPU_PROF ? resolve(process.env.BENCH_GATEWAY_CPU_PROF) : "";
/**
 * Another checkout of this repository (with its node_modules), e.g. the main branch: its gateway runs as
 * a fourth path ("baseline"), side by side with this one in the same run, for before/after ratios.
 */
const BASELINE_ROOT = process.env.BENCH_GATEWAY_BASELINE ? resolve(process.env.BENCH_GATEWAY_BASELINE) : "";
/**
 * BENCH_GATEWAY_RATE=<requests/s>: the side-by-side runs send this many requests per second over all
 * connections (autocannon's overallRate) instead of as many as the paths answer, so that every path does
 * the same work per event-loop turn and CPU per request compares across paths (0: unbounded, the default).
 */
const RATE = knob("BENCH_GATEWAY_RATE", 0);
/** Extra Node.js flags for the gateway child only, for what-if runs (e.g. --max-semi-space-size=16). */
const GATEWAY_NODE_ARGS = (process.env.BENCH_GATEWAY_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);
/** Where the gateway alone writes the times of its HTTP hop's requests (test/bench/upstream-queue-trace.ts). */
const QUEUE_TRACE = process.env.BENCH_GATEWAY_QUEUE_TRACE ?? "";
const FULL_RUN =
  Object.entries(DEFAULTS).every(([k, v]) => SETTINGS[k as keyof typeof SETTINGS] === v) &&
  GATEWAY_NODE_ARGS.length === 0 &&
  !QUEUE_TRACE &&
  RATE === 0 &&
  !EMBEDDED_IDP &&
  !CPU_PROF_DIR &&
  !BASELINE_ROOT;

/**
 * The Node.js flags the installed `imaging` command starts with: those of the CLI's shebang line
 * (`#!/usr/bin/env -S node <flags>`, honoured by env on Unix and by npm's command shims on Windows).
 * The children are started with them, so that the benchmark measures the service as it is launched.
 */
function shebangNodeArgs(): string[] {
  const first = readFileSync(CLI, "utf8").split("\n", 1)[0] ?? "";
  const match = /^#!\s*(?:\/usr\/bin\/env\s+(?:-S\s+)?)?\S*node\b(.*)$/.exec(first);
  return (match?.[1] ?? "").split(/\s+/).filter(Boolean);
}
const CLI_NODE_ARGS = shebangNodeArgs();

const TARGETS = {
  p50Ratio: 1.3,
  throughputRatio: 0.75,
  rssMB: 250,
  /** The gateway's CPU per proxied request, as a multiple of nginx's, under the same load (issue 18). */
  cpuVsNginx: 2.5,
  /** What the gateway adds to the unloaded median, ms (issue 18). */
  addedP50Ms: 0.15,
  /** Seconds from SIGTERM to exit, right after the soak (issue 18; the SHUTDOWN_TIMEOUT default). */
  stopSeconds: 5,
};
/** % of one core used by other processes during a run above which the run is flagged as disturbed. */
const DISTURBED_CPU = 15;
/** autocannon's per-request timeout (s): a slower answer counts as a timeout. */
const REQUEST_TIMEOUT_S = 10;
const MODERN = "2026-07-28";
const SUBJECT = "bench-admin";
const EMBEDDED_PASSWORD = "bench-admin-password-1234";

const log = (message: string) => process.stderr.write(`[bench:gateway] ${message}\n`);

// ---------------------------------------------------------------------------------------------------
// The request
// ---------------------------------------------------------------------------------------------------

/** A stateless 2026-07-28 tools/call: the `_meta` envelope in the body, the era's headers. */
const BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: {
    name: "applications",
    arguments: { limit: 5 },
    _meta: {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientInfo": { name: "gateway-bench", version: "1.0.0" },
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
});

const mcpHeaders = (token: string): Record<string, string> => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": MODERN,
  "mcp-method": "tools/call",
  "mcp-name": "applications",
  authorization: `Bearer ${token}`,
});

interface Target {
  key: "direct" | "one" | "gateway" | "nginx" | "floor" | "baseline" | "baselineOne";
  title: string;
  url: string;
  /** Headers for the next run (the direct token is refreshed when it would expire during a run). */
  headers(runSeconds: number): Promise<Record<string, string>>;
}

/** The JSON-RPC message of a response, sent as JSON or as the first SSE data event carrying an id. */
function readJsonRpc(contentType: string, text: string): unknown {
  if (!contentType.includes("text/event-stream")) return JSON.parse(text);
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (!data) continue;
    const message = JSON.parse(data) as { id?: unknown };
    if (message.id !== undefined) return message;
  }
  throw new Error(`no JSON-RPC response in the event stream: ${text.slice(0, 200)}`);
}

/** One real call; fails unless the answer lists exactly the demo applications. */
async function verify(target: Target, demo: readonly string[]): Promise<string> {
  const response = await fetch(target.url, {
    method: "POST",
    headers: await target.headers(1),
    body: BODY,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (response.status !== 200) {
    throw new Error(`${target.title}: HTTP ${response.status} ${text.slice(0, 300)}`);
  }
  const message = readJsonRpc(response.headers.get("content-type") ?? "", text) as {
    id?: unknown;
    error?: unknown;
    result?: {
      isError?: boolean;
      structuredContent?: { applications?: { name: string }[] };
      content?: unknown;
    };
  };
  if (message.id !== 1 || message.error || !message.result) {
    throw new Error(`${target.title}: not a JSON-RPC result: ${text.slice(0, 300)}`);
  }
  if (message.result.isError) {
    throw new Error(`${target.title}: the tool failed: ${JSON.stringify(message.result.content)}`);
  }
  const names = (message.result.structuredContent?.applications ?? []).map((a) => a.name).sort();
  const expected = [...demo].sort();
  if (names.length === 0 || JSON.stringify(names) !== JSON.stringify(expected)) {
    throw new Error(
      `${target.title}: expected the demo applications ${expected.join(", ")}, got ${names.join(", ") || "none"}`,
    );
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------------------------------

interface StartSummary {
  baseUrl: string;
  gateway: string;
  rest: string;
  mcp: { analysis: string; gatekeeper: string };
  store: string;
  demo: string[];
}

interface Child {
  name: string;
  pid: number;
  process: ChildProcess;
  exited: Promise<void>;
  stderrTail: string[];
  /** Log lines (LOG_LEVEL=warn: warnings and errors) after start-up, by level and message. */
  logs: Map<string, number>;
}

const LEVELS: Record<number, string> = { 40: "warn", 50: "error", 60: "fatal" };

/** Counts a log line of a child; prints the first few of each kind only (a load run can cause thousands). */
function recordLog(child: Child, line: string): void {
  let kind = line.slice(0, 120);
  try {
    const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { code?: string } };
    kind = `${LEVELS[entry.level ?? 0] ?? entry.level} "${entry.msg}"${entry.err?.code ? ` (${entry.err.code})` : ""}`;
  } catch {
    // not a pino line
  }
  const seen = (child.logs.get(kind) ?? 0) + 1;
  child.logs.set(kind, seen);
  if (seen <= 2) process.stderr.write(`[${child.name}] ${line.slice(0, 2000)}\n`);
  else if (seen === 3) process.stderr.write(`[${child.name}] (further ${kind} lines are only counted)\n`);
}

const logCount = (child: Child) => [...child.logs.values()].reduce((a, b) => a + b, 0);
const logKinds = (child: Child, since: Map<string, number> = new Map()) =>
  [...child.logs]
    .map(([kind, n]) => [kind, n - (since.get(kind) ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${n} × ${kind}`)
    .join(", ");

const children = new Set<Child>();

/** Runs `imaging start --json ...` and waits for its start-up summary (a JSON block on stdout). */
function startCli(
  name: string,
  args: string[],
  env: Record<string, string>,
  root = ROOT,
): Promise<[Child, StartSummary]> {
  const nodeArgs = [
    ...CLI_NODE_ARGS,
    ...(name === "gateway" || name === "baseline" ? GATEWAY_NODE_ARGS : []),
    // BENCH_GATEWAY_QUEUE_TRACE=<dir>: the gateway alone times its HTTP hop's pool queue (upstream-queue-trace.ts).
    ...(QUEUE_TRACE && name === "gateway"
      ? ["--import", join(ROOT, "test", "bench", "upstream-queue-trace.ts")]
      : []),
    ...(CPU_PROF_DIR
      ? ["--cpu-prof", "--cpu-prof-dir", CPU_PROF_DIR, "--cpu-prof-name", `${name}.cpuprofile`]
      : []),
  ];
  const proc = spawn(
    process.execPath,
    [...nodeArgs, join(root, "src", "cli", "main.ts"), "start", "--json", ...args],
    {
      cwd: root,
      env: cleanEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const child: Child = {
    name,
    pid: proc.pid ?? 0,
    process: proc,
    stderrTail: [],
    logs: new Map(),
    exited: new Promise((r) => proc.once("exit", () => r())),
  };
  children.add(child);
  void child.exited.then(() => children.delete(child));
  proc.stderr?.setEncoding("utf8");
  proc.stderr?.on("data", (chunk: string) => {
    for (const line of chunk.split("\n").filter(Boolean)) {
      child.stderrTail.push(line);
      if (child.stderrTail.length > 20) child.stderrTail.shift();
      process.stderr.write(`[${name}] ${line}\n`);
    }
  });
  return new Promise((resolvePromise, reject) => {
    let out = "";
    let done = false;
    const fail = (message: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new Error(`${name}: ${message}\n${child.stderrTail.join("\n")}`));
    };
    const timer = setTimeout(() => fail("no start-up summary within 60 s"), 60_000);
    proc.once("error", (error) => fail(error.message));
    proc.once("exit", (code, signal) => fail(`exited (${code ?? signal}) before starting`));
    proc.stdout?.setEncoding("utf8");
    let logBuffer = "";
    const logLines = (text: string) => {
      logBuffer += text;
      const lines = logBuffer.split("\n");
      logBuffer = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) recordLog(child, line);
    };
    proc.stdout?.on("data", (chunk: string) => {
      if (done) {
        // Logs at LOG_LEVEL=warn and above, after start-up.
        logLines(chunk);
        return;
      }
      out += chunk;
      // The summary is pretty-printed: a line "{" ... a line "}". Log lines are one-line JSON.
      const match = /^\{\n[\s\S]*?\n\}$/m.exec(out);
      if (!match) return;
      done = true;
      clearTimeout(timer);
      logLines(out.slice(0, match.index) + out.slice(match.index + match[0].length).replace(/^\n/, ""));
      try {
        resolvePromise([child, JSON.parse(match[0]) as StartSummary]);
      } catch (error) {
        reject(new Error(`${name}: unreadable summary: ${(error as Error).message}`));
      }
    });
  });
}

/**
 * SIGTERM (the service finishes in-flight requests and exits), SIGKILL after 15 s. Returns the seconds
 * from SIGTERM to exit (Infinity when it had to be killed).
 */
async function stopChild(child: Child): Promise<number> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return 0;
  const t0 = performance.now();
  child.process.kill("SIGTERM");
  const killed = !(await exitedWithin(child.exited, 15_000));
  if (killed) {
    log(`${child.name} did not stop within 15 s: SIGKILL`);
    child.process.kill("SIGKILL");
    await child.exited;
    return Number.POSITIVE_INFINITY;
  }
  return round((performance.now() - t0) / 1000, 2);
}

function killAllNow(): void {
  for (const child of children) {
    try {
      child.process.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
}
/** Temporary directories to remove however the run ends. */
const scratchDirs = new Set<string>();

/** Last resort (signal, watchdog, exit): kill the children at once and remove the temporary files. */
/** Other processes to kill at once however the run ends (nginx). */
const killers = new Set<() => void>();
function abandon(): void {
  killAllNow();
  for (const kill of killers) kill();
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
  scratchDirs.clear();
}
process.once("exit", abandon);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the children`);
    abandon();
    process.exit(130);
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

// ---------------------------------------------------------------------------------------------------
// /proc sampling
// ---------------------------------------------------------------------------------------------------

/** VmRSS or VmHWM of a process, in MB (10^6 bytes). */
function memoryMB(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  if (!match?.[1]) throw new Error(`no ${field} in /proc/${pid}/status`);
  return (Number(match[1]) * 1024) / 1e6;
}

interface CpuMark {
  at: number;
  gateway: number;
  baseline: number;
  baselineOne: number;
  floor: number;
  backend: number;
  nginx: number;
  bench: number;
  machine: number;
}

interface CpuUse {
  gateway: number;
  /** The baseline gateway (BENCH_GATEWAY_BASELINE), 0 without. */
  baseline: number;
  /** The baseline's whole service in one process (BENCH_GATEWAY_BASELINE), 0 without. */
  baselineOne: number;
  /** The bare Node.js proxy (test/bench/node-floor-proxy.ts). */
  floor: number;
  backend: number;
  /** nginx's master and worker. */
  nginx: number;
  bench: number;
  /** Everything else on the machine (other processes, the kernel): should stay near 0. */
  other: number;
}

interface Pids {
  gateway: number;
  baseline: number | undefined;
  baselineOne: number | undefined;
  floor: number;
  backend: number;
  nginx: () => number[];
}

function cpuMark(pids: Pids): CpuMark {
  const own = process.cpuUsage();
  return {
    at: performance.now(),
    gateway: threadCpuSeconds(pids.gateway),
    baseline: pids.baseline ? threadCpuSeconds(pids.baseline) : 0,
    baselineOne: pids.baselineOne ? threadCpuSeconds(pids.baselineOne) : 0,
    floor: threadCpuSeconds(pids.floor),
    backend: threadCpuSeconds(pids.backend),
    nginx: pids.nginx().reduce((sum, pid) => sum + threadCpuSeconds(pid), 0),
    bench: (own.user + own.system) / 1e6,
    machine: machineBusySeconds(),
  };
}

/** CPU use between two marks, in % of one core. */
function cpuBetween(a: CpuMark, b: CpuMark): CpuUse {
  const wall = (b.at - a.at) / 1000;
  const pct = (seconds: number) => round((100 * seconds) / wall, 0);
  const gateway = b.gateway - a.gateway;
  const baseline = b.baseline - a.baseline;
  const baselineOne = b.baselineOne - a.baselineOne;
  const floor = b.floor - a.floor;
  const backend = b.backend - a.backend;
  const nginx = b.nginx - a.nginx;
  const bench = b.bench - a.bench;
  return {
    gateway: pct(gateway),
    baseline: pct(baseline),
    baselineOne: pct(baselineOne),
    floor: pct(floor),
    backend: pct(backend),
    nginx: pct(nginx),
    bench: pct(bench),
    other: Math.max(
      0,
      pct(b.machine - a.machine - gateway - baseline - baselineOne - floor - backend - nginx - bench),
    ),
  };
}

// ---------------------------------------------------------------------------------------------------
// Load
// ---------------------------------------------------------------------------------------------------

interface LoadResult {
  label: string;
  target: Target["key"];
  connections: number;
  seconds: number;
  requestsPerSecond: number;
  total: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMeanMs: number;
  latencyMaxMs: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** 2xx answers whose body differed from the verified one. */
  mismatches: number;
  /** % of one core over the run. */
  cpu: CpuUse;
  /**
   * CPU ms per completed request of the proxy on this path (gateway or nginx; 0 for direct; for the one
   * process, its whole CPU: the hop's share is what it takes beyond the direct path, see summarize).
   */
  proxyCpuMsPerRequest: number;
  /** CPU seconds of the proxy on this path over the run. */
  proxyCpuSeconds: number;
  /** CPU seconds of the REST + MCP child (child 1) over the run. */
  backendCpuSeconds: number;
  gatewayRssMaxMB: number;
  /** Warnings and errors the gateway logged during the run (and the second after it). */
  gatewayLogs: number;
  gatewayLogKinds: string;
  /** One VmRSS sample of the gateway per second (soak only). */
  rssSamplesMB?: number[];
  /** Who waited, and where (soak only). */
  queues?: SoakQueues;
}

/**
 * Where a soak's answers waited (issue 18, point 5): the accept queues of the proxy's port and of the MCP
 * server's port, sampled every 100 ms from /proc/net/tcp (connections the kernel completed that the process
 * has not accepted yet), the kernel's listen-queue counters, and what each client connection got.
 */
interface SoakQueues {
  acceptQueueMax: { proxy: number; mcp: number };
  listenOverflows: number;
  synRetransmits: number;
  /** Answers traced (autocannon's total, when the trace is complete). */
  answers: number;
  /** Answers per client connection over the soak. */
  perConnection: { min: number; median: number; max: number };
  /** When the last connection to get its first answer got it, s after the start. */
  lastFirstAnswerS: number;
  /** The worst latency of the answers of each 5-second slice of the soak, ms. */
  maxBySliceMs: number[];
}

const TRACE_CLIENT = join(ROOT, "test", "bench", "soak-trace-client.cjs");

interface Processes {
  gateway: Child;
  backend: Child;
  nginx: RunningNginx;
  floor: ChildProcess;
  baseline: Child | undefined;
  baselineOne: Child | undefined;
}

const pidsOf = (processes: Processes): Pids => ({
  gateway: processes.gateway.pid,
  baseline: processes.baseline?.pid,
  baselineOne: processes.baselineOne?.pid,
  floor: processes.floor.pid ?? 0,
  backend: processes.backend.pid,
  nginx: processes.nginx.pids,
});

type CannonResult = Awaited<ReturnType<typeof autocannon>> & { mismatches?: number };

async function load(
  target: Target,
  label: string,
  connections: number,
  seconds: number,
  expectBody: string,
  processes: Processes,
  soak?: { mcpPort: number },
): Promise<LoadResult> {
  const keepSamples = soak !== undefined;
  const pids = pidsOf(processes);
  const headers = await target.headers(seconds);
  const logsBefore = new Map(processes.gateway.logs);
  const logCountBefore = logCount(processes.gateway);
  const samples: number[] = [];
  const sample = () => samples.push(memoryMB(pids.gateway, "VmRSS"));
  sample();
  const sampler = setInterval(sample, 1000);
  // The soak's per-answer trace (soak-trace-client.cjs in autocannon's worker) and queue samples.
  const trace: Float64Array[] = [];
  const channel = soak ? new BroadcastChannel("imaging-bench-soak-trace") : undefined;
  if (channel) channel.onmessage = (event) => trace.push((event as { data: Float64Array }).data);
  const proxyPort = Number(new URL(target.url).port);
  const acceptQueueMax = { proxy: 0, mcp: 0 };
  const queueSampler = soak
    ? setInterval(() => {
        acceptQueueMax.proxy = Math.max(acceptQueueMax.proxy, acceptQueue(proxyPort));
        acceptQueueMax.mcp = Math.max(acceptQueueMax.mcp, acceptQueue(soak.mcpPort));
      }, 100)
    : undefined;
  const kernelBefore = listenDrops();
  const startedAt = Date.now();
  const before = cpuMark(pids);
  let result: CannonResult;
  try {
    // workers: 1 runs autocannon in a worker thread, off this thread (which serves the identity provider
    // and samples /proc). Options go to the worker as data, hence body and expectBody as strings.
    const options = {
      url: target.url,
      method: "POST",
      headers,
      body: BODY,
      expectBody,
      connections,
      ...cannonDuration(seconds),
      ...(RATE > 0 && !soak ? { overallRate: RATE } : {}),
      workers: 1,
      timeout: REQUEST_TIMEOUT_S,
      ...(soak ? { setupClient: TRACE_CLIENT } : {}),
    };
    result = (await autocannon(options)) as CannonResult;
  } finally {
    clearInterval(sampler);
    clearInterval(queueSampler);
  }
  const after = cpuMark(pids);
  sample();
  // Requests cut short when autocannon closes its connections are logged just after the run.
  await sleep(1000);
  channel?.close();
  // BENCH_GATEWAY_SOAK_TRACE=<dir>: the raw trace (float64 triples: epoch ms, latency ms, connection).
  if (soak && process.env.BENCH_GATEWAY_SOAK_TRACE) {
    mkdirSync(process.env.BENCH_GATEWAY_SOAK_TRACE, { recursive: true });
    writeFileSync(
      join(process.env.BENCH_GATEWAY_SOAK_TRACE, `${target.key}-${startedAt}.f64`),
      Buffer.concat(trace.map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength))),
    );
  }
  const queues = soak
    ? soakQueues(trace, connections, startedAt, seconds, acceptQueueMax, kernelBefore)
    : undefined;
  const proxyCpuSeconds =
    target.key === "gateway"
      ? after.gateway - before.gateway
      : target.key === "nginx"
        ? after.nginx - before.nginx
        : target.key === "baseline"
          ? after.baseline - before.baseline
          : target.key === "floor"
            ? after.floor - before.floor
            : target.key === "one"
              ? after.backend - before.backend
              : target.key === "baselineOne"
                ? after.baselineOne - before.baselineOne
                : 0;
  const run: LoadResult = {
    label,
    target: target.key,
    connections,
    seconds,
    requestsPerSecond: round(result.requests.total / result.duration, 1),
    total: result.requests.total,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMeanMs: round(result.latency.mean, 2),
    latencyMaxMs: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches ?? 0,
    cpu: cpuBetween(before, after),
    proxyCpuSeconds: round(proxyCpuSeconds, 3),
    backendCpuSeconds: round(after.backend - before.backend, 3),
    proxyCpuMsPerRequest:
      result.requests.total > 0 ? round((1000 * proxyCpuSeconds) / result.requests.total, 4) : 0,
    gatewayRssMaxMB: round(Math.max(...samples), 1),
    gatewayLogs: logCount(processes.gateway) - logCountBefore,
    gatewayLogKinds: logKinds(processes.gateway, logsBefore),
    ...(keepSamples ? { rssSamplesMB: samples.map((s) => round(s, 1)) } : {}),
    ...(queues ? { queues } : {}),
  };
  log(
    `${label.padEnd(28)} ${target.title.padEnd(8)} ${String(run.requestsPerSecond).padStart(8)} req/s  ` +
      `p50 ${run.latencyP50Ms} ms  p99 ${run.latencyP99Ms} ms  mean ${run.latencyMeanMs} ms  ` +
      `non-2xx ${run.non2xx} errors ${run.errors} timeouts ${run.timeouts} wrong bodies ${run.mismatches}  ` +
      `CPU gw ${run.cpu.gateway} %${processes.baseline ? ` baseline ${run.cpu.baseline} %` : ""}${processes.baselineOne ? ` base-one ${run.cpu.baselineOne} %` : ""} floor ${run.cpu.floor} % nginx ${run.cpu.nginx} % backend ${run.cpu.backend} % bench ${run.cpu.bench} % other ${run.cpu.other} %  ` +
      `${run.proxyCpuSeconds ? `proxy ${run.proxyCpuMsPerRequest} ms CPU/request  ` : ""}` +
      `gateway RSS max ${run.gatewayRssMaxMB} MB${run.gatewayLogs ? `  gateway logged ${run.gatewayLogKinds}` : ""}`,
  );
  if (queues) {
    log(
      `${label} ${target.title}: accept queue max ${queues.acceptQueueMax.proxy} (proxy) / ${queues.acceptQueueMax.mcp} (MCP), ` +
        `listen overflows ${queues.listenOverflows}, SYN retransmits ${queues.synRetransmits}; answers per connection ` +
        `min ${queues.perConnection.min} median ${queues.perConnection.median} max ${queues.perConnection.max}; ` +
        `last first answer at ${queues.lastFirstAnswerS} s; max latency per 5 s: ${queues.maxBySliceMs.join(" ")} ms`,
    );
  }
  return run;
}

function soakQueues(
  trace: Float64Array[],
  connections: number,
  startedAt: number,
  seconds: number,
  acceptQueueMax: SoakQueues["acceptQueueMax"],
  kernelBefore: ReturnType<typeof listenDrops>,
): SoakQueues {
  const answers = new Array<number>(connections).fill(0);
  const firstAnswer = new Array<number>(connections).fill(Number.POSITIVE_INFINITY);
  const maxBySlice = new Array<number>(Math.ceil(seconds / 5)).fill(0);
  for (const batch of trace) {
    for (let i = 0; i + 2 < batch.length; i += 3) {
      const at = batch[i] as number;
      const latency = batch[i + 1] as number;
      const connection = batch[i + 2] as number;
      answers[connection] = (answers[connection] ?? 0) + 1;
      firstAnswer[connection] = Math.min(firstAnswer[connection] ?? at, at);
      const slice = Math.min(maxBySlice.length - 1, Math.max(0, Math.floor((at - startedAt) / 5000)));
      maxBySlice[slice] = Math.max(maxBySlice[slice] ?? 0, latency);
    }
  }
  const sorted = [...answers].sort((a, b) => a - b);
  const kernel = listenDrops();
  return {
    acceptQueueMax,
    answers: sorted.reduce((a, b) => a + b, 0),
    listenOverflows: kernel.overflows - kernelBefore.overflows,
    synRetransmits: kernel.synRetransmits - kernelBefore.synRetransmits,
    perConnection: {
      min: sorted[0] ?? 0,
      median: sorted[Math.floor(sorted.length / 2)] ?? 0,
      max: sorted[sorted.length - 1] ?? 0,
    },
    lastFirstAnswerS: round((Math.max(...firstAnswer) - startedAt) / 1000, 2),
    maxBySliceMs: maxBySlice.map((ms) => Math.round(ms)),
  };
}

interface SequentialResult {
  target: Target["key"];
  requests: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  /** The median of each measured block, ms, in block order (see SequentialBlocks). */
  blockP50Ms: number[];
}

/**
 * The unloaded phase block by block: each block times every path in turn (A B C … then … C B A), so a
 * path's block median and the direct path's in the same block were measured within the same second or
 * two, under the same disturbance; what a proxy adds is taken per block and summarized by the median of
 * the blocks and their spread, not by one pooled median that a busy second of the shared machine moves.
 */
interface SequentialBlocks {
  count: number;
  /** CPU used by everything else on the machine during each block, % of one core. */
  otherCpu: number[];
}

/** The block sizes: `total` requests split over at most `blocks` blocks, as evenly as possible. */
function blockSizes(total: number, blocks: number): number[] {
  const count = Math.max(1, Math.min(blocks, total));
  return Array.from({ length: count }, (_, i) => Math.floor(total / count) + (i < total % count ? 1 : 0));
}

const quantile = (sorted: number[], p: number) =>
  sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
const sortedCopy = (values: number[]) => [...values].sort((a, b) => a - b);

/**
 * One client, one request at a time over a keep-alive connection, timed with the high-resolution clock,
 * in SEQUENTIAL_BLOCKS alternating blocks after a warm-up block.
 */
async function sequential(
  targets: Target[],
  perTarget: number,
  expectBody: string,
  pids: Pids,
): Promise<{ results: SequentialResult[]; blocks: SequentialBlocks }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sizes = blockSizes(perTarget, SEQUENTIAL_BLOCKS);
  const times = new Map<Target["key"], number[][]>(targets.map((t) => [t.key, sizes.map(() => [])]));
  const otherCpu: number[] = [];
  const once = (url: URL, headers: Record<string, string>) =>
    new Promise<number>((resolvePromise, reject) => {
      const t0 = performance.now();
      const req = httpRequest(
        url,
        { method: "POST", agent, headers: { ...headers, "content-length": Buffer.byteLength(BODY) } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            text += d;
          });
          res.on("end", () => {
            const ms = performance.now() - t0;
            if (res.statusCode !== 200 || text !== expectBody) {
              reject(new Error(`${url}: HTTP ${res.statusCode}, unexpected body ${text.slice(0, 200)}`));
            } else {
              resolvePromise(ms);
            }
          });
        },
      );
      req.setTimeout(10_000, () => req.destroy(new Error(`${url}: no answer within 10 s`)));
      req.on("error", reject);
      req.end(BODY);
    });
  try {
    for (let block = -1; block < sizes.length; block++) {
      // Block -1 warms every path up; then A B C … C B A … so that drift cancels out.
      const order = block % 2 === 0 ? targets : [...targets].reverse();
      const before = cpuMark(pids);
      for (const target of order) {
        const url = new URL(target.url);
        const headers = await target.headers(60);
        const count = block < 0 ? Math.min(200, sizes[0] ?? 0) : (sizes[block] ?? 0);
        const into = block < 0 ? undefined : times.get(target.key)?.[block];
        for (let i = 0; i < count; i++) {
          const ms = await once(url, headers);
          into?.push(ms);
        }
      }
      if (block >= 0) otherCpu.push(cpuBetween(before, cpuMark(pids)).other);
    }
  } finally {
    agent.destroy();
  }
  const results = targets.map((t) => {
    const blocks = times.get(t.key) ?? [];
    const sorted = sortedCopy(blocks.flat());
    const result = {
      target: t.key,
      requests: sorted.length,
      p50Ms: round(quantile(sorted, 0.5), 3),
      p99Ms: round(quantile(sorted, 0.99), 3),
      meanMs: round(sorted.reduce((a, b) => a + b, 0) / sorted.length, 3),
      blockP50Ms: blocks.map((b) => round(quantile(sortedCopy(b), 0.5), 3)),
    };
    log(
      `sequential ${t.title.padEnd(8)} ${result.requests} requests  p50 ${result.p50Ms} ms  p99 ${result.p99Ms} ms  mean ${result.meanMs} ms  block medians ${result.blockP50Ms.join(" ")}`,
    );
    return result;
  });
  log(`sequential: other CPU per block ${otherCpu.join(" ")} % of a core`);
  return { results, blocks: { count: sizes.length, otherCpu } };
}

// ---------------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------------

interface Machine {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  loadAverage: number[];
}

function describeMachine(): Machine {
  let cpuModel = os.cpus()[0]?.model ?? "unknown";
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    if (line) cpuModel = line.split(":")[1]?.trim() ?? cpuModel;
  } catch {
    // not Linux
  }
  let nproc = os.availableParallelism();
  try {
    nproc = Number(execFileSync("nproc", { encoding: "utf8" }).trim()) || nproc;
  } catch {
    // no coreutils
  }
  return {
    nproc,
    cpuModel,
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAverage: os.loadavg().map((l) => round(l, 2)),
  };
}

interface Report {
  date: string;
  machine: Machine;
  settings: typeof SETTINGS;
  nodeArgs: { cli: string[]; gatewayOnly: string[] };
  responseBytes: number;
  sequential: SequentialResult[];
  /** How the unloaded phase was blocked, and the machine's other CPU per block. */
  sequentialBlocks?: SequentialBlocks;
  sideBySide: LoadResult[];
  nginxVersion: string;
  baselineRoot: string;
  summary: {
    direct: PathSummary;
    /** The gateway of the one-process deployment (absent with the embedded identity provider). */
    one?: PathSummary;
    gateway: PathSummary;
    nginx: PathSummary;
    floor: PathSummary;
    baseline?: PathSummary;
    /** The baseline's one-process gateway (BENCH_GATEWAY_BASELINE). */
    baselineOne?: PathSummary;
    p50Ratio: number;
    throughputRatio: number;
    /** Gateway CPU per request ÷ nginx CPU per request, side-by-side runs. */
    cpuVsNginx: number;
    /** The one-process gateway's hop CPU per request ÷ nginx's, all rounds pooled. */
    oneVsNginx?: number;
    /** The same ratio round by round: median and range (the target is judged on the median). */
    oneVsNginxRounds?: Spread;
    gatewayVsNginxRounds: Spread;
    baselineOneVsNginxRounds?: Spread;
  };
  /** Seconds from SIGTERM to exit, right after the soak. */
  stopSeconds: { gateway: number; backend: number };
  soak: LoadResult;
  /** The same soak through the one-process gateway, right before. */
  oneSoak?: LoadResult;
  /** The same soak through the baseline gateway (BENCH_GATEWAY_BASELINE), right after. */
  baselineSoak?: LoadResult;
  gatewayRss: { idleMB: number; soakMaxMB: number; hwmMB: number; endMB: number };
  exchanges: { gateway: number; bench: number };
  /** Which identity provider signed the MCP token and exchanged it (BENCH_GATEWAY_IDP). */
  idp: "embedded" | "stand-in";
  gatewayLogs: string;
  backendLogs: string;
  targets: { name: string; measured: string; met: boolean }[];
  totalSeconds: number;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

interface PathSummary {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  /** The proxy's CPU over all runs of the path ÷ their requests (0 for direct). */
  proxyCpuMsPerRequest: number;
}

function summarize(runs: LoadResult[], key: Target["key"]): PathSummary {
  const mine = runs.filter((r) => r.target === key);
  const requests = mine.reduce((n, r) => n + r.total, 0);
  let cpu = mine.reduce((n, r) => n + r.proxyCpuSeconds, 0);
  if (key === "one" || key === "baselineOne") {
    // The hop in one process: the process's CPU per request beyond what the same process spends per
    // request of the direct path (the MCP server's and REST API's own work).
    const direct = runs.filter((r) => r.target === "direct");
    const directRequests = direct.reduce((n, r) => n + r.total, 0);
    const directCpu = direct.reduce((n, r) => n + r.backendCpuSeconds, 0);
    if (directRequests > 0) cpu -= (directCpu / directRequests) * requests;
  }
  return {
    requestsPerSecond: round(mean(mine.map((r) => r.requestsPerSecond)), 1),
    p50Ms: round(mean(mine.map((r) => r.latencyP50Ms)), 2),
    p99Ms: round(mean(mine.map((r) => r.latencyP99Ms)), 2),
    meanMs: round(mean(mine.map((r) => r.latencyMeanMs)), 2),
    proxyCpuMsPerRequest: requests > 0 ? round((1000 * cpu) / requests, 4) : 0,
  };
}

/**
 * The hop's CPU per request ÷ nginx's, round by round (a round's paths ran within a minute or two of each
 * other, so a disturbance of the shared machine weighs on one round, not on the whole comparison).
 */
function roundRatios(runs: LoadResult[], key: "one" | "gateway" | "baseline" | "baselineOne"): number[] {
  const labels = [...new Set(runs.map((r) => r.label))];
  return labels.flatMap((label) => {
    const inRound = runs.filter((r) => r.label === label);
    if (!inRound.some((r) => r.target === key)) return [];
    return [summarize(inRound, key).proxyCpuMsPerRequest / summarize(inRound, "nginx").proxyCpuMsPerRequest];
  });
}

interface Spread {
  median: number;
  min: number;
  max: number;
}

function spreadOf(values: number[]): Spread {
  const sorted = sortedCopy(values.filter(Number.isFinite));
  const mid = sorted.length / 2;
  const median =
    sorted.length % 2 === 1
      ? (sorted[Math.floor(mid)] ?? Number.NaN)
      : ((sorted[mid - 1] ?? Number.NaN) + (sorted[mid] ?? Number.NaN)) / 2;
  return {
    median: round(median, 3),
    min: round(sorted[0] ?? Number.NaN, 3),
    max: round(sorted[sorted.length - 1] ?? Number.NaN, 3),
  };
}

const showSpread = (s: Spread, digits = 3) =>
  `${s.median.toFixed(digits)} (${s.min.toFixed(digits)} to ${s.max.toFixed(digits)})`;

/**
 * What a proxy adds to the direct path's unloaded median, ms, block by block (its block median minus the
 * direct path's in the same block): the median of the blocks and their range.
 */
function addedP50Spread(report: Pick<Report, "sequential">, key: AddedKey): Spread {
  const blocks = (k: Target["key"]) => report.sequential.find((r) => r.target === k)?.blockP50Ms ?? [];
  const direct = blocks("direct");
  return spreadOf(blocks(key).map((ms, i) => ms - (direct[i] ?? Number.NaN)));
}
type AddedKey = "one" | "gateway" | "nginx" | "floor" | "baseline" | "baselineOne";

/** The median over blocks of what a proxy adds at p50, unloaded (addedP50Spread). */
const addedP50 = (report: Pick<Report, "sequential">, key: AddedKey): number =>
  addedP50Spread(report, key).median;

/** What a path adds unloaded, in words: median of the blocks, range, pooled, the blocks' other CPU. */
function addedSummary(report: Pick<Report, "sequential">, key: AddedKey, blocks?: SequentialBlocks): string {
  const other = blocks ? spreadOf(blocks.otherCpu) : undefined;
  return (
    `${showSpread(addedP50Spread(report, key))} ms over ${blocks?.count ?? 0} blocks ` +
    `(pooled medians ${pooledAddedP50(report, key)} ms${other ? `; other CPU per block ${showSpread(other, 0)} % of a core` : ""})`
  );
}

/** The same from the medians of all requests pooled (the measure of earlier runs). */
function pooledAddedP50(report: Pick<Report, "sequential">, key: AddedKey): number {
  const p50 = (k: Target["key"]) => report.sequential.find((r) => r.target === k)?.p50Ms ?? Number.NaN;
  return round(p50(key) - p50("direct"), 3);
}

const mark = (met: boolean) => (met ? "✅ yes" : "❌ no");

function renderResults(report: Report): string {
  const m = report.machine;
  const s = report.settings;
  const sum = report.summary;
  const soak = report.soak;
  const title = (key: string) => key;
  const perRequest = (ms: number) => (ms > 0 ? ms.toFixed(3) : "");
  const rows = report.sideBySide.map(
    (r) =>
      `| ${r.label} | ${title(r.target)} | ${r.requestsPerSecond} | ${r.latencyP50Ms} / ${r.latencyP99Ms} | ${r.latencyMeanMs} | ` +
      `${perRequest(r.proxyCpuMsPerRequest)} | ${r.cpu.gateway} % | ${r.cpu.nginx} % | ${r.cpu.backend} % | ${r.cpu.bench} % | ${r.cpu.other} % | ${r.non2xx + r.errors + r.timeouts + r.mismatches} |`,
  );
  const soaks: [string, LoadResult][] = [
    ...(report.oneSoak ? ([["one process", report.oneSoak]] as [string, LoadResult][]) : []),
    ["current", soak],
    ...(report.baselineSoak ? ([["baseline", report.baselineSoak]] as [string, LoadResult][]) : []),
  ];
  const samples = soak.rssSamplesMB ?? [];
  const disturbed = [
    ...(report.sequentialBlocks?.otherCpu ?? []).flatMap((other, i) =>
      other > DISTURBED_CPU ? [`unloaded block ${i + 1} (${other} %)`] : [],
    ),
    ...[...report.sideBySide, soak]
      .filter((r) => r.cpu.other > DISTURBED_CPU)
      .map((r) => `${r.label} ${r.target} (${r.cpu.other} %)`),
  ];
  const rssEvery = (step: number) =>
    samples
      .filter((_, i) => i % step === 0 || i === samples.length - 1)
      .map((v) => String(Math.round(v)))
      .join(", ");
  return [
    `Run of ${report.date}, whole run ${round(report.totalSeconds / 60, 1)} min.`,
    "",
    "#### Machine",
    "",
    `- CPU: ${m.nproc} × ${m.cpuModel} (\`nproc\` = ${m.nproc})`,
    `- Memory: ${m.memoryGiB} GiB`,
    `- OS: ${m.os}; Node.js ${m.node}; ${report.nginxVersion} (Debian package) as the reference proxy`,
    `- Load average before the run: ${m.loadAverage.join(" / ")}`,
    `- Service processes started with the Node.js flags of the CLI's shebang: ${report.nodeArgs.cli.map((a) => `\`${a}\``).join(" ") || "none"}` +
      (report.nodeArgs.gatewayOnly.length > 0
        ? `; the gateway also with ${report.nodeArgs.gatewayOnly.map((a) => `\`${a}\``).join(" ")}`
        : ""),
    "",
    "#### Targets",
    "",
    "| target | measured | met |",
    "| --- | --- | --- |",
    ...report.targets.map((t) => `| ${t.name} | ${t.measured} | ${mark(t.met)} |`),
    "",
    `#### Side by side (${s.connections} connections, ${s.seconds} s per run)`,
    "",
    `The same request, answer checked on every response (${report.responseBytes}-byte JSON body). ` +
      "Paths: direct (the platform token straight to the MCP server), gateway (the MCP token through the " +
      "gateway: origin, token, scope, exchange cache, session binding), nginx (the platform token through " +
      "nginx, which checks nothing), floor (the platform token through a bare Node.js proxy: node:http and the " +
      "gateway's own forwarding code, test/bench/node-floor-proxy.ts, no framework and no check). " +
      '"proxy CPU/request": CPU ms of the proxy of that path (gateway, or nginx master + worker) ÷ requests. ' +
      'CPU in % of one core over the run: the gateway child, nginx, the REST + MCP child ("backend") and the bench ' +
      "process (autocannon's worker thread and the identity provider), and everything else on the machine " +
      '("other": other processes and the kernel; it must stay near 0 % for the run to count).',
    "",
    "| run | path | requests/s | latency p50 / p99 ms | mean ms | proxy CPU/request ms | gateway CPU | nginx CPU | backend CPU | bench CPU | other CPU | failed |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
    ...(["direct", "one", "gateway", "nginx", "floor", "baseline", "baselineOne"] as const).flatMap((key) => {
      const path = sum[key];
      return path
        ? [
            `| **mean** | ${key} | **${path.requestsPerSecond}** | **${path.p50Ms}** / ${path.p99Ms} | ${path.meanMs} | ${path.proxyCpuMsPerRequest > 0 ? `**${perRequest(path.proxyCpuMsPerRequest)}**` : ""} | | | | | | |`,
          ]
        : [];
    }),
    "",
    ...(sum.one
      ? [
          `One process (the gateway hands /mcp to its own MCP server): the hop costs ${sum.one.proxyCpuMsPerRequest} ms ` +
            `CPU per request (that process's CPU per request beyond the direct path's), × ${sum.oneVsNginx?.toFixed(2)} nginx's; ` +
            `${sum.one.requestsPerSecond} req/s against ${sum.direct.requestsPerSecond} direct; round by round × ${sum.oneVsNginxRounds ? showSpread(sum.oneVsNginxRounds, 2) : "?"} nginx's (median, range)` +
            `${sum.baselineOne ? `; the baseline's one process ${sum.baselineOne.proxyCpuMsPerRequest} ms, × ${sum.baselineOneVsNginxRounds ? showSpread(sum.baselineOneVsNginxRounds, 2) : "?"}` : ""}.`,
          "",
        ]
      : []),
    `Gateway / direct: p50 × ${sum.p50Ratio.toFixed(2)}, throughput ${round(sum.throughputRatio * 100, 1)} %. ` +
      `CPU per proxied request: gateway ${sum.gateway.proxyCpuMsPerRequest} ms, nginx ${sum.nginx.proxyCpuMsPerRequest} ms ` +
      `(× ${sum.cpuVsNginx.toFixed(2)}); the bare Node.js proxy (floor) ${sum.floor.proxyCpuMsPerRequest} ms ` +
      `(× ${round(sum.floor.proxyCpuMsPerRequest / sum.nginx.proxyCpuMsPerRequest, 2).toFixed(2)} nginx's)` +
      (sum.baseline
        ? `; baseline gateway (${report.baselineRoot}) ${sum.baseline.proxyCpuMsPerRequest} ms, ` +
          `${sum.baseline.requestsPerSecond} req/s, unloaded it adds ${addedP50(report, "baseline")} ms.`
        : "."),
    "",
    ...(report.sequential.length > 0
      ? [
          "#### Unloaded latency (one client, sequential requests)",
          "",
          `${report.sequentialBlocks?.count ?? 1} blocks after a warm-up block, each timing every path in turn ` +
            "(order reversed every other block); what a path adds is its block median minus the direct path's " +
            "in the same block: the median of the blocks, with their range in brackets.",
          "",
          "| path | requests | p50 ms | p99 ms | mean ms | block medians ms, min / median / max | adds at p50, ms |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
          ...report.sequential.map((r) => {
            const blocks = spreadOf(r.blockP50Ms);
            return (
              `| ${title(r.target)} | ${r.requests} | ${r.p50Ms} | ${r.p99Ms} | ${r.meanMs} | ` +
              `${blocks.min} / ${blocks.median} / ${blocks.max} | ` +
              `${r.target === "direct" ? "" : showSpread(addedP50Spread(report, r.target as AddedKey))} |`
            );
          }),
          "",
          `When nothing queues, ${sum.one ? `the one-process gateway adds ${addedSummary(report, "one", report.sequentialBlocks)} at the median, ` : ""}the gateway alone adds ${addedP50(report, "gateway")} ms, nginx ` +
            `${addedP50(report, "nginx")} ms, the bare Node.js proxy ${addedP50(report, "floor")} ms` +
            `${sum.baselineOne ? `, the baseline's one-process gateway ${addedP50(report, "baselineOne")} ms` : ""}.`,
          "",
        ]
      : []),
    `#### Soak (${soak.connections} connections, ${soak.seconds} s, through the gateway)`,
    "",
    "| gateway | requests | requests/s | latency p50 / p99 / max ms | non-2xx | errors | timeouts | wrong bodies | gateway CPU | backend CPU | bench CPU | other CPU |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...soaks.map(
      ([name, r]) =>
        `| ${name} | ${r.total} | ${r.requestsPerSecond} | ${r.latencyP50Ms} / ${r.latencyP99Ms} / ${r.latencyMaxMs} | ${r.non2xx} | ${r.errors} | ${r.timeouts} | ${r.mismatches} | ${name === "baseline" ? r.cpu.baseline : name === "one process" ? "(in backend)" : `${r.cpu.gateway} %`} | ${r.cpu.backend} % | ${r.cpu.bench} % | ${r.cpu.other} % |`,
    ),
    "",
    "Where the answers waited: the longest accept queue of the gateway's port and of the MCP server's port " +
      "(sampled every 100 ms), the kernel's listen overflows and SYN retransmissions, the answers each client " +
      "connection got, when the last connection got its first answer, and the worst latency of each 5 s of the soak.",
    "",
    "| gateway | accept queue max, gateway / MCP | listen overflows | SYN retransmits | answers per connection min / median / max | last first answer s | max latency per 5 s, ms |",
    "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ...soaks.flatMap(([name, r]) =>
      r.queues
        ? [
            `| ${name} | ${r.queues.acceptQueueMax.proxy} / ${r.queues.acceptQueueMax.mcp} | ${r.queues.listenOverflows} | ${r.queues.synRetransmits} | ${r.queues.perConnection.min} / ${r.queues.perConnection.median} / ${r.queues.perConnection.max} | ${r.queues.lastFirstAnswerS} | ${r.queues.maxBySliceMs.join(", ")} |`,
          ]
        : [],
    ),
    "",
    `Gateway RSS (MB = 10^6 bytes): ${report.gatewayRss.idleMB} idle after start-up, max ${report.gatewayRss.soakMaxMB} ` +
      `sampled during the soak, peak ${report.gatewayRss.hwmMB} (VmHWM, the kernel's high-water mark over the ` +
      `whole run), ${report.gatewayRss.endMB} at the end. Samples every ${samples.length > 30 ? 5 : 1} s: ` +
      `${rssEvery(samples.length > 30 ? 5 : 1)}.`,
    "",
    `Stop right after the soak: SIGTERM to exit ${report.stopSeconds.gateway} s for the gateway, ` +
      `${report.stopSeconds.backend} s for the REST + MCP child.`,
    "",
    `Token exchanges sent to the identity provider: ${report.exchanges.gateway} by the gateway, ` +
      `${report.exchanges.bench} by the bench for the direct runs.`,
    "",
    `Warnings and errors logged by the gateway over the whole run: ${report.gatewayLogs || "none"}` +
      `; by the REST + MCP child: ${report.backendLogs || "none"}.`,
    ...(disturbed.length > 0
      ? [
          "",
          `**Disturbed:** other processes used more than ${DISTURBED_CPU} % of a core during ${disturbed.join(", ")}; ` +
            "the ratios of this run are not reliable.",
        ]
      : []),
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  const machine = describeMachine();
  log(
    `${machine.nproc} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}; ` +
      `settings ${JSON.stringify(SETTINGS)}; node flags of the CLI: ${CLI_NODE_ARGS.join(" ") || "none"}` +
      `${GATEWAY_NODE_ARGS.length ? `; gateway only: ${GATEWAY_NODE_ARGS.join(" ")}` : ""}${FULL_RUN ? "" : " (not the defaults)"}`,
  );
  if (CPU_PROF_DIR) mkdirSync(CPU_PROF_DIR, { recursive: true });
  const nginxBinary = findNginx();
  if (!nginxBinary) {
    log(NGINX_MISSING);
    process.exitCode = 1;
    return;
  }

  const tmp = mkdtempSync(join(os.tmpdir(), "imaging-gateway-bench-"));
  scratchDirs.add(tmp);
  let issuer: TestIssuer | undefined;
  let documents: CimdDocumentServer | undefined;
  let nginx: RunningNginx | undefined;
  try {
    const gatewayPort = await freePort();
    const publicUrl = `http://127.0.0.1:${gatewayPort}`;
    let issuerUrl: string;
    let gatewayIdpEnv: Record<string, string>;
    if (EMBEDDED_IDP) {
      if (BASELINE_ROOT) throw new Error("BENCH_GATEWAY_IDP=embedded does not run a baseline gateway");
      // The gateway's store holds the user and the CIMD client; the client's document is served here.
      documents = await startCimdDocumentServer();
      mkdirSync(join(tmp, "gateway"), { recursive: true });
      const seeded = await openStore({ sqliteFile: join(tmp, "gateway", "imaging.db") });
      try {
        await createUser(seeded.db, { username: SUBJECT, password: EMBEDDED_PASSWORD, role: "admin" });
        await seedCimdClient(seeded.db, "bench-client", documents.clientId);
      } finally {
        await seeded.close();
      }
      writeFileSync(join(tmp, "cimd-ca.pem"), documents.ca);
      issuerUrl = `${publicUrl}/auth/realms/imaging`;
      gatewayIdpEnv = {
        IDP_EXTRA_CA_FILE: join(tmp, "cimd-ca.pem"),
        // What-if runs: the gateway's store read workers (BENCH_GATEWAY_STORE_READ_WORKERS).
        ...(process.env.BENCH_GATEWAY_STORE_READ_WORKERS
          ? { STORE_READ_WORKERS: process.env.BENCH_GATEWAY_STORE_READ_WORKERS }
          : {}),
      };
    } else {
      issuer = await startTestIssuer();
      issuer.setUser(SUBJECT, { roles: ["admin"], applications: [] });
      issuerUrl = issuer.issuer;
      gatewayIdpEnv = { IDP_ISSUER: issuer.issuer, TOKEN_EXCHANGE_CLIENT_SECRET: issuer.clientSecret };
    }
    const common = { LOG_LEVEL: "warn", PUBLIC_URL: publicUrl };

    log("starting the whole service (child 1) and a gateway alone (child 2)");
    // Child 1 runs every part, its own gateway included (the one-process path), except with the embedded
    // identity provider, which only child 2 runs.
    const onePublicUrl = EMBEDDED_IDP ? "" : `http://127.0.0.1:${await freePort()}`;
    const [backend, backendSummary] = await startCli(
      "backend",
      [
        ...(EMBEDDED_IDP ? ["--only", "rest", "--only", "mcp-analysis", "--only", "mcp-gatekeeper"] : []),
        ...["--data-dir", join(tmp, "backend"), "--demo"],
      ],
      {
        ...common,
        ...(EMBEDDED_IDP
          ? {}
          : {
              ...gatewayIdpEnv,
              PUBLIC_URL: onePublicUrl,
              PORT: new URL(onePublicUrl).port,
              IMAGING_BIND_ADDRESS: "127.0.0.1",
            }),
        IDP_ISSUER: issuerUrl,
        REST_PORT: "0",
        MCP_ANALYSIS_PORT: "0",
        MCP_GATEKEEPER_PORT: "0",
        INTERNAL_BIND_ADDRESS: "127.0.0.1",
      },
    );
    if (backendSummary.demo.length === 0) throw new Error("the backend loaded no demo application");
    const [gateway, gatewaySummary] = await startCli(
      "gateway",
      ["--only", "gateway", "--data-dir", join(tmp, "gateway")],
      {
        ...common,
        PORT: String(gatewayPort),
        IMAGING_BIND_ADDRESS: "127.0.0.1",
        REST_UPSTREAM_URL: backendSummary.rest,
        MCP_ANALYSIS_UPSTREAM_URL: backendSummary.mcp.analysis,
        MCP_GATEKEEPER_UPSTREAM_URL: backendSummary.mcp.gatekeeper,
        ...gatewayIdpEnv,
      },
    );
    // The baseline gateway: another checkout's code, its own port and public URL (so its own MCP token).
    let baseline: Child | undefined;
    let baselineUrl = "";
    let baselinePublicUrl = "";
    if (BASELINE_ROOT) {
      const port = await freePort();
      baselinePublicUrl = `http://127.0.0.1:${port}`;
      const [child, summary] = await startCli(
        "baseline",
        ["--only", "gateway", "--data-dir", join(tmp, "baseline")],
        {
          ...common,
          ...gatewayIdpEnv,
          PUBLIC_URL: baselinePublicUrl,
          PORT: String(port),
          IMAGING_BIND_ADDRESS: "127.0.0.1",
          REST_UPSTREAM_URL: backendSummary.rest,
          MCP_ANALYSIS_UPSTREAM_URL: backendSummary.mcp.analysis,
          MCP_GATEKEEPER_UPSTREAM_URL: backendSummary.mcp.gatekeeper,
        },
        BASELINE_ROOT,
      );
      baseline = child;
      baselineUrl = summary.gateway;
    }
    // The baseline's whole service in one process (its gateway hands /mcp to its own MCP server): the
    // one-process path before and after, side by side.
    let baselineOne: Child | undefined;
    let baselineOneUrl = "";
    let baselineOnePublicUrl = "";
    if (BASELINE_ROOT && !EMBEDDED_IDP) {
      baselineOnePublicUrl = `http://127.0.0.1:${await freePort()}`;
      const [child, summary] = await startCli(
        "baselineOne",
        ["--data-dir", join(tmp, "baseline-one"), "--demo"],
        {
          ...common,
          ...gatewayIdpEnv,
          PUBLIC_URL: baselineOnePublicUrl,
          PORT: new URL(baselineOnePublicUrl).port,
          IMAGING_BIND_ADDRESS: "127.0.0.1",
          REST_PORT: "0",
          MCP_ANALYSIS_PORT: "0",
          MCP_GATEKEEPER_PORT: "0",
          INTERNAL_BIND_ADDRESS: "127.0.0.1",
        },
        BASELINE_ROOT,
      );
      baselineOne = child;
      baselineOneUrl = summary.gateway;
    }
    nginx = await startNginx({
      binary: nginxBinary,
      dir: join(tmp, "nginx"),
      port: await freePort(),
      upstream: backendSummary.mcp.analysis,
    });
    killers.add(nginx.kill);
    const floorPort = await freePort();
    const floor = spawn(
      process.execPath,
      [
        ...CLI_NODE_ARGS,
        join(ROOT, "test", "bench", "node-floor-proxy.ts"),
        String(floorPort),
        backendSummary.mcp.analysis,
      ],
      { cwd: ROOT, env: cleanEnv({}), stdio: ["ignore", "pipe", "inherit"] },
    );
    killers.add(() => floor.kill("SIGKILL"));
    await new Promise<void>((resolveListening, reject) => {
      floor.once("exit", (code) => reject(new Error(`the bare Node.js proxy exited (${code})`)));
      floor.stdout?.once("data", () => resolveListening());
    });
    const processes: Processes = { gateway, backend, nginx, floor, baseline, baselineOne };
    log(
      `gateway ${gatewaySummary.gateway} (pid ${gateway.pid}); MCP ${backendSummary.mcp.analysis}, REST ` +
        `${backendSummary.rest} (pid ${backend.pid}); ${nginx.version} ${nginx.url} (pid ${nginx.pid})`,
    );

    // The client's token for the gateway's /mcp resource (audience = the resource URL).
    let mcpToken: string;
    let mcpTokenExpiresAt: number;
    let exchangeSecret: string;
    if (issuer) {
      mcpToken = await issuer.signMcp(SUBJECT, `${publicUrl}/mcp`, { expiresIn: "2h" });
      mcpTokenExpiresAt = Date.now() + 2 * 3_600_000;
      exchangeSecret = issuer.clientSecret;
    } else {
      // A real sign-in at the gateway's embedded identity provider, as an AI client does.
      const signedIn = await authorize(
        {
          issuer: issuerUrl,
          clientId: (documents as CimdDocumentServer).clientId,
          redirectUri: "http://127.0.0.1/callback",
          resource: `${publicUrl}/mcp`,
        },
        { username: SUBJECT, password: EMBEDDED_PASSWORD },
      );
      mcpToken = signedIn.accessToken;
      mcpTokenExpiresAt = Number(decodeJwt(mcpToken).payload.exp) * 1000;
      // The exchange secret is sealed in the gateway's store (with the key generated in its data directory).
      exchangeSecret = await storedSecret(
        {
          kind: "sqlite",
          dataDir: join(tmp, "gateway"),
          databaseUrl: undefined,
          sqliteFile: join(tmp, "gateway", "imaging.db"),
          drop: async () => {},
        },
        "mcp-token-exchange",
      );
      log(
        `signed in at the embedded identity provider; the MCP token expires in ${Math.round((mcpTokenExpiresAt - Date.now()) / 60_000)} min`,
      );
    }
    // The direct path's token: exchanged by the gateway's own code (createTokenExchanger), same client.
    const newExchanger = () =>
      createTokenExchanger({
        metadata: issuerMetadata(issuerUrl),
        clientId: EXCHANGE_CLIENT_ID,
        clientSecret: exchangeSecret,
        audience: PLATFORM_AUDIENCE,
      });
    let exchanger: TokenExchanger = newExchanger();
    let benchExchanges = 0;
    const directToken = async (runSeconds: number): Promise<string> => {
      let token = await exchanger.exchange(mcpToken, mcpTokenExpiresAt);
      if (token.expiresAt - Date.now() < (runSeconds + 30) * 1000) {
        // The identity provider issues platform tokens for at most 5 minutes: take a fresh one.
        benchExchanges += exchanger.requests;
        exchanger = newExchanger();
        token = await exchanger.exchange(mcpToken, mcpTokenExpiresAt);
      }
      return token.accessToken;
    };
    /** The gateway of child 1, handing /mcp to its own MCP server (its own public URL, so its own token). */
    async function oneProcessTarget(): Promise<Target[]> {
      if (EMBEDDED_IDP) return [];
      const token = await (issuer as TestIssuer).signMcp(SUBJECT, `${onePublicUrl}/mcp`, { expiresIn: "2h" });
      return [
        {
          key: "one",
          title: "one",
          url: `${backendSummary.gateway}/mcp`,
          headers: async () => mcpHeaders(token),
        },
      ];
    }
    const targets: Target[] = [
      {
        key: "direct",
        title: "direct",
        url: `${backendSummary.mcp.analysis}/mcp`,
        headers: async (runSeconds) => mcpHeaders(await directToken(runSeconds)),
      },
      {
        key: "gateway",
        title: "gateway",
        url: `${gatewaySummary.gateway}/mcp`,
        headers: async () => mcpHeaders(mcpToken),
      },
      ...(await oneProcessTarget()),
      {
        key: "nginx",
        title: "nginx",
        url: `${nginx.url}/mcp`,
        headers: async (runSeconds) => mcpHeaders(await directToken(runSeconds)),
      },
      {
        key: "floor",
        title: "floor",
        url: `http://127.0.0.1:${floorPort}/mcp`,
        headers: async (runSeconds) => mcpHeaders(await directToken(runSeconds)),
      },
    ];
    const byKey = (key: Target["key"]) => targets.find((t) => t.key === key) as Target;
    const [direct, viaGateway, viaNginx] = [byKey("direct"), byKey("gateway"), byKey("nginx")];
    if (baseline) {
      const baselineToken = await (issuer as TestIssuer).signMcp(SUBJECT, `${baselinePublicUrl}/mcp`, {
        expiresIn: "2h",
      });
      targets.push({
        key: "baseline",
        title: "baseline",
        url: `${baselineUrl}/mcp`,
        headers: async () => mcpHeaders(baselineToken),
      });
    }
    if (baselineOne) {
      const token = await (issuer as TestIssuer).signMcp(SUBJECT, `${baselineOnePublicUrl}/mcp`, {
        expiresIn: "2h",
      });
      targets.push({
        key: "baselineOne",
        title: "base-one",
        url: `${baselineOneUrl}/mcp`,
        headers: async () => mcpHeaders(token),
      });
    }

    // 1. Real answers, identical on every path.
    const directBody = await verify(direct, backendSummary.demo);
    for (const target of targets.slice(1)) {
      const body = await verify(target, backendSummary.demo);
      if (directBody !== body) {
        throw new Error(`the paths answer differently:\ndirect:  ${directBody}\n${target.title}: ${body}`);
      }
    }
    log(
      `both paths answer the ${backendSummary.demo.length} demo applications (${Buffer.byteLength(directBody)} bytes)`,
    );
    const idleRss = round(memoryMB(gateway.pid, "VmRSS"), 1);

    // 2. Unloaded latency.
    const unloaded =
      SETTINGS.sequential > 0
        ? await sequential(targets, SETTINGS.sequential, directBody, pidsOf(processes))
        : undefined;
    const sequentialResults = unloaded?.results ?? [];

    // 3. Side by side.
    if (SETTINGS.warmupSeconds > 0) {
      for (const target of targets) {
        await load(target, "warm-up", SETTINGS.connections, SETTINGS.warmupSeconds, directBody, processes);
      }
    }
    const sideBySide: LoadResult[] = [];
    for (let r = 0; r < SETTINGS.rounds; r++) {
      const order = r % 2 === 0 ? targets : [...targets].reverse();
      for (const target of order) {
        sideBySide.push(
          await load(target, `round ${r + 1}`, SETTINGS.connections, SETTINGS.seconds, directBody, processes),
        );
      }
    }

    // 4. Soak through the one-process gateway, then through the gateway alone (and then through the
    // baseline gateway, under the same conditions).
    const mcpPort = Number(new URL(backendSummary.mcp.analysis).port);
    const viaOne = targets.find((t) => t.key === "one");
    const oneSoak = viaOne
      ? await load(viaOne, "soak", SETTINGS.soakConnections, SETTINGS.soakSeconds, directBody, processes, {
          mcpPort,
        })
      : undefined;
    const soak = await load(
      viaGateway,
      "soak",
      SETTINGS.soakConnections,
      SETTINGS.soakSeconds,
      directBody,
      processes,
      { mcpPort },
    );
    const viaBaseline = targets.find((t) => t.key === "baseline");
    const baselineSoak = viaBaseline
      ? await load(
          viaBaseline,
          "soak",
          SETTINGS.soakConnections,
          SETTINGS.soakSeconds,
          directBody,
          processes,
          { mcpPort },
        )
      : undefined;
    const hwm = round(memoryMB(gateway.pid, "VmHWM"), 1);
    const endRss = round(memoryMB(gateway.pid, "VmRSS"), 1);
    // Still right after the load.
    await verify(viaGateway, backendSummary.demo);
    await verify(direct, backendSummary.demo);
    await verify(viaNginx, backendSummary.demo);
    if (viaOne) await verify(viaOne, backendSummary.demo);
    // 5. The stop, right after the load: each child must exit on SIGTERM (graceful, bounded).
    await nginx.stop();
    floor.kill("SIGTERM");
    if (baseline) await stopChild(baseline);
    if (baselineOne) await stopChild(baselineOne);
    const stopSeconds = { gateway: await stopChild(gateway), backend: await stopChild(backend) };
    log(
      `stopped after the soak: gateway in ${stopSeconds.gateway} s, REST + MCP in ${stopSeconds.backend} s`,
    );

    benchExchanges += exchanger.requests;
    const summary = {
      direct: summarize(sideBySide, "direct"),
      ...(viaOne ? { one: summarize(sideBySide, "one") } : {}),
      gateway: summarize(sideBySide, "gateway"),
      nginx: summarize(sideBySide, "nginx"),
      floor: summarize(sideBySide, "floor"),
      ...(baseline ? { baseline: summarize(sideBySide, "baseline") } : {}),
      ...(baselineOne ? { baselineOne: summarize(sideBySide, "baselineOne") } : {}),
      p50Ratio: 0,
      throughputRatio: 0,
      cpuVsNginx: 0,
      oneVsNginx: undefined as number | undefined,
      oneVsNginxRounds: viaOne ? spreadOf(roundRatios(sideBySide, "one")) : undefined,
      gatewayVsNginxRounds: spreadOf(roundRatios(sideBySide, "gateway")),
      baselineOneVsNginxRounds: baselineOne ? spreadOf(roundRatios(sideBySide, "baselineOne")) : undefined,
    };
    summary.cpuVsNginx = round(summary.gateway.proxyCpuMsPerRequest / summary.nginx.proxyCpuMsPerRequest, 2);
    if (summary.one)
      summary.oneVsNginx = round(summary.one.proxyCpuMsPerRequest / summary.nginx.proxyCpuMsPerRequest, 2);
    summary.p50Ratio = round(summary.gateway.p50Ms / summary.direct.p50Ms, 2);
    summary.throughputRatio = round(summary.gateway.requestsPerSecond / summary.direct.requestsPerSecond, 3);
    const failedUnderLoad = [...sideBySide, soak, ...(oneSoak ? [oneSoak] : [])].reduce(
      (n, r) => n + r.non2xx + r.errors + r.timeouts + r.mismatches,
      0,
    );
    const soakFailed = [soak, ...(oneSoak ? [oneSoak] : [])].reduce(
      (n, r) => n + r.non2xx + r.errors + r.timeouts + r.mismatches,
      0,
    );
    const rssMax = Math.max(soak.gatewayRssMaxMB, hwm);
    const targetsMet = [
      {
        name: `gateway p50 ≤ ${TARGETS.p50Ratio} × direct (${SETTINGS.connections} connections)`,
        measured: `${summary.gateway.p50Ms} ms vs ${summary.direct.p50Ms} ms: × ${summary.p50Ratio.toFixed(2)}`,
        met: summary.p50Ratio <= TARGETS.p50Ratio,
      },
      {
        name: `gateway throughput ≥ ${TARGETS.throughputRatio * 100} % of direct`,
        measured: `${summary.gateway.requestsPerSecond} vs ${summary.direct.requestsPerSecond} req/s: ${round(summary.throughputRatio * 100, 1)} %`,
        met: summary.throughputRatio >= TARGETS.throughputRatio,
      },
      {
        name: `${SETTINGS.soakConnections} connections for ${SETTINGS.soakSeconds} s through the gateway: zero errors`,
        measured: `${[...(oneSoak ? [["one process", oneSoak] as const] : []), ["gateway alone", soak] as const].map(([name, r]) => `${name}: ${r.non2xx + r.errors + r.timeouts + r.mismatches} failed of ${r.total} (non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}, wrong bodies ${r.mismatches})`).join("; ")}; side-by-side runs: ${failedUnderLoad - soakFailed} failed`,
        met: failedUnderLoad === 0,
      },
      {
        name: `gateway RSS < ${TARGETS.rssMB} MB`,
        measured: `max ${rssMax} MB (VmHWM ${hwm}, max sampled VmRSS ${soak.gatewayRssMaxMB})`,
        met: rssMax < TARGETS.rssMB,
      },
      summary.one && summary.oneVsNginx !== undefined && summary.oneVsNginxRounds
        ? {
            name: `the one-process gateway's hop CPU per request ≤ ${TARGETS.cpuVsNginx} × nginx's (${SETTINGS.connections} connections, median of the rounds)`,
            measured:
              `× ${showSpread(summary.oneVsNginxRounds, 2)} over ${SETTINGS.rounds} round(s); pooled ${summary.one.proxyCpuMsPerRequest} ms vs ${summary.nginx.proxyCpuMsPerRequest} ms: × ${summary.oneVsNginx.toFixed(2)}` +
              `${summary.one.proxyCpuMsPerRequest <= 0 ? " (not measured: the process spent less per request than on the direct path, so the difference is noise)" : ""}` +
              `${summary.baselineOneVsNginxRounds ? ` (baseline one process × ${showSpread(summary.baselineOneVsNginxRounds, 2)})` : ""}` +
              ` (gateway alone, HTTP hop: ${summary.gateway.proxyCpuMsPerRequest} ms, × ${summary.cpuVsNginx.toFixed(2)})`,
            // A difference of two measurements at or below zero measures nothing: never "met".
            met:
              summary.one.proxyCpuMsPerRequest > 0 &&
              summary.oneVsNginxRounds.min > 0 &&
              summary.oneVsNginxRounds.median <= TARGETS.cpuVsNginx,
          }
        : {
            name: `gateway CPU per proxied request ≤ ${TARGETS.cpuVsNginx} × nginx's (${SETTINGS.connections} connections, median of the rounds)`,
            measured: `× ${showSpread(summary.gatewayVsNginxRounds, 2)} over ${SETTINGS.rounds} round(s); pooled ${summary.gateway.proxyCpuMsPerRequest} ms vs ${summary.nginx.proxyCpuMsPerRequest} ms: × ${summary.cpuVsNginx.toFixed(2)}`,
            met: summary.gatewayVsNginxRounds.median <= TARGETS.cpuVsNginx,
          },
      ...(sequentialResults.length > 0
        ? [
            {
              name: `${viaOne ? "the one-process gateway" : "gateway"} adds ≤ ${TARGETS.addedP50Ms} ms at p50, unloaded (median of the blocks)`,
              measured: `${addedSummary({ sequential: sequentialResults }, viaOne ? "one" : "gateway", unloaded?.blocks)}; gateway alone ${showSpread(addedP50Spread({ sequential: sequentialResults }, "gateway"))} ms, nginx ${showSpread(addedP50Spread({ sequential: sequentialResults }, "nginx"))} ms${baselineOne ? `, baseline one process ${showSpread(addedP50Spread({ sequential: sequentialResults }, "baselineOne"))} ms` : ""}`,
              met:
                addedP50({ sequential: sequentialResults }, viaOne ? "one" : "gateway") <= TARGETS.addedP50Ms,
            },
          ]
        : []),
      {
        name: `each service process exits within ${TARGETS.stopSeconds} s of SIGTERM, right after the soak`,
        measured: `gateway ${stopSeconds.gateway} s, REST + MCP ${stopSeconds.backend} s`,
        met: Math.max(stopSeconds.gateway, stopSeconds.backend) <= TARGETS.stopSeconds,
      },
    ];

    const report: Report = {
      date: `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
      machine,
      settings: SETTINGS,
      nodeArgs: { cli: CLI_NODE_ARGS, gatewayOnly: GATEWAY_NODE_ARGS },
      responseBytes: Buffer.byteLength(directBody),
      nginxVersion: nginx.version,
      baselineRoot: BASELINE_ROOT,
      stopSeconds,
      sequential: sequentialResults,
      ...(unloaded ? { sequentialBlocks: unloaded.blocks } : {}),
      sideBySide,
      summary,
      soak,
      ...(oneSoak ? { oneSoak } : {}),
      ...(baselineSoak ? { baselineSoak } : {}),
      gatewayRss: { idleMB: idleRss, soakMaxMB: soak.gatewayRssMaxMB, hwmMB: hwm, endMB: endRss },
      // The embedded identity provider counts no exchanges: -1.
      exchanges: { gateway: issuer ? issuer.exchanges - benchExchanges : -1, bench: benchExchanges },
      idp: EMBEDDED_IDP ? "embedded" : "stand-in",
      gatewayLogs: logKinds(gateway),
      backendLogs: logKinds(backend),
      targets: targetsMet,
      totalSeconds: round((performance.now() - started) / 1000, 1),
    };
    const results = renderResults(report);
    mkdirSync(dirname(REPORT_FILE), { recursive: true });
    writeFileSync(REPORT_FILE, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`\n${results}\n`);
    if (FULL_RUN || process.env.BENCH_WRITE_DOCS === "1") {
      writeResultsSection(DOCS_FILE, "gateway", "Gateway", results);
      log(`results written to ${DOCS_FILE}`);
    } else {
      log(`not the default settings: ${DOCS_FILE} left as is (BENCH_WRITE_DOCS=1 to write anyway)`);
    }
    const missed = targetsMet.filter((t) => !t.met);
    if (missed.length > 0) {
      log(`targets missed: ${missed.map((t) => t.name).join("; ")}`);
      process.exitCode = 1;
    }
  } finally {
    await nginx?.stop();
    for (const child of [...children].reverse()) await stopChild(child);
    await issuer?.close();
    await documents?.close();
    rmSync(tmp, { recursive: true, force: true });
    scratchDirs.delete(tmp);
  }
}

// Everything is bounded: a run that hangs is stopped (children included).
const budgetMs =
  1000 *
  (240 +
    2 * SETTINGS.warmupSeconds +
    SETTINGS.rounds * (BASELINE_ROOT ? 7 : 5) * (SETTINGS.seconds + 1) +
    3 * SETTINGS.warmupSeconds +
    (BASELINE_ROOT ? 3 : 2) * (SETTINGS.soakSeconds + 2) +
    (SETTINGS.sequential * (BASELINE_ROOT ? 7 : 5)) / 250);
const watchdog = setTimeout(() => {
  log(`the run exceeded ${Math.round(budgetMs / 1000)} s: stopping`);
  abandon();
  process.exit(1);
}, budgetMs);
try {
  await main();
} finally {
  clearTimeout(watchdog);
}
