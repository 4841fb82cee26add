import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { RunningService } from "../../src/service.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore } from "../support/stores.ts";
import { startTcpRelay, type TcpRelay } from "../support/tcp-relay.ts";

interface Readiness {
  status: string;
  checks: Record<string, string>;
  /** Why each DOWN check is down (only when not ready). */
  reasons?: Record<string, string>;
}

const readiness = async (gateway: string) => {
  const response = await fetch(`${gateway}/readyz`);
  return { status: response.status, body: (await response.json()) as Readiness };
};

/** Polls /readyz until it answers `status` (bounded): the probes and health checks run in the background. */
async function readinessBecomes(gateway: string, status: number): Promise<Readiness> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const answer = await readiness(gateway);
    if (answer.status === status || Date.now() > deadline) {
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      return answer.body;
    }
    await sleep(200);
  }
}

describe("gateway: liveness and readiness", () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it("a whole service is live and ready, and every check it makes is named", async () => {
    const store = await createTestStore("sqlite");
    cleanup.push(() => store.drop());
    const service = await startTestService(store);
    cleanup.push(() => service.stop());
    const live = await fetch(`${service.gatewayUrl}/livez`);
    assert.equal(live.status, 200);
    assert.deepEqual(await live.json(), { status: "UP" });
    assert.equal(live.headers.get("cache-control"), "no-store");
    // Ready at the first ask once started: readiness probes an upstream it has not reached yet.
    const first = await readiness(service.gatewayUrl);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const ready = first.body;
    assert.deepEqual(ready, {
      status: "UP",
      checks: {
        store: "UP",
        "upstream rest": "UP",
        "upstream mcp-analysis": "UP",
        "upstream mcp-gatekeeper": "UP",
      },
    });
    // HEAD for load balancers that check without a body.
    assert.equal((await fetch(`${service.gatewayUrl}/readyz`, { method: "HEAD" })).status, 200);
  });

  it("PostgreSQL unreachable: not ready (503, store DOWN) yet live; ready again once it answers", async () => {
    const store = await createTestStore("postgres");
    cleanup.push(() => store.drop());
    const target = new URL(store.databaseUrl as string);
    const relay: TcpRelay = await startTcpRelay({ host: target.hostname, port: Number(target.port) });
    cleanup.push(() => relay.close());
    const through = new URL(target);
    through.port = String(relay.port);
    const service = await startTestService(store, { databaseUrl: through.toString() });
    cleanup.push(() => service.stop());
    await readinessBecomes(service.gatewayUrl, 200);

    await relay.pause();
    const down = await readinessBecomes(service.gatewayUrl, 503);
    assert.equal(down.status, "DOWN");
    assert.equal(down.checks.store, "DOWN");
    assert.equal(down.checks["upstream rest"], "UP");
    // It says why, in words for an operator.
    assert.deepEqual(Object.keys(down.reasons ?? {}), ["store"]);
    assert.match(down.reasons?.store ?? "", /database|store/);
    // The answer names no host, port or driver message.
    assert.doesNotMatch(JSON.stringify(down), /127\.0\.0\.1|ECONNREFUSED|postgres/i);
    assert.equal((await fetch(`${service.gatewayUrl}/livez`)).status, 200);

    await relay.resume();
    assert.equal((await readinessBecomes(service.gatewayUrl, 200)).checks.store, "UP");
  });

  it("an upstream in another process that stops: not ready from the first failed request", async () => {
    const store = await createTestStore("sqlite");
    cleanup.push(() => store.drop());
    const backend: RunningService = await startTestService(store, {}, undefined, [
      "rest",
      "mcp-analysis",
      "mcp-gatekeeper",
    ]);
    let backendStopped = false;
    cleanup.push(async () => {
      if (!backendStopped) await backend.stop();
    });
    const gateway = await startTestService(
      store,
      {
        restUpstreamUrl: backend.restUrl,
        mcpAnalysisUpstreamUrl: backend.mcpUrls.analysis,
        mcpGatekeeperUpstreamUrl: backend.mcpUrls.gatekeeper,
      },
      undefined,
      ["gateway"],
    );
    cleanup.push(() => gateway.stop());
    await readinessBecomes(gateway.gatewayUrl, 200);

    await backend.stop();
    backendStopped = true;
    assert.equal((await fetch(`${gateway.gatewayUrl}/rest/health`)).status, 502);
    const down = await readiness(gateway.gatewayUrl);
    assert.equal(down.status, 503);
    assert.equal(down.body.checks["upstream rest"], "DOWN");
    assert.equal(down.body.checks.store, "UP");
  });
});
