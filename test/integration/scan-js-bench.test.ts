/** A tiny-scale run of npm run bench:scan:js (test/bench/scan-js.bench.ts), on firebase-tools 8.4.0. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeReport, MODES, runJsScanBench } from "../bench/scan-js.bench.ts";
import { firebaseTools } from "../support/scan-subjects.ts";

describe("bench:scan:js at a tiny scale", () => {
  it("times every mode in its own process; worker threads and one thread find the same references", async () => {
    const report = await runJsScanBench(firebaseTools().published, 1, "src");
    assert.ok(report.files > 250, `firebase-tools 8.4.0 has ~270 JavaScript files, got ${report.files}`);
    assert.ok(report.lines > 20_000, String(report.lines));
    for (const mode of MODES) {
      const [round] = report.results[mode];
      assert.ok(round && round.wallMs > 0 && round.maxRssMb > 0, `${mode}: ${JSON.stringify(round)}`);
    }
    assert.ok((report.results["extract-1-thread"][0]?.references ?? 0) > 1000);
    assert.match(describeReport(report), /\| extraction, one thread \| \d+ /);
  });
});
