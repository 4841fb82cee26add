/**
 * A tiny-scale run of the Java code benchmark (npm run bench:scan:java): a few hundred real class files,
 * each side once, so the benchmark keeps working between recorded runs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { benchJavaScan, reportMarkdown } from "../bench/scan-java.bench.ts";

test("bench:scan:java at tiny scale: the reader, its worker threads and @xmcl/asm agree and are timed", async () => {
  const report = await benchJavaScan({ classes: 300, iterations: 1, wholeScan: false });
  assert.equal(report.classes, 300);
  assert.ok(report.dependencyClasses > 10_000, `${report.dependencyClasses} dependency classes`);
  assert.equal(report.sameAnswer, true, JSON.stringify(report.sides.map((s) => [s.side, s.uses])));
  assert.deepEqual(
    report.sides.map((s) => s.side),
    ["reader", "reader, worker threads", "@xmcl/asm"],
  );
  for (const side of report.sides) {
    assert.ok(side.uses > 100, `${side.side}: ${side.uses} uses`);
    assert.equal(side.ms.length, 1);
    assert.ok(Number.isFinite(side.ms[0]) && (side.ms[0] as number) > 0);
    assert.ok(side.maxRssMb > 0);
  }
  assert.match(reportMarkdown(report), /class files \/ s/);
});
