/** A tiny-scale run of npm run bench:scan (test/bench/scan.bench.ts), on the workspace monorepo subject. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeReport, runScanBench } from "../bench/scan.bench.ts";
import { treePackages, workspaceMonorepo } from "../support/scan-subjects.ts";

describe("bench:scan at a tiny scale", () => {
  it("times imaging scan and cyclonedx-npm on the same lockfile, both listing the packages npm ls lists", async () => {
    const subject = workspaceMonorepo();
    const report = await runScanBench(subject.npm, 1);
    assert.equal(report.packages, treePackages(`${subject.npm}/npm-ls.json`).size);
    for (const series of [report.inventoryMs, report.cliMs, report.cyclonedxMs]) {
      assert.equal(series.length, 1);
      assert.ok((series[0] ?? 0) > 0);
    }
    assert.match(describeReport(report), /\| inventory \(scanPath, in process\) \| \d+ \|/);
  });
});
