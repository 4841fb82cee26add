import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runCostMs } from "../../../src/store/sqlite-read-protocol.ts";

describe("a statement run's cost (the read pool's inline rule)", () => {
  it("is the thread's CPU time when the run was preempted (wall time longer)", () => {
    const startedAt = performance.now() - 20;
    assert.equal(runCostMs({ user: 1500, system: 500 }, startedAt), 2);
  });

  it("is never more than the wall time: a CPU clock that jumped by a scheduler tick does not make a light run heavy", () => {
    const startedAt = performance.now() - 0.2;
    const cost = runCostMs({ user: 4000, system: 0 }, startedAt);
    assert.ok(cost >= 0.2 && cost < 1, `a 0.2 ms run read as ${cost} ms`);
  });

  it("keeps a long run long: a statement that really took 5 ms of CPU still counts as 5 ms", () => {
    const startedAt = performance.now() - 5.5;
    assert.equal(runCostMs({ user: 4000, system: 1000 }, startedAt), 5);
  });
});
