/**
 * npm run bench:replicas at a tiny scale: the benchmark's own code keeps working end to end — replicas
 * behind HAProxy and HAProxy straight in front of the MCP server answer right under load, CPU per
 * request is measured for the replicas and for HAProxy. No timing is asserted.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const BENCH = fileURLToPath(new URL("../bench/replicas.bench.ts", import.meta.url));

interface Run {
  title: string;
  rps: number;
  errors: number;
  replicaCpuMs: number;
  haproxyCpuMs: number;
}

describe("bench:replicas at a tiny scale", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "imaging-replicas-bench-tiny-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("measures 1 and 2 replicas behind HAProxy and HAProxy straight to the MCP server, without errors", async () => {
    const report = join(dir, "report.json");
    const child = spawn(process.execPath, [BENCH], {
      env: {
        ...process.env,
        // Half a second per run: each layout still serves dozens of requests or more. No warm-up: it is the
        // measured run again (same calls, same code), which proves nothing more here.
        BENCH_REPLICAS_SECONDS: "0.5",
        BENCH_REPLICAS_WARMUP_SECONDS: "0",
        BENCH_REPLICAS_CONNECTIONS: "4",
        BENCH_REPLICAS_MAX: "2",
        BENCH_WRITE_DOCS: "0",
        BENCH_REPLICAS_REPORT: report,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    const [code] = await once(child, "exit");
    assert.equal(code, 0, output);
    const { runs, hop } = JSON.parse(readFileSync(report, "utf8")) as { runs: Run[]; hop: { direct: Run } };
    assert.deepEqual(
      runs.map((r) => r.title),
      ["1 replica", "2 replicas"],
    );
    for (const run of [...runs, hop.direct]) {
      assert.equal(run.errors, 0, run.title);
      assert.ok(run.rps > 0, `${run.title} served requests`);
      // HAProxy's share of a 1 s run can be under one clock tick (10 ms): measured, maybe 0.
      assert.ok(run.replicaCpuMs > 0, `${run.title}: the replicas' CPU per request measured`);
      assert.ok(Number.isFinite(run.haproxyCpuMs) && run.haproxyCpuMs >= 0, `${run.title}: HAProxy's`);
    }
    assert.match(output, /\| HAProxy → MCP server \(no gateway\) \|/);
  });
});
