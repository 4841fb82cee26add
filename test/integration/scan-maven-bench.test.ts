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
    // C1 only and the serial GC: a short JVM's JIT and GC threads cost about half its CPU (4.1 → 2.1 s
    // user for this mvn run); Maven's answer and the timed run are the same. Recorded runs leave Maven as is.
    mavenOpts: "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
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
  assert.match(reportMarkdown(report), /MAVEN_OPTS=-XX:TieredStopAtLevel=1 -XX:\+UseSerialGC\) \| 1 \|/);
});
