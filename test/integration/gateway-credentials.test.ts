import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { after, before, describe, it } from "node:test";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { freePort, startTestService } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { EXCHANGE_CLIENT_ID, startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

/**
 * What an attacker probing the gateway's credentials and sessions observes: a request carrying a
 * credential header twice is refused (400) on every route instead of one of them being silently used;
 * a token issued "in the future" is refused; and a 2025 session id cannot be probed (another user's
 * live session and an unknown id get the very same answer).
 */
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "probe", version: "1" } },
};
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

interface RawAnswer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** One request with headers exactly as given, repeated ones included (fetch would merge them). */
function raw(url: string, method: string, headers: [string, string][], body?: string): Promise<RawAnswer> {
  // Given as a raw list, Node adds no header of its own: Host is ours to send.
  const flat = ["host", new URL(url).host, ...headers.flat()];
  if (body !== undefined) flat.push("content-length", String(Buffer.byteLength(body)));
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: flat }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          pairs.push([(res.rawHeaders[i] ?? "").toLowerCase(), res.rawHeaders[i + 1] ?? ""]);
        }
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const header = (answer: RawAnswer, name: string) => answer.headers.find(([n]) => n === name)?.[1];

describe("gateway: credential headers, token times and session probing", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: RunningService;
  let base: string;
  let mcp: string;

  before(async () => {
    issuer = await startTestIssuer();
    issuer.setUser("alice", { roles: ["admin"], applications: [] });
    issuer.setUser("bob", { roles: ["viewer"], applications: ["storefront-web"] });
    store = await createTestStore("sqlite");
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    mcp = `${base}/mcp`;
    service = await startTestService(
      store,
      { port, publicUrl: base, issuer: issuer.issuer, tokenExchangeClientSecret: issuer.clientSecret },
      async (handle) => {
        await loadDemo(handle.db);
      },
    );
  });
  after(async () => {
    await service?.stop();
    await issuer?.close();
    await store?.drop();
  });

  const platformToken = (subject: string, roles: string[], options: { issuedAt?: number } = {}) =>
    issuer.sign({ sub: subject, roles, applications: [] }, options);

  describe("a credential header sent twice is refused with 400, never half-used", () => {
    it("on /mcp: two Authorization headers, the first one valid", async () => {
      const valid = await issuer.signMcp("alice", mcp);
      for (const order of [
        [valid, "garbage"],
        ["garbage", valid],
      ]) {
        const answer = await raw(
          mcp,
          "POST",
          [
            ...Object.entries(MCP_HEADERS),
            ["authorization", `Bearer ${order[0]}`],
            ["authorization", `Bearer ${order[1]}`],
          ],
          JSON.stringify(INITIALIZE),
        );
        assert.equal(answer.status, 400);
        assert.equal(JSON.parse(answer.body).error, "invalid_request");
        assert.match(header(answer, "www-authenticate") ?? "", /error="invalid_request"/);
        assert.match(JSON.parse(answer.body).error_description, /authorization header more than once/);
      }
    });

    it("on /rest through the gateway: problem+json, for Authorization and X-API-KEY alike", async () => {
      const token = await platformToken("alice", ["admin"]);
      for (const name of ["authorization", "x-api-key"]) {
        const value = name === "authorization" ? `Bearer ${token}` : "imk_whatever";
        const answer = await raw(`${base}/rest/applications`, "GET", [
          [name, value],
          [name, value],
        ]);
        assert.equal(answer.status, 400, name);
        assert.match(header(answer, "content-type") ?? "", /^application\/problem\+json/);
        assert.match(JSON.parse(answer.body).detail, new RegExp(`${name} header more than once`));
      }
    });

    it("on the REST API reached directly (internal port) too", async () => {
      const token = await platformToken("alice", ["admin"]);
      const answer = await raw(`${service.restUrl}/rest/applications`, "GET", [
        ["authorization", `Bearer ${token}`],
        ["authorization", "Bearer other"],
      ]);
      assert.equal(answer.status, 400);
      assert.equal(JSON.parse(answer.body).status, 400);
    });

    it("one Authorization header still works", async () => {
      const answer = await raw(`${base}/rest/applications`, "GET", [
        ["authorization", `Bearer ${await platformToken("alice", ["admin"])}`],
      ]);
      assert.equal(answer.status, 200);
    });
  });

  describe("a token issued in the future is refused beyond the clock tolerance", () => {
    const now = () => Math.floor(Date.now() / 1000);

    it("on /mcp: iat 10 minutes ahead gets 401 invalid_token; 10 seconds ahead passes", async () => {
      const claims = { sub: "alice", aud: [mcp, EXCHANGE_CLIENT_ID], scope: "mcp:tools" };
      const ahead = await issuer.sign(claims, { issuedAt: now() + 600, expiresIn: now() + 900 });
      const refused = await fetch(mcp, {
        method: "POST",
        headers: { ...MCP_HEADERS, authorization: `Bearer ${ahead}` },
        body: JSON.stringify(INITIALIZE),
      });
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
      assert.match(((await refused.json()) as { error_description: string }).error_description, /iat/);

      const skewed = await issuer.sign(claims, { issuedAt: now() + 10 });
      const accepted = await fetch(mcp, {
        method: "POST",
        headers: { ...MCP_HEADERS, authorization: `Bearer ${skewed}` },
        body: JSON.stringify(INITIALIZE),
      });
      assert.equal(accepted.status, 200);
      await accepted.body?.cancel();
    });

    it("on the REST API: a platform token issued in the future gets 401", async () => {
      const token = await platformToken("alice", ["admin"], { issuedAt: now() + 600 });
      const response = await fetch(`${base}/rest/applications`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(response.status, 401);
      assert.match(((await response.json()) as { detail: string }).detail, /iat/);
    });
  });

  describe("2025 session ids cannot be probed", () => {
    const probe = async (method: string, token: string, sessionId: string) => {
      const headers: [string, string][] = [
        ...Object.entries(MCP_HEADERS),
        ["authorization", `Bearer ${token}`],
        ["mcp-session-id", sessionId],
        ["mcp-protocol-version", "2025-06-18"],
      ];
      const body =
        method === "POST" ? JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }) : undefined;
      const answer = await raw(mcp, method, headers, body);
      // The Date header is the only thing allowed to differ between two answers.
      return { ...answer, headers: answer.headers.filter(([name]) => name !== "date") };
    };

    it("another user's live session and an unknown id: identical status, headers and body", async () => {
      const alice = await issuer.signMcp("alice", mcp);
      const opened = await fetch(mcp, {
        method: "POST",
        headers: { ...MCP_HEADERS, authorization: `Bearer ${alice}` },
        body: JSON.stringify(INITIALIZE),
      });
      const live = opened.headers.get("mcp-session-id") as string;
      assert.ok(live);
      await opened.body?.cancel();

      const bob = await issuer.signMcp("bob", mcp);
      for (const method of ["POST", "GET", "DELETE"]) {
        const foreign = await probe(method, bob, live);
        const unknown = await probe(method, bob, randomUUID());
        assert.equal(foreign.status, 404, method);
        assert.deepEqual(unknown, foreign, `${method}: the answers must be byte-identical`);
        assert.equal(JSON.parse(foreign.body).error.message, "Session not found");
      }

      const owner = await probe("POST", alice, live);
      assert.equal(owner.status, 200, "the owner still uses the session");
    });
  });
});
