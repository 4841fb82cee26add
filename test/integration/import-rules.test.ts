import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/**
 * The import direction of DESIGN.md's layout is a lint rule (biome.json's overrides, run by `npm run
 * lint`). These tests run the project's own biome.json over a planted tree: each kind of violation is
 * reported, naming the file and the rule, and the imports the layout allows are not.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIOME = join(ROOT, "node_modules", ".bin", "biome");

interface Diagnostic {
  category: string;
  message: string;
  location: { path: string; start: { line: number } };
}

const PLANTED: Record<string, string> = {
  // the floor and the store
  "src/config/settings.ts": 'import { s } from "../store/s.ts";\nexport const k = s;\n',
  "src/store/s.ts": 'import { level } from "../config/level.ts";\nexport const s = level;\n',
  "src/config/level.ts": "export const level = 1;\n",
  "src/store/users.ts": 'import { hash } from "../domain/passwords.ts";\nexport const u = hash;\n',
  "src/store/cimd.ts": 'import type { Model } from "../idp/cimd/model.ts";\nexport type C = Model;\n',
  "src/store/migrations/001.ts":
    'import type { Input } from "../../scanner/analysis.ts";\nexport type I = Input;\n',
  "src/store/metrics-use.ts": 'import { m } from "../observability/metrics.ts";\nexport const n = m;\n',
  // migrations: kysely, the schema, database.ts's StoreKind and their siblings only
  "src/store/batch.ts": "export const chunks = 1;\n",
  "src/store/schema.ts": "export const OPEN_SEQ = 1;\nexport type Database = { t: number };\n",
  "src/store/database.ts": "export type StoreKind = 1;\nexport const openStore = 1;\n",
  "src/store/migrations/kinds.ts": "export const kinds = 1;\n",
  "src/store/migrations/030-live.ts": 'import { chunks } from "../batch.ts";\nexport const c = chunks;\n',
  "src/store/migrations/031-opens.ts":
    'import { openStore } from "../database.ts";\nexport const o = openStore;\n',
  "src/store/migrations/032-config.ts":
    'import { level } from "../../config/level.ts";\nexport const l = level;\n',
  "src/store/migrations/033-frozen.ts":
    'import { sql } from "kysely";\nimport type { StoreKind } from "../database.ts";\n' +
    'import { type Database, OPEN_SEQ } from "../schema.ts";\nimport { kinds } from "./kinds.ts";\n' +
    "export const f: [unknown, StoreKind | undefined, Database | undefined, number, number] = " +
    "[sql, undefined, undefined, OPEN_SEQ, kinds];\n",
  "src/observability/metrics.ts": "export const m = 1;\n",
  // the contracts: a leaf every part imports
  "src/contracts/resources.ts": 'import { s } from "../store/s.ts";\nexport const r = s;\n',
  "src/contracts/platform.ts": "export const AUDIENCE = 1;\n",
  "src/store/contract-use.ts":
    'import { AUDIENCE } from "../contracts/platform.ts";\nexport const c = AUDIENCE;\n',
  "src/mcp/contract-use.ts":
    'import { AUDIENCE } from "../contracts/platform.ts";\nexport const c = AUDIENCE;\n',
  // domain and auth
  "src/domain/passwords.ts": 'import { s } from "../store/s.ts";\nexport const hash = s;\n',
  "src/domain/facts.ts": 'import { route } from "../rest/route.ts";\nexport const f = route;\n',
  "src/auth/verify.ts": 'import { grant } from "../idp/grant.ts";\nexport const v = grant;\n',
  // the parts
  "src/idp/cimd/model.ts": "export type Model = number;\n",
  "src/idp/grant.ts": 'import { hash } from "../domain/passwords.ts";\nexport const grant = hash;\n',
  "src/scanner/analysis.ts": "export type Input = number;\n",
  "src/rest/route.ts":
    'import { hash } from "../domain/passwords.ts";\nimport type { Model } from "../idp/cimd/model.ts";\n' +
    'import { s } from "../store/s.ts";\nexport const route: [unknown, Model | undefined, unknown] = [hash, undefined, s];\n',
  "src/rest/start.ts": 'import { main } from "../cli/main.ts";\nexport const r = main;\n',
  "src/scanner/proxy.ts": 'import { gw } from "../gateway/app.ts";\nexport const p = gw;\n',
  "src/mcp/tools.ts": 'import { s } from "../store/s.ts";\nexport const t = s;\n',
  "src/mcp/analysis/tool.ts": 'import { route } from "../../rest/route.ts";\nexport const a = route;\n',
  "src/gateway/app.ts": 'import { route } from "../rest/route.ts";\nexport const gw = route;\n',
  // the composition root and the CLI
  "src/service-status.ts": 'import { main } from "./cli/main.ts";\nexport const st = main;\n',
  "src/service.ts":
    'import { gw } from "./gateway/app.ts";\nimport { t } from "./mcp/tools.ts";\nexport const sv = [gw, t];\n',
  "src/cli/main.ts": 'import { sv } from "../service.ts";\nexport const main = sv;\n',
  // a cycle inside one folder
  "src/domain/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
  "src/domain/b.ts": 'import { a } from "./a.ts";\nexport const b = () => a;\n',
};

let dir: string;
let diagnostics: Diagnostic[];

function reported(path: string): Diagnostic[] {
  return diagnostics.filter((d) => d.location.path === path && d.category.startsWith("lint/"));
}

function assertRestricted(path: string, line: number, says: RegExp): void {
  const found = reported(path).filter((d) => d.category === "lint/style/noRestrictedImports");
  assert.ok(
    found.some((d) => d.location.start.line === line && says.test(d.message)),
    `${path}:${line} should be reported as ${says}; got ${JSON.stringify(found.map((d) => d.message))}`,
  );
}

describe("import direction lint rule (biome.json, run by npm run lint)", () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "imaging-import-rules-"));
    const config = JSON.parse(readFileSync(join(ROOT, "biome.json"), "utf8"));
    delete config.$schema;
    config.vcs = { enabled: false };
    writeFileSync(join(dir, "biome.json"), JSON.stringify(config));
    for (const [path, text] of Object.entries(PLANTED)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    // Biome exits 1 when it reports errors: the report is what the tests read.
    const { stdout } = await promisify(execFile)(
      BIOME,
      ["lint", "--reporter=json", "--max-diagnostics=none", "."],
      {
        cwd: dir,
      },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
    diagnostics = (JSON.parse(stdout) as { diagnostics: Diagnostic[] }).diagnostics;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps src/config at the floor", () => {
    assertRestricted("src/config/settings.ts", 1, /src\/config and src\/observability are the floor/);
  });

  it("keeps src/contracts a leaf", () => {
    assertRestricted("src/contracts/resources.ts", 1, /src\/contracts is a leaf/);
  });

  it("keeps the store below the domain and every part, type-only imports included, at any depth", () => {
    assertRestricted("src/store/users.ts", 1, /src\/store imports nothing above it/);
    assertRestricted("src/store/cimd.ts", 1, /src\/store imports nothing above it/);
    assertRestricted("src/store/migrations/001.ts", 1, /src\/store imports nothing above it/);
  });

  it("keeps migrations frozen: no live store code, config nor database.ts beyond StoreKind", () => {
    assertRestricted("src/store/migrations/030-live.ts", 1, /a migration imports only kysely/);
    assertRestricted("src/store/migrations/031-opens.ts", 1, /only the StoreKind type from database\.ts/);
    assertRestricted("src/store/migrations/032-config.ts", 1, /a migration imports only kysely/);
  });

  it("keeps the domain and auth below the parts", () => {
    assertRestricted("src/domain/facts.ts", 1, /src\/domain and src\/auth sit below/);
    assertRestricted("src/auth/verify.ts", 1, /src\/domain and src\/auth sit below/);
  });

  it("keeps the parts below the composition root, and gateway and mcp as entry points", () => {
    assertRestricted("src/rest/start.ts", 1, /no part imports service\.ts or cli/);
    assertRestricted("src/scanner/proxy.ts", 1, /gateway and mcp are started by service\.ts alone/);
    assertRestricted("src/service-status.ts", 1, /the composition root never imports the CLI/);
  });

  it("lets the MCP servers reach the REST API over HTTP only", () => {
    assertRestricted("src/mcp/tools.ts", 1, /reach the REST API over HTTP only/);
    assertRestricted("src/mcp/analysis/tool.ts", 1, /reach the REST API over HTTP only/);
  });

  it("reports an import cycle", () => {
    const cycle = [...reported("src/domain/a.ts"), ...reported("src/domain/b.ts")];
    assert.deepEqual(
      cycle.map((d) => d.category),
      ["lint/suspicious/noImportCycles", "lint/suspicious/noImportCycles"],
    );
  });

  it("allows the imports the layout allows", () => {
    for (const path of [
      "src/store/s.ts",
      "src/store/metrics-use.ts",
      "src/store/contract-use.ts",
      "src/store/migrations/033-frozen.ts",
      "src/mcp/contract-use.ts",
      "src/contracts/platform.ts",
      "src/domain/passwords.ts",
      "src/idp/grant.ts",
      "src/rest/route.ts",
      "src/gateway/app.ts",
      "src/service.ts",
      "src/cli/main.ts",
    ]) {
      assert.deepEqual(reported(path), [], `${path} imports only what the layout allows`);
    }
  });
});
