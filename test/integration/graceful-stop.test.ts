/**
 * The graceful stop of `imaging start` (issue 18, point 4), with real processes, real clients and open
 * streams: on SIGTERM/SIGINT every part stops accepting, in-flight requests finish, open event streams
 * and upstream connections close, the store closes, and the process exits within SHUTDOWN_TIMEOUT; a
 * second signal exits at once.
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { spawnService } from "../support/cli.ts";
import { applicationNamesInAnswer } from "../support/mcp-answers.ts";
import { freePort } from "../support/service.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const MODERN = "2026-07-28";
/** A stateless 2026-07-28 tools/call of `applications`, as the gateway benchmark sends it. */
const TOOLS_CALL = JSON.stringify({
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params: {
    name: "applications",
    arguments: {},
    _meta: {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientInfo": { name: "graceful-stop-test", version: "1.0.0" },
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
});
const modernHeaders = (token: string) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": MODERN,
  "mcp-method": "tools/call",
  "mcp-name": "applications",
  authorization: `Bearer ${token}`,
});
const DEMO = ["claims-portal", "payments-service", "storefront-web"];

interface Started {
  child: ChildProcess;
  stderr: () => string;
  mcp: string;
  dataDir: string;
}

/**
 * A request whose body is only half sent: in flight at the gateway until `finish()` sends the rest.
 * `response` settles with the answer, or with the error of a cut connection.
 */
function halfSentRequest(url: string, token: string) {
  const target = new URL(url);
  const body = Buffer.from(TOOLS_CALL);
  const half = Math.floor(body.length / 2);
  const req = httpRequest(target, {
    method: "POST",
    headers: { ...modernHeaders(token), "content-length": String(body.length), connection: "close" },
  });
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.once("response", (res: IncomingMessage) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.once("end", () => resolve({ status: res.statusCode ?? 0, text }));
      res.once("error", reject);
    });
    req.once("error", reject);
  });
  req.flushHeaders();
  req.write(body.subarray(0, half));
  return { response, finish: () => req.end(body.subarray(half)) };
}

/**
 * A raw 2025-06-18 session (initialize, then notifications/initialized) and its GET event stream, as a
 * client that holds the stream open: returns the stream's response (its status is the caller's to check).
 */
async function openHeldStream(
  mcp: string,
  token: string,
  name: string,
  signal?: AbortSignal,
): Promise<Response> {
  const initialize = await fetch(mcp, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name, version: "1" } },
    }),
  });
  assert.equal(initialize.status, 200);
  await initialize.text();
  const session = {
    authorization: `Bearer ${token}`,
    "mcp-session-id": initialize.headers.get("mcp-session-id") ?? "",
    "mcp-protocol-version": "2025-06-18",
  };
  const initialized = await fetch(mcp, {
    method: "POST",
    headers: {
      ...session,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  assert.equal(initialized.status, 202);
  return fetch(mcp, { headers: { ...session, accept: "text/event-stream" }, signal });
}

/** Waits until the gateway has the request's headers (it then counts as in flight). */
const settle = () => new Promise((r) => setTimeout(r, 300));

describe("graceful stop of imaging start (SIGTERM / SIGINT)", { timeout: 180_000 }, () => {
  let issuer: TestIssuer;
  const dirs: string[] = [];

  before(async () => {
    issuer = await startTestIssuer();
    issuer.setUser("alice", { roles: ["admin"], applications: [] });
  });
  after(async () => {
    await issuer?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function start(env: Record<string, string> = {}): Promise<Started> {
    const dataDir = mkdtempSync(join(tmpdir(), "imaging-graceful-stop-"));
    dirs.push(dataDir);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const service = await spawnService(["--demo", "--data-dir", dataDir], {
      PORT: String(port),
      PUBLIC_URL: base,
      IMAGING_BIND_ADDRESS: "127.0.0.1",
      REST_PORT: "0",
      MCP_ANALYSIS_PORT: "0",
      MCP_GATEKEEPER_PORT: "0",
      IDP_ISSUER: issuer.issuer,
      TOKEN_EXCHANGE_CLIENT_SECRET: issuer.clientSecret,
      ...env,
    });
    return { child: service.child, stderr: service.stderr, mcp: `${base}/mcp`, dataDir };
  }

  const exited = (child: ChildProcess) =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve([child.exitCode, child.signalCode] as const)
      : (once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>);

  it("right after a 200-client load, with 2025 GET streams open and a request in flight: the request is answered, the streams end, the store closes, exit 0 within SHUTDOWN_TIMEOUT", async () => {
    const service = await start({ SHUTDOWN_TIMEOUT: "5" });
    const token = await issuer.signMcp("alice", service.mcp);
    const clients: Client[] = [];
    try {
      // Real AI clients (the MCP SDK) in 2025 sessions: each holds its GET stream open through the gateway.
      for (let i = 0; i < 3; i++) {
        const client = new Client(
          { name: `held-stream-${i}`, version: "1.0.0" },
          { versionNegotiation: { mode: "legacy" } },
        );
        const transport = new StreamableHTTPClientTransport(new URL(service.mcp), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        });
        await client.connect(transport);
        assert.ok(transport.sessionId, "a 2025 session");
        const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
        assert.equal((result.structuredContent as { applications: unknown[] }).applications.length, 3);
        clients.push(client);
      }
      // One more 2025 session whose GET stream this test reads itself, to see how it ends.
      const stream = await openHeldStream(service.mcp, token, "raw-stream");
      assert.equal(stream.status, 200);
      assert.match(stream.headers.get("content-type") ?? "", /^text\/event-stream/);
      const streamEnd = (async () => {
        const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
        for (;;) if ((await reader.read()).done) return "ended";
      })();

      // 200 clients at once, twice: every answer right.
      for (let wave = 0; wave < 2; wave++) {
        const answers = await Promise.all(
          Array.from({ length: 200 }, async () => {
            const response = await fetch(service.mcp, {
              method: "POST",
              headers: modernHeaders(token),
              body: TOOLS_CALL,
            });
            return { status: response.status, names: applicationNamesInAnswer(await response.text()) };
          }),
        );
        assert.deepEqual(
          answers.filter((a) => a.status !== 200 || a.names.join() !== DEMO.join()),
          [],
          "every request of the load answered with the demo applications",
        );
      }

      // In flight when the signal comes: its body is still being sent.
      const inFlight = halfSentRequest(service.mcp, token);
      await settle();
      const t0 = performance.now();
      service.child.kill("SIGTERM");
      await settle();
      inFlight.finish();
      const answer = await inFlight.response;
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(
        applicationNamesInAnswer(answer.text),
        DEMO,
        "the in-flight request got its full answer",
      );

      assert.equal(await streamEnd, "ended", "the open GET stream ended cleanly");
      const [code] = await exited(service.child);
      const seconds = (performance.now() - t0) / 1000;
      assert.equal(code, 0, `exit code (after ${seconds.toFixed(2)} s): ${service.stderr()}`);
      assert.doesNotMatch(service.stderr(), /took longer than/);
      assert.match(service.stderr(), /SIGTERM received: finishing in-flight requests \(at most 5 s/);
      // Closing the store's last connection checkpoints SQLite's write-ahead log.
      const wal = join(service.dataDir, "imaging.db-wal");
      assert.ok(!existsSync(wal) || statSync(wal).size === 0, "the store was closed");
      // Nothing listens any more.
      await assert.rejects(
        fetch(service.mcp, { method: "POST", headers: modernHeaders(token), body: TOOLS_CALL }),
      );
    } finally {
      for (const client of clients) await client.close().catch(() => {});
      service.child.kill("SIGKILL");
    }
  });

  it("140 held 2025 GET streams (more than the gateway's 128 pooled upstream connections) do not hold up a tool call, and the stop ends them", async () => {
    const service = await start({ SHUTDOWN_TIMEOUT: "5" });
    const token = await issuer.signMcp("alice", service.mcp);
    const readers: Promise<unknown>[] = [];
    const streamsOpen = new AbortController();
    try {
      for (let i = 0; i < 140; i++) {
        const stream = await openHeldStream(service.mcp, token, `held-${i}`, streamsOpen.signal);
        assert.equal(stream.status, 200, `stream ${i} opened`);
        const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
        readers.push(
          (async () => {
            for (;;) if ((await reader.read()).done) return;
          })().catch(() => undefined),
        );
      }
      // Every stream holds an upstream connection; the call must not queue behind them.
      const call = await fetch(service.mcp, {
        method: "POST",
        headers: modernHeaders(token),
        body: TOOLS_CALL,
        signal: AbortSignal.timeout(30_000),
      });
      assert.equal(call.status, 200);
      assert.deepEqual(applicationNamesInAnswer(await call.text()), DEMO);

      service.child.kill("SIGTERM");
      const [code] = await exited(service.child);
      assert.equal(code, 0, service.stderr());
      // The stop ended every stream (the readers finish without the test aborting them).
      await Promise.all(readers);
    } finally {
      streamsOpen.abort();
      if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill("SIGKILL");
    }
  });

  it("SIGTERM with SHUTDOWN_DRAIN: /readyz answers 503 and says why, requests are still served with Connection: close, then exit 0", async () => {
    const service = await start({ SHUTDOWN_DRAIN: "3", SHUTDOWN_TIMEOUT: "5" });
    try {
      const gateway = service.mcp.replace(/\/mcp$/, "");
      const token = await issuer.signMcp("alice", service.mcp);
      // Ready at the first ask after start (readiness probes the upstreams it has not reached yet).
      const before = await fetch(`${gateway}/readyz`);
      assert.equal(before.status, 200, await before.text());
      const signalled = Date.now();
      service.child.kill("SIGTERM");
      while (!service.stderr().includes("SIGTERM received")) await settle();
      assert.match(service.stderr(), /SIGTERM received: draining for 3 s/);
      const ready = await fetch(`${gateway}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(await ready.json(), {
        status: "DOWN",
        checks: { shutdown: "DOWN" },
        reasons: { shutdown: "the process is stopping (SIGTERM): draining, then exiting" },
      });
      assert.equal(ready.headers.get("connection"), "close");
      const call = await fetch(service.mcp, {
        method: "POST",
        headers: modernHeaders(token),
        body: TOOLS_CALL,
      });
      assert.equal(call.status, 200, "a request during the drain is served");
      assert.equal(call.headers.get("connection"), "close", "and its connection is not kept alive");
      assert.deepEqual(applicationNamesInAnswer(await call.text()), DEMO);
      assert.equal(service.child.exitCode, null, "still serving while it drains");
      const [code] = await exited(service.child);
      assert.equal(code, 0, service.stderr());
      assert.ok(Date.now() - signalled >= 3_000, "the process listened for the whole drain");
      assert.match(service.stderr(), /stopped in \d+ ms \(drained 3 s, /);
    } finally {
      service.child.kill("SIGKILL");
    }
  });

  it("a request that never completes is cut when SHUTDOWN_TIMEOUT is nearly over, and the process exits 0", async () => {
    const service = await start({ SHUTDOWN_TIMEOUT: "2" });
    try {
      const token = await issuer.signMcp("alice", service.mcp);
      const stalled = halfSentRequest(service.mcp, token);
      const outcome = stalled.response.then(
        (r) => `answered ${r.status}`,
        (error: NodeJS.ErrnoException) => `cut (${error.code ?? error.message})`,
      );
      await settle();
      service.child.kill("SIGINT");
      const [code] = await exited(service.child);
      assert.equal(code, 0, service.stderr());
      assert.match(service.stderr(), /SIGINT received: finishing in-flight requests \(at most 2 s/);
      assert.match(await outcome, /^cut/, "the stalled request's connection was closed");
    } finally {
      service.child.kill("SIGKILL");
    }
  });

  it("a second signal exits at once, while a request is still in flight", async () => {
    const service = await start({ SHUTDOWN_TIMEOUT: "120" });
    try {
      const token = await issuer.signMcp("alice", service.mcp);
      const stalled = halfSentRequest(service.mcp, token);
      stalled.response.catch(() => {});
      await settle();
      service.child.kill("SIGTERM");
      while (!service.stderr().includes("SIGTERM received")) await settle();
      assert.equal(service.child.exitCode, null, "still draining: the stalled request holds the stop");
      service.child.kill("SIGINT");
      const [code] = await Promise.race([
        exited(service.child),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("no exit within 15 s of the second signal")), 15_000),
        ),
      ]);
      assert.equal(code, 1);
      assert.match(service.stderr(), /SIGINT received again: exiting now/);
    } finally {
      service.child.kill("SIGKILL");
    }
  });
});
