import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { type RunningMcpService, startMcpService } from "../../src/mcp/http-service.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { runCli } from "../support/cli.ts";
import { lodashAnalysis as analysis } from "../support/lodash-analysis.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

/**
 * Real GHSA records naming affected functions (test/fixtures/osv/SOURCES.md), imported with
 * `imaging advisories import`, and an analysis uploaded to the REST API: the references reaching those
 * functions are marked by GET .../insights/cve/{id}/references and the cve_references MCP tool.
 */
const OSV = fileURLToPath(new URL("../fixtures/osv/", import.meta.url));
const TEMPLATE_2022 = join(OSV, "lodash-template-2022", "GHSA-35jh-r3h4-6jhm.json"); // lodash.template
const TEMPLATE_2025 = join(OSV, "lodash-template-2025", "GHSA-35jh-r3h4-6jhm.json"); // names no function
const DEFAULTS_DEEP = join(OSV, "affected-functions", "GHSA-jf85-cpcp-j695.json"); // (lodash).defaultsDeep, (lodash.defaultsdeep)
const MERGE = join(OSV, "affected-functions", "GHSA-4xc9-xhrj-v574.json"); // (lodash).defaultsDeep, .merge, .mergeWith
const BASE_SET = join(OSV, "GHSA-p6mc-m468-83gw.json"); // lodash.baseSet: internal, never called directly
const LOG4SHELL = join(OSV, "GHSA-jfh8-c2jp-5v3q.json"); // names no function

type Reference = {
  affectedFunctions: string[];
  ecosystem: string;
  package: string;
  reachesAffectedFunction: boolean | null;
  reachedFunctions: string[];
  source: { fullName: string };
  target: { fullName: string };
};

for (const kind of STORE_KINDS) {
  describe(`affected functions: import, references reaching them, REST and MCP on ${kind}`, () => {
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let mcp: RunningMcpService;
    let admin: string;
    let work: string;
    const env = () => ({ DATABASE_URL: store.databaseUrl ?? "", IMAGING_DATA_DIR: store.dataDir });
    const importRecords = async (...paths: string[]) => {
      const result = await runCli(["advisories", "import", ...paths, "--json"], env());
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout) as { imported: number; updated: number; withdrawn: number };
    };
    const get = (path: string, key = admin) =>
      fetch(`${service.gatewayUrl}${path}`, { headers: key ? { "x-api-key": key } : {} });
    const references = async (cve: string, query = "") => {
      const response = await get(`/rest/applications/webshop/insights/cve/${cve}/references${query}`);
      assert.equal(response.status, 200, await response.clone().text());
      return (await response.json()) as Reference[];
    };
    /** An id no stored advisory names: 404 unknown-vulnerability, never an empty list that reads "safe". */
    const assertUnknown = async (cve: string) => {
      const response = await get(`/rest/applications/webshop/insights/cve/${cve}/references`);
      assert.equal(response.status, 404, await response.clone().text());
      const problem = (await response.json()) as { type: string; vulnerability: string };
      assert.equal(problem.type, "urn:imaging:problem:unknown-vulnerability");
      assert.equal(problem.vulnerability, cve);
    };
    /** source → target [reached functions], as a user reads the list. */
    const pairs = (list: Reference[]) =>
      list.map(
        (r) =>
          `${r.source.fullName} -> ${r.target.fullName}` +
          (r.reachesAffectedFunction === null
            ? " (none named)"
            : r.reachesAffectedFunction
              ? ` [${r.reachedFunctions.join(", ")}]`
              : " (not affected)"),
      );
    const problem = async (path: string, status: number, detail: RegExp, key = admin) => {
      const response = await get(path, key);
      assert.equal(response.status, status, await response.clone().text());
      assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json/);
      assert.match(((await response.json()) as { detail: string }).detail, detail);
    };

    before(async () => {
      work = mkdtempSync(join(tmpdir(), "affected-functions-"));
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      // Uploads look package facts up in registries: none listens here, the facts stay unknown.
      const registry = "http://127.0.0.1:9";
      service = await startTestService(store, {
        issuer: issuer.issuer,
        npmRegistryUrl: registry,
        mavenRepositoryUrl: registry,
      });
      admin = (await createApiKey(service.store.db, { user: "ci", role: "admin", applications: [] })).key;
      mcp = await startMcpService({ kind: "analysis", host: "127.0.0.1", port: 0, restUrl: service.restUrl });
      const counts = await importRecords(TEMPLATE_2022, DEFAULTS_DEEP, MERGE, BASE_SET, LOG4SHELL);
      assert.equal(counts.imported, 5);
      for (const [at, withTemplate] of [
        ["2024-01-15T10:00:00Z", true],
        ["2024-06-01T10:00:00Z", false],
      ] as const) {
        const response = await fetch(`${service.gatewayUrl}/rest/applications/webshop/analyses`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": admin },
          body: JSON.stringify(analysis(at, withTemplate)),
        });
        assert.equal(response.status, 201, await response.text());
      }
    });
    after(async () => {
      await mcp?.close();
      await service?.stop();
      await issuer?.close();
      await store?.drop();
      rmSync(work, { recursive: true, force: true });
    });

    it("marks the calls of lodash.template (old spelling) in lodash and in lodash-es, as of the first analysis", async () => {
      const all = await references("CVE-2021-23337", "?date=2024-02-01T00:00:00Z");
      assert.deepEqual(pairs(all), [
        "src/config.js.config -> lodash.defaultsDeep (not affected)",
        "src/util.js.util -> lodash.get (not affected)",
        "src/config.js.config -> lodash.merge (not affected)",
        "src/store.js.store -> lodash.set (not affected)",
        "src/render.js.render -> lodash.template [lodash.template]",
        "src/view.js.view -> lodash-es.template [lodash.template]",
      ]);
      assert.deepEqual(all[0]?.affectedFunctions, ["lodash.template"]);
      assert.equal(all[0]?.package, "lodash");
      assert.equal(all[0]?.ecosystem, "npm");
      const reaching = await references(
        "CVE-2021-23337",
        "?date=2024-02-01T00:00:00Z&reachesAffectedFunction=true",
      );
      assert.deepEqual(pairs(reaching), [
        "src/render.js.render -> lodash.template [lodash.template]",
        "src/view.js.view -> lodash-es.template [lodash.template]",
      ]);
      // The latest analysis no longer calls lodash.template: only lodash-es's is left.
      assert.deepEqual(pairs(await references("CVE-2021-23337", "?reachesAffectedFunction=true")), [
        "src/view.js.view -> lodash-es.template [lodash.template]",
      ]);
    });

    it("reads the newer spelling: (lodash).member and (package) for the package itself", async () => {
      assert.deepEqual(pairs(await references("CVE-2019-10744", "?reachesAffectedFunction=true")), [
        "src/config.js.config -> lodash.defaultsDeep [(lodash).defaultsDeep]",
        "src/options.js.options -> lodash.defaultsdeep [(lodash.defaultsdeep)]",
      ]);
      // lodash-es 4.17.20 is fixed for this advisory: its references are not listed.
      const byGhsa = await references("GHSA-4xc9-xhrj-v574", "?reachesAffectedFunction=true");
      assert.deepEqual(pairs(byGhsa), [
        "src/config.js.config -> lodash.defaultsDeep [(lodash).defaultsDeep]",
        "src/config.js.config -> lodash.merge [(lodash).merge]",
      ]);
      assert.deepEqual(byGhsa[0]?.affectedFunctions, [
        "(lodash).defaultsDeep",
        "(lodash).merge",
        "(lodash).mergeWith",
      ]);
      assert.deepEqual(pairs(await references("CVE-2018-16487", "?reachesAffectedFunction=false")), [
        "src/util.js.util -> lodash.get (not affected)",
        "src/store.js.store -> lodash.set (not affected)",
      ]);
    });

    it("an internal affected function (lodash.baseSet) is reached by no direct call; no named function: null", async () => {
      assert.deepEqual(await references("CVE-2020-8203", "?reachesAffectedFunction=true"), []);
      const all = await references("CVE-2020-8203");
      // The latest analysis: lodash's four references (lodash-es 4.17.20 is fixed for this one).
      assert.deepEqual(
        all.map((r) => r.target.fullName),
        ["lodash.defaultsDeep", "lodash.get", "lodash.merge", "lodash.set"],
      );
      assert.ok(all.every((r) => r.reachesAffectedFunction === false && r.reachedFunctions.length === 0));
      assert.deepEqual(pairs(await references("CVE-2021-44228")), [
        "com.example.web.Logs.init -> org.apache.logging.log4j.core.LoggerContext.getContext (none named)",
      ]);
      assert.deepEqual(await references("CVE-2021-44228", "?reachesAffectedFunction=true"), []);
      assert.deepEqual(await references("CVE-2021-44228", "?reachesAffectedFunction=false"), []);
      await assertUnknown("CVE-2099-0001");
    });

    it("pages with limit and skip", async () => {
      const all = await references("CVE-2021-23337", "?date=2024-02-01T00:00:00Z");
      const page = await references("CVE-2021-23337", "?date=2024-02-01T00:00:00Z&limit=2&skip=3");
      assert.deepEqual(pairs(page), pairs(all.slice(3, 5)));
    });

    it("leaves the occurrences contract as it was: the same six object fields", async () => {
      const response = await get(
        "/rest/applications/webshop/insights/cve/CVE-2021-23337/occurrences?limit=10",
      );
      assert.equal(response.status, 200);
      const packages = (await response.json()) as { name: string; objects: Record<string, unknown>[] }[];
      assert.deepEqual(
        packages.map((p) => p.name),
        ["lodash", "lodash-es"],
      );
      for (const p of packages) {
        for (const o of p.objects) {
          assert.deepEqual(Object.keys(o), ["fullName", "id", "mangling", "name", "type", "typeId"]);
        }
      }
    });

    it("documents the operation in the OpenAPI document", async () => {
      const doc = (await (await get("/rest/openapi.json", "")).json()) as {
        paths: Record<
          string,
          { get?: { parameters?: { name: string }[]; responses: Record<string, unknown> } }
        >;
        components: { schemas: Record<string, { required?: string[] }> };
      };
      const op = doc.paths["/rest/applications/{name}/insights/cve/{id}/references"]?.get;
      assert.ok(op);
      assert.ok(op.parameters?.some((p) => p.name === "reachesAffectedFunction"));
      assert.ok(op.responses["400"] && op.responses["404"]);
      assert.deepEqual(doc.components.schemas.CveReference?.required, [
        "affectedFunctions",
        "ecosystem",
        "package",
        "reachesAffectedFunction",
        "reachedFunctions",
        "source",
        "target",
        "version",
      ]);
    });

    it("refuses bad input with problem+json", async () => {
      const base = "/rest/applications/webshop/insights/cve";
      await problem(
        `${base}/CVE-2021-23337/references?reachesAffectedFunction=yes`,
        400,
        /reachesAffectedFunction.*true or false/,
      );
      await problem(`${base}/not-a-cve/references`, 400, /CVE/);
      await problem(`${base}/CVE-2021-23337/references?limit=0`, 400, /limit/);
      await problem(`${base}/CVE-2021-23337/references?date=yesterday`, 400, /date/);
      await problem(
        `${base}/CVE-2021-23337/references?date=2020-01-01T00:00:00Z`,
        404,
        /no analysis at or before/,
      );
      await problem("/rest/applications/nowhere/insights/cve/CVE-2021-23337/references", 404, /nowhere/);
      const viewer = (
        await createApiKey(service.store.db, { user: "bob", role: "viewer", applications: ["other"] })
      ).key;
      await problem(`${base}/CVE-2021-23337/references`, 403, /not allowed/, viewer);
    });

    it("the cve_references MCP tool answers the same, structured and as a table", async () => {
      const token = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
      const client = new Client({ name: "affected-functions-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcp.endpoint), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      try {
        const result = (await client.callTool({
          name: "cve_references",
          arguments: { application: "webshop", cve: "GHSA-4xc9-xhrj-v574", reachesAffectedFunction: true },
        })) as CallToolResult;
        assert.notEqual(result.isError, true);
        const structured = result.structuredContent as { references: Reference[] };
        assert.deepEqual(pairs(structured.references), [
          "src/config.js.config -> lodash.defaultsDeep [(lodash).defaultsDeep]",
          "src/config.js.config -> lodash.merge [(lodash).merge]",
        ]);
        const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
        assert.match(text, /2 references reaching an affected function/);
        assert.match(
          text,
          /\| src\/config\.js\.config \| lodash\.merge \| lodash \| 4\.17\.4 \| YES: \(lodash\)\.merge \|/,
        );
        const bad = (await client.callTool({
          name: "cve_references",
          arguments: { application: "webshop", cve: "nonsense" },
        })) as CallToolResult;
        assert.equal(bad.isError, true);
      } finally {
        await client.close();
      }
    });

    it("a newer revision replaces the functions its record brought; a withdrawal removes them", async () => {
      // GHSA-35jh-r3h4-6jhm's 2025 revision names no affected function any more.
      assert.equal((await importRecords(TEMPLATE_2025)).updated, 1);
      const after2025 = await references("CVE-2021-23337", "?date=2024-02-01T00:00:00Z");
      assert.ok(after2025.length > 0);
      assert.ok(
        after2025.every((r) => r.reachesAffectedFunction === null && r.affectedFunctions.length === 0),
      );
      // Withdrawing the defaultsDeep record removes its functions and its advisory.
      const withdrawn = JSON.parse(readFileSync(DEFAULTS_DEEP, "utf8")) as Record<string, unknown>;
      withdrawn.modified = "2024-12-01T00:00:00Z";
      withdrawn.withdrawn = "2024-12-01T00:00:00Z";
      const file = join(work, "withdrawn.json");
      writeFileSync(file, JSON.stringify(withdrawn));
      assert.equal((await importRecords(file)).withdrawn, 1);
      // Its only advisory withdrawn, the CVE is no longer one the platform knows.
      await assertUnknown("CVE-2019-10744");
      const left = await service.store.db
        .withTables<{ affected_functions: { record_id: string } }>()
        .selectFrom("affected_functions")
        .select("record_id")
        .distinct()
        .orderBy("record_id")
        .execute();
      assert.deepEqual(
        left.map((r) => r.record_id),
        ["GHSA-4xc9-xhrj-v574", "GHSA-p6mc-m468-83gw"],
      );
    });
  });
}

describe("affected functions in the demo data (sqlite)", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: RunningService;
  let token: string;

  before(async () => {
    issuer = await startTestIssuer();
    store = await createTestStore("sqlite");
    service = await startTestService(store, { issuer: issuer.issuer }, async (handle) => {
      await loadDemo(handle.db);
    });
    token = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
  });
  after(async () => {
    await service?.stop();
    await issuer?.close();
    await store?.drop();
  });

  const references = async (cve: string) => {
    const response = await fetch(
      `${service.gatewayUrl}/rest/applications/storefront-web/insights/cve/${cve}/references?date=2024-03-05T00:00:00Z`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    assert.equal(response.status, 200);
    return (await response.json()) as Reference[];
  };

  it("storefront-web's lodash 4.17.15: CVE-2020-8203 names lodash.baseSet, which no call reaches directly", async () => {
    const list = await references("CVE-2020-8203");
    assert.ok(list.length > 5);
    assert.ok(list.some((r) => r.target.fullName === "lodash.zipObjectDeep"));
    for (const r of list) {
      assert.deepEqual(r.affectedFunctions, ["lodash.baseSet"]);
      assert.equal(r.reachesAffectedFunction, false);
    }
    // CVE-2021-23337's current GHSA revision names no function: nothing to tell.
    assert.ok((await references("CVE-2021-23337")).every((r) => r.reachesAffectedFunction === null));
  });
});
