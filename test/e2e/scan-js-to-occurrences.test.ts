/**
 * From a real npm application's code to the occurrences operation, as a user does it with a running
 * platform: the real GHSA record of CVE-2020-8203 (lodash prototype pollution, fixed in 4.17.20) imported
 * with `imaging advisories import`, firebase-tools 8.4.0 (lodash pinned to 4.17.15) scanned from "CI" with
 * `imaging scan --server`, then the occurrences operation and the package's interactions asked through
 * the gateway: the exact lodash functions the application calls, and which of its functions call them;
 * then the MCP analysis server's cve_occurrences tool, as an AI client signed in as a viewer calls it.
 * The platform runs as `imaging start` in a process of its own, as it does for users: its facts gathering
 * for firebase-tools' ~1,000 packages is promise-heavy, and under the test runner's async hooks
 * (node:test tracks every promise) it cost about 40 % more CPU in this process.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { type RunningMcpService, startMcpService } from "../../src/mcp/http-service.ts";
import { openStore } from "../../src/store/database.ts";
import { INTERNAL_PORTS_ON_LOOPBACK, runCliProcess, spawnService } from "../support/cli.ts";
import { firebaseTools } from "../support/scan-subjects.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const ADVISORY = new URL("../fixtures/osv/GHSA-p6mc-m468-83gw.json", import.meta.url).pathname;
const APP = "firebase-cli";

interface ExternalObject {
  id: string;
  name: string;
  fullName: string;
  mangling: string;
  type: string;
  typeId: string;
}

describe("a scanned npm application's lodash calls answer the occurrences operation (scan --server)", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: Awaited<ReturnType<typeof spawnService>>;
  let gatewayUrl: string;
  let mcp: RunningMcpService;
  let adminKey: string;
  let viewerKey: string;

  before(async () => {
    store = await createTestStore("sqlite");
    const imported = await runCliProcess([
      "advisories",
      "import",
      ADVISORY,
      "--json",
      "--data-dir",
      store.dataDir,
    ]);
    assert.equal(imported.code, 0, imported.stderr);
    issuer = await startTestIssuer();
    const handle = await openStore({ databaseUrl: undefined, sqliteFile: store.sqliteFile });
    try {
      adminKey = (await createApiKey(handle.db, { user: "ci", role: "admin", applications: [] })).key;
      viewerKey = (await createApiKey(handle.db, { user: "dev", role: "viewer", applications: [APP] })).key;
    } finally {
      await handle.close();
    }
    service = await spawnService(["--data-dir", store.dataDir, "--port", "0"], {
      PUBLIC_URL: "http://127.0.0.1:8090",
      IDP_ISSUER: issuer.issuer,
      ...INTERNAL_PORTS_ON_LOOPBACK,
      DATABASE_URL: "",
    });
    gatewayUrl = service.summary.gateway;
  });
  after(async () => {
    await mcp?.close();
    await service?.stop();
    await issuer?.close();
    await store?.drop();
  });

  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${gatewayUrl}${path}`, { headers: { "x-api-key": viewerKey } });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as T;
  };

  it("the scan sends external objects and references with the packages", async () => {
    const result = await runCliProcess(
      [
        "scan",
        firebaseTools().published,
        "--app",
        APP,
        "--date",
        "2020-06-01T00:00:00Z",
        "--server",
        gatewayUrl,
        "--json",
      ],
      { IMAGING_API_KEY: adminKey, IMAGING_DATA_DIR: join(store.dataDir, "..", "ci-runner") },
    );
    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as {
      externalObjects: number;
      references: number;
      vulnerablePackages: number;
    };
    assert.ok(summary.externalObjects > 150, JSON.stringify(summary));
    assert.ok(summary.references > 1000, JSON.stringify(summary));
    assert.ok(summary.vulnerablePackages >= 1, JSON.stringify(summary));
  });

  it("occurrences of CVE-2020-8203 list lodash 4.17.15 with the exact lodash functions the code calls", async () => {
    const list = await get<{ name: string; version: string; objects: ExternalObject[] }[]>(
      `/rest/applications/${APP}/insights/cve/CVE-2020-8203/occurrences?limit=20`,
    );
    const lodash = list.find((p) => p.name === "lodash");
    assert.ok(lodash, JSON.stringify(list.map((p) => p.name)));
    assert.equal(lodash.version, "4.17.15");
    const names = new Set(lodash.objects.map((o) => o.fullName));
    // lib/functionsConfig.js materializeConfig calls _.set; lib/api.js calls _.set and _.get (read by hand).
    for (const expected of ["lodash.set", "lodash.get", "lodash.includes", "lodash.union", "lodash"])
      assert.ok(names.has(expected), `${expected} in ${[...names].join(", ")}`);
    // Only lodash's own members: nothing of another package, nothing the code does not call.
    assert.deepEqual(
      lodash.objects.filter((o) => !o.fullName.startsWith("lodash")).map((o) => o.fullName),
      [],
    );
    assert.ok(!names.has("lodash.zipObjectDeep"), "firebase-tools 8.4.0 never calls zipObjectDeep");
    const set = lodash.objects.find((o) => o.fullName === "lodash.set");
    assert.deepEqual(set && { name: set.name, type: set.typeId }, { name: "set", type: "JS_FUNCTION" });
  });

  it("the package's interactions say which application functions call lodash.set", async () => {
    const interactions = await get<
      { source: { fullName: string; typeId: string }; target: { fullName: string } }[]
    >(`/rest/applications/${APP}/interactions?package=lodash&limit=1000`);
    const callers = interactions
      .filter((i) => i.target.fullName === "lodash.set")
      .map((i) => i.source.fullName);
    assert.ok(
      callers.includes("[lib/functionsConfig.js].materializeConfig._materializeVariable"),
      callers.join("\n"),
    );
    assert.ok(callers.includes("[lib/api.js].addRequestHeaders"), callers.join("\n"));
    const materialize = interactions.find((i) =>
      i.source.fullName.startsWith("[lib/functionsConfig.js].materializeConfig._materializeVariable"),
    );
    assert.equal(materialize?.source.typeId, "JS_FUNCTION");
  });

  it("the MCP analysis server's cve_occurrences tool names the same lodash functions to an AI client", async () => {
    mcp = await startMcpService({
      kind: "analysis",
      host: "127.0.0.1",
      port: 0,
      restUrl: service.summary.rest,
    });
    const token = await issuer.sign({ sub: "dev", roles: ["viewer"], applications: [APP] });
    const client = new Client({ name: "scan-js-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcp.endpoint), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const result = (await client.callTool({
        name: "cve_occurrences",
        arguments: { application: APP, cve: "CVE-2020-8203" },
      })) as CallToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      const structured = result.structuredContent as {
        packages: { name: string; version: string; objects: { fullName: string }[] }[];
      };
      const lodash = structured.packages.find((p) => p.name === "lodash");
      assert.equal(lodash?.version, "4.17.15");
      const names = lodash?.objects.map((o) => o.fullName) ?? [];
      assert.ok(names.includes("lodash.set") && names.includes("lodash.get"), names.join(", "));
    } finally {
      await client.close();
    }
  });
});
