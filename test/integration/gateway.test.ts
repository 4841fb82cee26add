import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SignJWT } from "jose";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { freePort, startTestService } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { EXCHANGE_CLIENT_ID, startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "gateway-test", version: "1" },
  },
};
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("gateway: the OAuth-protected front door", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: RunningService;
  let base: string;
  let mcp: string;
  let gatekeeper: string;

  const post = (url: string, headers: Record<string, string> = {}, body: unknown = INITIALIZE) =>
    fetch(url, { method: "POST", headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  before(async () => {
    issuer = await startTestIssuer();
    issuer.setUser("alice", { roles: ["admin"], applications: [] });
    issuer.setUser("bob", { roles: ["viewer"], applications: ["storefront-web"] });
    store = await createTestStore("sqlite");
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    mcp = `${base}/mcp`;
    gatekeeper = `${base}/mcp/gatekeeper`;
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

  describe("protected resource metadata", () => {
    for (const [path, name] of [
      ["/mcp", "imaging"],
      ["/mcp/gatekeeper", "imaging-gatekeeper"],
    ] as const) {
      it(`serves ${path}'s document without authentication, byte for byte`, async () => {
        const response = await fetch(`${base}/.well-known/oauth-protected-resource${path}`);
        assert.equal(response.status, 200);
        assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
        assert.equal(
          await response.text(),
          JSON.stringify({
            resource: `${base}${path}`,
            authorization_servers: [issuer.issuer],
            scopes_supported: ["mcp:tools", "mcp:resources", "mcp:prompts"],
            bearer_methods_supported: ["header"],
            resource_name: name,
            resource_documentation: `${base}/rest/openapi.json`,
          }),
        );
      });
    }
  });

  describe("Bearer challenge", () => {
    it("POST /mcp without credentials: 401 and exactly the specified header", async () => {
      const response = await post(mcp);
      assert.equal(response.status, 401);
      assert.equal(
        response.headers.get("www-authenticate"),
        `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools mcp:resources mcp:prompts"`,
      );
      assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    });
    it("POST /mcp/gatekeeper without credentials names its own document", async () => {
      const response = await post(gatekeeper);
      assert.equal(response.status, 401);
      assert.ok(
        response.headers
          .get("www-authenticate")
          ?.startsWith(
            `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp/gatekeeper"`,
          ),
      );
    });
    it("GET and DELETE are challenged too", async () => {
      for (const method of ["GET", "DELETE"]) {
        const response = await fetch(mcp, { method, headers: { accept: "text/event-stream" } });
        assert.equal(response.status, 401, method);
        assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer resource_metadata=/);
      }
    });
    it("ignores a token in the query string", async () => {
      const token = await issuer.signMcp("alice", mcp);
      const response = await post(`${mcp}?access_token=${token}`);
      assert.equal(response.status, 401);
    });
  });

  describe("discovery probes", () => {
    const issuerPath = () => new URL(issuer.issuer).pathname;
    const cases: [() => string, () => string][] = [
      [
        () => `/.well-known/oauth-authorization-server${issuerPath()}`,
        () => `${issuer.issuer}/.well-known/oauth-authorization-server`,
      ],
      [
        () => `/.well-known/openid-configuration${issuerPath()}`,
        () => `${issuer.issuer}/.well-known/openid-configuration`,
      ],
      [
        () => "/.well-known/oauth-authorization-server/mcp",
        () => `${issuer.issuer}/.well-known/oauth-authorization-server`,
      ],
      [
        () => "/.well-known/openid-configuration/mcp",
        () => `${issuer.issuer}/.well-known/openid-configuration`,
      ],
      [
        () => "/mcp/.well-known/openid-configuration",
        () => `${issuer.issuer}/.well-known/openid-configuration`,
      ],
      [
        () => "/.well-known/oauth-authorization-server/mcp/gatekeeper",
        () => `${issuer.issuer}/.well-known/oauth-authorization-server`,
      ],
      [
        () => "/.well-known/openid-configuration/mcp/gatekeeper",
        () => `${issuer.issuer}/.well-known/openid-configuration`,
      ],
      [
        () => "/mcp/gatekeeper/.well-known/openid-configuration",
        () => `${issuer.issuer}/.well-known/openid-configuration`,
      ],
      [
        () => "/.well-known/oauth-authorization-server",
        () => `${issuer.issuer}/.well-known/oauth-authorization-server`,
      ],
      [() => "/.well-known/openid-configuration", () => `${issuer.issuer}/.well-known/openid-configuration`],
    ];
    it("redirects every path-inserted probe to the identity provider's discovery document", async () => {
      for (const [path, target] of cases) {
        const response = await fetch(`${base}${path()}`, { redirect: "manual" });
        assert.equal(response.status, 302, path());
        assert.equal(response.headers.get("location"), target(), path());
      }
    });
    it("leads a client that follows redirects to JSON metadata", async () => {
      const response = await fetch(`${base}/.well-known/openid-configuration/mcp`);
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { issuer: string }).issuer, issuer.issuer);
    });
    it("answers other well-known paths and /register with JSON 404s, never HTML", async () => {
      for (const [method, path] of [
        ["GET", "/.well-known/oauth-protected-resource"],
        ["GET", "/.well-known/security.txt"],
        ["GET", "/.well-known/oauth-protected-resource/rest"],
        ["POST", "/register"],
        ["GET", "/register"],
      ]) {
        const response = await fetch(`${base}${path}`, { method });
        assert.equal(response.status, 404, path);
        assert.match(response.headers.get("content-type") ?? "", /^application\/json/, path);
        await response.json();
      }
    });
  });

  describe("CORS", () => {
    it("answers a preflight from an allowed origin without authentication", async () => {
      const response = await fetch(mcp, {
        method: "OPTIONS",
        headers: {
          origin: "http://localhost:6274",
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type, mcp-session-id",
        },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers.get("access-control-allow-origin"), "http://localhost:6274");
      assert.match(response.headers.get("access-control-allow-headers") ?? "", /Mcp-Session-Id/);
      assert.match(response.headers.get("access-control-allow-headers") ?? "", /MCP-Protocol-Version/);
      assert.match(response.headers.get("access-control-expose-headers") ?? "", /Mcp-Session-Id/);
      assert.match(response.headers.get("access-control-expose-headers") ?? "", /WWW-Authenticate/);
    });
    it("exposes the challenge to allowed browser origins", async () => {
      const response = await post(mcp, { origin: base });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get("access-control-allow-origin"), base);
    });
    it("lets an allowed browser origin through to the MCP server", async () => {
      const response = await post(mcp, {
        origin: "http://localhost:6274",
        ...bearer(await issuer.signMcp("alice", mcp)),
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("access-control-allow-origin"), "http://localhost:6274");
      assert.match(response.headers.get("access-control-expose-headers") ?? "", /Mcp-Session-Id/);
      await response.body?.cancel();
    });
    it("refuses a present but foreign Origin with 403, even with a valid token", async () => {
      const token = await issuer.signMcp("alice", mcp);
      for (const response of [
        await fetch(mcp, { method: "OPTIONS", headers: { origin: "https://evil.example" } }),
        await post(mcp, { origin: "https://evil.example", ...bearer(token) }),
      ]) {
        assert.equal(response.status, 403);
        assert.equal(response.headers.get("access-control-allow-origin"), null);
      }
    });
  });

  describe("token verification", () => {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const now = () => Math.floor(Date.now() / 1000);
    const matrix: [string, () => Promise<string>][] = [
      ["expired", () => issuer.signMcp("alice", mcp, { expiresIn: now() - 120 })],
      [
        "not yet valid",
        () =>
          issuer.sign(
            { sub: "alice", aud: [mcp, EXCHANGE_CLIENT_ID], scope: "mcp:tools" },
            { notBefore: "10m" },
          ),
      ],
      [
        "from another issuer",
        () => issuer.sign({ sub: "alice", aud: [mcp], scope: "mcp:tools", iss: "https://evil.example" }),
      ],
      [
        "for another audience (a platform token)",
        () => issuer.sign({ sub: "alice", roles: ["admin"], scope: "mcp:tools" }),
      ],
      ["for the gatekeeper, presented to /mcp", () => issuer.signMcp("alice", gatekeeper)],
      [
        "unsigned (alg none)",
        async () =>
          `${b64({ alg: "none" })}.${b64({ sub: "alice", iss: issuer.issuer, aud: mcp, scope: "mcp:tools", exp: now() + 300 })}.`,
      ],
      [
        "HMAC-signed with the public key",
        () =>
          new SignJWT({ sub: "alice", scope: "mcp:tools" })
            .setProtectedHeader({ alg: "HS256", kid: "test-key-1" })
            .setIssuer(issuer.issuer)
            .setAudience(mcp)
            .setExpirationTime("5m")
            .sign(new TextEncoder().encode(JSON.stringify(issuer.publicJwk))),
      ],
      [
        "signed by an unknown key",
        () => issuer.sign({ sub: "alice", aud: mcp, scope: "mcp:tools" }, { kid: "unknown" }),
      ],
      [
        "with a tampered signature",
        async () => {
          const [h, p, s] = (await issuer.signMcp("alice", mcp)).split(".") as [string, string, string];
          return `${h}.${p}.${s.startsWith("A") ? "B" : "A"}${s.slice(1)}`;
        },
      ],
      [
        "with a tampered payload",
        async () => {
          const [h, , s] = (await issuer.signMcp("bob", mcp)).split(".") as [string, string, string];
          return `${h}.${b64({ sub: "alice", iss: issuer.issuer, aud: [mcp, EXCHANGE_CLIENT_ID], scope: "mcp:tools", exp: now() + 300 })}.${s}`;
        },
      ],
    ];
    for (const [what, token] of matrix) {
      it(`refuses a token ${what}: 401 invalid_token challenge`, async () => {
        const response = await post(mcp, bearer(await token()));
        assert.equal(response.status, 401);
        const challenge = response.headers.get("www-authenticate") ?? "";
        assert.ok(
          challenge.startsWith(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`),
        );
        assert.match(challenge, /error="invalid_token"/);
      });
    }
    it("answers 403 insufficient_scope for a valid token without mcp:tools", async () => {
      const response = await post(mcp, bearer(await issuer.signMcp("alice", mcp, { scope: "mcp:prompts" })));
      assert.equal(response.status, 403);
      assert.match(response.headers.get("www-authenticate") ?? "", /error="insufficient_scope"/);
      assert.match(
        response.headers.get("www-authenticate") ?? "",
        /scope="mcp:tools mcp:resources mcp:prompts"/,
      );
    });
  });

  describe("REST API through the gateway", () => {
    it("forwards bodies untouched, so the REST API answers its own problem+json", async () => {
      const put = (token: string) =>
        fetch(`${base}/rest/gates/no-unfixable-vulnerability`, {
          method: "PUT",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: "{not json",
        });
      const admin = await put(await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] }));
      assert.equal(admin.status, 400);
      assert.match(admin.headers.get("content-type") ?? "", /^application\/problem\+json/);
      const viewer = await put(await issuer.sign({ sub: "bob", roles: ["viewer"], applications: [] }));
      assert.equal(viewer.status, 403);
    });
  });

  describe("through to the MCP servers", () => {
    type Mode = "auto" | "legacy";
    const connect = async (url: string, token: string, mode: Mode = "auto") => {
      const client = new Client({ name: "gateway-test", version: "1.0.0" }, { versionNegotiation: { mode } });
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
      return { client, transport };
    };
    const applicationsOf = (result: CallToolResult) =>
      (result.structuredContent as { applications: { name: string }[] }).applications.map((a) => a.name);

    for (const mode of ["auto", "legacy"] as const) {
      it(`serves tools with the signed-in user's rights (${mode === "auto" ? "2026-07-28 stateless" : "2025 sessions"})`, async () => {
        const admin = await connect(mcp, await issuer.signMcp("alice", mcp), mode);
        try {
          if (mode === "legacy")
            assert.ok(admin.transport.sessionId, "a 2025 session was opened through the gateway");
          else assert.equal(admin.transport.sessionId, undefined);
          const tools = (await admin.client.listTools()).tools.map((t) => t.name);
          assert.ok(tools.includes("applications") && tools.includes("cve_occurrences"));
          const all = (await admin.client.callTool({
            name: "applications",
            arguments: {},
          })) as CallToolResult;
          assert.deepEqual(applicationsOf(all), ["claims-portal", "payments-service", "storefront-web"]);
        } finally {
          await admin.client.close();
        }
        const viewer = await connect(mcp, await issuer.signMcp("bob", mcp), mode);
        try {
          const mine = (await viewer.client.callTool({
            name: "applications",
            arguments: {},
          })) as CallToolResult;
          assert.deepEqual(applicationsOf(mine), ["storefront-web"]);
          const denied = (await viewer.client.callTool({
            name: "cve_occurrences",
            arguments: { application: "payments-service", cve: "CVE-2021-44228", limit: 5 },
          })) as CallToolResult;
          assert.equal(denied.isError, true);
          assert.match(JSON.stringify(denied.content), /403/);
        } finally {
          await viewer.client.close();
        }
      });
    }

    it("serves the gatekeeper with a gatekeeper token", async () => {
      const { client } = await connect(gatekeeper, await issuer.signMcp("alice", gatekeeper));
      try {
        const tools = (await client.listTools()).tools.map((t) => t.name).sort();
        assert.deepEqual(tools, ["compare_analyses", "evaluate_gate", "gate_history", "gates"]);
      } finally {
        await client.close();
      }
    });

    it("exchanges a token once, however many requests carry it", async () => {
      const token = await issuer.signMcp("alice", mcp);
      const before = issuer.exchanges;
      const { client } = await connect(mcp, token, "legacy");
      try {
        for (let i = 0; i < 5; i++) await client.callTool({ name: "applications", arguments: {} });
      } finally {
        await client.close();
      }
      assert.equal(issuer.exchanges, before + 1);
    });

    it("shares one exchange among concurrent first requests", async () => {
      const token = await issuer.signMcp("alice", mcp);
      const before = issuer.exchanges;
      issuer.exchangeDelayMs = 300;
      try {
        const responses = await Promise.all(Array.from({ length: 6 }, () => post(mcp, bearer(token))));
        assert.deepEqual(
          responses.map((r) => r.status),
          Array(6).fill(200),
        );
        await Promise.all(responses.map((r) => r.body?.cancel()));
      } finally {
        issuer.exchangeDelayMs = 0;
      }
      assert.equal(issuer.exchanges, before + 1);
    });

    it("answers 401 with a challenge when the identity provider refuses the exchange", async () => {
      const response = await post(mcp, bearer(await issuer.signMcp("mallory", mcp)));
      assert.equal(response.status, 401);
      const challenge = response.headers.get("www-authenticate") ?? "";
      assert.ok(
        challenge.startsWith(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`),
      );
      assert.match(challenge, /token exchange refused/);
    });

    it("binds a 2025 session to its user: another user presenting it gets 404", async () => {
      const opened = await post(mcp, bearer(await issuer.signMcp("alice", mcp)));
      const sessionId = opened.headers.get("mcp-session-id");
      assert.ok(sessionId);
      await opened.body?.cancel();
      const stolen = await post(
        mcp,
        {
          ...bearer(await issuer.signMcp("bob", mcp)),
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
      );
      assert.equal(stolen.status, 404);
      assert.equal(
        ((await stolen.json()) as { error: { message: string } }).error.message,
        "Session not found",
      );
      const owner = await post(
        mcp,
        {
          ...bearer(await issuer.signMcp("alice", mcp)),
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
      );
      assert.equal(owner.status, 200);
      await owner.body?.cancel();
    });

    it("streams server-sent events through unchanged", async () => {
      const token = await issuer.signMcp("alice", mcp);
      const opened = await post(mcp, bearer(token));
      const sessionId = opened.headers.get("mcp-session-id") as string;
      await opened.body?.cancel();
      const response = await post(
        mcp,
        {
          ...bearer(token),
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
          accept: "text/event-stream, application/json",
        },
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "applications", arguments: {} } },
      );
      assert.equal(response.status, 200);
      const type = response.headers.get("content-type") ?? "";
      const text = await response.text();
      if (type.startsWith("text/event-stream")) {
        assert.match(text, /^(event: message\n)?(id: .*\n)?data: \{.*"id":3/m);
      } else {
        assert.match(type, /^application\/json/);
        assert.match(text, /"id":3/);
      }
      assert.match(text, /payments-service/);
    });

    it("carries the GET stream and DELETE of a 2025 session", async () => {
      const token = await issuer.signMcp("alice", mcp);
      const opened = await post(mcp, bearer(token));
      const sessionId = opened.headers.get("mcp-session-id") as string;
      await opened.body?.cancel();
      const session = { ...bearer(token), "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" };
      const initialized = await post(mcp, session, { jsonrpc: "2.0", method: "notifications/initialized" });
      assert.equal(initialized.status, 202);
      const stream = new AbortController();
      const get = await fetch(mcp, {
        headers: { ...session, accept: "text/event-stream" },
        signal: stream.signal,
      });
      assert.equal(get.status, 200);
      assert.match(get.headers.get("content-type") ?? "", /^text\/event-stream/);
      assert.equal(get.headers.get("content-encoding"), null, "event streams are never compressed");
      stream.abort();
      const deleted = await fetch(mcp, { method: "DELETE", headers: session });
      assert.ok(deleted.status === 200 || deleted.status === 204, `DELETE answered ${deleted.status}`);
      const after = await post(mcp, session, { jsonrpc: "2.0", id: 9, method: "tools/list" });
      assert.equal(after.status, 404, "the session is gone");
      await after.body?.cancel();
    });

    it("lets a client that bypasses the gateway fail with the REST API's 401, as specified", async () => {
      const direct = await connect(`${service.mcpUrls.analysis}/mcp`, await issuer.signMcp("alice", mcp));
      try {
        const result = (await direct.client.callTool({
          name: "applications",
          arguments: {},
        })) as CallToolResult;
        assert.equal(result.isError, true);
        assert.match(JSON.stringify(result.content), /401/);
      } finally {
        await direct.client.close();
      }
    });

    it("answers 502 with a JSON-RPC error when an MCP server is down", async () => {
      const downStore = await createTestStore("sqlite");
      const closedPort = await freePort();
      const lonely = await startTestService(
        downStore,
        {
          issuer: issuer.issuer,
          tokenExchangeClientSecret: issuer.clientSecret,
          mcpAnalysisUpstreamUrl: `http://127.0.0.1:${closedPort}`,
        },
        undefined,
        ["gateway", "rest"],
      );
      try {
        const response = await post(
          `${lonely.gatewayUrl}/mcp`,
          bearer(await issuer.signMcp("alice", "http://127.0.0.1:8090/mcp")),
        );
        assert.equal(response.status, 502);
        const body = (await response.json()) as { jsonrpc: string; id: number; error: { message: string } };
        assert.equal(body.jsonrpc, "2.0");
        assert.equal(body.id, 1);
        assert.match(body.error.message, /analysis MCP server cannot be reached/);
      } finally {
        await lonely.stop();
        await downStore.drop();
      }
    });

    it("keeps serving cached tokens when the identity provider goes down, and answers 503 for new ones", async () => {
      const known = await issuer.signMcp("alice", mcp);
      const warm = await post(mcp, bearer(known));
      assert.equal(warm.status, 200);
      await warm.body?.cancel();
      const fresh = await issuer.signMcp("alice", mcp, { expiresIn: "4m" });
      await issuer.stop();
      const cached = await post(mcp, bearer(known));
      assert.equal(cached.status, 200);
      await cached.body?.cancel();
      const refused = await post(mcp, bearer(fresh));
      assert.equal(refused.status, 503);
      const body = (await refused.json()) as { jsonrpc: string; error: { message: string } };
      assert.equal(body.jsonrpc, "2.0");
      assert.match(body.error.message, /identity provider cannot be reached/);
    });
  });
});
