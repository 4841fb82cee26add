import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { openStore } from "../../src/store/database.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { CLI, spawnService } from "../support/cli.ts";
import { seedCimdClient, seedUsers, USERS } from "../support/idp-service.ts";
import { authorize } from "../support/oauth-flow.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

interface LogLine {
  level: number;
  reqId?: string;
  msg: string;
  req?: { url: string };
  res?: { statusCode: number };
}

const jsonLines = (text: string): LogLine[] =>
  text
    .split("\n")
    .filter((line) => line.startsWith('{"level":'))
    .map((line) => JSON.parse(line) as LogLine);

/** Waits (bounded) until `read()` has a log line `match` accepts: lines are written as requests end. */
async function lineFor(read: () => string, match: (line: LogLine) => boolean): Promise<LogLine> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = jsonLines(read()).find(match);
    if (found) return found;
    assert.ok(Date.now() < deadline, `no such log line in:\n${read()}`);
    await sleep(50);
  }
}

const traceId = () => randomBytes(16).toString("hex");
const traceparent = (id: string) => `00-${id}-${randomBytes(8).toString("hex")}-01`;

/**
 * A split deployment (gateway in one process, REST API and MCP servers in another), as an operator
 * reads its logs: the lines of one request carry one id in every process, the client's trace-id when
 * it sends a `traceparent`, and no credential.
 */
describe("request logs: one id per request across processes, traceparent honoured", () => {
  let store: TestStore;
  let backend: Awaited<ReturnType<typeof spawnService>>;
  let gateway: Awaited<ReturnType<typeof spawnService>>;
  let mcp: Awaited<ReturnType<typeof spawnService>>;
  let documents: CimdDocumentServer;
  let publicUrl: string;
  let mcpAnalysis: string;
  const secret = `secret-token-${randomBytes(12).toString("hex")}`;

  before(async () => {
    store = await createTestStore("sqlite");
    // The gateway runs the embedded identity provider: a user and a CIMD client to sign in with.
    documents = await startCimdDocumentServer();
    const seeded = await openStore({ sqliteFile: store.sqliteFile });
    try {
      await seedUsers(seeded.db);
      await seedCimdClient(seeded.db, "log-test-client", documents.clientId);
    } finally {
      await seeded.close();
    }
    writeFileSync(join(store.dataDir, "cimd-ca.pem"), documents.ca);
    const gatewayPort = await freePort();
    publicUrl = `http://127.0.0.1:${gatewayPort}`;
    const idp = { PUBLIC_URL: publicUrl, IDP_ISSUER: `${publicUrl}/auth/realms/imaging` };
    const ports = { rest: await freePort(), analysis: await freePort(), gatekeeper: await freePort() };
    backend = await spawnService(["--data-dir", store.dataDir, "--only", "rest"], {
      ...idp,
      LOG_LEVEL: "info",
      REST_PORT: String(ports.rest),
    });
    // In their own process, the MCP servers' tools call the REST API over HTTP.
    mcp = await spawnService(
      ["--data-dir", store.dataDir, "--only", "mcp-analysis", "--only", "mcp-gatekeeper"],
      {
        ...idp,
        LOG_LEVEL: "info",
        MCP_ANALYSIS_PORT: String(ports.analysis),
        MCP_GATEKEEPER_PORT: String(ports.gatekeeper),
        REST_UPSTREAM_URL: `http://127.0.0.1:${ports.rest}`,
      },
    );
    mcpAnalysis = `http://127.0.0.1:${ports.analysis}/mcp`;
    gateway = await spawnService(
      ["--data-dir", store.dataDir, "--port", String(gatewayPort), "--only", "gateway"],
      {
        PUBLIC_URL: publicUrl,
        IDP_EXTRA_CA_FILE: join(store.dataDir, "cimd-ca.pem"),
        LOG_LEVEL: "info",
        REST_UPSTREAM_URL: `http://127.0.0.1:${ports.rest}`,
        MCP_ANALYSIS_UPSTREAM_URL: `http://127.0.0.1:${ports.analysis}`,
        MCP_GATEKEEPER_UPSTREAM_URL: `http://127.0.0.1:${ports.gatekeeper}`,
      },
    );
  });
  after(async () => {
    for (const child of [gateway?.child, mcp?.child, backend?.child]) {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    }
    await documents?.close();
    await store?.drop();
  });

  it("the client's trace-id is the request id in the gateway's and the REST API's lines", async () => {
    const id = traceId();
    const response = await fetch(`${gateway.summary.gateway}/rest/applications?page=1`, {
      headers: { traceparent: traceparent(id), authorization: `Bearer ${secret}` },
    });
    // Refused by the REST API (no identity provider answers this split test's issuer: 503, else 401).
    assert.ok(response.status === 401 || response.status === 503, String(response.status));
    const atGateway = await lineFor(gateway.stdout, (l) => l.reqId === id && l.res !== undefined);
    assert.equal(atGateway.res?.statusCode, response.status);
    const atRest = await lineFor(backend.stdout, (l) => l.reqId === id && l.res !== undefined);
    assert.equal(atRest.res?.statusCode, response.status);
    assert.equal(
      (await lineFor(backend.stdout, (l) => l.reqId === id && l.req !== undefined)).req?.url,
      "/rest/applications?page=1",
    );
  });

  it("without traceparent the gateway makes an id and passes it on; an invalid one is replaced", async () => {
    const marker = randomBytes(6).toString("hex");
    assert.equal((await fetch(`${gateway.summary.gateway}/rest/health?m=${marker}`)).status, 200);
    const made = await lineFor(gateway.stdout, (l) => l.req?.url === `/rest/health?m=${marker}`);
    assert.match(made.reqId ?? "", /^[0-9a-f]{32}$/);
    await lineFor(backend.stdout, (l) => l.reqId === made.reqId && l.req?.url === `/rest/health?m=${marker}`);

    const invalid = `00-${"0".repeat(32)}-${randomBytes(8).toString("hex")}-01`;
    const other = randomBytes(6).toString("hex");
    await fetch(`${gateway.summary.gateway}/rest/health?m=${other}`, { headers: { traceparent: invalid } });
    const replaced = await lineFor(gateway.stdout, (l) => l.req?.url === `/rest/health?m=${other}`);
    assert.match(replaced.reqId ?? "", /^[0-9a-f]{32}$/);
    assert.notEqual(replaced.reqId, "0".repeat(32));
  });

  it("an MCP tool's REST calls carry the MCP request's traceparent on", async () => {
    const id = traceId();
    const client = new Client({ name: "log-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcpAnalysis), {
        requestInit: { headers: { authorization: `Bearer ${secret}`, traceparent: traceparent(id) } },
      }),
    );
    try {
      // The token is not a platform token: the REST API refuses the tool's call, and logs it under the id.
      const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
      assert.equal(result.isError, true);
    } finally {
      await client.close();
    }
    const atRest = await lineFor(backend.stdout, (l) => l.reqId === id && l.res !== undefined);
    assert.ok((atRest.res?.statusCode ?? 0) >= 400);
    assert.match(
      (await lineFor(backend.stdout, (l) => l.reqId === id && l.req !== undefined)).req?.url ?? "",
      /^\/rest\/applications/,
    );
  });

  it("a tools/call through the gateway: the MCP server's REST calls carry the client's trace-id", async () => {
    const signedIn = await authorize(
      {
        issuer: `${publicUrl}/auth/realms/imaging`,
        clientId: documents.clientId,
        redirectUri: "http://127.0.0.1:49152/callback",
        resource: `${publicUrl}/mcp`,
      },
      { username: "alice", password: USERS.alice.password },
    );
    const id = traceId();
    const client = new Client({ name: "log-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${publicUrl}/mcp`), {
        requestInit: {
          headers: { authorization: `Bearer ${signedIn.accessToken}`, traceparent: traceparent(id) },
        },
      }),
    );
    try {
      const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result));
    } finally {
      await client.close();
    }
    // gateway (its own line) -> MCP server (traceparent from the gateway) -> REST API (from the tool).
    await lineFor(gateway.stdout, (l) => l.reqId === id && l.req?.url === "/mcp");
    const atRest = await lineFor(backend.stdout, (l) => l.reqId === id && l.res !== undefined);
    assert.equal(atRest.res?.statusCode, 200);
    for (const text of [gateway, mcp, backend].flatMap((p) => [p.stdout(), p.stderr()])) {
      assert.ok(!text.includes(signedIn.accessToken), "no access token in the logs");
    }
  });

  it("no line of any process holds the bearer token", () => {
    for (const text of [gateway, mcp, backend].flatMap((p) => [p.stdout(), p.stderr()])) {
      assert.ok(!text.includes(secret), "a token in the logs");
    }
  });
});

describe("request logs: LOG_FORMAT", () => {
  let store: TestStore;
  let child: ChildProcess | undefined;
  before(async () => {
    store = await createTestStore("sqlite");
  });
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
    await store?.drop();
  });

  it("pretty: human-readable lines with the level, the message and the request id, not JSON", async () => {
    child = spawn(
      process.execPath,
      [CLI, "start", "--data-dir", store.dataDir, "--port", "0", "--only", "rest"],
      {
        env: { ...process.env, LOG_LEVEL: "info", LOG_FORMAT: "pretty", REST_PORT: "0" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    const deadline = Date.now() + 30_000;
    let url: string | undefined;
    while (!url) {
      url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
      assert.ok(Date.now() < deadline, `no listening line: ${stdout}`);
      await sleep(100);
    }
    // A health check first: read by a person, the log keeps probes out of sight (debug, not info).
    const probe = traceId();
    await fetch(`${url}/rest/health`, { headers: { traceparent: traceparent(probe) } });
    const id = traceId();
    await fetch(`${url}/rest/openapi.json`, { headers: { traceparent: traceparent(id) } });
    while (!stdout.includes("request completed")) {
      assert.ok(Date.now() < deadline, `no request line: ${stdout}`);
      await sleep(50);
    }
    assert.match(stdout, /INFO.*request completed/);
    assert.ok(stdout.includes(id), "the request id is on the line");
    assert.ok(!stdout.includes(probe), `the health check is not logged at info: ${stdout}`);
    assert.ok(!stdout.split("\n").some((line) => line.startsWith('{"level":')), "no JSON line");
  });
});
