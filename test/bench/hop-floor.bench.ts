/**
 * `npm run bench:gateway:floor`: where a Node.js hop's CPU goes, layer by layer, against nginx (issue 18,
 * point 2). The gateway benchmark shows that even a bare Node.js proxy with no check costs several times
 * nginx's CPU per request; this one takes that floor apart. Every path sits in front of the same upstream
 * (nginx answering a fixed 1.6 kB JSON body itself, so that the upstream costs almost nothing and the
 * machine's CPU goes to the paths measured), gets the same request at the same fixed rate over the same
 * 20 keep-alive connections, runs alternate (then in reverse order) so that drift cancels, and the CPU
 * time of each path's own process(es) (/proc, user + system, all threads) is divided by its requests:
 *
 * - nginx: the reference proxy (master + worker; Debian's nginx-light, as in bench:gateway);
 * - net, http, undici, undici-unix, agent: the Node.js layers of test/bench/hop-floor-variants.ts.
 *
 * Every answer is checked against the upstream's body (autocannon's expectBody). Knobs: BENCH_HOP_SECONDS
 * (6 per run), BENCH_HOP_ROUNDS (2), BENCH_HOP_RATE (1400 requests/s, about what bench:gateway's MCP
 * server sustains), BENCH_HOP_NODE_ARGS (Node.js flags for every Node.js path, e.g.
 * `--max-semi-space-size=64`; default: the CLI's shebang flags), BENCH_HOP_SEQUENTIAL (2000 sequential
 * requests per path after the load, for the median each path adds unloaded; 0 skips), BENCH_HOP_REPORT
 * (JSON report file).
 * Loopback only. Prints a Markdown table; docs/benchmarks.md ("Gateway") records a run by hand.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { Client } from "undici";
import { threadCpuSeconds } from "./bench-kit.ts";
import { childrenOf, findNginx, NGINX_MISSING } from "./nginx-proxy.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SECONDS = Number(process.env.BENCH_HOP_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_HOP_ROUNDS ?? 2);
const RATE = Number(process.env.BENCH_HOP_RATE ?? 1400);
const CONNECTIONS = 20;
/** Sequential requests per path for the unloaded latency (0 skips it). */
const SEQUENTIAL = Number(process.env.BENCH_HOP_SEQUENTIAL ?? 2000);
const CLI_NODE_ARGS = (() => {
  const first = readFileSync(join(ROOT, "src", "cli", "main.ts"), "utf8").split("\n")[0] ?? "";
  return first.startsWith("#!") ? first.split(/\s+/).filter((a) => a.startsWith("--")) : [];
})();
const NODE_ARGS =
  process.env.BENCH_HOP_NODE_ARGS === undefined
    ? CLI_NODE_ARGS
    : process.env.BENCH_HOP_NODE_ARGS.split(/\s+/).filter(Boolean);

/** The upstream's answer: a JSON-RPC result of the size of bench:gateway's (no quote, `$` or `\`). */
const BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  result: { content: [{ type: "text", text: "a".repeat(1580) }] },
});
const REQUEST = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "applications", arguments: { limit: 5 } },
});

const VARIANTS = ["net", "http", "undici", "undici-unix", "agent"] as const;
type PathName = "nginx" | (typeof VARIANTS)[number];
const LAYERS: Record<PathName, string> = {
  nginx: "nginx 1 worker, proxy_pass with upstream keep-alive (the reference)",
  net: "node:net, canned answer per read: event loop + socket system calls",
  http: "node:http server, body read, canned answer: + HTTP parsing, request/response objects",
  undici: "node:http + undici dispatcher to the upstream (bench:gateway's bare proxy): + the client side",
  "undici-unix": "the same, upstream over a Unix socket",
  agent: "node:http + node:http's keep-alive Agent instead of undici",
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || !address) throw new Error("no free port");
  return address.port;
}

const children: ChildProcess[] = [];
function stopAll(): void {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
}
process.once("SIGINT", () => {
  stopAll();
  process.exit(130);
});

function startNginx(binary: string, dir: string, server: string): ChildProcess {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755); // run as root, the workers are `nobody`
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((name) => `${name}_temp_path ${dir}/${name};`)
    .join(" ");
  writeFileSync(
    join(dir, "nginx.conf"),
    `daemon off; master_process on; worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http { access_log off; ${temp} keepalive_requests 100000; default_type application/json;
${server}
}
`,
  );
  const child = spawn(binary, ["-p", dir, "-e", join(dir, "error.log"), "-c", join(dir, "nginx.conf")], {
    stdio: "ignore",
  });
  children.push(child);
  return child;
}

async function answering(url: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const response = await fetch(url, { method: "POST", body: REQUEST, signal: AbortSignal.timeout(1000) });
      const text = await response.text();
      if (response.status === 200 && text === BODY) return;
      throw new Error(`${url} answered ${response.status}: ${text.slice(0, 100)}`);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

interface Path {
  name: PathName;
  url: string;
  pids(): number[];
}
interface Totals {
  cpuSeconds: number;
  requests: number;
  failed: number;
}

async function main(): Promise<void> {
  const binary = findNginx();
  if (!binary) {
    process.stderr.write(`${NGINX_MISSING}\n`);
    process.exit(1);
  }
  const dir = mkdtempSync(join(tmpdir(), "imaging-hop-floor-"));
  chmodSync(dir, 0o755);
  try {
    const upstreamPort = await freePort();
    const upstreamSocket = join(dir, "upstream.sock");
    startNginx(
      binary,
      join(dir, "upstream"),
      `server { listen 127.0.0.1:${upstreamPort}; listen unix:${upstreamSocket}; location / { return 200 '${BODY}'; } }`,
    );
    await answering(`http://127.0.0.1:${upstreamPort}/mcp`);
    const nginxPort = await freePort();
    const nginx = startNginx(
      binary,
      join(dir, "proxy"),
      `upstream up { server 127.0.0.1:${upstreamPort}; keepalive 256; keepalive_requests 100000; }
server { listen 127.0.0.1:${nginxPort}; location / { proxy_pass http://up; proxy_http_version 1.1;
  proxy_set_header Connection ""; proxy_set_header Host $http_host; proxy_buffering off; } }`,
    );
    const paths: Path[] = [
      {
        name: "nginx",
        url: `http://127.0.0.1:${nginxPort}/mcp`,
        pids: () => [nginx.pid ?? 0, ...childrenOf(nginx.pid ?? 0)],
      },
    ];
    for (const variant of VARIANTS) {
      const port = await freePort();
      const upstream = variant === "undici-unix" ? upstreamSocket : `127.0.0.1:${upstreamPort}`;
      const child = spawn(
        process.execPath,
        [...NODE_ARGS, join(ROOT, "test", "bench", "hop-floor-variants.ts"), variant, String(port), upstream],
        { env: { ...process.env, HOP_FLOOR_BODY: BODY }, stdio: ["ignore", "pipe", "inherit"] },
      );
      children.push(child);
      await new Promise<void>((resolve, reject) => {
        child.once("exit", (code) => reject(new Error(`the ${variant} path exited (${code})`)));
        child.stdout?.once("data", () => resolve());
      });
      paths.push({ name: variant, url: `http://127.0.0.1:${port}/mcp`, pids: () => [child.pid ?? 0] });
    }
    for (const path of paths) await answering(path.url);

    const run = async (path: Path, seconds: number) => {
      const pids = path.pids();
      const before = pids.reduce((sum, pid) => sum + threadCpuSeconds(pid), 0);
      const result = await autocannon({
        url: path.url,
        method: "POST",
        body: REQUEST,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          // A bearer token of a real one's size: proxies copy it.
          authorization: `Bearer ${"t".repeat(700)}`,
        },
        connections: CONNECTIONS,
        overallRate: RATE,
        duration: seconds,
        expectBody: BODY,
      });
      const cpu = pids.reduce((sum, pid) => sum + threadCpuSeconds(pid), 0) - before;
      return {
        cpuSeconds: cpu,
        requests: result.requests.total,
        failed: result.errors + result.timeouts + result.non2xx + (result.mismatches ?? 0),
        p50: result.latency.p50,
      };
    };
    for (const path of paths) await run(path, Math.min(2, SECONDS)); // warm-up (JIT, connections)
    const totals = new Map<PathName, Totals>(
      paths.map((p) => [p.name, { cpuSeconds: 0, requests: 0, failed: 0 }]),
    );
    const runs: unknown[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const path of round % 2 === 0 ? paths : [...paths].reverse()) {
        const result = await run(path, SECONDS);
        const total = totals.get(path.name) as Totals;
        total.cpuSeconds += result.cpuSeconds;
        total.requests += result.requests;
        total.failed += result.failed;
        runs.push({ round: round + 1, path: path.name, ...result });
        process.stderr.write(
          `[hop-floor] round ${round + 1} ${path.name}: ${(result.requests / SECONDS).toFixed(0)} req/s, ` +
            `${((1000 * result.cpuSeconds) / Math.max(1, result.requests)).toFixed(4)} ms CPU/request, failed ${result.failed}\n`,
        );
      }
    }
    // Unloaded: one client, one request at a time over a keep-alive connection, blocks of 50 alternating
    // over the paths and the upstream itself ("upstream"), so that each path's added median is its own.
    const latencyTargets = [
      { name: "upstream", url: `http://127.0.0.1:${upstreamPort}` },
      ...paths.map((p) => ({ name: p.name as string, url: new URL(p.url).origin })),
    ];
    const samples = new Map<string, number[]>(latencyTargets.map((t) => [t.name, []]));
    const clients = latencyTargets.map((t) => ({ ...t, client: new Client(t.url) }));
    for (let done = 0; done < SEQUENTIAL; done += 50) {
      for (const { name, client } of clients) {
        for (let i = 0; i < Math.min(50, SEQUENTIAL - done); i++) {
          const start = performance.now();
          const answer = await client.request({ method: "POST", path: "/mcp", body: REQUEST });
          const text = await answer.body.text();
          (samples.get(name) as number[]).push(performance.now() - start);
          if (text !== BODY) throw new Error(`${name} answered ${answer.statusCode}: ${text.slice(0, 100)}`);
        }
      }
    }
    await Promise.all(clients.map(({ client }) => client.close()));
    const median = (name: string) => {
      const sorted = [...(samples.get(name) as number[])].sort((a, b) => a - b);
      return sorted.length === 0 ? 0 : (sorted[Math.floor(sorted.length / 2)] as number);
    };
    const perRequest = (name: PathName) => {
      const t = totals.get(name) as Totals;
      return t.requests === 0 ? 0 : (1000 * t.cpuSeconds) / t.requests;
    };
    const nginxMs = perRequest("nginx");
    const report = {
      date: new Date().toISOString(),
      loadAverage: loadavg(),
      rate: RATE,
      connections: CONNECTIONS,
      seconds: SECONDS,
      rounds: ROUNDS,
      nodeArgs: NODE_ARGS,
      sequential: SEQUENTIAL,
      upstreamP50Ms: Number(median("upstream").toFixed(4)),
      paths: paths.map((p) => ({
        path: p.name,
        layer: LAYERS[p.name],
        cpuMsPerRequest: Number(perRequest(p.name).toFixed(4)),
        vsNginx: nginxMs > 0 ? Number((perRequest(p.name) / nginxMs).toFixed(2)) : null,
        ...totals.get(p.name),
        /** Unloaded median minus the upstream's own (null when not measured). */
        addedP50Ms: SEQUENTIAL > 0 ? Number((median(p.name) - median("upstream")).toFixed(4)) : null,
      })),
      runs,
    };
    if (process.env.BENCH_HOP_REPORT)
      writeFileSync(process.env.BENCH_HOP_REPORT, JSON.stringify(report, null, 2));
    const lines = [
      `Load average before the end: ${report.loadAverage.map((l) => l.toFixed(2)).join(" / ")}; ${RATE} requests/s, ${CONNECTIONS} connections, ${ROUNDS} × ${SECONDS} s per path; Node.js flags: ${NODE_ARGS.join(" ") || "none"}`,
      "",
      "| path | what it adds | CPU per request ms | ÷ nginx | added p50 unloaded ms | requests | failed |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
      ...report.paths.map(
        (p) =>
          `| ${p.path} | ${p.layer} | ${p.cpuMsPerRequest.toFixed(4)} | ${p.vsNginx === null ? "n/a (nginx used no measurable CPU)" : `× ${p.vsNginx.toFixed(2)}`} | ${p.addedP50Ms?.toFixed(3) ?? ""} | ${p.requests} | ${p.failed} |`,
      ),
      "",
      `Unloaded: ${SEQUENTIAL} sequential requests per path, the upstream's own median ${report.upstreamP50Ms} ms.`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    if (report.paths.some((p) => (p.failed ?? 0) > 0 || !p.requests)) process.exitCode = 1;
  } finally {
    stopAll();
    await new Promise((r) => setTimeout(r, 200));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
