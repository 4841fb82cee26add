import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { RunningService } from "../../src/service.ts";
import { FIXTURE, loadFixture } from "../support/fixture.ts";
import { freePort, startTestService } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

interface RawResponse {
  /** Every status line received, interim (100 Continue) ones included. */
  statuses: number[];
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request written byte for byte on a TCP socket (a client library would normalise away what is
 * tested here). With `Expect: 100-continue` the body is held back until the interim response.
 */
function rawRequest(port: number, head: string, body?: Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let pending = body;
    const waitForContinue = /^expect:\s*100-continue/im.test(head);
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      if (pending && Buffer.concat(chunks).toString("latin1").startsWith("HTTP/1.1 100 ")) {
        socket.write(pending);
        pending = undefined;
      }
    });
    // A server that answers before the whole body is sent (413) closes the connection under the writer.
    socket.on("error", (error) => {
      if (chunks.length === 0) reject(error);
    });
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const statuses = [...text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
      const final = text.slice(text.lastIndexOf("HTTP/1.1 "));
      const [rawHead = "", ...rest] = final.split("\r\n\r\n");
      const headers: Record<string, string> = {};
      for (const line of rawHead.split("\r\n").slice(1)) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ statuses, status: statuses.at(-1) ?? 0, headers, body: rest.join("\r\n\r\n") });
    });
    socket.write(head);
    if (pending && !waitForContinue) {
      socket.write(pending);
      pending = undefined;
    }
    // Every request says Connection: close; this only bounds a server that would hang.
    socket.setTimeout(10_000, () => socket.destroy(new Error("no answer within 10 s")));
  });
}

const head = (requestLine: string, headers: Record<string, string | number>) =>
  `${requestLine}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join("\r\n")}\r\nConnection: close\r\n\r\n`;

describe("gateway: HTTP as a proxy must speak it (RFC 9110/9112)", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: RunningService;
  let port: number;
  let apiKey: string;

  before(async () => {
    issuer = await startTestIssuer();
    issuer.setUser("alice", { roles: ["admin"], applications: [] });
    store = await createTestStore("sqlite");
    port = await freePort();
    service = await startTestService(
      store,
      {
        port,
        publicUrl: `http://127.0.0.1:${port}`,
        issuer: issuer.issuer,
        tokenExchangeClientSecret: issuer.clientSecret,
      },
      (handle) => loadFixture(handle.db),
    );
    apiKey = (await createApiKey(service.store.db, { user: "ci", role: "admin", applications: [] })).key;
  });
  after(async () => {
    await service?.stop();
    await issuer?.close();
    await store?.drop();
  });

  describe("Expect: 100-continue (curl sends it for bodies over 1 MiB)", () => {
    const big = (size: number) => Buffer.alloc(size, " ");

    it("/rest without credentials: 100 Continue, then the REST API's 401", async () => {
      const body = big(1_100_000);
      const response = await rawRequest(
        port,
        head("POST /rest/applications HTTP/1.1", {
          Host: "127.0.0.1",
          "Content-Type": "application/json",
          "Content-Length": body.length,
          Expect: "100-continue",
        }),
        body,
      );
      assert.deepEqual(response.statuses, [100, 401]);
      assert.match(response.headers["content-type"] ?? "", /^application\/problem\+json/);
    });

    it("/rest with an API key: the REST API's own answer, never 5xx", async () => {
      const body = Buffer.from(`{"query":"x"}${" ".repeat(1_100_000)}`);
      const response = await rawRequest(
        port,
        head(`POST /rest/applications/shop/insights/cve/${FIXTURE.cve}/occurrences HTTP/1.1`, {
          Host: "127.0.0.1",
          "X-API-KEY": apiKey,
          "Content-Type": "application/json",
          "Content-Length": body.length,
          Expect: "100-continue",
        }),
        body,
      );
      assert.equal(response.statuses[0], 100);
      assert.ok(response.status >= 400 && response.status < 500, `status ${response.status}`);
      assert.match(response.headers["content-type"] ?? "", /^application\/problem\+json/);
    });

    it("/mcp with a valid token: the MCP server answers the padded initialize request", async () => {
      const token = await issuer.signMcp("alice", `http://127.0.0.1:${port}/mcp`);
      const initialize = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "expect-test", version: "1" },
        },
      });
      const body = Buffer.from(`${initialize}${" ".repeat(1_100_000)}`);
      const response = await rawRequest(
        port,
        head("POST /mcp HTTP/1.1", {
          Host: "127.0.0.1",
          Authorization: `Bearer ${token}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "Content-Length": body.length,
          Expect: "100-continue",
        }),
        body,
      );
      assert.equal(response.statuses[0], 100);
      assert.equal(response.status, 200, response.body);
      assert.match(response.body, /"protocolVersion"/);
    });
  });

  describe("errors on the REST API's paths are problem+json, wherever they arise", () => {
    const isProblem = (response: RawResponse, status: number) => {
      assert.equal(response.status, status, response.body);
      assert.match(response.headers["content-type"] ?? "", /^application\/problem\+json/);
      const body = JSON.parse(response.body) as { status: number; title: string; detail: string };
      assert.equal(body.status, status);
      assert.equal(typeof body.title, "string");
      assert.ok(body.detail.length > 0);
    };

    it("413 from the gateway for a body over its 4 MiB limit", async () => {
      const body = Buffer.alloc(5 * 1024 * 1024, " ");
      const response = await rawRequest(
        port,
        head("PUT /rest/gates/no-unfixable-vulnerability HTTP/1.1", {
          Host: "127.0.0.1",
          "X-API-KEY": apiKey,
          "Content-Type": "application/json",
          "Content-Length": body.length,
        }),
        body,
      );
      isProblem(response, 413);
    });

    it("414 for a request line over Node.js's limit, 431 for headers over it", async () => {
      isProblem(
        await rawRequest(
          port,
          head(`GET /rest/applications?x=${"a".repeat(20_000)} HTTP/1.1`, { Host: "h" }),
        ),
        414,
      );
      isProblem(
        await rawRequest(
          port,
          head("GET /rest/applications HTTP/1.1", { Host: "h", "X-Big": "a".repeat(20_000) }),
        ),
        431,
      );
    });

    it("400 for malformed HTTP and for malformed percent-encoding", async () => {
      isProblem(await rawRequest(port, "GET /rest/applications HTTP/1.1\r\nHost h\r\n\r\n"), 400);
      isProblem(
        await rawRequest(
          port,
          head("GET /rest/applications/%E0%A4%A HTTP/1.1", { Host: "h", "X-API-KEY": apiKey }),
        ),
        400,
      );
    });

    it("405 with Allow for a method the resource does not have, 204 with Allow for OPTIONS", async () => {
      for (const method of ["DELETE", "POST", "PATCH"]) {
        const response = await rawRequest(
          port,
          head(`${method} /rest/applications/shop HTTP/1.1`, {
            Host: "h",
            "X-API-KEY": apiKey,
            "Content-Length": 0,
          }),
        );
        isProblem(response, 405);
        assert.equal(response.headers.allow, "GET, HEAD, OPTIONS");
      }
      const query = await rawRequest(
        port,
        head("QUERY /rest/gates HTTP/1.1", { Host: "h", "X-API-KEY": apiKey, "Content-Length": 0 }),
      );
      isProblem(query, 405);
      assert.equal(query.headers.allow, "GET, HEAD, OPTIONS");
      const put = await rawRequest(
        port,
        head("GET /rest/gates/no-unfixable-vulnerability HTTP/1.1", { Host: "h", "X-API-KEY": apiKey }),
      );
      isProblem(put, 405);
      assert.equal(put.headers.allow, "PUT, OPTIONS");
      const options = await rawRequest(
        port,
        head("OPTIONS /rest/applications HTTP/1.1", { Host: "h", "X-API-KEY": apiKey }),
      );
      assert.equal(options.status, 204);
      assert.equal(options.headers.allow, "GET, HEAD, OPTIONS");
      isProblem(
        await rawRequest(
          port,
          head("DELETE /rest/nothing-here HTTP/1.1", { Host: "h", "X-API-KEY": apiKey }),
        ),
        404,
      );
    });

    it("the OpenAPI document declares every error as problem+json", async () => {
      const response = await rawRequest(port, head("GET /rest/openapi.json HTTP/1.1", { Host: "h" }));
      const document = JSON.parse(response.body) as {
        paths: Record<
          string,
          Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>
        >;
      };
      let errors = 0;
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (const status of ["400", "401", "413", "414", "431", "500", "502", "503", "504"])
            assert.ok(operation.responses[status], `${method} ${path} declares ${status}`);
          for (const [status, declared] of Object.entries(operation.responses)) {
            if (Number(status) < 400) continue;
            errors++;
            assert.deepEqual(
              Object.keys(declared.content ?? {}),
              ["application/problem+json"],
              `${method} ${path} ${status}`,
            );
          }
        }
      }
      assert.ok(errors > 100);
    });
  });

  describe("request targets", () => {
    it("absolute form naming another host: served from the gateway's own routes", async () => {
      const response = await rawRequest(
        port,
        head("GET http://other.example/rest/health HTTP/1.1", { Host: "other.example" }),
      );
      assert.equal(response.status, 200);
      assert.equal(response.body, '{"status":"UP"}');
    });

    it("absolute form with a query: the query reaches the REST API", async () => {
      const response = await rawRequest(
        port,
        head(
          `GET http://127.0.0.1:${port}/rest/applications/shop/insights/cve/${FIXTURE.cve}/occurrences?limit=1 HTTP/1.1`,
          { Host: "ignored.example", "X-API-KEY": apiKey },
        ),
      );
      assert.equal(response.status, 200);
      assert.equal((JSON.parse(response.body) as unknown[]).length, 1);
    });

    it("absolute form on /mcp: the usual challenge", async () => {
      const response = await rawRequest(
        port,
        `${head("POST http://other.example/mcp HTTP/1.1", {
          Host: "other.example",
          "Content-Type": "application/json",
          "Content-Length": 2,
        })}{}`,
      );
      assert.equal(response.status, 401);
      assert.match(response.headers["www-authenticate"] ?? "", /^Bearer resource_metadata=/);
    });
  });

  describe("hop-by-hop headers stay on the client's connection", () => {
    const cases: [string, Record<string, string>][] = [
      ["Connection naming a header", { Connection: "x-foo", "X-Foo": "1" }],
      ["Keep-Alive", { "Keep-Alive": "timeout=5, max=100" }],
      ["TE", { TE: "trailers, deflate" }],
      ["Upgrade", { Upgrade: "websocket" }],
      ["Proxy-Authorization", { "Proxy-Authorization": "Basic dXNlcjpwYXNz" }],
      ["Proxy-Connection", { "Proxy-Connection": "keep-alive" }],
    ];
    for (const [name, extra] of cases) {
      it(`${name} on /rest: the REST API answers`, async () => {
        const response = await rawRequest(
          port,
          head(`GET /rest/applications/shop/insights/cve/${FIXTURE.cve}/occurrences?limit=1 HTTP/1.1`, {
            Host: "127.0.0.1",
            "X-API-KEY": apiKey,
            ...extra,
          }),
        );
        assert.equal(response.status, 200, response.body);
        assert.equal((JSON.parse(response.body) as unknown[]).length, 1);
        assert.equal(response.headers["keep-alive"], undefined);
        assert.equal(response.headers.connection, "close");
      });
      it(`${name} on /mcp: the MCP server answers`, async () => {
        const token = await issuer.signMcp("alice", `http://127.0.0.1:${port}/mcp`);
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
        const response = await rawRequest(
          port,
          head("POST /mcp HTTP/1.1", {
            Host: "127.0.0.1",
            Authorization: `Bearer ${token}`,
            "Content-Type": "application/json",
            Accept: "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
            "Content-Length": Buffer.byteLength(body),
            ...extra,
          }) + body,
        );
        assert.ok(response.status < 500, `status ${response.status}: ${response.body}`);
        assert.doesNotMatch(response.body, /cannot be reached/);
      });
    }
  });
});
