import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LogBudget, LogThrottle, OutageLog } from "../../../src/auth/log-limits.ts";

describe("LogThrottle: one line per key and interval", () => {
  it("admits the first event, counts the next ones, and reports them with the next admitted line", () => {
    let now = 1_000;
    const throttle = new LogThrottle({ intervalMs: 60_000, now: () => now });
    assert.deepEqual(throttle.admit("a"), { suppressed: 0 });
    assert.equal(throttle.admit("a"), undefined);
    assert.equal(throttle.admit("a"), undefined);
    assert.deepEqual(throttle.admit("b"), { suppressed: 0 }, "another key has its own window");
    now += 60_000;
    assert.deepEqual(throttle.admit("a"), { suppressed: 2 });
    assert.equal(throttle.admit("a"), undefined);
  });

  it("keeps at most maxKeys windows, forgetting the oldest", () => {
    const throttle = new LogThrottle({ maxKeys: 2, now: () => 0 });
    throttle.admit("a");
    throttle.admit("b");
    throttle.admit("c");
    assert.deepEqual(throttle.admit("a"), { suppressed: 0 }, "a was evicted, so it is admitted again");
    assert.equal(throttle.admit("c"), undefined);
  });
});

describe("OutageLog: an outage in a few lines", () => {
  it("reports the first failure with its cause, reminders, and the recovery with the count", () => {
    let now = 0;
    const lines: string[] = [];
    const outage = new OutageLog(
      {
        down: (cause, failures) => lines.push(`down ${cause} ${failures}`),
        up: (failures) => lines.push(`up ${failures}`),
      },
      { remindEveryMs: 300_000, now: () => now },
    );
    outage.answered();
    outage.failed("ECONNREFUSED");
    outage.failed("ECONNREFUSED");
    now = 300_000;
    outage.failed("ECONNREFUSED");
    outage.answered();
    outage.answered();
    outage.failed("timeout");
    assert.deepEqual(lines, ["down ECONNREFUSED 1", "down ECONNREFUSED 3", "up 3", "down timeout 1"]);
  });
});

describe("LogBudget: at most max lines per interval in all", () => {
  it("admits max lines, counts the rest, and reports them with the first line of the next interval", () => {
    let now = 0;
    const budget = new LogBudget({ max: 2, intervalMs: 60_000, now: () => now });
    assert.deepEqual(budget.admit(), { suppressed: 0 });
    assert.deepEqual(budget.admit(), { suppressed: 0 });
    assert.equal(budget.admit(), undefined);
    assert.equal(budget.admit(), undefined);
    now = 60_000;
    assert.deepEqual(budget.admit(), { suppressed: 2 });
    assert.deepEqual(budget.admit(), { suppressed: 0 });
  });
});
