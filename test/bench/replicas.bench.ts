/**
 * Benchmark of replicas behind a load balancer (npm run bench:replicas, issue 16):
 * 1. `tools/call` throughput (stateless 2026-07-28, the MCP token of a real sign-in with the embedded
 *    identity provider) with 1, 2 and 3 `imaging start` replicas on one PostgreSQL behind Debian's
 *    HAProxy (the tests' configuration, test/support/haproxy.ts);
 * 2. the cost of our hop next to a C proxy's: with one replica, the same HAProxy in front of the gateway
 *    (the client's MCP token) and in front of the replica's analysis MCP server directly (a platform
 *    token exchanged as the gateway exchanges it). The replica's CPU per request on the gateway path
 *    minus that on the direct path is what the gateway adds; HAProxy's CPU per request is a C proxy's.
 *
 * Knobs: BENCH_REPLICAS_SECONDS (15; fractions allowed), BENCH_REPLICAS_WARMUP_SECONDS (the warm-up
 * before each run, min(2, BENCH_REPLICAS_SECONDS); 0 skips it), BENCH_REPLICAS_CONNECTIONS (64),
 * BENCH_REPLICAS_MAX (3);
 * BENCH_REPLICAS_REPORT names a file for the results as JSON (the tiny-scale test reads it). The
 * results replace their section of docs/benchmarks.md with the defaults, or with BENCH_WRITE_DOCS=1.
 * Needs TEST_POSTGRES_URL (or PostgreSQL as `.ci/run` sets it up) and HAProxy in /usr/sbin.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { issuerMetadata } from "../../src/auth/issuer-metadata.ts";
import { createTokenExchanger } from "../../src/auth/token-exchange.ts";
import { PLATFORM_AUDIENCE } from "../../src/contracts/platform.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { openStore } from "../../src/store/database.ts";
import { startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { startHaproxy } from "../support/haproxy.ts";
import { seedCimdClient, seedUsers, USERS } from "../support/idp-service.ts";
import {
  callApplications,
  signInThrough,
  toolsCallBody,
  toolsCallHeaders,
} from "../support/replica-flows.ts";
import { startReplicas } from "../support/replicas.ts";
import { storedSecret } from "../support/stored-secrets.ts";
import { createTestStore } from "../support/stores.ts";
import {
  cannonDuration,
  knob,
  machineBusySeconds,
  round,
  secondsKnob,
  threadCpuSeconds,
  writeResultsSection,
} from "./bench-kit.ts";

const SECONDS = secondsKnob("BENCH_REPLICAS_SECONDS", 15);
const WARMUP_SECONDS = secondsKnob("BENCH_REPLICAS_WARMUP_SECONDS", Math.min(2, SECONDS), true);
const CONNECTIONS = knob("BENCH_REPLICAS_CONNECTIONS", 64, 1);
const MAX = knob("BENCH_REPLICAS_MAX", 3, 1);
const DEFAULTS = SECONDS === 15 && WARMUP_SECONDS === 2 && CONNECTIONS === 64 && MAX === 3;
const WRITE_DOCS = process.env.BENCH_WRITE_DOCS === "1" || (DEFAULTS && process.env.BENCH_WRITE_DOCS !== "0");
const DOCS = join(import.meta.dirname, "..", "..", "docs", "benchmarks.md");
const REDIRECT = "http://127.0.0.1/callback";
const KEY = randomBytes(32).toString("base64");
const log = (message: string) => process.stderr.write(`[bench:replicas] ${message}\n`);

interface Run {
  title: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU ms per request: the replicas together, and HAProxy. */
  replicaCpuMs: number;
  haproxyCpuMs: number;
  /** Share of the machine's cores busy during the run, %. */
  machineBusy: number;
}

async function measure(
  title: string,
  url: string,
  headers: Record<string, string>,
  pids: { replicas: number[]; haproxy: number },
): Promise<Run> {
  const options = {
    url,
    method: "POST",
    headers,
    body: toolsCallBody(1),
    connections: CONNECTIONS,
    timeout: 10,
  };
  // Warm-up: JIT, pools, caches.
  if (WARMUP_SECONDS > 0) await autocannon({ ...options, ...cannonDuration(WARMUP_SECONDS) });
  const cpu = () => ({
    replicas: pids.replicas.reduce((sum, pid) => sum + threadCpuSeconds(pid), 0),
    haproxy: threadCpuSeconds(pids.haproxy),
    machine: machineBusySeconds(),
    at: Date.now(),
  });
  const before = cpu();
  const result = await autocannon({ ...options, ...cannonDuration(SECONDS) });
  const after = cpu();
  const requests = result["2xx"] || 1;
  const run: Run = {
    title,
    rps: round(result["2xx"] / result.duration, 0),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    replicaCpuMs: round(((after.replicas - before.replicas) * 1000) / requests, 3),
    haproxyCpuMs: round(((after.haproxy - before.haproxy) * 1000) / requests, 3),
    machineBusy: round(
      ((after.machine - before.machine) / ((after.at - before.at) / 1000) / cpus().length) * 100,
      0,
    ),
  };
  log(JSON.stringify(run));
  return run;
}

async function main(): Promise<void> {
  const store = await createTestStore("postgres");
  const documents = await startCimdDocumentServer("/oauth/client-metadata.json", [REDIRECT]);
  const caDir = mkdtempSync(join(tmpdir(), "imaging-bench-ca-"));
  writeFileSync(join(caDir, "ca.pem"), documents.ca);
  const env = {
    DATABASE_URL: store.databaseUrl as string,
    IMAGING_SECRETS_KEY: KEY,
    IDP_EXTRA_CA_FILE: join(caDir, "ca.pem"),
  };
  const runs: Run[] = [];
  let hop: { gateway: Run; direct: Run } | undefined;
  try {
    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    try {
      await loadDemo(handle.db);
      await seedUsers(handle.db);
      await seedCimdClient(handle.db, "bench-client", documents.clientId);
    } finally {
      await handle.close();
    }
    for (let count = 1; count <= MAX; count++) {
      const set = await startReplicas({ count, env, pinnable: false });
      try {
        const signIn = { issuer: `${set.base}/auth/realms/imaging`, clientId: documents.clientId };
        const { accessToken } = await signInThrough({
          replica: "a",
          ...signIn,
          redirectUri: REDIRECT,
          resource: `${set.base}/mcp`,
          username: "alice",
          password: USERS.alice.password,
        });
        const check = await callApplications(`${set.base}/mcp`, accessToken);
        if (!check.ok) throw new Error(`tools/call through HAProxy failed: ${check.reason}`);
        const pids = {
          replicas: set.replicas.map((r) => r.child.pid as number),
          haproxy: set.haproxy.process.pid as number,
        };
        const gateway = await measure(
          `${count} replica${count > 1 ? "s" : ""}`,
          `${set.base}/mcp`,
          toolsCallHeaders(accessToken),
          pids,
        );
        runs.push(gateway);
        if (count === 1) {
          // The same HAProxy configuration straight in front of the replica's analysis MCP server.
          const replica = set.replicas[0];
          if (!replica) throw new Error("no replica");
          const direct = await startHaproxy({
            backends: [{ name: "a", port: replica.mcpAnalysisPort }],
            healthPath: "/healthz",
          });
          try {
            await direct.waitFor("a", "UP");
            const exchanger = createTokenExchanger({
              metadata: issuerMetadata(signIn.issuer),
              clientId: "mcp-token-exchange",
              clientSecret: await storedSecret(store, "mcp-token-exchange", { secretsKey: KEY }),
              audience: PLATFORM_AUDIENCE,
            });
            const platform = await exchanger.exchange(accessToken, Date.now() + 300_000);
            const answer = await callApplications(`${direct.url}/mcp`, platform.accessToken);
            if (!answer.ok) throw new Error(`tools/call straight to the MCP server failed: ${answer.reason}`);
            hop = {
              gateway,
              direct: await measure(
                "HAProxy → MCP server (no gateway)",
                `${direct.url}/mcp`,
                toolsCallHeaders(platform.accessToken),
                {
                  replicas: pids.replicas,
                  haproxy: direct.process.pid as number,
                },
              ),
            };
          } finally {
            await direct.stop();
          }
        }
      } finally {
        await set.stop();
      }
    }
  } finally {
    await documents.close();
    await store.drop();
    rmSync(caDir, { recursive: true, force: true });
  }
  const errors = runs.reduce((sum, r) => sum + r.errors, 0) + (hop?.direct.errors ?? 0);
  const base = runs[0]?.rps ?? 1;
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model.trim()}, ` +
      `load average ${loadavg()[0]?.toFixed(2)} at the end (a machine shared with other work: absolute numbers ` +
      `are pessimistic, ratios within one run are what to compare). ${CONNECTIONS} connections, ${SECONDS} s ` +
      "per run after a 2 s warm-up, stateless 2026-07-28 `tools/call` of `applications` with the MCP token of " +
      "a real sign-in (embedded identity provider), replicas on one PostgreSQL behind HAProxy " +
      "(test/support/haproxy.ts).",
    "",
    "| path | requests/s | × 1 replica | p50 ms | p99 ms | errors | replica CPU ms/request | HAProxy CPU ms/request | machine busy % |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...[...runs, ...(hop ? [hop.direct] : [])].map(
      (r) =>
        `| ${r.title} | ${r.rps} | ${round(r.rps / base, 2)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.replicaCpuMs} | ${r.haproxyCpuMs} | ${r.machineBusy} |`,
    ),
  ];
  if (hop) {
    const added = round(hop.gateway.replicaCpuMs - hop.direct.replicaCpuMs, 3);
    lines.push(
      "",
      `Our hop next to a C proxy's, one replica: the replica's CPU per request is ${hop.gateway.replicaCpuMs} ms ` +
        `through the gateway and ${hop.direct.replicaCpuMs} ms with HAProxy straight in front of its MCP server, ` +
        `so the gateway adds about ${added} ms of CPU per request; HAProxy's own hop costs ` +
        `${hop.direct.haproxyCpuMs} ms per request (× ${round(added / Math.max(hop.direct.haproxyCpuMs, 0.001), 1)}).`,
    );
  }
  const text = lines.join("\n");
  process.stdout.write(`${text}\n`);
  if (process.env.BENCH_REPLICAS_REPORT) {
    writeFileSync(process.env.BENCH_REPLICAS_REPORT, JSON.stringify({ runs, hop }, null, 2));
  }
  if (WRITE_DOCS) writeResultsSection(DOCS, "replicas", "Replicas behind HAProxy (bench:replicas)", text);
  if (errors > 0) {
    log(`${errors} requests failed`);
    process.exitCode = 1;
  }
}

await main();
