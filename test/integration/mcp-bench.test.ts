import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";

/** bench:mcp at a tiny scale: the benchmark's own code keeps working (no timing asserted). */
describe("bench:mcp at a tiny scale", () => {
  const dir = mkdtempSync(join(tmpdir(), "imaging-mcp-bench-tiny-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("measures both backends in both eras and the wide run, every call answered", async () => {
    const report = join(dir, "report.json");
    const child = spawn(process.execPath, ["test/bench/mcp.bench.ts"], {
      env: {
        ...process.env,
        // Half a second per run: each backend and era still answers dozens of calls or more, each checked.
        BENCH_MCP_SECONDS: "0.5",
        BENCH_MCP_ROUNDS: "1",
        BENCH_MCP_CONNECTIONS: "2",
        BENCH_MCP_WARMUP_SECONDS: "0",
        BENCH_MCP_WIDE_CONNECTIONS: "10",
        BENCH_MCP_WIDE_SECONDS: "0.5",
        // The tree's own last commit as the baseline: extracted with git archive like any other.
        BENCH_MCP_BASELINE: "HEAD",
        BENCH_MCP_REPORT_FILE: report,
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
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    assert.equal(code, 0, output.slice(-3000));
    const run = JSON.parse(readFileSync(report, "utf8")) as {
      runs: { backend: string; era: string; total: number; failed: number; cpuMsPerCall: number }[];
      wide: { backend: string; total: number; failed: number }[];
      summary: { era: string; ratio: number }[];
    };
    for (const backend of ["baseline", "current"]) {
      for (const era of ["2026-07-28", "2025"]) {
        const mine = run.runs.filter((r) => r.backend === backend && r.era === era);
        assert.equal(mine.length, 1, `${backend} ${era}`);
        assert.ok((mine[0]?.total ?? 0) > 0, `${backend} ${era} answered calls`);
        assert.equal(mine[0]?.failed, 0);
        assert.ok((mine[0]?.cpuMsPerCall ?? 0) > 0);
      }
      assert.ok((run.wide.find((r) => r.backend === backend)?.total ?? 0) > 0);
    }
    assert.deepEqual(
      run.summary.map((s) => s.era),
      ["2026-07-28", "2025"],
    );
    assert.match(output, /\| era \| baseline calls\/s \| current calls\/s/);
  });
});
