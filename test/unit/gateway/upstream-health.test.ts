import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import type { FastifyBaseLogger } from "fastify";
import { watchUpstreams } from "../../../src/gateway/upstream-health.ts";

/** Collects what would be logged (pino's calling convention: object, message). */
function recordingLog() {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => {
    lines.push({ level, fields, msg });
  };
  return { lines, log: { warn: at("warn"), info: at("info") } as unknown as FastifyBaseLogger };
}

describe("upstream outages: first failure logged, then a count at most every 10 s", () => {
  it("1,000 failures in 10 s give one warning, the next one a count, the recovery one line", async () => {
    // A real health endpoint answering 200, so the start-up probe does not count as a failure.
    const server = createServer((_request, response) => response.end("{}"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    let now = 1_000_000;
    const { lines, log } = recordingLog();
    const health = watchUpstreams({ rest: url }, { log, now: () => now, intervalMs: 3_600_000 });
    try {
      assert.equal(await health.current("rest"), "UP", "the start-up probe reached it");
      const error = new Error("connect ECONNREFUSED 127.0.0.1:8070");
      for (let i = 0; i < 1_000; i++) {
        health.failed("rest", error);
        now += 9;
      }
      assert.equal(health.snapshot().rest, "DOWN");
      assert.equal(lines.length, 1);
      assert.equal(lines[0]?.level, "warn");
      assert.equal(lines[0]?.fields.err, error);
      assert.equal(lines[0]?.msg, "upstream rest cannot be reached: connect ECONNREFUSED 127.0.0.1:8070");

      now += 1_000;
      health.failed("rest", error);
      assert.equal(lines.length, 2);
      assert.equal(lines[1]?.fields.failures, 1_000);
      assert.equal(lines[1]?.fields.err, undefined, "no stack in the count");
      assert.match(
        lines[1]?.msg ?? "",
        /^upstream rest still cannot be reached: 1000 more failures in the last 10 s/,
      );

      health.reached("rest");
      health.reached("rest");
      assert.equal(health.snapshot().rest, "UP");
      assert.equal(lines.length, 3);
      assert.equal(lines[2]?.level, "info");
      assert.equal(lines[2]?.msg, "upstream rest reachable again after 10 s and 1001 failures");
    } finally {
      health.stop();
      server.close();
    }
  });
});

describe("readiness asks the upstream now, not the last background probe", () => {
  it("an upstream not known UP is probed on each ask, overlapping asks share one request", async () => {
    let healthy = false;
    let requests = 0;
    const server = createServer((_request, response) => {
      requests++;
      response.statusCode = healthy ? 200 : 503;
      // Slow enough that asks made together overlap.
      setTimeout(() => response.end("{}"), 50);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const { log } = recordingLog();
    const health = watchUpstreams({ rest: url }, { log, intervalMs: 3_600_000 });
    try {
      // Three asks while the start-up probe is in flight: one request in all.
      const asked = await Promise.all([
        health.current("rest"),
        health.current("rest"),
        health.current("rest"),
      ]);
      assert.deepEqual(asked, ["DOWN", "DOWN", "DOWN"]);
      assert.equal(requests, 1);
      healthy = true;
      // No background probe for an hour: the ask itself finds the upstream back.
      assert.equal(await health.current("rest"), "UP");
      assert.equal(requests, 2);
      // Known UP: answered without a request (proxied traffic reports failures as they happen).
      assert.equal(await health.current("rest"), "UP");
      assert.equal(requests, 2);
    } finally {
      health.stop();
      server.close();
    }
  });
});
