/**
 * A tiny-scale run of the archive re-scan benchmark (npm run bench:scan:archive): one offline and one online
 * re-scan of the Spring Boot application jar, so the benchmark keeps working between recorded runs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { benchArchiveRescan, reportMarkdown } from "../bench/scan-archive.bench.ts";

test("bench:scan:archive at tiny scale: an offline and an online re-scan of a Spring Boot jar, timed", async () => {
  const report = await benchArchiveRescan({ rounds: 1 });
  assert.equal(report.sides.length, 1);
  const [side] = report.sides;
  assert.equal(side?.packages, 35, "the application's 35 packages, online and offline alike");
  assert.equal(side?.offlineMs.length, 1);
  assert.equal(side?.onlineMs.length, 1);
  assert.ok((side?.offlineMs[0] ?? 0) > 0 && (side?.onlineMs[0] ?? 0) > 0);
  assert.match(reportMarkdown(report), /\| online \/ offline \|/);
});
