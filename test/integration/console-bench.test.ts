/**
 * npm run bench:console at a tiny scale: the benchmark keeps working end to end (build, sign-in, cold and
 * warm loads of each page measured in Chromium) and the first page's JavaScript stays within the issue's
 * budget of 200 KiB compressed (a size, not a timing). No time is asserted.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const BENCH = fileURLToPath(new URL("../bench/console.bench.ts", import.meta.url));

describe("bench:console at a tiny scale", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "imaging-console-bench-tiny-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("measures each page cold and warm and reports the first page's JavaScript size", async () => {
    const reportFile = join(dir, "report.json");
    const child = spawn(process.execPath, [BENCH], {
      env: { ...process.env, BENCH_CONSOLE_LOADS: "1", BENCH_CONSOLE_REPORT: reportFile },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    const [code] = await once(child, "exit");
    assert.equal(code, 0, out);
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as {
      firstPageJsGzip: number;
      rows: { page: string; mode: string; median: number }[];
    };
    assert.ok(report.firstPageJsGzip > 1000, "the first page ships the app");
    assert.ok(
      report.firstPageJsGzip <= 200 * 1024,
      `first page JavaScript ${report.firstPageJsGzip} B ≤ 200 KiB gzip`,
    );
    assert.deepEqual(
      report.rows.map((r) => `${r.page} ${r.mode}`),
      [
        "Status cold (first visit)",
        "Status warm (cached assets)",
        "Connect cold (first visit)",
        "Connect warm (cached assets)",
      ],
    );
    for (const row of report.rows) assert.ok(Number.isFinite(row.median) && row.median > 0);
    assert.doesNotMatch(out, /docs\/benchmarks\.md updated/, "a tiny run leaves the docs alone");
  });
});
