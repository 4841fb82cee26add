import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createJwtVerifier } from "../../src/auth/jwt-verifier.ts";
import { type RunningMcpService, startMcpService } from "../../src/mcp/http-service.ts";
import { buildRestApp } from "../../src/rest/app.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const MODERN = "2026-07-28";

/**
 * The service's own MCP servers call the REST API of the same process in-process (Fastify inject), not
 * over loopback HTTP: the answers must be the very ones of an MCP server calling the REST API over HTTP,
 * and every credential rule of the REST API must hold exactly as over HTTP.
 */
describe("MCP tools calling the REST API in-process", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: RunningService;
  let overHttp: RunningMcpService;
  let inProcess: string;

  before(async () => {
    issuer = await startTestIssuer();
    store = await createTestStore("sqlite");
    service = await startTestService(store, { issuer: issuer.issuer }, async (handle) => {
      await loadDemo(handle.db);
    });
    inProcess = `${service.mcpUrls.analysis}/mcp`;
    overHttp = await startMcpService({
      kind: "analysis",
      host: "127.0.0.1",
      port: 0,
      restUrl: service.restUrl,
    });
  });
  after(async () => {
    await overHttp?.close();
    await service?.stop();
    await issuer?.close();
    await store?.drop();
  });

  async function call(
    endpoint: string,
    token: string | undefined,
    name: string,
    args: Record<string, unknown>,
    mode: "auto" | "legacy" = "auto",
  ): Promise<CallToolResult> {
    const client = new Client(
      { name: "in-process-test", version: "1.0.0" },
      { versionNegotiation: { mode } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(endpoint), {
        requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
      }),
    );
    try {
      return (await client.callTool({ name, arguments: args })) as CallToolResult;
    } finally {
      await client.close();
    }
  }
  const textOf = (result: CallToolResult) =>
    result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

  for (const mode of ["auto", "legacy"] as const) {
    it(`answers exactly as an MCP server calling the REST API over HTTP (${mode === "auto" ? MODERN : "2025"} era)`, async () => {
      const admin = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
      for (const [name, args] of [
        ["applications", {}],
        ["application", { application: "payments-service" }],
        ["cve_occurrences", { application: "payments-service", cve: "CVE-2021-44228", limit: 5 }],
        ["packages", { application: "storefront-web", vulnerable: true, limit: 3, skip: 1 }],
        ["objects", { application: "claims-portal", query: "a", limit: 2 }],
      ] as const) {
        const here = await call(inProcess, admin, name, args, mode);
        const there = await call(overHttp.endpoint, admin, name, args, mode);
        assert.notEqual(here.isError, true, `${name}: ${textOf(here)}`);
        assert.deepEqual(here, there, name);
      }
    });
  }

  it("applies the caller's rights: a viewer sees only their application and gets 403 for another", async () => {
    const viewer = await issuer.sign({ sub: "bob", roles: ["viewer"], applications: ["storefront-web"] });
    const mine = await call(inProcess, viewer, "applications", {});
    assert.deepEqual(
      (mine.structuredContent as { applications: { name: string }[] }).applications.map((a) => a.name),
      ["storefront-web"],
    );
    const denied = await call(inProcess, viewer, "application", { application: "payments-service" });
    assert.equal(denied.isError, true);
    assert.match(textOf(denied), /403/);
  });

  it("refuses what the REST API refuses: no token, a client's MCP token (gateway bypassed), a forged signature", async () => {
    const none = await call(inProcess, undefined, "applications", {});
    assert.equal(none.isError, true);
    assert.match(textOf(none), /401.*Authentication required/);

    // The client's own token for the gateway's /mcp resource: never exchanged, so the REST API's 401.
    const clientToken = await issuer.signMcp("alice", "http://127.0.0.1:8090/mcp");
    const bypass = await call(inProcess, clientToken, "applications", {});
    assert.equal(bypass.isError, true);
    assert.match(textOf(bypass), /401.*aud claim/);

    const valid = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
    const [header, payload] = valid.split(".") as [string, string, string];
    const forged = `${header}.${payload}.${Buffer.from("not the signature").toString("base64url")}`;
    const forgery = await call(inProcess, forged, "applications", {});
    assert.equal(forgery.isError, true);
    assert.match(textOf(forgery), /401.*signature/);
    // The valid token with the same claims still works: the forgery cached nothing.
    assert.notEqual((await call(inProcess, valid, "applications", {})).isError, true);
  });

  it("never serves a verified token past its expiry from the verification cache", async () => {
    // Expired 27 s ago: still inside the verifier's 30 s clock tolerance, so accepted now, refused in 3 s.
    const expiresAt = Math.floor(Date.now() / 1000) - 27;
    const token = await issuer.sign(
      { sub: "alice", roles: ["admin"], applications: [] },
      { expiresIn: expiresAt },
    );
    const first = await call(inProcess, token, "applications", {});
    assert.notEqual(first.isError, true, textOf(first));
    await new Promise((r) => setTimeout(r, (expiresAt + 31) * 1000 - Date.now()));
    const later = await call(inProcess, token, "applications", {});
    assert.equal(later.isError, true);
    assert.match(textOf(later), /401.*expired/);
  });

  it("writes no access-log lines for the in-process calls (the MCP request has its own); HTTP calls keep theirs", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        // Request lines only (not "Server listening").
        for (const line of String(chunk).split("\n").filter(Boolean)) {
          if ("reqId" in (JSON.parse(line) as object)) lines.push(line);
        }
        done();
      },
    });
    const rest = await buildRestApp({
      db: service.store.db,
      verifier: createJwtVerifier({ issuer: issuer.issuer }),
      version: "test",
      logger: { level: "info", stream },
    });
    await rest.listen({ host: "127.0.0.1", port: 0 });
    const mcp = await startMcpService({
      kind: "analysis",
      host: "127.0.0.1",
      port: 0,
      restUrl: "http://127.0.0.1:9",
      restApp: rest,
    });
    try {
      const admin = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
      const answer = await call(mcp.endpoint, admin, "applications", {});
      assert.notEqual(answer.isError, true, textOf(answer));
      assert.deepEqual(lines, [], "no access log for in-process calls");
      const address = rest.server.address() as { port: number };
      const direct = await fetch(`http://127.0.0.1:${address.port}/rest/applications`, {
        headers: { authorization: `Bearer ${admin}` },
      });
      assert.equal(direct.status, 200);
      await direct.text();
      const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
      assert.deepEqual(messages, ["incoming request", "request completed"]);
    } finally {
      await mcp.close();
      await rest.close();
    }
  });

  describe("request bodies (read and parsed once by the MCP service)", () => {
    const headers = (token: string) => ({
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      authorization: `Bearer ${token}`,
    });

    it("answers a body that is not JSON with a JSON-RPC parse error", async () => {
      const token = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
      for (const body of ["{not json", ""]) {
        const response = await fetch(inProcess, { method: "POST", headers: headers(token), body });
        assert.equal(response.status, 400, JSON.stringify(body));
        const answer = (await response.json()) as {
          jsonrpc: string;
          error: { code: number; message: string };
        };
        assert.equal(answer.jsonrpc, "2.0");
        assert.equal(answer.error.code, -32700, answer.error.message);
      }
    });

    it("answers a body over 4 MiB with 413 and a JSON-RPC error, however it is sent", async () => {
      const token = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
      const big = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { pad: "x".repeat(4 * 1024 * 1024) },
      });
      const declared = await fetch(inProcess, { method: "POST", headers: headers(token), body: big });
      assert.equal(declared.status, 413);
      assert.match(
        ((await declared.json()) as { error: { message: string } }).error.message,
        /Payload Too Large/,
      );
      // Chunked, without a Content-Length: counted while read.
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          const bytes = new TextEncoder().encode(big);
          for (let at = 0; at < bytes.length; at += 256 * 1024)
            controller.enqueue(bytes.slice(at, at + 256 * 1024));
          controller.close();
        },
      });
      const chunked = await fetch(inProcess, {
        method: "POST",
        headers: headers(token),
        body: stream,
        duplex: "half",
      } as RequestInit);
      assert.equal(chunked.status, 413);
    });
  });
});
