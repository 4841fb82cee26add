import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { formsOf, postForm } from "../support/browserless-session.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
import { authorize, type ClientSetup, startAuthorization } from "../support/oauth-flow.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/** One sample of the exposition: `name{a="x",b="y"} value`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1] as string] = pair[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of `name` whose labels include `labels` (0 when none). */
const sampleSum = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

for (const kind of STORE_KINDS) {
  describe(`metrics: what an operator scrapes after real traffic (${kind})`, () => {
    let store: TestStore;
    let documents: CimdDocumentServer;
    let idp: IdpService;
    let setup: ClientSetup;
    let metricsUrl: string;
    const scrape = async () => {
      const response = await fetch(metricsUrl);
      assert.equal(response.status, 200);
      assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
      return parseExposition(await response.text());
    };

    before(async () => {
      store = await createTestStore(kind);
      documents = await startCimdDocumentServer();
      idp = await startIdpService(store, {
        idp: { cimdCa: documents.ca },
        overrides: { metricsPort: 0 },
        seed: async (handle) => {
          await loadDemo(handle.db);
          await seedUsers(handle.db);
          await seedCimdClient(handle.db, "test-ai-client", documents.clientId);
        },
      });
      metricsUrl = idp.service.metricsUrl as string;
      setup = {
        issuer: idp.issuer,
        clientId: documents.clientId,
        redirectUri: "http://127.0.0.1:49152/callback",
        resource: idp.mcp,
      };
    });
    after(async () => {
      await idp?.stop();
      await documents?.close();
      await store?.drop();
    });

    it("is served on the internal listener only, never on the public port", async () => {
      assert.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      assert.notEqual(new URL(metricsUrl).port, new URL(idp.base).port);
      const publicAnswer = await fetch(`${idp.base}/metrics`);
      assert.equal(publicAnswer.status, 404);
      assert.doesNotMatch(await publicAnswer.text(), /imaging_/);
      assert.equal((await fetch(metricsUrl.replace("/metrics", "/other"))).status, 404);
    });

    it("counts sign-ins, CIMD refusals, token checks and exchanges, tool calls, requests and store queries", async () => {
      const before = await scrape();

      // A wrong password, then a sign-in that works.
      const attempt = await startAuthorization(setup);
      const [login] = formsOf(attempt.html, attempt.pageUrl);
      assert.ok(login);
      const wrong = await postForm(attempt.jar, login, { username: "alice", password: "not-the-password" });
      assert.equal(wrong.status, 401);
      assert.match(await wrong.text(), /Incorrect user name or password/);
      const alice = (await authorize(setup, { username: "alice", password: USERS.alice.password }))
        .accessToken;

      // A client no policy accepts.
      const refused = await startAuthorization({ ...setup, clientId: "https://unknown.example/client.json" });
      assert.equal(refused.status, 400);
      const rule = /\[rule ([a-z-]+)\]/.exec(refused.html)?.[1];
      assert.ok(rule, `the refusal names its rule: ${refused.html}`);

      // Three tools/call with the same token: one verification and one exchange, then cache hits.
      const client = new Client({ name: "metrics-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(idp.mcp), {
          requestInit: { headers: { authorization: `Bearer ${alice}` } },
        }),
      );
      try {
        for (let i = 0; i < 3; i++) {
          const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
          assert.notEqual(result.isError, true);
        }
      } finally {
        await client.close();
      }
      // An invalid token.
      const invalid = await fetch(idp.mcp, {
        method: "POST",
        headers: { authorization: "Bearer not.a.token", "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(invalid.status, 401);

      const now = await scrape();
      const delta = (name: string, labels: Record<string, string> = {}) =>
        sampleSum(now, name, labels) - sampleSum(before, name, labels);

      assert.equal(
        delta("imaging_sign_ins_total", { result: "failure" }),
        1,
        `${"imaging_sign_ins_total"} ${JSON.stringify({ result: "failure" })}`,
      );
      assert.equal(
        delta("imaging_sign_ins_total", { result: "success" }),
        1,
        `${"imaging_sign_ins_total"} ${JSON.stringify({ result: "success" })}`,
      );
      assert.equal(
        delta("imaging_cimd_refusals_total", { rule }),
        1,
        `${"imaging_cimd_refusals_total"} ${JSON.stringify({ rule })}`,
      );
      assert.equal(
        delta("imaging_mcp_tool_calls_total", { server: "analysis", tool: "applications", outcome: "ok" }),
        3,
      );
      assert.equal(
        delta("imaging_mcp_tool_call_duration_seconds_count", { server: "analysis", tool: "applications" }),
        3,
      );
      // Every MCP request of the session (initialize, notification, 3 calls, close) checks the token once:
      // the first verifies it, the others hit the cache.
      assert.equal(
        delta("imaging_token_verifications_total", { result: "miss" }),
        1,
        `${"imaging_token_verifications_total"} ${JSON.stringify({ result: "miss" })}`,
      );
      assert.ok(delta("imaging_token_verifications_total", { result: "hit" }) >= 4);
      assert.equal(
        delta("imaging_token_verifications_total", { result: "invalid" }),
        1,
        `${"imaging_token_verifications_total"} ${JSON.stringify({ result: "invalid" })}`,
      );
      assert.equal(
        delta("imaging_token_exchanges_total", { result: "miss" }),
        1,
        `${"imaging_token_exchanges_total"} ${JSON.stringify({ result: "miss" })}`,
      );
      assert.ok(delta("imaging_token_exchanges_total", { result: "hit" }) >= 4);

      const mcpPosts = { listener: "gateway", method: "POST", route: "/mcp", status: "200" };
      assert.ok(delta("imaging_http_requests_total", mcpPosts) >= 4, "tools/call through the gateway");
      assert.equal(
        delta("imaging_http_request_duration_seconds_count", mcpPosts),
        delta("imaging_http_requests_total", mcpPosts),
      );
      assert.equal(
        delta("imaging_http_requests_total", { listener: "gateway", route: "/mcp", status: "401" }),
        1,
      );
      // The tools' REST calls, by route pattern (never a raw URL).
      assert.ok(
        delta("imaging_http_requests_total", {
          listener: "rest",
          route: "/rest/applications",
          status: "200",
        }) >= 3,
      );
      assert.ok(!now.some((s) => s.labels.route?.includes("?")), "no query string in a route label");

      assert.ok(
        delta("imaging_store_query_duration_seconds_count", {
          store: kind,
          statement: "select",
          outcome: "ok",
        }) > 0,
      );
      for (const upstream of ["rest", "mcp-analysis", "mcp-gatekeeper"]) {
        assert.equal(sampleSum(now, "imaging_upstream_up", { upstream }), 1, upstream);
      }
      assert.ok(sampleSum(now, "imaging_process_resident_memory_bytes") > 0);

      // No credential in the exposition.
      const text = await (await fetch(metricsUrl)).text();
      assert.ok(!text.includes(alice), "no access token in the metrics");
      assert.ok(!text.includes(USERS.alice.password), "no password in the metrics");
    });
  });
}
