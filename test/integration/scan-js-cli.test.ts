/**
 * `imaging scan` on JavaScript/TypeScript sources of a monorepo locked by npm: each file's lodash is the
 * copy Node.js would load from its folder (nested node_modules), and a file that does not parse is a
 * warning naming it while the scan goes on.
 */
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { AnalysisDocument } from "../../src/scanner/analysis-document.ts";
import { runCli } from "../support/cli.ts";
import { twoLodashMonorepo } from "../support/js-subjects.ts";
import { workspaceMonorepo } from "../support/scan-subjects.ts";

describe("imaging scan on a monorepo's JavaScript and TypeScript sources", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(os.tmpdir(), "imaging-scan-js-"));
    cpSync(twoLodashMonorepo(), dir, { recursive: true });
    const write = (file: string, text: string) => {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    };
    write(
      "packages/api/src/merge.js",
      `const _ = require("lodash");\nexports.combine = (a, b) => _.merge(a, b);\n`,
    );
    write(
      "packages/web/src/server.ts",
      `import express, { type Request } from "express";\nimport { template } from "lodash";\n` +
        `export function start(): void {\n  const app = express();\n  app.get("/", (req: Request, res) => res.send(template("<%= x %>")({ x: req.path })));\n}\n`,
    );
    write("packages/web/src/broken.js", `const ok = require("lodash");\nfunction (\n`);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("names each file's lodash at the version its location resolves, and warns about the broken file", async () => {
    const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8"));
    const nested = ["packages/api/node_modules/lodash", "packages/web/node_modules/lodash"].filter(
      (path) => lock.packages[path],
    );
    assert.equal(nested.length, 1, "npm nests one of the two lodash copies under its workspace");
    const output = join(dir, "analysis.json");
    const result = await runCli(["scan", dir, "--app", "two", "--output", output, "--json", "--offline"]);
    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as {
      warnings: { file: string; line?: number; message: string }[];
      code: { language: string; precision: string; files: number; unreadable: number }[];
    };
    // the summary says what was read and at which precision: merge.js and server.ts read, broken.js not
    assert.deepEqual(summary.code, [
      { language: "javascript", precision: "source, member level", files: 2, unreadable: 1 },
    ]);
    assert.deepEqual(
      summary.warnings.map((w) => `${w.file}:${w.line}`),
      ["packages/web/src/broken.js:2"],
    );
    assert.match(summary.warnings[0]?.message ?? "", /does not parse/);
    const document = JSON.parse(readFileSync(output, "utf8")) as AnalysisDocument;
    const lines = document.references.map((r) => `${r.from.fullName} -> ${r.to}`).sort();
    assert.deepEqual(lines, [
      "[packages/api/src/merge.js] -> npm:lodash@4.17.15:lodash",
      "[packages/api/src/merge.js].combine -> npm:lodash@4.17.15:lodash.merge",
      `[packages/web/src/server.ts] -> npm:express@4.21.2:express`,
      "[packages/web/src/server.ts] -> npm:lodash@4.17.21:lodash",
      "[packages/web/src/server.ts].start -> npm:express@4.21.2:express",
      "[packages/web/src/server.ts].start -> npm:express@4.21.2:express.Request:type",
      "[packages/web/src/server.ts].start -> npm:lodash@4.17.21:lodash.template",
    ]);
    const packages = new Set(document.packages.map((p) => `${p.name}@${p.version}`));
    for (const object of document.objects) {
      const [, nameAtVersion] = /^npm:(.+?@[^:]+):/.exec(object.id) ?? [];
      assert.ok(
        nameAtVersion && packages.has(nameAtVersion),
        `${object.id} is one of the analysis's packages`,
      );
    }
  });

  it("pnpm workspaces: each file gets what its importer declares, nothing it does not", async () => {
    const pnpmDir = mkdtempSync(join(os.tmpdir(), "imaging-scan-js-pnpm-"));
    try {
      cpSync(workspaceMonorepo().pnpm, pnpmDir, { recursive: true });
      writeFileSync(
        join(pnpmDir, "packages/api/index.js"),
        `const _ = require("lodash");\nconst ms = require("ms");\nexports.wait = (t) => _.delay(() => {}, ms(t));\n`,
      );
      // web declares minimist and the api workspace, not lodash: pnpm does not link lodash there.
      writeFileSync(
        join(pnpmDir, "packages/web/index.mjs"),
        `import minimist from "minimist";\nimport { wait } from "@shop/api";\nimport _ from "lodash";\n` +
          `export function main(argv) { wait(minimist(argv).t); return _.noop(); }\n`,
      );
      const output = join(pnpmDir, "analysis.json");
      const result = await runCli([
        "scan",
        pnpmDir,
        "--app",
        "shop",
        "--output",
        output,
        "--json",
        "--offline",
      ]);
      assert.equal(result.code, 0, result.stderr);
      const document = JSON.parse(readFileSync(output, "utf8")) as AnalysisDocument;
      assert.deepEqual(document.references.map((r) => `${r.from.fullName} -> ${r.to}`).sort(), [
        "[packages/api/index.js] -> npm:lodash@4.17.15:lodash",
        "[packages/api/index.js] -> npm:ms@2.1.1:ms",
        "[packages/api/index.js].wait -> npm:lodash@4.17.15:lodash.delay",
        "[packages/api/index.js].wait -> npm:ms@2.1.1:ms",
        "[packages/web/index.mjs] -> npm:minimist@1.2.5:minimist",
        "[packages/web/index.mjs].main -> npm:minimist@1.2.5:minimist",
      ]);
    } finally {
      rmSync(pnpmDir, { recursive: true, force: true });
    }
  });

  it("a package installed with its own type declarations gives its functions' signatures", async () => {
    const app = mkdtempSync(join(os.tmpdir(), "imaging-scan-js-types-"));
    try {
      // fflate 0.8.3 as npm installed it for this repository (its own lib/index.d.ts), copied beside the app.
      const installed = fileURLToPath(new URL("../../node_modules/fflate", import.meta.url));
      cpSync(installed, join(app, "node_modules", "fflate"), { recursive: true });
      writeFileSync(
        join(app, "package.json"),
        JSON.stringify({ name: "zipper", dependencies: { fflate: "0.8.3" } }),
      );
      writeFileSync(
        join(app, "package-lock.json"),
        JSON.stringify({
          name: "zipper",
          lockfileVersion: 3,
          packages: {
            "": { name: "zipper", dependencies: { fflate: "0.8.3" } },
            "node_modules/fflate": { version: "0.8.3" },
          },
        }),
      );
      writeFileSync(
        join(app, "zip.mjs"),
        `import { gzipSync, strToU8 } from "fflate";\nimport * as ff from "fflate";\n` +
          `export const pack = (text) => gzipSync(strToU8(text), { level: 9 });\nexport const z = () => new ff.Gzip();\n`,
      );
      const output = join(app, "analysis.json");
      const result = await runCli([
        "scan",
        app,
        "--app",
        "zipper",
        "--output",
        output,
        "--json",
        "--offline",
      ]);
      assert.equal(result.code, 0, result.stderr);
      const document = JSON.parse(readFileSync(output, "utf8")) as AnalysisDocument;
      const byName = new Map(document.objects.map((o) => [o.fullName, o]));
      assert.equal(byName.get("fflate.gzipSync")?.mangling, "gzipSync(data, opts)");
      assert.equal(byName.get("fflate.strToU8")?.mangling, "strToU8(str, latin1)");
      assert.equal(byName.get("fflate.Gzip")?.typeId, "JS_CLASS");
      assert.equal(byName.get("fflate.Gzip")?.mangling, "");
      assert.equal(byName.get("fflate")?.mangling, "");
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });
});
