/**
 * npm run bench:gateway:floor at a tiny scale: every layer of the hop's floor (nginx, node:net,
 * node:http, the bare proxy over TCP and a Unix socket, node:http's Agent) answers the upstream's body
 * under load, and each gets its CPU per request measured. No timing is asserted. nginx must be installed
 * (.ci/run installs it).
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

const BENCH = fileURLToPath(new URL("../bench/hop-floor.bench.ts", import.meta.url));

describe("bench:gateway:floor at a tiny scale", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "imaging-hop-floor-tiny-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("measures nginx and each Node.js layer of a hop with right answers and CPU per request", async () => {
    assert.ok(findNginx(), NGINX_MISSING);
    const reportFile = join(dir, "report.json");
    const child = spawn(process.execPath, [BENCH], {
      env: {
        ...process.env,
        BENCH_HOP_SECONDS: "1",
        BENCH_HOP_ROUNDS: "1",
        BENCH_HOP_RATE: "200",
        BENCH_HOP_SEQUENTIAL: "50",
        BENCH_HOP_REPORT: reportFile,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    const [code] = await once(child, "exit");
    assert.equal(code, 0, output);
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as {
      paths: {
        path: string;
        requests: number;
        failed: number;
        cpuMsPerRequest: number;
        addedP50Ms: number | null;
      }[];
    };
    assert.deepEqual(
      report.paths.map((p) => p.path),
      ["nginx", "net", "http", "undici", "undici-unix", "agent"],
    );
    for (const path of report.paths) {
      assert.ok(path.requests > 0, `${path.path} answered no request`);
      assert.equal(path.failed, 0, `${path.path}: failed or wrong answers`);
      // CPU time is read from the threads' schedstat in nanoseconds: every path that answered used some.
      assert.ok(Number.isFinite(path.cpuMsPerRequest) && path.cpuMsPerRequest > 0, `${path.path}: CPU`);
      // Sequential answers were each checked against the upstream's body by the benchmark itself.
      assert.equal(typeof path.addedP50Ms, "number", `${path.path}: no unloaded median`);
    }
    assert.match(output, /\| undici \| .* \| × \d+\.\d\d \|/);
  });
});
