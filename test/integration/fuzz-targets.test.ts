/**
 * A short run of every fuzz target (test/fuzz/targets.ts) with Jazzer.js, as `npm run fuzz` runs them
 * for longer: a fixed number of executions from a fixed libFuzzer seed, so a run is repeatable. Each
 * must load its real seeds, reach code of its parser (coverage > 0) and find nothing: a crash, a hang
 * (10 s per input) or a memory overrun fails it with libFuzzer's report and the input.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { failed, runFuzzTarget } from "../fuzz/run.ts";
import { FUZZ_TARGETS } from "../fuzz/targets.ts";

/** Executions per target: with start-up, about 5 s of CPU each, start-up (instrumenting src/) included on the 2-core CI machine. */
const RUNS = 300;

for (const target of FUZZ_TARGETS) {
  test(`fuzz target ${target.name} (${target.parses}): ${RUNS} runs find nothing`, async () => {
    const result = await runFuzzTarget(target, {
      runs: RUNS,
      seed: 1,
      fresh: true,
      heapMb: 512,
      rssMb: 1536,
    });
    assert.ok(
      !failed(result),
      `finding in ${target.name} (exit ${result.exitCode}, signal ${result.signal}, killed ${result.killed}):\n${result.findingLog || result.output.slice(-4000)}`,
    );
    assert.equal(result.executions, RUNS, result.output.slice(-2000));
    assert.ok(result.coverage > 0, `no coverage of src/ reported:\n${result.output.slice(-2000)}`);
    assert.ok(result.corpusUnits >= 1, "the seeds were not loaded");
  });
}
