/**
 * npm run bench:gateway at a tiny scale: the benchmark's own code keeps working end to end — the
 * paths (direct, the one-process gateway with the stand-in identity provider, the gateway alone, nginx, the
 * bare Node.js proxy) answer right under load, each proxy's CPU per request is measured, the
 * children stop on SIGTERM. No timing is asserted. nginx must be installed (.ci/run installs it).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { findNginx, NGINX_MISSING } from "../bench/nginx-proxy.ts";

const BENCH = fileURLToPath(new URL("../bench/gateway.bench.ts", import.meta.url));

interface Run {
  target: string;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  proxyCpuMsPerRequest: number;
}

// The stand-in identity provider, and the real embedded one in the gateway (the memory measurement).
for (const idp of ["stand-in", "embedded"] as const)
  describe(`bench:gateway at a tiny scale (${idp} identity provider)`, { timeout: 300_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), "imaging-gateway-bench-tiny-"));
    after(() => rmSync(dir, { recursive: true, force: true }));

    it("measures direct, gateway, nginx and a bare Node.js proxy side by side with right answers, CPU per request per proxy, and a clean stop", async () => {
      assert.ok(findNginx(), NGINX_MISSING);
      const reportFile = join(dir, "report.json");
      const child = spawn(process.execPath, [BENCH], {
        env: {
          ...process.env,
          // Half a second per side-by-side run: each path still answers dozens to hundreds of requests under
          // load, every answer checked. The soak keeps its second: each of its 20 connections must get answers,
          // the check that has failed on an overloaded machine (run-suite.ts).
          BENCH_GATEWAY_SECONDS: "0.5",
          BENCH_GATEWAY_ROUNDS: "1",
          BENCH_GATEWAY_WARMUP_SECONDS: "0",
          BENCH_GATEWAY_SOAK_SECONDS: "1",
          BENCH_GATEWAY_SOAK_CONNECTIONS: "20",
          BENCH_GATEWAY_SEQUENTIAL: "40",
          BENCH_GATEWAY_REPORT: reportFile,
          BENCH_WRITE_DOCS: "0",
          BENCH_GATEWAY_IDP: idp === "embedded" ? "embedded" : "",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout?.on("data", (d) => {
        output += d;
      });
      child.stderr?.on("data", (d) => {
        output += d;
      });
      const [code] = (await once(child, "exit")) as [number | null];
      // 1 also when a performance target is missed (not this test's business); the report is written then.
      assert.ok(code === 0 || code === 1, `bench exited with ${code}:\n${output.slice(-3000)}`);
      const report = JSON.parse(readFileSync(reportFile, "utf8")) as {
        nginxVersion: string;
        sideBySide: Run[];
        oneSoak?: Run;
        soak: Run & {
          queues: {
            answers: number;
            perConnection: { min: number; median: number; max: number };
            acceptQueueMax: { proxy: number; mcp: number };
            maxBySliceMs: number[];
          };
        };
        sequential: { target: string; requests: number }[];
        summary: Record<"direct" | "gateway" | "nginx" | "floor", { proxyCpuMsPerRequest: number }> & {
          one?: { proxyCpuMsPerRequest: number; requestsPerSecond: number };
        };
        stopSeconds: { gateway: number; backend: number };
        idp: string;
      };
      assert.equal(report.idp, idp);
      assert.match(report.nginxVersion, /^nginx\/\d+\.\d+/);
      const one = idp === "stand-in";
      assert.deepEqual(report.sideBySide.map((r) => r.target).sort(), [
        "direct",
        "floor",
        "gateway",
        "nginx",
        ...(one ? ["one"] : []),
      ]);
      assert.equal(report.oneSoak !== undefined, one, "a soak through the one-process gateway");
      assert.equal(report.summary.one !== undefined, one);
      // The hop's share of one process is a difference of two measurements: at this scale, any number.
      if (one) assert.ok(Number.isFinite(report.summary.one?.proxyCpuMsPerRequest));
      for (const run of [...report.sideBySide, report.soak, ...(report.oneSoak ? [report.oneSoak] : [])]) {
        assert.ok(run.total > 0, `${run.target}: requests were served`);
        assert.equal(run.non2xx + run.errors + run.timeouts + run.mismatches, 0, `${run.target}: no failure`);
      }
      // Where the soak's answers waited: every answer traced, per connection, with the accept queues sampled.
      const queues = report.soak.queues;
      assert.equal(
        queues.answers,
        report.soak.total,
        "every answer of the soak is in the per-connection trace",
      );
      assert.ok(queues.perConnection.min >= 1, "each of the 20 connections got answers");
      assert.ok(queues.perConnection.max >= queues.perConnection.median);
      assert.ok(queues.acceptQueueMax.proxy >= 0 && queues.acceptQueueMax.mcp >= 0);
      assert.equal(queues.maxBySliceMs.length, 1);
      assert.ok(report.summary.gateway.proxyCpuMsPerRequest > 0, "the gateway's CPU per request is measured");
      assert.ok(report.summary.nginx.proxyCpuMsPerRequest > 0, "nginx's CPU per request is measured");
      assert.ok(
        report.summary.floor.proxyCpuMsPerRequest > 0,
        "the bare Node.js proxy's CPU per request is measured",
      );
      assert.deepEqual(
        report.sequential.map((r) => [r.target, r.requests]),
        [["direct", 40], ["gateway", 40], ...(one ? [["one", 40]] : []), ["nginx", 40], ["floor", 40]],
      );
      // Infinity (killed after 15 s) serializes as null.
      assert.ok(Number.isFinite(report.stopSeconds.gateway), "the gateway exited on SIGTERM");
      assert.ok(Number.isFinite(report.stopSeconds.backend), "the REST + MCP process exited on SIGTERM");
      assert.match(
        output,
        one
          ? /\| the one-process gateway's hop CPU per request ≤ 2\.5 × nginx's/
          : /\| gateway CPU per proxied request ≤ 2\.5 × nginx's/,
      );
    });
  });
