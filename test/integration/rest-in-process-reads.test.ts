import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { createJwtVerifier } from "../../src/auth/jwt-verifier.ts";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { startMcpService } from "../../src/mcp/http-service.ts";
import { buildRestApp } from "../../src/rest/app.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

/**
 * The REST GET operations the MCP tools call in-process without Fastify's pipeline
 * (src/rest/in-process-reads.ts) answer exactly what `inject` (the HTTP pipeline) answers: the same value,
 * the same refusals (401 without or with a bad token, 400 for a bad parameter, 403, 404), on both stores.
 */
for (const kind of STORE_KINDS) {
  describe(`REST reads called in-process (${kind})`, () => {
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let app: FastifyInstance;
    const tokens: Record<string, Record<string, string>> = {};

    before(async () => {
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      service = await startTestService(store, { issuer: issuer.issuer }, async (handle) => {
        await loadDemo(handle.db);
      });
      app = await buildRestApp({
        db: service.store.db,
        verifier: createJwtVerifier({ issuer: issuer.issuer }),
        version: "test",
      });
      await app.ready();
      const bearer = async (claims: { sub: string; roles: string[]; applications: string[] }) => ({
        accept: "application/json",
        "accept-encoding": "identity",
        authorization: `Bearer ${await issuer.sign(claims)}`,
      });
      tokens.admin = await bearer({ sub: "alice", roles: ["admin"], applications: [] });
      tokens.viewer = await bearer({ sub: "bob", roles: ["viewer"], applications: ["storefront-web"] });
      tokens.none = { accept: "application/json" };
      tokens.bypass = {
        authorization: `Bearer ${await issuer.signMcp("alice", "http://127.0.0.1:8090/mcp")}`,
      };
      tokens.malformed = { authorization: "Basic YWxpY2U6c2VjcmV0" };
      const key = await createApiKey(service.store.db, {
        user: "carol",
        role: "viewer",
        applications: ["payments-service"],
      });
      tokens.apiKey = { "x-api-key": key.key };
    });
    after(async () => {
      await app?.close();
      await service?.stop();
      await issuer?.close();
      await store?.drop();
    });

    /** The paths the MCP tools read, with good and bad parameters. */
    const toolPaths = (from: string): string[] => [
      "/rest/applications",
      "/rest/applications?limit=2&skip=1",
      "/rest/applications?limit=0",
      "/rest/applications/payments-service",
      "/rest/applications/storefront-web",
      "/rest/applications/no-such-app",
      "/rest/applications/payments-service/insights/cve?limit=5&severity=critical,high",
      "/rest/applications/payments-service/insights/cve?severity=fatal",
      "/rest/applications/payments-service/insights/cve/CVE-2021-44228/references?limit=3",
      "/rest/applications/payments-service/insights/cve/not-a-cve/references",
      "/rest/applications/storefront-web/packages?limit=3&skip=1&vulnerable=true",
      "/rest/applications/storefront-web/packages?vulnerable=maybe",
      "/rest/applications/storefront-web/interactions?limit=5&package=lodash",
      "/rest/applications/storefront-web/interactions?limit=5",
      "/rest/applications/claims-portal/objects?limit=2&q=a",
      "/rest/applications/claims-portal/objects?limit=2",
      "/rest/gates",
      "/rest/applications/payments-service/gates/evaluation",
      "/rest/applications/payments-service/gates/evaluation?date=2001-01-01T00:00:00Z",
      "/rest/applications/payments-service/gates/history?limit=3",
      `/rest/applications/payments-service/compare?from=${encodeURIComponent(from)}&limit=5&skip=0`,
      "/rest/applications/payments-service/compare?from=yesterday",
      "/rest/applications/payments%2Dservice",
    ];

    it("answers every tool read exactly as the HTTP pipeline does, for every kind of caller", async () => {
      const detail = await app.inject({ url: "/rest/applications/payments-service", headers: tokens.admin });
      const from = (JSON.parse(detail.body) as { analyses: { dateTime: string }[] }).analyses[0]?.dateTime;
      assert.ok(from, "the demo application has analyses");
      let answered = 0;
      for (const [who, headers] of Object.entries(tokens)) {
        for (const path of toolPaths(from) as string[]) {
          const direct = await app.inProcessGet(path, headers as Record<string, string>);
          assert.ok(direct, `${path} is served in-process`);
          const piped: { statusCode: number; body: string } = await app.inject({
            method: "GET",
            url: path,
            headers,
          });
          const what: string = `${who} ${path}`;
          assert.equal(direct.status, piped.statusCode, `${what}: ${direct.body} / ${piped.body}`);
          if (piped.statusCode === 200) {
            assert.deepEqual(direct.json, JSON.parse(piped.body), what);
            answered++;
          } else {
            const [mine, theirs] = [JSON.parse(direct.body), JSON.parse(piped.body)];
            assert.deepEqual(mine, theirs, what);
            assert.equal(direct.statusText, theirs.title, what);
          }
        }
      }
      // Not only refusals were compared: the admin, the viewer and the API key read pages.
      assert.ok(answered > 25, `${answered} answers compared`);
    });

    it("leaves to the HTTP pipeline what the router judges itself, and the routes that write their own answer", async () => {
      for (const path of [
        "/rest/applications/payments%ZZservice",
        `/rest/applications/${"a".repeat(1025)}`,
        "/rest/applications?limit=1&limit=2",
        "/rest/applications/payments-service/insights/cve/CVE-2021-44228/occurrences",
        "/rest/health",
        "/rest/openapi.json",
        "/rest/no-such-route",
      ]) {
        assert.equal(app.inProcessGet(path, tokens.admin as Record<string, string>), undefined, path);
      }
    });
  });
}

describe("an in-process read that does not answer in time (postgres)", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: RunningService;

  before(async () => {
    issuer = await startTestIssuer();
    store = await createTestStore("postgres");
    service = await startTestService(store, { issuer: issuer.issuer }, async (handle) => {
      await loadDemo(handle.db);
    });
  });
  after(async () => {
    await service?.stop();
    await issuer?.close();
    await store?.drop();
  });

  it("is a tool error naming the timeout, in both eras, and the next call is answered", async () => {
    const rest = await buildRestApp({
      db: service.store.db,
      verifier: createJwtVerifier({ issuer: issuer.issuer }),
      version: "test",
    });
    const mcp = await startMcpService({
      kind: "analysis",
      host: "127.0.0.1",
      port: 0,
      restUrl: "http://127.0.0.1:9",
      restApp: rest,
      restTimeoutMs: 1000,
    });
    // A real lock holds the tool's store read: the read itself cannot be aborted, the tool stops waiting.
    const locker = new pg.Client({ connectionString: store.databaseUrl });
    await locker.connect();
    const token = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
    try {
      await locker.query("begin");
      await locker.query("lock table applications in access exclusive mode");
      for (const mode of ["auto", "legacy"] as const) {
        const client = new Client(
          { name: "timeout-test", version: "1.0.0" },
          { versionNegotiation: { mode } },
        );
        await client.connect(
          new StreamableHTTPClientTransport(new URL(mcp.endpoint), {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        );
        try {
          const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
          assert.equal(result.isError, true, mode);
          const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
          assert.match(
            text,
            /^The REST API could not be reached: no answer within 1 s \(the REST API in this process\)$/,
          );
        } finally {
          await client.close();
        }
      }
      await locker.query("rollback");
      const client = new Client({ name: "timeout-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcp.endpoint), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
      await client.close();
      assert.notEqual(result.isError, true);
      assert.equal((result.structuredContent as { applications: unknown[] }).applications.length, 3);
    } finally {
      await locker.end();
      await mcp.close();
      await rest.close();
    }
  });
});
