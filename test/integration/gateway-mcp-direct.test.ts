/**
 * The gateway hands `/mcp` and `/mcp/gatekeeper` to the MCP servers of its own process (issue 18,
 * point 2): the same answers as the HTTP hop of a gateway running alone, no request on the MCP servers'
 * listeners, every check of the gateway still made, streams and the stop still working.
 */
import assert from "node:assert/strict";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { spawnService } from "../support/cli.ts";
import { applicationNamesInAnswer } from "../support/mcp-answers.ts";
import { rawRequest, withoutDate } from "../support/raw-http.ts";
import { freePort, startTestService } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const MODERN = "2026-07-28";
const LEGACY = "2025-06-18";
const DEMO = ["claims-portal", "payments-service", "storefront-web"];

const modernCall = (name: string, id = 7) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name,
      arguments: {},
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": { name: "gateway-mcp-direct-test", version: "1.0.0" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
const modernHeaders = (token: string, tool: string) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": MODERN,
  "mcp-method": "tools/call",
  "mcp-name": tool,
  authorization: `Bearer ${token}`,
});
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "direct-test", version: "1" } },
});
const legacyHeaders = (token: string, session?: string) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  authorization: `Bearer ${token}`,
  ...(session ? { "mcp-session-id": session, "mcp-protocol-version": LEGACY } : {}),
});

describe("the MCP servers in the gateway's process answer /mcp on the client's connection", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  /** Every part in one process: the gateway hands /mcp to the MCP servers' request entry. */
  let oneProcess: RunningService;
  /** A gateway alone, forwarding to the same MCP servers over HTTP (as with `--only gateway`). */
  let overHttp: RunningService;
  let oneBase: string;
  let httpBase: string;
  /** Requests the MCP servers' listeners received over a socket (HTTP servers of this process). */
  const receivedByMcpListeners: string[] = [];
  const onServerRequest = (message: unknown) => {
    const { request: received, server } = message as { request: IncomingMessage; server: Server };
    const address = server.address();
    if (typeof address !== "object" || address === null || !oneProcess) return;
    const ports = [oneProcess.mcpUrls.analysis, oneProcess.mcpUrls.gatekeeper].map((u) => new URL(u).port);
    if (ports.includes(String(address.port)) && received.url !== "/healthz") {
      receivedByMcpListeners.push(`${received.method} ${received.url}`);
    }
  };

  before(async () => {
    issuer = await startTestIssuer();
    issuer.setUser("alice", { roles: ["admin"], applications: [] });
    issuer.setUser("bob", { roles: ["viewer"], applications: ["storefront-web"] });
    store = await createTestStore("sqlite");
    const onePort = await freePort();
    oneBase = `http://127.0.0.1:${onePort}`;
    const common = { issuer: issuer.issuer, tokenExchangeClientSecret: issuer.clientSecret };
    oneProcess = await startTestService(
      store,
      { ...common, port: onePort, publicUrl: oneBase },
      async (h) => {
        await loadDemo(h.db);
      },
    );
    const httpPort = await freePort();
    httpBase = `http://127.0.0.1:${httpPort}`;
    overHttp = await startTestService(
      store,
      {
        ...common,
        port: httpPort,
        publicUrl: httpBase,
        restUpstreamUrl: oneProcess.restUrl,
        mcpAnalysisUpstreamUrl: oneProcess.mcpUrls.analysis,
        mcpGatekeeperUpstreamUrl: oneProcess.mcpUrls.gatekeeper,
      },
      undefined,
      ["gateway"],
    );
    subscribe("http.server.request.start", onServerRequest);
  });
  after(async () => {
    unsubscribe("http.server.request.start", onServerRequest);
    await overHttp?.stop();
    await oneProcess?.stop();
    await issuer?.close();
    await store?.drop();
  });

  /** The same request through both gateways (each with a token for its own resource URL). */
  async function bothWays(
    path: string,
    headers: (token: string) => Record<string, string>,
    method = "POST",
    body?: string,
    user = "alice",
  ) {
    receivedByMcpListeners.length = 0;
    const oneToken = await issuer.signMcp(user, `${oneBase}${path}`);
    const inProcess = await rawRequest(`${oneBase}${path}`, headers(oneToken), method, body);
    const socketsInProcess = [...receivedByMcpListeners];
    receivedByMcpListeners.length = 0;
    const httpToken = await issuer.signMcp(user, `${httpBase}${path}`);
    const http = await rawRequest(`${httpBase}${path}`, headers(httpToken), method, body);
    const socketsOverHttp = [...receivedByMcpListeners];
    return { inProcess, http, socketsInProcess, socketsOverHttp };
  }

  for (const [path, tool] of [
    ["/mcp", "applications"],
    ["/mcp/gatekeeper", "gates"],
  ] as const) {
    it(`a stateless ${MODERN} tools/call on ${path}: no loopback request, the status, headers and bytes of the HTTP hop`, async () => {
      const { inProcess, http, socketsInProcess, socketsOverHttp } = await bothWays(
        path,
        (token) => modernHeaders(token, tool),
        "POST",
        modernCall(tool),
      );
      assert.deepEqual(
        socketsInProcess,
        [],
        "the one-process gateway made no HTTP request to the MCP server",
      );
      assert.deepEqual(socketsOverHttp, [`POST ${path}`], "the other gateway reached it over HTTP");
      assert.equal(inProcess.status, 200, inProcess.body.toString("utf8"));
      assert.deepEqual(withoutDate(inProcess.headers), withoutDate(http.headers));
      assert.equal(inProcess.body.toString("utf8"), http.body.toString("utf8"));
      if (tool === "applications")
        assert.deepEqual(applicationNamesInAnswer(inProcess.body.toString("utf8")), DEMO);
    });
  }

  it("the user's rights reach the tools: a viewer sees only their application, as over HTTP", async () => {
    const { inProcess, http, socketsInProcess } = await bothWays(
      "/mcp",
      (token) => modernHeaders(token, "applications"),
      "POST",
      modernCall("applications"),
      "bob",
    );
    assert.deepEqual(socketsInProcess, []);
    assert.deepEqual(applicationNamesInAnswer(inProcess.body.toString("utf8")), ["storefront-web"]);
    assert.equal(inProcess.body.toString("utf8"), http.body.toString("utf8"));
  });

  it("CORS from an allowed origin, a body that is no JSON, a method the MCP server refuses: the HTTP hop's answers", async () => {
    const cases: [Record<string, string>, string, string | undefined][] = [
      [{ origin: oneBase }, "POST", modernCall("applications")],
      [{}, "POST", "{not json"],
      [{}, "PUT", modernCall("applications")],
    ];
    for (const [extra, method, body] of cases) {
      receivedByMcpListeners.length = 0;
      const oneToken = await issuer.signMcp("alice", `${oneBase}/mcp`);
      const httpToken = await issuer.signMcp("alice", `${httpBase}/mcp`);
      const origin = (base: string): Record<string, string> => (extra.origin ? { origin: base } : {});
      const inProcess = await rawRequest(
        `${oneBase}/mcp`,
        { ...modernHeaders(oneToken, "applications"), ...origin(oneBase) },
        method,
        body,
      );
      assert.deepEqual(receivedByMcpListeners, [], method);
      const http = await rawRequest(
        `${httpBase}/mcp`,
        { ...modernHeaders(httpToken, "applications"), ...origin(httpBase) },
        method,
        body,
      );
      assert.equal(inProcess.status, http.status, `${method} ${body}`);
      const normalize = (headers: ReturnType<typeof withoutDate>, base: string) => ({
        ...headers,
        ...(headers["access-control-allow-origin"] === base
          ? { "access-control-allow-origin": "<own>" }
          : {}),
      });
      assert.deepEqual(
        normalize(withoutDate(inProcess.headers), oneBase),
        normalize(withoutDate(http.headers), httpBase),
        `${method} ${body}`,
      );
      assert.equal(inProcess.body.toString("utf8"), http.body.toString("utf8"));
      if (extra.origin) assert.equal(inProcess.headers["access-control-allow-origin"], oneBase);
    }
  });

  it("a request without a token, or with another resource's token, never reaches the MCP server", async () => {
    receivedByMcpListeners.length = 0;
    const none = await rawRequest(
      `${oneBase}/mcp`,
      { "content-type": "application/json" },
      "POST",
      INITIALIZE,
    );
    assert.equal(none.status, 401);
    const wrongResource = await rawRequest(
      `${oneBase}/mcp`,
      legacyHeaders(await issuer.signMcp("alice", `${oneBase}/mcp/gatekeeper`)),
      "POST",
      INITIALIZE,
    );
    assert.equal(wrongResource.status, 401);
    assert.deepEqual(receivedByMcpListeners, []);
  });

  it("a 2025 session through the direct path: the SDK client's handshake, tools, GET stream and DELETE; the session is bound to its user", async () => {
    receivedByMcpListeners.length = 0;
    const token = await issuer.signMcp("alice", `${oneBase}/mcp`);
    const client = new Client(
      { name: "direct-legacy", version: "1.0.0" },
      { versionNegotiation: { mode: "legacy" } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(`${oneBase}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    const session = transport.sessionId;
    assert.ok(session, "a 2025 session was opened through the gateway");
    const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
    assert.deepEqual(
      (result.structuredContent as { applications: { name: string }[] }).applications
        .map((a) => a.name)
        .sort(),
      DEMO,
    );

    // Another user naming this session: the gateway's 404, the same bytes as for an unknown id.
    const bobToken = await issuer.signMcp("bob", `${oneBase}/mcp`);
    const listTools = JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" });
    const stolen = await rawRequest(`${oneBase}/mcp`, legacyHeaders(bobToken, session), "POST", listTools);
    const unknown = await rawRequest(
      `${oneBase}/mcp`,
      legacyHeaders(bobToken, "00000000-0000-4000-8000-000000000000"),
      "POST",
      listTools,
    );
    assert.equal(stolen.status, 404);
    assert.deepEqual(withoutDate(stolen.headers), withoutDate(unknown.headers));
    assert.equal(stolen.body.toString("utf8"), unknown.body.toString("utf8"));

    // A GET stream of a session opened here (the SDK client holds its own): its head comes at once, and
    // a client that leaves it ends nothing else.
    const opened = await rawRequest(`${oneBase}/mcp`, legacyHeaders(token), "POST", INITIALIZE);
    const rawSession = String(opened.headers["mcp-session-id"]);
    const stream = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(`${oneBase}/mcp`, {
        headers: { ...legacyHeaders(token, rawSession), accept: "text/event-stream" },
        agent: false,
      });
      req.once("response", resolve).once("error", reject).end();
    });
    assert.equal(stream.statusCode, 200);
    assert.match(String(stream.headers["content-type"]), /^text\/event-stream/);
    stream.destroy();
    const again = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
    assert.equal((again.structuredContent as { applications: unknown[] }).applications.length, 3);

    await transport.terminateSession();
    await client.close();
    // DELETE ended it: the binding went too, so the id is unknown now, to its own user as well.
    const after = await rawRequest(`${oneBase}/mcp`, legacyHeaders(token, session), "POST", listTools);
    assert.equal(after.status, 404);
    assert.deepEqual(receivedByMcpListeners, [], "nothing reached the MCP server's listener");
  });
});

describe("the stop of one process with 2025 GET streams held through the direct path", () => {
  it("ends each stream cleanly for its client and stops within the timeout", async () => {
    const issuer = await startTestIssuer();
    issuer.setUser("alice", { roles: ["admin"], applications: [] });
    const store = await createTestStore("sqlite");
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const service = await startTestService(
      store,
      { port, publicUrl: base, issuer: issuer.issuer, tokenExchangeClientSecret: issuer.clientSecret },
      async (h) => {
        await loadDemo(h.db);
      },
    );
    try {
      const token = await issuer.signMcp("alice", `${base}/mcp`);
      const ends: Promise<string>[] = [];
      for (let i = 0; i < 3; i++) {
        const opened = await rawRequest(`${base}/mcp`, legacyHeaders(token), "POST", INITIALIZE);
        const session = String(opened.headers["mcp-session-id"]);
        const stream = await new Promise<IncomingMessage>((resolve, reject) => {
          const req = httpRequest(`${base}/mcp`, {
            headers: { ...legacyHeaders(token, session), accept: "text/event-stream" },
            agent: false,
          });
          req.once("response", resolve).once("error", reject).end();
        });
        assert.equal(stream.statusCode, 200);
        stream.resume();
        ends.push(
          Promise.race([once(stream, "end").then(() => "end"), once(stream, "error").then(() => "cut")]),
        );
      }
      await service.stop(5_000);
      assert.deepEqual(await Promise.all(ends), ["end", "end", "end"], "each stream ended, none was cut");
      const gateway = service.stopDurations.find((step) => step.name === "gateway");
      assert.ok(gateway && gateway.ms < 4_000, JSON.stringify(service.stopDurations));
    } finally {
      await service.stop();
      await issuer.close();
      await store.drop();
    }
  });
});

describe("the direct path's log in one `imaging start` process (debug level)", () => {
  it("logs the MCP requests it hands over, with no token of either kind in any line", async () => {
    const issuer = await startTestIssuer();
    issuer.setUser("alice", { roles: ["admin"], applications: [] });
    const dataDir = mkdtempSync(join(tmpdir(), "imaging-mcp-direct-logs-"));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const service = await spawnService(
      ["--demo", "--data-dir", dataDir],
      {
        PORT: String(port),
        PUBLIC_URL: base,
        IMAGING_BIND_ADDRESS: "127.0.0.1",
        REST_PORT: "0",
        MCP_ANALYSIS_PORT: "0",
        MCP_GATEKEEPER_PORT: "0",
        IDP_ISSUER: issuer.issuer,
        TOKEN_EXCHANGE_CLIENT_SECRET: issuer.clientSecret,
        LOG_LEVEL: "debug",
      },
      60_000,
    );
    try {
      const token = await issuer.signMcp("alice", `${base}/mcp`);
      const modern = await rawRequest(
        `${base}/mcp`,
        modernHeaders(token, "applications"),
        "POST",
        modernCall("applications"),
      );
      assert.equal(modern.status, 200);
      assert.deepEqual(applicationNamesInAnswer(modern.body.toString("utf8")), DEMO);
      const opened = await rawRequest(`${base}/mcp`, legacyHeaders(token), "POST", INITIALIZE);
      assert.equal(opened.status, 200);
      const deadline = Date.now() + 5_000;
      while (!service.stdout().includes('"url":"/mcp"') && Date.now() < deadline) await sleep(50);
      const log = service.stdout() + service.stderr();
      assert.match(log, /"url":"\/mcp"/, "the gateway's access-log lines of /mcp");
      assert.equal(log.includes(token), false, "no MCP token in the log");
      assert.doesNotMatch(log, /eyJ[\w-]+\.eyJ[\w-]+/, "no JWT at all (the exchanged platform token)");
    } finally {
      service.child.kill("SIGTERM");
      await once(service.child, "exit");
      await issuer.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
