import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { spawnService } from "../support/cli.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

interface LogLine {
  level: number;
  msg: string;
  upstream?: string;
  failures?: number;
  err?: { stack?: string };
}

/**
 * The REST API runs in a process of its own behind a gateway process, as in a split deployment; it is
 * killed (SIGKILL) under traffic and started again on the same port.
 */
describe("gateway: an upstream that dies", () => {
  let store: TestStore;
  let restPort: number;
  let rest: ChildProcess | undefined;
  let gateway: Awaited<ReturnType<typeof spawnService>>;

  const startRest = async () => {
    const started = await spawnService(["--data-dir", store.dataDir, "--only", "rest"], {
      REST_PORT: String(restPort),
    });
    rest = started.child;
    return started;
  };
  const logLines = (): LogLine[] =>
    gateway
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith('{"level":'))
      .map((line) => JSON.parse(line) as LogLine);
  const restHealth = async () =>
    (
      (await (await fetch(`${gateway.summary.gateway}/mcp/healthcheck`)).json()) as {
        status: string;
        details: { upstreams: Record<string, string> };
      }
    ).details.upstreams.rest;

  before(async () => {
    store = await createTestStore("sqlite");
    restPort = await freePort();
    await startRest();
    const [analysis, gatekeeper] = [await freePort(), await freePort()];
    gateway = await spawnService(["--data-dir", store.dataDir, "--port", "0", "--only", "gateway"], {
      LOG_LEVEL: "info",
      REST_UPSTREAM_URL: `http://127.0.0.1:${restPort}`,
      // Nothing listens there: those upstreams stay DOWN, which this test does not look at.
      MCP_ANALYSIS_UPSTREAM_URL: `http://127.0.0.1:${analysis}`,
      MCP_GATEKEEPER_UPSTREAM_URL: `http://127.0.0.1:${gatekeeper}`,
    });
  });
  after(async () => {
    for (const child of [gateway?.child, rest]) {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    }
    await store?.drop();
  });

  it("the healthcheck says DOWN from the first 502, and one warning is logged for the whole outage", async () => {
    assert.equal((await fetch(`${gateway.summary.gateway}/rest/health`)).status, 200);
    assert.equal(await restHealth(), "UP");

    rest?.kill("SIGKILL");
    await once(rest as ChildProcess, "exit");

    const first = await fetch(`${gateway.summary.gateway}/rest/health`);
    assert.equal(first.status, 502);
    assert.match(first.headers.get("content-type") ?? "", /^application\/problem\+json/);
    assert.deepEqual(await first.json(), {
      type: "about:blank",
      title: "Bad Gateway",
      status: 502,
      detail: "The REST API cannot be reached: try again shortly",
      instance: "/rest/health",
    });
    // Right away: no probe interval (10 s) to wait for.
    assert.equal(await restHealth(), "DOWN");

    const statuses = await Promise.all(
      Array.from({ length: 300 }, async () => (await fetch(`${gateway.summary.gateway}/rest/health`)).status),
    );
    assert.deepEqual(new Set(statuses), new Set([502]));
    await sleep(200);

    const aboutRest = logLines().filter((line) => line.upstream === "rest" && line.level >= 40);
    assert.equal(aboutRest.length, 1, JSON.stringify(aboutRest, null, 2));
    assert.match(aboutRest[0]?.msg ?? "", /^upstream rest cannot be reached: /);
    assert.ok(aboutRest[0]?.err?.stack, "the first failure is logged with its error");
    const stacks = logLines().filter(
      (line) => line.err?.stack !== undefined && line.upstream !== "mcp-analysis",
    );
    assert.equal(
      stacks.filter((line) => line.upstream !== "mcp-gatekeeper").length,
      1,
      "no stack trace per failed request",
    );
    assert.equal(logLines().filter((line) => line.msg === "response errored").length, 0);
  });

  it("the healthcheck says UP from the first answer again, and the end of the outage is logged once", async () => {
    await startRest();
    assert.equal((await fetch(`${gateway.summary.gateway}/rest/health`)).status, 200);
    assert.equal(await restHealth(), "UP");
    await sleep(200);
    const back = logLines().filter((line) => line.upstream === "rest" && /reachable again/.test(line.msg));
    assert.equal(back.length, 1);
    assert.ok((back[0]?.failures ?? 0) >= 301, `failures counted: ${back[0]?.failures}`);
  });
});
