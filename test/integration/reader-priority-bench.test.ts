import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runReaderPriorityBench } from "../bench/reader-priority.ts";

/**
 * test/bench/reader-priority.ts at a tiny scale: the benchmark's own code keeps working (it throws on a
 * failed probe). No timing asserted.
 */
describe("the readers' priority benchmark at a tiny scale", {
  skip: process.platform !== "linux" && "thread priorities are Linux's",
}, () => {
  it("probes the event loop without readers, with readers at nice 10, nice 19 and the idle policy", async () => {
    const rounds = await runReaderPriorityBench({ seconds: 0.5, rounds: 1, probeRate: 50 });
    assert.deepEqual(
      rounds.map((r) => r.readers),
      ["none", "nice 10", "nice 19", "idle"],
    );
    for (const r of rounds) {
      assert.ok(r.samples > 0 && r.p99Ms > 0, `${r.readers}: the probe measured nothing`);
      // Each round's readers run at the priority it names.
      if (r.readers === "idle") assert.match(r.kernel, /^policy 5 nice -?\d+ ×\d+$/);
      if (r.readers === "nice 10") assert.match(r.kernel, /^policy 0 nice 1\d ×\d+$/);
      if (r.readers === "nice 19") assert.match(r.kernel, /^policy 0 nice 19 ×\d+$/);
      if (r.readers === "none") assert.equal(r.readsPerSecond, 0);
    }
    // The readers were busy (a loaded machine may starve one round of them, not all three).
    assert.ok(
      rounds.some((r) => r.readsPerSecond > 0),
      "the readers read nothing",
    );
  });
});
