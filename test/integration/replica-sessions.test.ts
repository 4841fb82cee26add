import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { openStore } from "../../src/store/database.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { spawnService } from "../support/cli.ts";
import { seedCimdClient, seedUsers, USERS } from "../support/idp-service.ts";
import { authorize } from "../support/oauth-flow.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * 2025-era MCP sessions across replicas (issue 16, point 2). The design: the load balancer routes a
 * request carrying `Mcp-Session-Id` to the replica that answered with that id (HAProxy learns it from
 * the response: `stick store-response res.hdr(mcp-session-id)`), so a session keeps working while its
 * replica lives. When that replica dies, the balancer sends the id elsewhere; a replica that did not
 * open the session answers the protocol's 404 "Session not found", and the client re-initializes.
 * Real HAProxy (Debian's), two real `imaging start` processes on one PostgreSQL, kill -9.
 */
const HAPROXY = ["/usr/sbin/haproxy", "/usr/bin/haproxy"].find((p) => existsSync(p));
const KEY = randomBytes(32).toString("base64");

function haproxyConfig(port: number, backends: Record<string, number>): string {
  return [
    "global",
    "  maxconn 512",
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 30s",
    "  timeout server 30s",
    "  option redispatch",
    "frontend replicas_in",
    `  bind 127.0.0.1:${port}`,
    "  default_backend replicas",
    "backend replicas",
    "  balance roundrobin",
    // The session id a replica answered with pins the session to it (docs/administrators.md, "2025-era MCP sessions behind a load balancer").
    "  stick-table type string len 128 size 100k expire 30m",
    "  stick match req.hdr(mcp-session-id)",
    "  stick store-response res.hdr(mcp-session-id)",
    "  http-response set-header x-served-by %s",
    ...Object.entries(backends).map(
      ([name, p]) => `  server ${name} 127.0.0.1:${p} check inter 300ms fall 2 rise 2`,
    ),
    "",
  ].join("\n");
}

describe("2025-era sessions across replicas behind HAProxy", {
  skip: HAPROXY ? false : "HAProxy is not installed (.ci/run installs it)",
}, () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let haproxy: ChildProcess;
  let base: string;
  let token: string;
  const children: Record<string, ChildProcess> = {};
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "imaging-sessions-"));
    dirs.push(dir);
    return dir;
  };

  before(async () => {
    assert.ok(HAPROXY, "HAProxy is required for the replica tests: run .ci/run, or apt-get install haproxy");
    store = await createTestStore("postgres");
    documents = await startCimdDocumentServer();
    const caFile = join(tempDir(), "ca.pem");
    writeFileSync(caFile, documents.ca);
    const lbPort = await freePort();
    base = `http://127.0.0.1:${lbPort}`;
    const ports = { A: await freePort(), B: await freePort() };
    // Both at once: the migrations run under PostgreSQL's advisory lock and the provider's keys are
    // generated once into the store (replicas.test.ts starts three together), so the starts overlap.
    const starts = Object.entries(ports).map(async ([name, port]) => {
      const service = await spawnService(
        ["--data-dir", tempDir(), "--port", String(port)],
        {
          DATABASE_URL: store.databaseUrl,
          PUBLIC_URL: base,
          IMAGING_SECRETS_KEY: KEY,
          REST_PORT: "0",
          MCP_ANALYSIS_PORT: "0",
          MCP_GATEKEEPER_PORT: "0",
          IMAGING_BIND_ADDRESS: "127.0.0.1",
          IDP_EXTRA_CA_FILE: caFile,
        },
        120_000,
      );
      children[name] = service.child;
    });
    const failed = (await Promise.allSettled(starts)).find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    try {
      await loadDemo(handle.db);
      await seedUsers(handle.db);
      await seedCimdClient(handle.db, "test-ai-client", documents.clientId);
    } finally {
      await handle.close();
    }
    const config = join(tempDir(), "haproxy.cfg");
    writeFileSync(config, haproxyConfig(lbPort, ports));
    haproxy = spawn(HAPROXY as string, ["-db", "-f", config], { stdio: ["ignore", "ignore", "pipe"] });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const up = await fetch(`${base}/rest/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      assert.ok(Date.now() < deadline, "HAProxy did not come up");
      await new Promise((r) => setTimeout(r, 100));
    }
    token = (
      await authorize(
        {
          issuer: `${base}/auth/realms/imaging`,
          clientId: documents.clientId,
          redirectUri: "http://127.0.0.1:49152/callback",
          resource: `${base}/mcp`,
        },
        { username: "alice", password: USERS.alice.password },
      )
    ).accessToken;
  });
  after(async () => {
    for (const child of [...Object.values(children), haproxy]) {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    }
    await documents?.close();
    await store?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  let nextId = 1;
  const rpc = async (method: string, params: unknown, sessionId?: string) => {
    const response = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(sessionId ? { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
    });
    const text = await response.text();
    return {
      status: response.status,
      servedBy: response.headers.get("x-served-by") ?? "",
      sessionId: response.headers.get("mcp-session-id") ?? undefined,
      text,
    };
  };
  const initialize = async () => {
    const opened = await rpc("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "replica-sessions-test", version: "1.0.0" },
    });
    assert.equal(opened.status, 200, opened.text);
    assert.ok(opened.sessionId, "initialize opens a session");
    const sessionId = opened.sessionId as string;
    const initialized = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    assert.equal(initialized.status, 202);
    return { sessionId, owner: opened.servedBy };
  };
  const callApplications = (sessionId: string) =>
    rpc("tools/call", { name: "applications", arguments: {} }, sessionId);

  it("a session keeps working while its replica lives: every request reaches the replica that opened it", async () => {
    const { sessionId, owner } = await initialize();
    assert.match(owner, /^[AB]$/);
    for (let i = 0; i < 10; i++) {
      const call = await callApplications(sessionId);
      assert.equal(call.status, 200, call.text);
      assert.equal(call.servedBy, owner);
      assert.match(call.text, /shop/);
    }
  });

  it("when its replica dies (kill -9), the client gets the protocol's 404 and re-initializes on a live one", async () => {
    const { sessionId, owner } = await initialize();
    assert.equal((await callApplications(sessionId)).status, 200);
    const survivor = owner === "A" ? "B" : "A";
    (children[owner] as ChildProcess).kill("SIGKILL");
    await once(children[owner] as ChildProcess, "exit");

    // Until the health check has removed the dead replica, HAProxy may still try it (503 after its
    // retries); afterwards the session id reaches the survivor, which never opened it.
    let answer = await callApplications(sessionId);
    const deadline = Date.now() + 10_000;
    while (answer.status !== 404) {
      assert.ok(Date.now() < deadline, `no 404 after the replica died: ${answer.status} ${answer.text}`);
      assert.ok(answer.status >= 500, `unexpected ${answer.status}: ${answer.text}`);
      await new Promise((r) => setTimeout(r, 200));
      answer = await callApplications(sessionId);
    }
    assert.equal(answer.servedBy, survivor);
    assert.equal(
      (JSON.parse(answer.text) as { error: { code: number; message: string } }).error.message,
      "Session not found",
    );

    const again = await initialize();
    assert.equal(again.owner, survivor);
    const call = await callApplications(again.sessionId);
    assert.equal(call.status, 200, call.text);
    assert.match(call.text, /shop/);
  });
});
