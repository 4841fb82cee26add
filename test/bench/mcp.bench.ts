/**
 * Benchmark of the MCP server's own cost (npm run bench:mcp): `tools/call` of `applications` sent straight
 * to the analysis MCP server (the "direct path", no gateway) with a platform token, in both protocol eras,
 * against two backends side by side in one run:
 *
 * - "baseline": the service as it was at BENCH_MCP_BASELINE (a git ref, default the commit before issue
 *   18's MCP work), extracted with `git archive` into a temporary directory (sharing node_modules);
 * - "current": this working tree.
 *
 * Each backend is the real CLI, `imaging start --only rest --only mcp-analysis --demo`, so the REST API runs
 * in the same process as the MCP server (as in the default deployment). This process runs the stand-in
 * identity provider (test/support/test-issuer.ts) and autocannon in a worker thread.
 *
 * 1. Checks the answers: every backend and era returns the demo applications.
 * 2. Side by side: BENCH_MCP_CONNECTIONS connections for BENCH_MCP_SECONDS per run, for each era the two
 *    backends alternated (baseline, current, current, baseline, ...: BENCH_MCP_ROUNDS rounds) to cancel
 *    drift. CPU per call = the backend process's user + system CPU over the run / the calls answered.
 * 3. Worst case: BENCH_MCP_WIDE_CONNECTIONS connections (200) for BENCH_MCP_WIDE_SECONDS, modern era,
 *    each backend; p99 and maximum latency, and the kernel's listen-queue overflow counters over the run.
 * 4. Prints the report, writes .bench-data/mcp-last-run.json and the results block of the "MCP server"
 *    section of docs/benchmarks.md (only with the default settings, or with BENCH_WRITE_DOCS=1).
 *
 * Knobs (seconds may be fractions): BENCH_MCP_SECONDS (10), BENCH_MCP_ROUNDS (2), BENCH_MCP_CONNECTIONS (20), BENCH_MCP_WARMUP_SECONDS
 * (3), BENCH_MCP_WIDE_CONNECTIONS (200), BENCH_MCP_WIDE_SECONDS (15), BENCH_MCP_BASELINE (git ref),
 * BENCH_MCP_CURRENT_ENV ("NAME=value ..." settings for the current backend only), BENCH_MCP_CPU_PROF=<dir> (both backends run with --cpu-prof; profiles `baseline.cpuprofile` and
 * `current.cpuprofile` are written there when they stop), BENCH_WRITE_DOCS=1.
 * Profile command (kept with the benchmark, see docs/benchmarks.md):
 *   BENCH_MCP_CPU_PROF=.bench-data/mcp-prof BENCH_MCP_WIDE_SECONDS=1 npm run bench:mcp
 *   node test/bench/cpuprofile-summary.ts .bench-data/mcp-prof/current.cpuprofile
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";
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

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const DOCS_FILE = join(ROOT, "docs", "benchmarks.md");
const REPORT_FILE = process.env.BENCH_MCP_REPORT_FILE
  ? resolve(process.env.BENCH_MCP_REPORT_FILE)
  : join(ROOT, ".bench-data", "mcp-last-run.json");
/** The last commit before issue 18's MCP path work (per-request schema conversion, loopback REST calls). */
const DEFAULT_BASELINE = "7cb38f8";

const DEFAULTS = {
  seconds: 10,
  rounds: 2,
  connections: 20,
  warmupSeconds: 3,
  wideConnections: 200,
  wideSeconds: 15,
};
const SETTINGS = {
  seconds: secondsKnob("BENCH_MCP_SECONDS", DEFAULTS.seconds),
  rounds: knob("BENCH_MCP_ROUNDS", DEFAULTS.rounds, 1),
  connections: knob("BENCH_MCP_CONNECTIONS", DEFAULTS.connections, 1),
  warmupSeconds: knob("BENCH_MCP_WARMUP_SECONDS", DEFAULTS.warmupSeconds),
  wideConnections: knob("BENCH_MCP_WIDE_CONNECTIONS", DEFAULTS.wideConnections, 1),
  wideSeconds: secondsKnob("BENCH_MCP_WIDE_SECONDS", DEFAULTS.wideSeconds, true),
};
const BASELINE = process.env.BENCH_MCP_BASELINE || DEFAULT_BASELINE;
/**
 * Extra service settings for the "current" backend only, `NAME=value` separated by spaces (e.g.
 * `STORE_READ_WORKERS=0`): with BENCH_MCP_BASELINE=HEAD, measures what one setting costs per call.
 */
const CURRENT_ENV = Object.fromEntries(
  (process.env.BENCH_MCP_CURRENT_ENV ?? "")
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
);
const CPU_PROF_DIR = process.env.BENCH_MCP_CPU_PROF ? resolve(process.env.BENCH_MCP_CPU_PROF) : "";
const FULL_RUN =
  Object.entries(DEFAULTS).every(([k, v]) => SETTINGS[k as keyof typeof SETTINGS] === v) &&
  BASELINE === DEFAULT_BASELINE &&
  !CPU_PROF_DIR &&
  Object.keys(CURRENT_ENV).length === 0;

/** tools/call throughput of the current backend ≥ this × the baseline's, and CPU per call ≤ TARGET_CPU_MS. */
const TARGET_RATIO = 2.5;
const TARGET_CPU_MS = 0.3;
const REQUEST_TIMEOUT_S = 10;
const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";

const log = (message: string) => process.stderr.write(`[bench:mcp] ${message}\n`);

type Era = "2026-07-28" | "2025";
type BackendKey = "baseline" | "current";

const modernBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: {
    name: "applications",
    arguments: { limit: 5 },
    _meta: {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientInfo": { name: "mcp-bench", version: "1.0.0" },
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
});
/**
 * In a 2025 session the JSON-RPC ids of requests in flight must differ (the session routes each answer
 * to the stream of its request id): autocannon replaces `[<id>]` with a fresh id per request
 * (`idReplacement`). Concurrent requests with one id hang in the SDK's session transport.
 */
const legacyBody = JSON.stringify({
  jsonrpc: "2.0",
  id: "[<id>]",
  method: "tools/call",
  params: { name: "applications", arguments: { limit: 5 } },
});

/** The JSON-RPC message of a response, sent as JSON or as the SSE data event carrying an id. */
function readJsonRpc(contentType: string, text: string): Record<string, unknown> {
  if (!contentType.includes("text/event-stream")) return JSON.parse(text) as Record<string, unknown>;
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:") || !line.slice(5).trim()) continue;
    const message = JSON.parse(line.slice(5)) as Record<string, unknown>;
    if (message.id !== undefined) return message;
  }
  throw new Error(`no JSON-RPC response in the event stream: ${text.slice(0, 200)}`);
}

interface Backend {
  key: BackendKey;
  child: ChildProcess;
  pid: number;
  endpoint: string;
  exited: Promise<void>;
  stderrTail: string[];
}

interface Call {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The headers and body of one tools/call in an era; a 2025 call first opens a session. */
async function prepareCall(backend: Backend, era: Era, token: string): Promise<Call> {
  const base = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
  };
  if (era === MODERN) {
    return {
      url: backend.endpoint,
      body: modernBody,
      headers: {
        ...base,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "applications",
      },
    };
  }
  const init = await fetch(backend.endpoint, {
    method: "POST",
    headers: base,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: LEGACY,
        capabilities: {},
        clientInfo: { name: "mcp-bench", version: "1.0.0" },
      },
    }),
  });
  const session = init.headers.get("mcp-session-id");
  await init.text();
  if (!session) throw new Error(`${backend.key}: initialize opened no session (HTTP ${init.status})`);
  const headers = { ...base, "mcp-protocol-version": LEGACY, "mcp-session-id": session };
  const initialized = await fetch(backend.endpoint, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  await initialized.text();
  return { url: backend.endpoint, body: legacyBody, headers };
}

/** One real call; fails unless the answer lists exactly the demo applications. */
async function verify(backend: Backend, era: Era, call: Call, demo: readonly string[]): Promise<void> {
  const response = await fetch(call.url, { method: "POST", headers: call.headers, body: call.body });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`${backend.key} ${era}: HTTP ${response.status} ${text.slice(0, 300)}`);
  const message = readJsonRpc(response.headers.get("content-type") ?? "", text) as {
    result?: { isError?: boolean; structuredContent?: { applications?: { name: string }[] } };
  };
  const names = (message.result?.structuredContent?.applications ?? []).map((a) => a.name).sort();
  if (message.result?.isError || JSON.stringify(names) !== JSON.stringify([...demo].sort())) {
    throw new Error(`${backend.key} ${era}: expected the demo applications, got ${text.slice(0, 300)}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------------

const backends = new Set<Backend>();
const scratch = new Set<string>();

function abandon(): void {
  for (const backend of backends) backend.child.kill("SIGKILL");
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  scratch.clear();
}
process.once("exit", abandon);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    abandon();
    process.exit(130);
  });
}

/** The baseline's sources (`git archive <ref>`), sharing this tree's node_modules. */
function extractBaseline(ref: string, dir: string): string {
  const tree = join(dir, "baseline");
  mkdirSync(tree, { recursive: true });
  const archive = execFileSync("git", ["-C", ROOT, "archive", "--format=tar", ref, "src", "package.json"], {
    maxBuffer: 512 * 1024 * 1024,
  });
  execFileSync("tar", ["-x", "-C", tree], { input: archive });
  symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"), "dir");
  return tree;
}

/** The Node.js flags of the CLI's shebang line, as the installed `imaging` command starts with. */
function shebangNodeArgs(cli: string): string[] {
  const first = readFileSync(cli, "utf8").split("\n", 1)[0] ?? "";
  const match = /^#!\s*(?:\/usr\/bin\/env\s+(?:-S\s+)?)?\S*node\b(.*)$/.exec(first);
  return (match?.[1] ?? "").split(/\s+/).filter(Boolean);
}

/** `imaging start --json --only rest --only mcp-analysis --demo` of a tree; resolves on its summary. */
async function startBackend(key: BackendKey, tree: string, dataDir: string, issuer: TestIssuer) {
  const cli = join(tree, "src", "cli", "main.ts");
  const nodeArgs = [
    ...shebangNodeArgs(cli),
    ...(CPU_PROF_DIR
      ? ["--cpu-prof", "--cpu-prof-dir", CPU_PROF_DIR, "--cpu-prof-name", `${key}.cpuprofile`]
      : []),
  ];
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      cli,
      "start",
      "--json",
      "--only",
      "rest",
      "--only",
      "mcp-analysis",
      "--demo",
      "--data-dir",
      dataDir,
    ],
    {
      cwd: tree,
      env: cleanEnv({
        IDP_ISSUER: issuer.issuer,
        LOG_LEVEL: "warn",
        PUBLIC_URL: "http://127.0.0.1:9",
        REST_PORT: "0",
        MCP_ANALYSIS_PORT: "0",
        INTERNAL_BIND_ADDRESS: "127.0.0.1",
        ...(key === "current" ? CURRENT_ENV : {}),
      }),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const backend: Backend = {
    key,
    child,
    pid: child.pid ?? 0,
    endpoint: "",
    stderrTail: [],
    exited: new Promise((r) => child.once("exit", () => r())),
  };
  backends.add(backend);
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    for (const line of chunk.split("\n").filter(Boolean)) {
      backend.stderrTail.push(line);
      if (backend.stderrTail.length > 20) backend.stderrTail.shift();
    }
  });
  const summary = await new Promise<{ mcp: { analysis: string }; demo: string[] }>(
    (resolveSummary, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`${key}: no start-up summary within 60 s`)), 60_000);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`${key} exited (${code}) before starting:\n${backend.stderrTail.join("\n")}`));
      });
      child.stdout?.setEncoding("utf8");
      child.stdout?.on("data", (chunk: string) => {
        out += chunk;
        const match = /^\{\n[\s\S]*?\n\}$/m.exec(out);
        if (!match) return;
        clearTimeout(timer);
        resolveSummary(JSON.parse(match[0]));
        out = "";
      });
    },
  );
  backend.endpoint = `${summary.mcp.analysis}/mcp`;
  return { backend, demo: summary.demo };
}

async function stopBackend(backend: Backend): Promise<void> {
  if (backend.child.exitCode !== null || backend.child.signalCode !== null) return;
  backend.child.kill("SIGTERM");
  const killed = !(await exitedWithin(backend.exited, 15_000));
  if (killed) {
    log(`${backend.key} did not stop within 15 s: SIGKILL (its CPU profile is lost)`);
    backend.child.kill("SIGKILL");
    await backend.exited;
  }
  backends.delete(backend);
}

// ---------------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------------

interface Run {
  label: string;
  backend: BackendKey;
  era: Era;
  connections: number;
  seconds: number;
  requestsPerSecond: number;
  total: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** non-2xx answers + connection errors + timeouts (no answer within 10 s). */
  failed: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** The backend's CPU over the run, in % of one core, and per call answered. */
  cpuPct: number;
  cpuMsPerCall: number;
  /** Everything else on the machine, in % of one core: near 0 for a clean run. */
  otherPct: number;
  listenOverflows: number;
  synRetransmits: number;
  /** The longest accept queue of the MCP port, sampled every 100 ms over the run. */
  acceptQueueMax: number;
}

async function load(
  label: string,
  backend: Backend,
  era: Era,
  call: Call,
  connections: number,
  seconds: number,
) {
  const before = {
    cpu: threadCpuSeconds(backend.pid),
    machine: machineBusySeconds(),
    at: performance.now(),
    bench: process.cpuUsage(),
    kernel: listenDrops(),
  };
  // workers: 1 runs autocannon in a worker thread, off this thread (which serves the identity provider).
  const options = {
    url: call.url,
    method: "POST",
    headers: call.headers,
    body: call.body,
    connections,
    ...cannonDuration(seconds),
    workers: 1,
    timeout: REQUEST_TIMEOUT_S,
    idReplacement: call.body.includes("[<id>]"),
  };
  const port = Number(new URL(call.url).port);
  let acceptQueueMax = 0;
  const sampler = setInterval(() => {
    acceptQueueMax = Math.max(acceptQueueMax, acceptQueue(port));
  }, 100);
  let result: Awaited<ReturnType<typeof autocannon>>;
  try {
    result = await autocannon(options);
  } finally {
    clearInterval(sampler);
  }
  const wall = (performance.now() - before.at) / 1000;
  const cpu = threadCpuSeconds(backend.pid) - before.cpu;
  const bench = process.cpuUsage(before.bench);
  const kernel = listenDrops();
  const run: Run = {
    label,
    backend: backend.key,
    era,
    connections,
    seconds,
    requestsPerSecond: round(result.requests.total / result.duration, 1),
    total: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    failed: result.non2xx + result.errors + result.timeouts,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    cpuPct: round((100 * cpu) / wall, 0),
    cpuMsPerCall: round((1000 * cpu) / Math.max(1, result.requests.total), 3),
    otherPct: Math.max(
      0,
      round(
        (100 * (machineBusySeconds() - before.machine - cpu - (bench.user + bench.system) / 1e6)) / wall,
        0,
      ),
    ),
    listenOverflows: kernel.overflows - before.kernel.overflows,
    synRetransmits: kernel.synRetransmits - before.kernel.synRetransmits,
    acceptQueueMax,
  };
  log(
    `${label.padEnd(10)} ${backend.key.padEnd(8)} ${era.padEnd(10)} ${String(run.requestsPerSecond).padStart(7)} req/s  ` +
      `p50 ${run.p50Ms} p99 ${run.p99Ms} max ${run.maxMs} ms  CPU ${run.cpuPct} % = ${run.cpuMsPerCall} ms/call  ` +
      `failed ${run.failed} (non-2xx ${run.non2xx}, errors ${run.errors}, timeouts ${run.timeouts})  other ${run.otherPct} %  accept queue max ${run.acceptQueueMax}, listen overflows ${run.listenOverflows}, SYN retransmits ${run.synRetransmits}`,
  );
  await sleep(500);
  return run;
}

const mean = (values: number[]) =>
  values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN;

// ---------------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------------

interface Report {
  date: string;
  machine: string;
  settings: typeof SETTINGS;
  baseline: string;
  runs: Run[];
  wide: Run[];
  summary: {
    era: Era;
    baseline: { rps: number; cpuMs: number };
    current: { rps: number; cpuMs: number };
    ratio: number;
  }[];
  targets: { name: string; measured: string; met: boolean }[];
}

function render(report: Report): string {
  const row = (r: Run) =>
    `| ${r.label} | ${r.backend} | ${r.era} | ${r.requestsPerSecond} | ${r.p50Ms} / ${r.p99Ms} / ${r.maxMs} | ${r.cpuPct} % | ${r.cpuMsPerCall} | ${r.otherPct} % | ${r.failed} |`;
  return [
    `Run of ${report.date} on ${report.machine}. Baseline: \`${report.baseline}\`.`,
    "",
    "| target | measured | met |",
    "| --- | --- | --- |",
    ...report.targets.map((t) => `| ${t.name} | ${t.measured} | ${t.met ? "yes" : "**no**"} |`),
    "",
    `Side by side (${report.settings.connections} connections, ${report.settings.seconds} s per run; backend CPU = the ` +
      "REST + MCP process, % of one core; other = the rest of the machine, near 0 % for a clean run):",
    "",
    "| run | backend | era | calls/s | latency p50 / p99 / max ms | backend CPU | CPU ms per call | other CPU | failed |",
    "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...report.runs.map(row),
    "",
    "| era | baseline calls/s | current calls/s | current / baseline | CPU ms per call, baseline → current |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...report.summary.map(
      (s) =>
        `| ${s.era} | ${s.baseline.rps} | ${s.current.rps} | **× ${s.ratio.toFixed(2)}** | ${s.baseline.cpuMs} → ${s.current.cpuMs} |`,
    ),
    ...(report.wide.length
      ? [
          "",
          `Worst case (${report.settings.wideConnections} connections, ${report.settings.wideSeconds} s, ${MODERN}):`,
          "",
          "| backend | calls/s | latency p50 / p99 / max ms | CPU ms per call | failed | longest accept queue | listen overflows | SYN retransmits |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
          ...report.wide.map(
            (r) =>
              `| ${r.backend} | ${r.requestsPerSecond} | ${r.p50Ms} / ${r.p99Ms} / ${r.maxMs} | ${r.cpuMsPerCall} | ${r.failed} | ${r.acceptQueueMax} | ${r.listenOverflows} | ${r.synRetransmits} |`,
          ),
        ]
      : []),
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const cpus = os.cpus();
  const machine = `${cpus.length} × ${cpus[0]?.model ?? "unknown CPU"}, ${round(os.totalmem() / 2 ** 30, 1)} GiB, Node.js ${process.version}`;
  log(
    `${machine}; settings ${JSON.stringify(SETTINGS)}; baseline ${BASELINE}${FULL_RUN ? "" : " (not the defaults)"}`,
  );
  if (CPU_PROF_DIR) mkdirSync(CPU_PROF_DIR, { recursive: true });
  const tmp = mkdtempSync(join(os.tmpdir(), "imaging-mcp-bench-"));
  scratch.add(tmp);
  let issuer: TestIssuer | undefined;
  const started: Backend[] = [];
  try {
    issuer = await startTestIssuer();
    const baselineTree = extractBaseline(BASELINE, tmp);
    const baseline = await startBackend("baseline", baselineTree, join(tmp, "data-baseline"), issuer);
    started.push(baseline.backend);
    const current = await startBackend("current", ROOT, join(tmp, "data-current"), issuer);
    started.push(current.backend);
    const token = await issuer.sign(
      { sub: "bench-admin", roles: ["admin"], applications: [] },
      { expiresIn: "2h" },
    );

    const eras: Era[] = [MODERN, "2025"];
    const pairs = [baseline, current];
    const calls = new Map<string, Call>();
    for (const era of eras) {
      for (const { backend, demo } of pairs) {
        const call = await prepareCall(backend, era, token);
        await verify(backend, era, call, demo);
        calls.set(`${backend.key} ${era}`, call);
      }
    }
    log("every backend answers the demo applications in both eras");
    const callOf = (backend: Backend, era: Era) => calls.get(`${backend.key} ${era}`) as Call;

    const runs: Run[] = [];
    for (const era of eras) {
      if (SETTINGS.warmupSeconds > 0) {
        for (const { backend } of pairs)
          await load(
            "warm-up",
            backend,
            era,
            callOf(backend, era),
            SETTINGS.connections,
            SETTINGS.warmupSeconds,
          );
      }
      for (let r = 0; r < SETTINGS.rounds; r++) {
        const order = r % 2 === 0 ? pairs : [...pairs].reverse();
        for (const { backend } of order) {
          runs.push(
            await load(
              `round ${r + 1}`,
              backend,
              era,
              callOf(backend, era),
              SETTINGS.connections,
              SETTINGS.seconds,
            ),
          );
        }
      }
    }
    const wide: Run[] = [];
    if (SETTINGS.wideSeconds > 0) {
      for (const { backend } of pairs) {
        wide.push(
          await load(
            "wide",
            backend,
            MODERN,
            callOf(backend, MODERN),
            SETTINGS.wideConnections,
            SETTINGS.wideSeconds,
          ),
        );
      }
    }
    for (const era of eras)
      for (const { backend, demo } of pairs) await verify(backend, era, callOf(backend, era), demo);

    const summary = eras.map((era) => {
      const of = (key: BackendKey) => {
        const mine = runs.filter((r) => r.era === era && r.backend === key);
        return {
          rps: round(mean(mine.map((r) => r.requestsPerSecond)), 1),
          cpuMs: round(mean(mine.map((r) => r.cpuMsPerCall)), 3),
        };
      };
      const b = of("baseline");
      const c = of("current");
      return { era, baseline: b, current: c, ratio: round(c.rps / b.rps, 2) };
    });
    // The baseline's failures are measured, not a defect of this tree (its 200-connection tail times out).
    const failedOf = (key: BackendKey) =>
      [...runs, ...wide].filter((r) => r.backend === key).reduce((n, r) => n + r.failed, 0);
    const failed = failedOf("current");
    const targets = [
      ...summary.map((s) => ({
        name: `${s.era}: calls/s ≥ ${TARGET_RATIO} × baseline`,
        measured: `${s.current.rps} vs ${s.baseline.rps}: × ${s.ratio.toFixed(2)}`,
        met: s.ratio >= TARGET_RATIO,
      })),
      ...summary.map((s) => ({
        name: `${s.era}: backend CPU per call ≤ ${TARGET_CPU_MS} ms`,
        measured: `${s.current.cpuMs} ms (baseline ${s.baseline.cpuMs} ms)`,
        met: s.current.cpuMs <= TARGET_CPU_MS,
      })),
      {
        name: "current: no failed call",
        measured: `${failed} failed (baseline: ${failedOf("baseline")})`,
        met: failed === 0,
      },
    ];
    const report: Report = {
      date: `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
      machine,
      settings: SETTINGS,
      baseline: BASELINE,
      runs,
      wide,
      summary,
      targets,
    };
    const results = render(report);
    mkdirSync(dirname(REPORT_FILE), { recursive: true });
    writeFileSync(REPORT_FILE, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`\n${results}\n`);
    if (FULL_RUN || process.env.BENCH_WRITE_DOCS === "1") {
      writeResultsSection(DOCS_FILE, "mcp", "MCP server", results);
      log(`results written to ${DOCS_FILE}`);
    }
    if (failed > 0) process.exitCode = 1;
  } finally {
    for (const backend of started.reverse()) await stopBackend(backend);
    await issuer?.close();
    rmSync(tmp, { recursive: true, force: true });
    scratch.delete(tmp);
  }
}

const budgetMs =
  1000 *
  (180 +
    2 * 2 * (SETTINGS.warmupSeconds + 1 + SETTINGS.rounds * (SETTINGS.seconds + 1)) +
    2 * (SETTINGS.wideSeconds + 1));
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
