/**
 * A tiny-scale run of the Maven scan benchmark (npm run bench:scan:maven): one measured run of each side
 * on a smaller real project, so the benchmark keeps working between recorded runs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { benchMavenScan, reportMarkdown } from "../bench/scan-maven.bench.ts";

test("bench:scan:maven at tiny scale: the reader matches Maven and both sides are timed", async () => {
  const report = await benchMavenScan({
    name: "webgoat-container-7.0.1",
    coordinates: "org.owasp.webgoat:webgoat-container:7.0.1",
    iterations: 1,
    mvnRuns: 1,
  });
  assert.equal(report.matchesMaven, true);
  assert.ok(report.artifacts > 50);
  for (const series of [
    report.readerFromHttpCacheMs,
    report.readerFromLocalRepositoryMs,
    report.mvnOfflineMs,
  ]) {
    assert.equal(series.length, 1);
    assert.ok(Number.isFinite(series[0]) && (series[0] as number) > 0);
  }
  assert.match(reportMarkdown(report), /are exactly Maven's/);
});
