/**
 * One application per scan (issue 28 point 2) and inputs that cannot hurt the scanner (point 4), on real
 * software: json-server 0.17.4 as published, locked by npm, carrying in `templates/starter/` the
 * package.json and package-lock.json of another real project (firebase-tools 8.4.0, lodash pinned to
 * the vulnerable 4.17.15) the way published packages carry scaffolding templates, and an example project
 * in `examples/demo/`. The application's inventory is json-server's lockfile alone; the others are listed
 * as skipped with their path and why, and read with `--all-projects`; each package names the inputs it
 * came from, in the scan, the REST API, the MCP tools and the CycloneDX export.
 */
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import { INPUT_READERS, type ScanResult, scanPath } from "../../src/scanner/scan.ts";
import type { RunningService } from "../../src/service.ts";
import { runCli } from "../support/cli.ts";
import { jsonServer } from "../support/js-subjects.ts";
import { firebaseTools } from "../support/scan-subjects.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

async function scan(path: string, allProjects = false): Promise<ScanResult> {
  return scanPath(path, {
    readers: INPUT_READERS,
    fetcher: createRegistryFetcher({ cacheDir: "/nonexistent-cache", offline: true }),
    offline: true,
    npmRegistryUrl: "https://registry.npmjs.org",
    mavenRepositoryUrl: "https://repo.maven.apache.org/maven2",
    mavenLocalRepository: "/nonexistent-m2",
    progress: () => {},
    allProjects,
  });
}

const ids = (result: ScanResult) => new Set(result.packages.map((p) => `${p.name}@${p.version}`));

/** json-server with a copy of firebase-tools 8.4.0's lockfile project at each of `nested` (relative folders). */
function nestedProjects(scratch: string, nested: readonly string[]): string {
  const app = join(scratch, "json-server");
  cpSync(jsonServer(), app, { recursive: true });
  const firebase = firebaseTools().npm.v3;
  for (const target of nested) {
    cpSync(join(firebase, "package.json"), join(app, target, "package.json"), { recursive: true });
    cpSync(join(firebase, "package-lock.json"), join(app, target, "package-lock.json"));
  }
  return app;
}

describe("one application per scan: json-server with a template and an example project inside it", () => {
  let scratch: string;
  let app: string;
  let alone: ScanResult;
  let template: ScanResult;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), "scan-projects-"));
    app = nestedProjects(scratch, ["templates/starter", "examples/demo"]);
    alone = await scan(jsonServer());
    template = await scan(firebaseTools().npm.v3);
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it("reads the application's lockfile only and lists the other projects with their path and why", async () => {
    const result = await scan(app);
    assert.deepEqual(result.inputs, [{ reader: "npm", file: "package-lock.json" }]);
    assert.deepEqual(ids(result), ids(alone));
    assert.deepEqual(
      result.packages.filter((p) => p.name === "lodash").map((p) => p.version),
      alone.packages.filter((p) => p.name === "lodash").map((p) => p.version),
      "only json-server's lodash, not the template's 4.17.15",
    );
    assert.ok(!ids(result).has("lodash@4.17.15"));
    assert.deepEqual(result.skippedProjects, [
      {
        path: "examples/demo/package-lock.json",
        reason: "an example or test fixture: a project of its own, not the application",
      },
      {
        path: "templates/starter/package-lock.json",
        reason: "a project of its own inside the application, not one of the workspaces of package-lock.json",
      },
    ]);
    for (const p of result.packages) assert.deepEqual(p.sources, ["package-lock.json"], p.name);
  });

  it("--all-projects reads every project; each package names the lockfiles it came from", async () => {
    const result = await scan(app, true);
    assert.deepEqual(
      result.inputs.map((i) => i.file),
      ["examples/demo/package-lock.json", "package-lock.json", "templates/starter/package-lock.json"],
    );
    assert.deepEqual(result.skippedProjects, []);
    assert.deepEqual(ids(result), new Set([...ids(alone), ...ids(template)]));
    const lodash = result.packages.filter((p) => p.name === "lodash");
    assert.deepEqual(lodash.find((p) => p.version === "4.17.15")?.sources, [
      "examples/demo/package-lock.json",
      "templates/starter/package-lock.json",
    ]);
    const own = ids(alone);
    const theirs = ids(template);
    for (const p of result.packages) {
      const key = `${p.name}@${p.version}`;
      const expected = [
        ...(theirs.has(key) ? ["examples/demo/package-lock.json"] : []),
        ...(own.has(key) ? ["package-lock.json"] : []),
        ...(theirs.has(key) ? ["templates/starter/package-lock.json"] : []),
      ];
      assert.deepEqual(p.sources, expected, key);
    }
  });

  it("the CLI summary lists the skipped projects and the analysis document keeps each package's inputs", async () => {
    const out = join(scratch, "analysis.json");
    const result = await runCli(["scan", app, "--app", "json-server", "--output", out]);
    assert.equal(result.code, 0, result.stderr);
    const text = result.stdout + result.stderr;
    assert.match(
      text,
      /skipped project: templates\/starter\/package-lock\.json: a project of its own inside the application/,
    );
    assert.match(text, /skipped project: examples\/demo\/package-lock\.json: an example or test fixture/);
    assert.match(text, /--all-projects reads the skipped projects too/);
    const doc = JSON.parse(readFileSync(out, "utf8")) as {
      packages: { name: string; version: string; sources?: string[] }[];
    };
    assert.ok(doc.packages.length > 0);
    for (const p of doc.packages) assert.deepEqual(p.sources, ["package-lock.json"], p.name);

    const all = await runCli(["scan", app, "--app", "json-server", "--all-projects", "--output", out]);
    assert.equal(all.code, 0, all.stderr);
    assert.doesNotMatch(all.stdout + all.stderr, /skipped project/);
    const everything = JSON.parse(readFileSync(out, "utf8")) as typeof doc;
    assert.ok(everything.packages.some((p) => p.name === "lodash" && p.version === "4.17.15"));
  });

  it("a lockfile entry whose name the registry refuses is left out with a warning naming the file", async () => {
    const bad = join(scratch, "bad-names");
    cpSync(jsonServer(), bad, { recursive: true });
    const lockFile = join(bad, "package-lock.json");
    const lock = JSON.parse(readFileSync(lockFile, "utf8")) as {
      packages: Record<string, { version: string }>;
    };
    // What a tampered lockfile could hold: names that would choose another path on the registry host.
    lock.packages["node_modules/lodash?write=true"] = { version: "4.17.21" };
    lock.packages["node_modules/<script>alert(1)<"] = { version: "1.0.0" };
    lock.packages["node_modules/method-override"] = {
      ...(lock.packages["node_modules/method-override"] as { version: string }),
      version: "../../3.0.0",
    };
    writeFileSync(lockFile, JSON.stringify(lock, null, 2));
    const result = await scan(bad);
    for (const p of result.packages) {
      assert.doesNotMatch(`${p.name}@${p.version}`, /[?<>]|\.\.\//, "no such package recorded");
    }
    const messages = result.warnings.map((w) => `${w.file}: ${w.message}`);
    assert.ok(
      messages.some((m) =>
        /^package-lock\.json: package name "lodash\?write=true" is not a valid npm/.test(m),
      ),
      messages.join("\n"),
    );
    assert.ok(messages.some((m) => /^package-lock\.json: package name "<script>alert\(1\)<"/.test(m)));
    assert.ok(
      messages.some((m) =>
        /^package-lock\.json: node_modules\/method-override: version "\.\.\/\.\.\/3\.0\.0" is not a registry version/.test(
          m,
        ),
      ),
      messages.join("\n"),
    );
  });
});

describe("scan --app refuses application names no URL can open", () => {
  for (const name of [".", "..", "team/app", "back\\slash", "bell\u0007"]) {
    it(`--app ${JSON.stringify(name)}: one readable line, exit 1`, async () => {
      const result = await runCli(["scan", jsonServer(), "--app", name, "--output", "/dev/null"]);
      assert.equal(result.code, 1);
      const lines = result.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0] ?? "", /^.*--app .* must not .*: an application name is one URL path segment/);
    });
  }
});

for (const kind of STORE_KINDS) {
  describe(`each package's inputs are served: REST, MCP and the CycloneDX export, on ${kind}`, () => {
    let scratch: string;
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let admin: string;

    before(async () => {
      scratch = mkdtempSync(join(tmpdir(), "scan-projects-served-"));
      const app = nestedProjects(scratch, ["templates/starter"]);
      const out = join(scratch, "analysis.json");
      const scanned = await runCli([
        "scan",
        app,
        "--app",
        "json-server",
        "--all-projects",
        "--date",
        "2024-06-01T00:00:00Z",
        "--output",
        out,
      ]);
      assert.equal(scanned.code, 0, scanned.stderr);
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      // No registry answers here: the facts stay pending, which is not what these tests look at.
      service = await startTestService(store, {
        issuer: issuer.issuer,
        npmRegistryUrl: "http://127.0.0.1:9/npm",
      });
      admin = (await createApiKey(service.store.db, { user: "ci", role: "admin", applications: [] })).key;
      const uploaded = await fetch(`${service.gatewayUrl}/rest/applications/json-server/analyses`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": admin },
        body: readFileSync(out),
      });
      assert.equal(uploaded.status, 201, await uploaded.clone().text());
    });
    after(async () => {
      await service?.stop();
      await issuer?.close();
      await store?.drop();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    });

    it("the REST API's packages name their inputs", async () => {
      const response = await fetch(
        `${service.gatewayUrl}/rest/applications/json-server/packages?q=lodash&limit=50`,
        { headers: { "x-api-key": admin } },
      );
      assert.equal(response.status, 200);
      const list = (await response.json()) as { name: string; version: string; sources: string[] }[];
      const byVersion = new Map(list.filter((p) => p.name === "lodash").map((p) => [p.version, p.sources]));
      assert.deepEqual(byVersion.get("4.17.15"), ["templates/starter/package-lock.json"]);
      const own = [...byVersion].filter(([version]) => version !== "4.17.15");
      assert.ok(own.length > 0);
      for (const [, sources] of own) assert.ok(sources.includes("package-lock.json"), String(sources));
    });

    it("the MCP packages tool names them", async () => {
      const token = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
      const client = new Client({ name: "scan-projects-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${service.mcpUrls.analysis}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      try {
        const result = (await client.callTool({
          name: "packages",
          arguments: { application: "json-server", query: "lodash" },
        })) as CallToolResult;
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
        const structured = result.structuredContent as {
          packages: { name: string; version: string; sources: string[] }[];
        };
        const pinned = structured.packages.find((p) => p.name === "lodash" && p.version === "4.17.15");
        assert.deepEqual(pinned?.sources, ["templates/starter/package-lock.json"]);
        const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
        assert.match(text, /read from/);
        assert.match(text, /templates\/starter\/package-lock\.json/);
      } finally {
        await client.close();
      }
    });

    it("the CycloneDX export records them as identity evidence", async () => {
      const result = await runCli(["export", "cyclonedx", "--app", "json-server"], {
        DATABASE_URL: store.databaseUrl ?? "",
        IMAGING_DATA_DIR: store.dataDir,
      });
      assert.equal(result.code, 0, result.stderr);
      const bom = JSON.parse(result.stdout) as {
        components: {
          name: string;
          version: string;
          evidence?: { identity?: { field: string; methods: { technique: string; value: string }[] }[] };
        }[];
      };
      const pinned = bom.components.find((c) => c.name === "lodash" && c.version === "4.17.15");
      assert.deepEqual(pinned?.evidence?.identity, [
        {
          field: "purl",
          confidence: 1,
          methods: [
            { technique: "manifest-analysis", confidence: 1, value: "templates/starter/package-lock.json" },
          ],
        },
      ]);
      for (const c of bom.components) {
        assert.ok(
          (c.evidence?.identity?.[0]?.methods.length ?? 0) > 0,
          `${c.name}@${c.version} has evidence`,
        );
      }
    });
  });
}
