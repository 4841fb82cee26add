import assert from "node:assert/strict";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { type RunningMcpService, startMcpService } from "../../src/mcp/http-service.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { VERSION } from "../../src/version.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const ANALYSIS_TOOLS = [
  "application",
  "applications",
  "cve_insights",
  "cve_occurrences",
  "cve_references",
  "objects",
  "package_interactions",
  "packages",
];
const GATEKEEPER_TOOLS = ["compare_analyses", "evaluate_gate", "gate_history", "gates"];
const DEMO_APPLICATIONS = ["claims-portal", "payments-service", "storefront-web"];
const MODERN = "2026-07-28";
const JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema";

type Mode = "legacy" | "auto";

/** The MCP servers run on the demo data, the REST API behind them; SQLite is enough here. */
describe("MCP servers over HTTP (demo data)", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: RunningService;
  let analysis: RunningMcpService;
  let gatekeeper: RunningMcpService;
  let adminToken: string;
  let viewerToken: string;

  before(async () => {
    issuer = await startTestIssuer();
    store = await createTestStore("sqlite");
    service = await startTestService(store, { issuer: issuer.issuer }, async (handle) => {
      await loadDemo(handle.db);
    });
    const common = { host: "127.0.0.1", port: 0, restUrl: service.restUrl };
    analysis = await startMcpService({ kind: "analysis", ...common });
    gatekeeper = await startMcpService({ kind: "gatekeeper", ...common });
    adminToken = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
    viewerToken = await issuer.sign({ sub: "bob", roles: ["viewer"], applications: ["storefront-web"] });
  });
  after(async () => {
    await analysis?.close();
    await gatekeeper?.close();
    await service?.stop();
    await issuer?.close();
    await store?.drop();
  });

  /** An SDK client connected with an optional bearer token, in the given negotiation mode. */
  async function connect(endpoint: string, token: string | undefined, mode: Mode = "auto") {
    const client = new Client(
      { name: "mcp-servers-test", version: "1.0.0" },
      { versionNegotiation: { mode } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
    });
    await client.connect(transport);
    return { client, transport };
  }

  async function callTool(
    endpoint: string,
    name: string,
    args: Record<string, unknown>,
    options: { token?: string | undefined; mode?: Mode } = {},
  ): Promise<CallToolResult> {
    const token = "token" in options ? options.token : adminToken;
    const { client } = await connect(endpoint, token, options.mode);
    try {
      return (await client.callTool({ name, arguments: args })) as CallToolResult;
    } finally {
      await client.close();
    }
  }

  const textOf = (result: CallToolResult) =>
    result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

  describe("tools/list", () => {
    for (const [kind, expected] of [
      ["analysis", ANALYSIS_TOOLS],
      ["gatekeeper", GATEKEEPER_TOOLS],
    ] as const) {
      for (const mode of ["auto", "legacy"] as const) {
        it(`lists exactly the ${kind} tools, each with input and output schemas (${mode === "auto" ? MODERN : "2025"} era)`, async () => {
          const endpoint = kind === "analysis" ? analysis.endpoint : gatekeeper.endpoint;
          const { client } = await connect(endpoint, adminToken, mode);
          try {
            const { tools } = await client.listTools();
            assert.deepEqual(tools.map((t) => t.name).sort(), [...expected]);
            for (const tool of tools) {
              assert.equal(tool.inputSchema.type, "object", `${tool.name} input schema`);
              assert.equal(tool.outputSchema?.type, "object", `${tool.name} output schema`);
              assert.equal(tool.inputSchema.$schema, JSON_SCHEMA_2020_12);
              assert.equal(tool.outputSchema?.$schema, JSON_SCHEMA_2020_12);
              assert.ok(
                (tool.description ?? "").length > 80,
                `${tool.name} has a description a model can act on`,
              );
              assert.ok(tool.title, `${tool.name} has a title`);
              assert.equal(tool.annotations?.readOnlyHint, true);
            }
            assert.equal(client.getServerVersion()?.version, VERSION);
            assert.match(client.getInstructions() ?? "", /ISO 8601/);
          } finally {
            await client.close();
          }
        });
      }
    }
  });

  describe("analysis tools", () => {
    it("applications: the three demo applications, structured and as a table", async () => {
      const result = await callTool(analysis.endpoint, "applications", {});
      assert.notEqual(result.isError, true);
      const structured = result.structuredContent as {
        applications: { name: string; demo: boolean; analysisCount: number; latestAnalysis: string }[];
        page: { hasMore: boolean; nextSkip: number | null };
      };
      assert.deepEqual(
        structured.applications.map((a) => a.name),
        DEMO_APPLICATIONS,
      );
      assert.ok(structured.applications.every((a) => a.demo && a.analysisCount === 2));
      assert.deepEqual(structured.page, { skip: 0, limit: 100, returned: 3, hasMore: false, nextSkip: null });
      const text = textOf(result);
      assert.match(text, /^3 applications:/);
      for (const name of DEMO_APPLICATIONS) assert.match(text, new RegExp(`\\| ${name} \\| 2 \\| 20`));
      assert.doesNotMatch(text, /^\s*[{[]/, "a readable table, not a JSON dump");
    });

    it("applications: pages with limit and skip", async () => {
      const first = (await callTool(analysis.endpoint, "applications", { limit: 2 })).structuredContent as {
        applications: { name: string }[];
        page: { hasMore: boolean; nextSkip: number | null };
      };
      assert.deepEqual(
        first.applications.map((a) => a.name),
        DEMO_APPLICATIONS.slice(0, 2),
      );
      assert.equal(first.page.hasMore, true);
      assert.equal(first.page.nextSkip, 2);
      const second = await callTool(analysis.endpoint, "applications", { limit: 2, skip: 2 });
      const page = second.structuredContent as {
        applications: { name: string }[];
        page: { hasMore: boolean };
      };
      assert.deepEqual(
        page.applications.map((a) => a.name),
        ["storefront-web"],
      );
      assert.equal(page.page.hasMore, false);
    });

    it("cve_occurrences: log4j-core 2.14.1 and its referred objects in payments-service on 2024-02-01", async () => {
      const result = await callTool(analysis.endpoint, "cve_occurrences", {
        application: "payments-service",
        cve: "CVE-2021-44228",
        date: "2024-02-01T00:00:00Z",
      });
      assert.notEqual(result.isError, true, textOf(result));
      const structured = result.structuredContent as {
        cve: string;
        packages: {
          name: string;
          version: string;
          saferClosestVersion: string | null;
          objectCount: number;
          objects: { fullName: string }[];
        }[];
      };
      assert.equal(structured.packages.length, 1);
      const [log4j] = structured.packages;
      assert.match(log4j?.name ?? "", /:log4j-core$/);
      assert.equal(log4j?.version, "2.14.1");
      assert.ok((log4j?.objects.length ?? 0) > 0);
      assert.equal(log4j?.objectCount, log4j?.objects.length);
      assert.ok(log4j?.objects.every((o) => o.fullName.startsWith("org.apache.logging.log4j")));
      assert.equal(log4j?.saferClosestVersion, "2.17.1");
      const text = textOf(result);
      assert.match(text, /CVE-2021-44228 affects 1 package of payments-service/);
      assert.match(text, /log4j-core 2\.14\.1 \(.*safer closest version 2\.17\.1/);
      assert.match(text, /- org\.apache\.logging\.log4j\.core\.\S+ \(Java /);
    });

    it("cve_occurrences: none as of the latest analysis (log4j-core upgraded)", async () => {
      const result = await callTool(analysis.endpoint, "cve_occurrences", {
        application: "payments-service",
        cve: "CVE-2021-44228",
      });
      assert.deepEqual((result.structuredContent as { packages: unknown[] }).packages, []);
      assert.match(textOf(result), /affects no package of payments-service in the latest analysis/);
    });

    it("application: summary and analysis history", async () => {
      const result = await callTool(analysis.endpoint, "application", { application: "payments-service" });
      const structured = result.structuredContent as {
        analyses: string[];
        latestAnalysis: string;
        counts: { packages: number };
      };
      assert.deepEqual(structured.analyses, ["2024-01-15T09:00:00Z", "2024-06-01T09:00:00Z"]);
      assert.equal(structured.latestAnalysis, "2024-06-01T09:00:00Z");
      assert.ok(structured.counts.packages > 0);
      assert.match(textOf(result), /2 analyses \(newest first\): 2024-06-01T09:00:00Z, 2024-01-15T09:00:00Z/);
    });

    it("cve_insights: CVEs most severe first, filtered by severity", async () => {
      const all = await callTool(analysis.endpoint, "cve_insights", {
        application: "payments-service",
        date: "2024-02-01T00:00:00Z",
      });
      const cves = (all.structuredContent as { cves: { id: string; severity: string }[] }).cves;
      assert.ok(cves.some((c) => c.id === "CVE-2021-44228" && c.severity === "CRITICAL"));
      assert.ok(cves.some((c) => c.severity === "MEDIUM"));
      assert.match(textOf(all), /\| CVE-2021-44228 \| CRITICAL \|/);

      const critical = await callTool(analysis.endpoint, "cve_insights", {
        application: "payments-service",
        date: "2024-02-01T00:00:00Z",
        severity: ["CRITICAL"],
      });
      const severities = (critical.structuredContent as { cves: { severity: string }[] }).cves.map(
        (c) => c.severity,
      );
      assert.ok(severities.length > 0 && severities.every((s) => s === "CRITICAL"));
    });

    it("packages: vulnerable versions with their CVEs and safer versions", async () => {
      const result = await callTool(analysis.endpoint, "packages", {
        application: "payments-service",
        date: "2024-02-01T00:00:00Z",
        vulnerable: true,
      });
      assert.notEqual(result.isError, true, textOf(result));
      const list = (
        result.structuredContent as {
          packages: {
            name: string;
            version: string;
            vulnerabilities: string[];
            saferClosestVersion: string | null;
          }[];
        }
      ).packages;
      const log4j = list.find((p) => p.name.endsWith(":log4j-core"));
      assert.equal(log4j?.version, "2.14.1");
      assert.ok(log4j?.vulnerabilities.includes("CVE-2021-44228"));
      assert.ok(list.every((p) => p.vulnerabilities.length > 0));
      assert.match(textOf(result), /\| org\.apache\.logging\.log4j:log4j-core \| 2\.14\.1 \| maven \|/);
    });

    it("package_interactions: the application objects that refer to a package", async () => {
      const result = await callTool(analysis.endpoint, "package_interactions", {
        application: "payments-service",
        package: "org.apache.logging.log4j:log4j-core",
        limit: 3,
      });
      assert.notEqual(result.isError, true, textOf(result));
      const structured = result.structuredContent as {
        interactions: { source: { fullName: string }; target: { fullName: string } }[];
        page: { hasMore: boolean; nextSkip: number | null };
      };
      assert.equal(structured.interactions.length, 3);
      assert.ok(structured.interactions.every((i) => i.source.fullName.startsWith("com.example.payments")));
      assert.ok(
        structured.interactions.every((i) => i.target.fullName.startsWith("org.apache.logging.log4j")),
      );
      assert.equal(structured.page.hasMore, true);
      assert.match(textOf(result), /more follow: call again with skip=3/);
    });

    it("objects: searches external objects by name", async () => {
      const result = await callTool(analysis.endpoint, "objects", {
        application: "payments-service",
        query: "LoggerContext",
      });
      assert.notEqual(result.isError, true, textOf(result));
      const objects = (
        result.structuredContent as { objects: { fullName: string; mangling: string; package: string }[] }
      ).objects;
      assert.ok(objects.length > 0);
      assert.ok(objects.every((o) => `${o.fullName} ${o.mangling}`.toLowerCase().includes("loggercontext")));
      assert.ok(objects.some((o) => o.package.endsWith(":log4j-core")));
      assert.match(
        textOf(result),
        /\| org\.apache\.logging\.log4j\.core\.LoggerContext \| Java Class \| org\.apache\.logging\.log4j:log4j-core \|/,
      );
    });

    it("a viewer granted only storefront-web sees one application and gets 403 on payments-service", async () => {
      const listed = await callTool(analysis.endpoint, "applications", {}, { token: viewerToken });
      assert.deepEqual(
        (listed.structuredContent as { applications: { name: string }[] }).applications.map((a) => a.name),
        ["storefront-web"],
      );
      assert.match(textOf(listed), /^1 application:/);
      const denied = await callTool(
        analysis.endpoint,
        "cve_occurrences",
        { application: "payments-service", cve: "CVE-2021-44228" },
        { token: viewerToken },
      );
      assert.equal(denied.isError, true);
      assert.equal(denied.structuredContent, undefined);
      assert.match(textOf(denied), /^REST API answered 403 Forbidden: .*payments-service/);
    });

    it("without a token the server still answers, and tools report the REST API's 401", async () => {
      for (const mode of ["auto", "legacy"] as const) {
        const result = await callTool(analysis.endpoint, "applications", {}, { token: undefined, mode });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /^REST API answered 401 Unauthorized: /);
      }
    });

    it("an invalid token gives the REST API's 401 with its reason", async () => {
      const result = await callTool(analysis.endpoint, "applications", {}, { token: "not-a-jwt" });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /^REST API answered 401 Unauthorized: \S/);
    });

    it("REST validation errors become tool errors naming the status and the reason", async () => {
      const bad = await callTool(analysis.endpoint, "cve_occurrences", {
        application: "payments-service",
        cve: "log4shell",
      });
      assert.equal(bad.isError, true);
      assert.match(textOf(bad), /^REST API answered 400 Bad Request: 'log4shell' is not a CVE reference/);
      const unknown = await callTool(analysis.endpoint, "application", { application: "no such app" });
      assert.match(textOf(unknown), /^REST API answered 404 Not Found: No application named 'no such app'/);
    });

    it("arguments outside the input schema are refused before any REST call", async () => {
      const result = await callTool(analysis.endpoint, "applications", { limit: 5000 });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /limit/);
    });
  });

  describe("gatekeeper tools", () => {
    it("gates: the configured rules", async () => {
      const result = await callTool(gatekeeper.endpoint, "gates", {});
      assert.notEqual(result.isError, true, textOf(result));
      const rules = (result.structuredContent as { rules: { id: string; enabled: boolean }[] }).rules;
      assert.ok(rules.some((r) => r.id === "no-referenced-severe-cve"));
      assert.match(textOf(result), /quality gate rules? \(\d+ enabled\):/);
    });

    it("evaluate_gate: payments-service fails on 2024-02-01 for log4j-core's CVE-2021-44228", async () => {
      const result = await callTool(gatekeeper.endpoint, "evaluate_gate", {
        application: "payments-service",
        date: "2024-02-01T00:00:00Z",
      });
      assert.notEqual(result.isError, true, textOf(result));
      const structured = result.structuredContent as {
        analysis: string;
        verdict: string;
        rules: {
          id: string;
          passed: boolean;
          findings: { cve?: string; package: string; objects?: unknown[] }[];
        }[];
      };
      assert.equal(structured.analysis, "2024-01-15T09:00:00Z");
      assert.equal(structured.verdict, "fail");
      const severe = structured.rules.find((r) => r.id === "no-referenced-severe-cve");
      assert.equal(severe?.passed, false);
      const finding = severe?.findings.find((f) => f.cve === "CVE-2021-44228");
      assert.match(finding?.package ?? "", /:log4j-core$/);
      assert.ok((finding?.objects?.length ?? 0) > 0);
      const text = textOf(result);
      assert.match(text, /^payments-service: FAIL \(analysis of 2024-01-15T09:00:00Z\)/);
      assert.match(text, /- FAIL: no-referenced-severe-cve .*\n(.*\n)*.*CVE-2021-44228/);
    });

    it("gate_history: a verdict per analysis, newest first", async () => {
      const result = await callTool(gatekeeper.endpoint, "gate_history", { application: "payments-service" });
      const history = (result.structuredContent as { history: { analysis: string; failedRules: string[] }[] })
        .history;
      assert.deepEqual(
        history.map((h) => h.analysis),
        ["2024-06-01T09:00:00Z", "2024-01-15T09:00:00Z"],
      );
      assert.ok(history[1]?.failedRules.includes("no-referenced-severe-cve"));
      assert.ok(!history[0]?.failedRules.includes("no-referenced-severe-cve"));
      assert.match(textOf(result), /\| 2024-01-15T09:00:00Z \| FAIL \|/);
    });

    it("compare_analyses: the log4j upgrade between the two analyses", async () => {
      const result = await callTool(gatekeeper.endpoint, "compare_analyses", {
        application: "payments-service",
        from: "2024-02-01T00:00:00Z",
      });
      assert.notEqual(result.isError, true, textOf(result));
      const c = result.structuredContent as {
        from: string;
        to: string;
        packages: {
          added: { name: string; version: string }[];
          removed: { name: string; version: string }[];
        };
        vulnerablePackages: { removed: { name: string }[]; removedTotal: number };
      };
      assert.equal(c.from, "2024-01-15T09:00:00Z");
      assert.equal(c.to, "2024-06-01T09:00:00Z");
      assert.ok(c.packages.added.some((p) => p.name.endsWith(":log4j-core") && p.version === "2.17.1"));
      assert.ok(c.packages.removed.some((p) => p.name.endsWith(":log4j-core") && p.version === "2.14.1"));
      assert.equal(c.vulnerablePackages.removedTotal, c.vulnerablePackages.removed.length);
      assert.match(
        textOf(result),
        /\n {2}- org\.apache\.logging\.log4j:log4j-core 2\.14\.1 \(CVE-2021-44228/,
      );
      // limit and skip page each list; the totals stay those of the whole lists.
      const second = await callTool(gatekeeper.endpoint, "compare_analyses", {
        application: "payments-service",
        from: "2024-02-01T00:00:00Z",
        limit: 1,
        skip: 1,
      });
      assert.notEqual(second.isError, true, textOf(second));
      const paged = second.structuredContent as {
        packages: { added: { name: string; version: string }[]; addedTotal: number };
      };
      const full = result.structuredContent as typeof paged;
      assert.ok(full.packages.addedTotal >= 2);
      assert.equal(paged.packages.addedTotal, full.packages.addedTotal);
      assert.deepEqual(paged.packages.added, full.packages.added.slice(1, 2));
      assert.match(textOf(second), new RegExp(`Packages: ${full.packages.addedTotal} added`));
    });

    it("a viewer cannot evaluate an application they may not read", async () => {
      const result = await callTool(
        gatekeeper.endpoint,
        "evaluate_gate",
        { application: "payments-service" },
        { token: viewerToken },
      );
      assert.equal(result.isError, true);
      assert.match(textOf(result), /^REST API answered 403 Forbidden/);
    });
  });

  describe(`protocol ${MODERN} (stateless)`, () => {
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientInfo": { name: "raw-test", version: "1.0.0" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const post = (endpoint: string, method: string, params: Record<string, unknown>, headers = {}) =>
      fetch(endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": MODERN,
          "mcp-method": method,
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { ...params, _meta: envelope } }),
      });

    it("the SDK client negotiates it with server/discover, without a session", async () => {
      const { client, transport } = await connect(analysis.endpoint, adminToken, "auto");
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
        assert.equal(transport.sessionId, undefined);
        const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
        assert.equal((result.structuredContent as { applications: unknown[] }).applications.length, 3);
      } finally {
        await client.close();
      }
    });

    it("server/discover answers with the server's versions, identity and capabilities", async () => {
      for (const [service, name] of [
        [analysis, "imaging"],
        [gatekeeper, "imaging-gatekeeper"],
      ] as const) {
        const response = await post(service.endpoint, "server/discover", {});
        assert.equal(response.status, 200);
        assert.equal(response.headers.get("mcp-session-id"), null);
        const body = (await readJsonRpc(response)) as {
          id: number;
          result: {
            supportedVersions: string[];
            capabilities: { tools?: unknown };
            _meta?: Record<string, unknown>;
          };
        };
        assert.equal(body.id, 7);
        // 2025 revisions are negotiated with initialize, not listed here (SDK behaviour).
        assert.ok(body.result.supportedVersions.includes(MODERN));
        assert.ok(body.result.capabilities.tools);
        const info = body.result._meta?.["io.modelcontextprotocol/serverInfo"] as {
          name: string;
          version: string;
        };
        assert.equal(info.name, name);
        assert.equal(info.version, VERSION);
      }
    });

    it("a raw tools/call carries the request's bearer token to the REST API", async () => {
      const response = await post(
        analysis.endpoint,
        "tools/call",
        { name: "applications", arguments: { limit: 1 } },
        { authorization: `Bearer ${viewerToken}`, "mcp-name": "applications" },
      );
      assert.equal(response.status, 200);
      const body = (await readJsonRpc(response)) as { result: CallToolResult };
      assert.deepEqual(
        (body.result.structuredContent as { applications: { name: string }[] }).applications.map(
          (a) => a.name,
        ),
        ["storefront-web"],
      );
    });

    it("a tools/call's JSON answer comes whole, with its Content-Length (not chunked)", async () => {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "applications", arguments: { limit: 2 }, _meta: envelope },
      });
      const answer = await new Promise<{ headers: Record<string, unknown>; bytes: Buffer }>(
        (resolve, reject) => {
          const req = httpRequest(
            analysis.endpoint,
            {
              method: "POST",
              headers: {
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                authorization: `Bearer ${adminToken}`,
                "mcp-protocol-version": MODERN,
                "mcp-method": "tools/call",
                "mcp-name": "applications",
              },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on("data", (chunk: Buffer) => chunks.push(chunk));
              res.on("end", () => resolve({ headers: res.headers, bytes: Buffer.concat(chunks) }));
              res.on("error", reject);
            },
          );
          req.on("error", reject);
          req.end(body);
        },
      );
      assert.match(String(answer.headers["content-type"]), /^application\/json/);
      assert.equal(answer.headers["transfer-encoding"], undefined);
      assert.equal(answer.headers["content-length"], String(answer.bytes.length));
      const message = JSON.parse(answer.bytes.toString("utf8")) as { id: number; result: CallToolResult };
      assert.equal(message.id, 9);
      assert.deepEqual(
        (message.result.structuredContent as { applications: { name: string }[] }).applications.map(
          (a) => a.name,
        ),
        DEMO_APPLICATIONS.slice(0, 2),
      );
    });

    it("GET and DELETE without a session are 405", async () => {
      for (const method of ["GET", "DELETE"]) {
        const response = await fetch(analysis.endpoint, {
          method,
          headers: { accept: "text/event-stream", "mcp-protocol-version": MODERN },
        });
        assert.equal(response.status, 405, method);
        assert.equal(response.headers.get("allow"), "POST");
        await response.body?.cancel();
      }
    });
  });

  describe("protocol 2025 (initialize, sessions)", () => {
    const initialize = (endpoint: string, headers: Record<string, string> = {}) =>
      fetch(endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "raw", version: "1" },
          },
        }),
      });
    const inSession = (
      endpoint: string,
      sessionId: string,
      body: object,
      headers: Record<string, string> = {},
    ) =>
      fetch(endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
          ...headers,
        },
        body: JSON.stringify(body),
      });

    it("the SDK client's default handshake opens a session", async () => {
      const { client, transport } = await connect(gatekeeper.endpoint, adminToken, "legacy");
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), "2025-11-25");
        assert.match(transport.sessionId ?? "", /^[\x21-\x7e]+$/);
        const result = (await client.callTool({ name: "gates", arguments: {} })) as CallToolResult;
        assert.notEqual(result.isError, true, textOf(result));
      } finally {
        await client.close();
      }
    });

    it("initialize, GET stream, DELETE: the session lifecycle", async () => {
      const opened = await initialize(analysis.endpoint, { authorization: `Bearer ${adminToken}` });
      assert.equal(opened.status, 200);
      const sessionId = opened.headers.get("mcp-session-id");
      assert.ok(sessionId);
      const init = (await readJsonRpc(opened)) as {
        result: { protocolVersion: string; serverInfo: { name: string } };
      };
      assert.equal(init.result.protocolVersion, "2025-06-18");
      assert.equal(init.result.serverInfo.name, "imaging");
      const initialized = await inSession(analysis.endpoint, sessionId, {
        jsonrpc: "2.0",
        method: "notifications/initialized",
      });
      assert.equal(initialized.status, 202);

      const stream = new AbortController();
      const asked = Date.now();
      const get = await fetch(analysis.endpoint, {
        headers: {
          accept: "text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
        signal: stream.signal,
      });
      assert.equal(get.status, 200);
      assert.match(get.headers.get("content-type") ?? "", /^text\/event-stream/);
      assert.ok(Date.now() - asked < 2000, "the stream opens at once, not at the first keep-alive");
      const reader = get.body?.getReader();
      const first = await reader?.read();
      assert.equal(new TextDecoder().decode(first?.value), ": stream opened\n\n");
      stream.abort();

      const deleted = await fetch(analysis.endpoint, {
        method: "DELETE",
        headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
      });
      assert.equal(deleted.status, 200);
      const after = await inSession(analysis.endpoint, sessionId, {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/list",
      });
      assert.equal(after.status, 404);
      await after.body?.cancel();
    });

    it("a second GET stream of a session is served beside the first (not 409); DELETE ends both", async () => {
      const opened = await initialize(analysis.endpoint, { authorization: `Bearer ${adminToken}` });
      const sessionId = opened.headers.get("mcp-session-id") ?? "";
      await readJsonRpc(opened);
      await (
        await inSession(analysis.endpoint, sessionId, { jsonrpc: "2.0", method: "notifications/initialized" })
      ).body?.cancel();
      const openStream = async () => {
        const response = await fetch(analysis.endpoint, {
          headers: {
            accept: "text/event-stream",
            "mcp-session-id": sessionId,
            "mcp-protocol-version": "2025-06-18",
          },
        });
        // The body is read only when it is an error: a stream's never ends.
        if (response.status !== 200) assert.fail(`${response.status}: ${await response.text()}`);
        assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
        assert.equal(response.headers.get("mcp-session-id"), sessionId);
        const reader = response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
        assert.equal(new TextDecoder().decode((await reader.read()).value), ": stream opened\n\n");
        return reader;
      };
      // Gemini CLI opens a second one while the first is open (curl reproduces it): both stay open.
      const first = await openStream();
      const second = await openStream();
      const third = await openStream();
      const deleted = await fetch(analysis.endpoint, {
        method: "DELETE",
        headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
      });
      assert.equal(deleted.status, 200);
      for (const reader of [first, second, third]) {
        assert.equal((await reader.read()).done, true, "the session's end ends every stream");
      }
    });

    it("a resumption of an answered stream with nothing left is 405, not an empty stream", async () => {
      const opened = await initialize(analysis.endpoint, { authorization: `Bearer ${adminToken}` });
      const sessionId = opened.headers.get("mcp-session-id") ?? "";
      await readJsonRpc(opened);
      const listed = await inSession(analysis.endpoint, sessionId, {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/list",
      });
      const text = await listed.text();
      // The answer's event id: what an older SDK client (Gemini CLI's) resumes with once the stream ends.
      const eventId = /^id: (\S+)$/m.exec(text)?.[1];
      assert.ok(eventId, text.slice(0, 200));
      const resumed = await fetch(analysis.endpoint, {
        headers: {
          accept: "text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
          "last-event-id": eventId,
        },
      });
      assert.equal(resumed.status, 405);
      assert.match(resumed.headers.get("allow") ?? "", /GET/);
      const body = (await resumed.json()) as { error: { message: string } };
      assert.match(body.error.message, /Nothing to resume/);
    });

    it("each request of a session uses its own token, not the one that opened the session", async () => {
      const opened = await initialize(analysis.endpoint, { authorization: `Bearer ${adminToken}` });
      const sessionId = opened.headers.get("mcp-session-id") ?? "";
      await readJsonRpc(opened);
      const call = (headers: Record<string, string>) =>
        inSession(
          analysis.endpoint,
          sessionId,
          { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "applications", arguments: {} } },
          headers,
        ).then(readJsonRpc) as Promise<{ result: CallToolResult }>;
      const asViewer = await call({ authorization: `Bearer ${viewerToken}` });
      assert.equal((asViewer.result.structuredContent as { applications: unknown[] }).applications.length, 1);
      const anonymous = await call({});
      assert.equal(anonymous.result.isError, true);
      assert.match(textOf(anonymous.result), /401/);
    });

    it("an unknown session is 404; a request without session that is not initialize is 400", async () => {
      const unknown = await inSession(analysis.endpoint, "no-such-session", {
        jsonrpc: "2.0",
        id: 1,
        method: "ping",
      });
      assert.equal(unknown.status, 404);
      await unknown.body?.cancel();
      const sessionless = await fetch(analysis.endpoint, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      assert.equal(sessionless.status, 400);
      await sessionless.body?.cancel();
    });
  });

  describe("HTTP service", () => {
    it("GET /healthz answers 200 JSON", async () => {
      const response = await fetch(`${gatekeeper.url}/healthz`);
      assert.equal(response.status, 200);
      const body = (await response.json()) as {
        status: string;
        service: string;
        details: { version: string };
      };
      assert.equal(body.status, "UP");
      assert.equal(body.service, "mcp-gatekeeper");
      assert.equal(body.details.version, VERSION);
    });

    it("serves the MCP endpoint at its public path only", async () => {
      assert.equal(analysis.endpoint, `${analysis.url}/mcp`);
      assert.equal(gatekeeper.endpoint, `${gatekeeper.url}/mcp/gatekeeper`);
      const response = await fetch(`${analysis.url}/mcp/gatekeeper`, { method: "POST", body: "{}" });
      assert.equal(response.status, 404);
      assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
      await response.body?.cancel();
    });

    it("rejects a foreign Host or Origin (DNS rebinding) and accepts loopback ones", async () => {
      const port = new URL(analysis.url).port;
      const status = (headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = httpRequest(
            `${analysis.endpoint}`,
            {
              method: "POST",
              headers: {
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                ...headers,
              },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on("error", reject);
          req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
        });
      assert.equal(await status({ host: `evil.example.com:${port}` }), 403);
      assert.equal(await status({ origin: "http://evil.example.com" }), 403);
      // Past the check: a sessionless 2025 request that is not initialize.
      assert.equal(await status({ host: `localhost:${port}`, origin: `http://localhost:${port}` }), 400);
    });

    it("closes a 2025 session left idle (one with an open GET stream is in use)", async () => {
      const extra = await startMcpService({
        kind: "gatekeeper",
        host: "127.0.0.1",
        port: 0,
        restUrl: service.restUrl,
        sessionIdleMs: 200,
      });
      try {
        const sessions = async () =>
          ((await (await fetch(`${extra.url}/healthz`)).json()) as { details: { sessions: number } }).details
            .sessions;
        const { client } = await connect(extra.endpoint, adminToken, "legacy");
        const opened = await fetch(extra.endpoint, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-06-18",
              capabilities: {},
              clientInfo: { name: "raw", version: "1" },
            },
          }),
        });
        const sessionId = opened.headers.get("mcp-session-id") ?? "";
        await readJsonRpc(opened);
        assert.equal(await sessions(), 2);
        await new Promise((resolve) => setTimeout(resolve, 700));
        // The SDK client keeps its GET stream open: its session lives on; the raw one is gone.
        assert.equal(await sessions(), 1);
        assert.ok((await client.listTools()).tools.length > 0);
        const gone = await fetch(extra.endpoint, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-session-id": sessionId,
            "mcp-protocol-version": "2025-06-18",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
        });
        assert.equal(gone.status, 404);
        await gone.body?.cancel();
        await client.close();
      } finally {
        await extra.close();
      }
    });

    it("close() ends open streams and sessions promptly", async () => {
      const extra = await startMcpService({
        kind: "analysis",
        host: "127.0.0.1",
        port: 0,
        restUrl: service.restUrl,
      });
      const opened = await fetch(extra.endpoint, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "raw", version: "1" },
          },
        }),
      });
      const sessionId = opened.headers.get("mcp-session-id") ?? "";
      await readJsonRpc(opened);
      const get = await fetch(extra.endpoint, {
        headers: {
          accept: "text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
      });
      assert.equal(get.status, 200);
      const started = Date.now();
      await extra.close();
      assert.ok(Date.now() - started < 2000, "close() does not wait for the open stream");
      await get.body?.cancel().catch(() => {});
      await assert.rejects(fetch(`${extra.url}/healthz`));
    });
  });
});

/** The tools' side of the REST contract, against a stand-in REST API that records what it receives. */
describe("MCP tools against a stand-in REST API", () => {
  const seen: { url: string; authorization: string | undefined }[] = [];
  let rest: Server;
  let restUrl: string;
  let mcp: RunningMcpService;

  before(async () => {
    rest = createServer((req, res) => {
      seen.push({ url: req.url ?? "", authorization: req.headers.authorization });
      const path = (req.url ?? "").split("?")[0];
      if (path === "/rest/applications") {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify([
            {
              analysisCount: 1,
              demo: false,
              description: "d",
              latestAnalysis: { dateTime: "2024-01-01T00:00:00Z" },
              name: "a b/c",
              addedLater: "a property the tools do not declare",
            },
          ]),
        );
      } else if (path === "/rest/applications/a%20b%2Fc") {
        res.statusCode = 404;
        res.setHeader("content-type", "application/problem+json");
        res.end(JSON.stringify({ type: "about:blank", title: "Not Found", status: 404, detail: "Gone" }));
      } else {
        res.statusCode = 500;
        res.end("boom");
      }
    });
    await new Promise<void>((resolve) => rest.listen(0, "127.0.0.1", resolve));
    restUrl = `http://127.0.0.1:${(rest.address() as AddressInfo).port}`;
    mcp = await startMcpService({ kind: "analysis", host: "127.0.0.1", port: 0, restUrl });
  });
  after(async () => {
    await mcp?.close();
    await new Promise((resolve) => rest?.close(resolve));
  });

  async function call(endpoint: string, name: string, args: Record<string, unknown>, token?: string) {
    const client = new Client(
      { name: "stand-in-test", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
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
  const text = (result: CallToolResult) => (result.content[0]?.type === "text" ? result.content[0].text : "");

  it("passes the caller's token unchanged, asks for one item more than the page, keeps declared properties", async () => {
    seen.length = 0;
    const result = await call(mcp.endpoint, "applications", { limit: 10, skip: 5 }, "opaque.token-value");
    assert.deepEqual(seen, [
      { url: "/rest/applications?limit=11&skip=5", authorization: "Bearer opaque.token-value" },
    ]);
    const [application] = (result.structuredContent as { applications: Record<string, unknown>[] })
      .applications;
    assert.deepEqual(application, {
      name: "a b/c",
      description: "d",
      demo: false,
      analysisCount: 1,
      latestAnalysis: "2024-01-01T00:00:00Z",
    });
  });

  it("URL-encodes application names and reports problem+json details", async () => {
    seen.length = 0;
    const result = await call(mcp.endpoint, "application", { application: "a b/c" });
    assert.equal(seen[0]?.url, "/rest/applications/a%20b%2Fc");
    assert.equal(seen[0]?.authorization, undefined);
    assert.equal(result.isError, true);
    assert.equal(text(result), "REST API answered 404 Not Found: Gone");
  });

  it("reports an answer that is not problem+json with its status", async () => {
    const result = await call(mcp.endpoint, "cve_insights", { application: "x" }, "t");
    assert.equal(result.isError, true);
    assert.equal(text(result), "REST API answered 500 Internal Server Error: boom");
  });

  it("reports an unreachable REST API", async () => {
    const orphan = await startMcpService({
      kind: "gatekeeper",
      host: "127.0.0.1",
      port: 0,
      restUrl: "http://127.0.0.1:9",
    });
    try {
      const result = await call(orphan.endpoint, "gates", {}, "t");
      assert.equal(result.isError, true);
      assert.match(text(result), /^The REST API could not be reached: .*\(http:\/\/127\.0\.0\.1:9\)$/);
    } finally {
      await orphan.close();
    }
  });
});

/** The JSON-RPC message of a response, whether sent as JSON or as the first SSE data event. */
async function readJsonRpc(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(text);
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (!data) continue;
    const message = JSON.parse(data) as { id?: unknown };
    if (message.id !== undefined) return message;
  }
  throw new Error(`no JSON-RPC response in the event stream: ${text.slice(0, 200)}`);
}
