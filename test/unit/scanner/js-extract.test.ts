/**
 * The JavaScript/TypeScript extractor on each shape of package use the issue names, file by file, and
 * linked through the application's own modules (src/scanner/code/js).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import { extractSource } from "../../../src/scanner/code/js/extract-file.ts";
import { defaultWorkerCount } from "../../../src/scanner/code/js/extract-files.ts";
import { boundedId, extractJavaScript } from "../../../src/scanner/code/js/index.ts";
import { signaturesOf } from "../../../src/scanner/code/js/signatures.ts";
import type { InventoryPackage } from "../../../src/scanner/inventory.ts";

/** `from -> package.member:use` lines of one source file, sorted. */
function usesOf(source: string, file = "src/app.ts"): string[] {
  const facts = extractSource(file, source);
  assert.equal(facts.error, undefined, JSON.stringify(facts.error));
  return facts.uses
    .map((u) => {
      const where = u.from.qualifiedName === "" ? "<module>" : u.from.qualifiedName;
      const what =
        u.value.kind === "package"
          ? [u.value.name, ...u.value.path].join(".")
          : `local:${u.value.specifier}#${u.value.path.join(".")}`;
      return `${where} -> ${what}:${u.use}`;
    })
    .sort();
}

describe("extracting package uses from one file", () => {
  it("ES module imports: named, default, namespace, aliases; the import itself is a module use", () => {
    const uses = usesOf(`
      import { merge, get as pick } from "lodash";
      import _ from "lodash";
      import * as L from "lodash";
      export function combine(a, b) { return merge(a, pick(b, "x")); }
      function twice() { _.template("x"); L.set({}, "a", 1); }
    `);
    assert.deepEqual(uses, [
      "<module> -> lodash:import",
      "<module> -> lodash:import",
      "<module> -> lodash:import",
      "combine -> lodash.get:call",
      "combine -> lodash.merge:call",
      "twice -> lodash.set:call",
      "twice -> lodash.template:call",
    ]);
  });

  it("CommonJS: require, inline member access, destructuring, deep imports, re-assignment", () => {
    const uses = usesOf(
      `
      const _ = require("lodash");
      const { merge, get: g } = require("lodash");
      const fp = require("lodash/fp");
      const unset = require("lodash/unset");
      let later;
      later = require("express");
      module.exports.handler = function handler(req) {
        require("lodash").zipObjectDeep([], []);
        _.set(req, "a", 1);
        merge({}, g(req, "b"));
        fp.map(String);
        unset(req, "a");
        const router = later.Router();
        return router;
      };
    `,
      "lib/handler.js",
    );
    assert.deepEqual(
      uses.filter((u) => !u.endsWith(":import")),
      [
        "handler -> express.Router:call",
        "handler -> lodash.fp.map:call",
        "handler -> lodash.get:call",
        "handler -> lodash.merge:call",
        "handler -> lodash.set:call",
        "handler -> lodash.unset:call",
        "handler -> lodash.zipObjectDeep:call",
      ],
    );
  });

  it("a local variable or parameter that shadows an import is not the package", () => {
    const uses = usesOf(`
      import _ from "lodash";
      function own(_) { return _.merge({}, {}); }
      function block() { { const _ = { merge() {} }; _.merge(); } return _.get({}, "a"); }
      function hoisted() { _.set(); var _ = {}; }
      function caught() { try {} catch (_) { _.pick(); } }
    `);
    assert.deepEqual(
      uses.filter((u) => !u.endsWith(":import")),
      ["block -> lodash.get:call"],
    );
  });

  it("TypeScript: import x = require(), type-only imports and types as type uses, classes and methods", () => {
    const uses = usesOf(`
      import express = require("express");
      import type { Request } from "express";
      import { type Response, Router } from "express";
      export class Api extends Router {
        handle(req: Request, res: Response): express.NextFunction | undefined {
          const app = express();
          app.use(express.json());
          return undefined;
        }
        field = new express.Router();
      }
    `);
    assert.deepEqual(uses, [
      "<module> -> express:import",
      "<module> -> express:import",
      "Api -> express.Router:extends",
      "Api.field -> express.Router:new",
      "Api.handle -> express.NextFunction:type",
      "Api.handle -> express.Request:type",
      "Api.handle -> express.Response:type",
      "Api.handle -> express.json:call",
      "Api.handle -> express:call",
    ]);
  });

  it("TypeScript declarations' names, keys and parameters are not uses of an import of the same name", () => {
    const uses = usesOf(`
      import { merge, get } from "lodash";
      interface Options { merge: boolean; get(get: string): void; [merge: string]: unknown }
      type Fn = (merge: string) => void;
      type Ctor = new (get: number) => Options;
      declare function apply(merge: string): void;
      abstract class Base { abstract run(merge: string): void }
      function isMerge<get>(merge: unknown): merge is string { return true; }
      export const ok = merge;
    `);
    assert.deepEqual(uses, ["<module> -> lodash.merge:read", "<module> -> lodash:import"]);
  });

  it("compiled output: TypeScript and Babel interop helpers, (0, x.y)() calls, .call/.apply", () => {
    const uses = usesOf(
      `
      "use strict";
      var __importDefault = (this && this.__importDefault) || function (mod) { return mod; };
      Object.defineProperty(exports, "__esModule", { value: true });
      const lodash_1 = __importDefault(require("lodash"));
      const lodash_2 = require("lodash");
      var _express = _interopRequireDefault(require("express"));
      function run(o) {
        lodash_1.default.cloneDeep(o);
        (0, lodash_2.defaultsDeep)(o, {});
        lodash_1.default.merge.apply(null, [o]);
        return _express.default.Router();
      }
      exports.run = run;
    `,
      "lib/run.js",
    );
    assert.deepEqual(
      uses.filter((u) => !u.endsWith(":import")),
      [
        "run -> express.Router:call",
        "run -> lodash.cloneDeep:call",
        "run -> lodash.defaultsDeep:call",
        "run -> lodash.merge:call",
      ],
    );
  });

  it("builtins and node: modules are not packages; dynamic import() is", () => {
    const uses = usesOf(`
      import fs from "node:fs";
      import path from "path";
      async function load() { const m = await import("lodash"); fs.readFileSync(path.join("a")); return m.default.merge; }
    `);
    assert.deepEqual(uses, ["load -> lodash.merge:read", "load -> lodash:import"]);
  });

  it("a CommonJS file may return at its top level", () => {
    const uses = usesOf(
      `if (typeof Symbol !== "function") { return; }\nrequire("lodash").noop();\n`,
      "lib/shim.js",
    );
    assert.deepEqual(uses, ["<module> -> lodash.noop:call", "<module> -> lodash:import"]);
  });

  it("a file that does not parse reports its line and contributes nothing", () => {
    const facts = extractSource("src/broken.js", "const ok = 1;\nconst = require('lodash');\n");
    assert.equal(facts.error?.line, 2);
    assert.deepEqual(facts.uses, []);
  });
});

describe("linking files of an application", () => {
  const root = mkdtempSync(join(os.tmpdir(), "imaging-js-extract-"));
  after(() => rmSync(root, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  };
  const pkg = (name: string, version: string): InventoryPackage => ({
    ecosystem: "npm",
    name,
    version,
    dev: false,
    scope: "production",
    direct: true,
    source: "package-lock.json",
  });

  it("re-exports through the application's modules reach the package, at the version each location resolves", async () => {
    write("package.json", JSON.stringify({ name: "shop", workspaces: ["packages/*"] }));
    write(
      "package-lock.json",
      JSON.stringify({
        lockfileVersion: 3,
        packages: {
          "": { workspaces: ["packages/*"] },
          "packages/api": { dependencies: { lodash: "4.17.15" } },
          "packages/web": { dependencies: { lodash: "4.17.21" } },
          "node_modules/lodash": { version: "4.17.21" },
          "packages/api/node_modules/lodash": { version: "4.17.15" },
          "node_modules/@shop/api": { resolved: "packages/api", link: true },
        },
      }),
    );
    write("packages/api/package.json", JSON.stringify({ name: "@shop/api" }));
    write("packages/web/package.json", JSON.stringify({ name: "@shop/web" }));
    write("packages/api/src/util.ts", `export { merge } from "lodash"; export * from "lodash/fp";`);
    write(
      "packages/api/src/own.js",
      `const _ = require("lodash"); module.exports = { pick: _.pick, own() {} };`,
    );
    write(
      "packages/api/src/index.ts",
      `import { merge, flow } from "./util.js"; import own from "./own";
       export function run() { merge({}, {}); flow([]); own.pick({}, "a"); own.own(); }`,
    );
    write(
      "packages/web/src/page.jsx",
      `import _ from "lodash"; export const Page = () => <div>{_.escape("x")}</div>;`,
    );
    write("packages/web/src/vendor.js", `${"var a=1;".repeat(2000)}`);
    write("packages/web/src/bad.js", "function (");
    // A template shipped with the package: its own package.json, no lockfile.
    write("templates/site/package.json", JSON.stringify({ name: "site" }));
    write("templates/site/index.js", `require("lodash").template("x");`);
    const files = [
      "package.json",
      "package-lock.json",
      "packages/api/package.json",
      "packages/web/package.json",
      "packages/api/src/util.ts",
      "packages/api/src/own.js",
      "packages/api/src/index.ts",
      "packages/web/src/page.jsx",
      "packages/web/src/vendor.js",
      "packages/web/src/bad.js",
      "templates/site/package.json",
      "templates/site/index.js",
    ];
    const result = await extractJavaScript(root, files, [pkg("lodash", "4.17.15"), pkg("lodash", "4.17.21")]);
    const lines = result.references.map((r) => `${r.from.fullName} -> ${r.to}`).sort();
    assert.deepEqual(lines, [
      "[packages/api/src/index.ts].run -> npm:lodash@4.17.15:lodash.fp.flow",
      "[packages/api/src/index.ts].run -> npm:lodash@4.17.15:lodash.merge",
      "[packages/api/src/index.ts].run -> npm:lodash@4.17.15:lodash.pick",
      "[packages/api/src/own.js] -> npm:lodash@4.17.15:lodash",
      "[packages/api/src/own.js] -> npm:lodash@4.17.15:lodash.pick",
      "[packages/api/src/util.ts] -> npm:lodash@4.17.15:lodash",
      "[packages/web/src/page.jsx] -> npm:lodash@4.17.21:lodash",
      "[packages/web/src/page.jsx].Page -> npm:lodash@4.17.21:lodash.escape",
    ]);
    const merge = result.objects.find((o) => o.id === "npm:lodash@4.17.15:lodash.merge");
    assert.deepEqual(merge, {
      id: "npm:lodash@4.17.15:lodash.merge",
      package: "npm:lodash",
      name: "merge",
      fullName: "lodash.merge",
      mangling: "",
      type: "JavaScript Function",
      typeId: "JS_FUNCTION",
      version: "4.17.15",
    });
    // Every object says the version it belongs to: the one its importing file resolves.
    assert.deepEqual([...new Set(result.objects.map((o) => `${o.id.split(":")[1]} ${o.version}`))].sort(), [
      "lodash@4.17.15 4.17.15",
      "lodash@4.17.21 4.17.21",
    ]);
    assert.deepEqual(
      result.warnings.map((w) => `${w.file}:${w.line}`),
      ["packages/web/src/bad.js:1"],
    );
    assert.match(result.warnings[0]?.message ?? "", /does not parse/);
    assert.equal(result.stats.failed, 1);
    assert.equal(result.stats.skipped, 2, "the minified file and the template");
  });
});

describe("exports of one file", () => {
  it("compiled re-exports: __exportStar (bare and through tslib), Object.defineProperty getters, module.exports", () => {
    const facts = extractSource(
      "lib/index.js",
      `const tslib_1 = require("tslib");
       tslib_1.__exportStar(require("./util"), exports);
       __exportStar(require("lodash/fp"), exports);
       var lodash_1 = require("lodash");
       Object.defineProperty(exports, "merge", { enumerable: true, get: function () { return lodash_1.merge; } });
       exports.get = lodash_1.get;
       function own() {}
       exports.own = own;`,
    );
    assert.deepEqual(facts.exports.stars, [
      { kind: "local", specifier: "./util", path: [] },
      { kind: "package", name: "lodash", path: ["fp"] },
    ]);
    assert.deepEqual(Object.keys(facts.exports.named).sort(), ["get", "merge"]);
    assert.deepEqual(facts.exports.named.merge, {
      kind: "package",
      name: "lodash",
      path: ["merge"],
      interop: false,
    });
    assert.deepEqual(facts.exports.own, ["own"]);
  });
});

describe("worker threads for the extraction", () => {
  const root = mkdtempSync(join(os.tmpdir(), "imaging-js-workers-"));
  after(() => rmSync(root, { recursive: true, force: true }));

  it("only for a large input, and only as many as there are idle extra cores", () => {
    const files = Array.from({ length: 40 }, (_, i) => `f${i}.js`);
    for (const [i, file] of files.entries()) {
      writeFileSync(join(root, file), "x".repeat(i < 39 ? 16 : 5 * 1024 * 1024));
    }
    const idle2 = { cores: 2, load: 0.2 };
    assert.equal(defaultWorkerCount(root, files.slice(0, 39), idle2), 0, "small input");
    assert.equal(defaultWorkerCount(root, files.slice(30), idle2), 0, "few files, even large ones");
    assert.equal(defaultWorkerCount(root, files, idle2), 1, "2 cores: this thread and one worker");
    assert.equal(defaultWorkerCount(root, files, { cores: 8, load: 1 }), 3, "at most three workers");
    assert.equal(defaultWorkerCount(root, files, { cores: 2, load: 1.5 }), 0, "no idle core");
  });
});

describe("signatures from a package's type declarations", () => {
  it("export =, a namespace merged with it, named exports, rest parameters, `this` left out", () => {
    const signatures = signaturesOf(
      `declare function main(a: number, ...rest: string[]): void;
       declare function main(a: string): void;
       declare namespace main { function sub(x?: string, { deep }?: { deep: boolean }): void; const v: number }
       export = main;`,
      "index.d.ts",
    );
    assert.deepEqual(Object.fromEntries(signatures), { "": "main(a, ...rest)", sub: "sub(x, options)" });
    const named = signaturesOf(
      `declare function f(this: Window, a: number = 1): void; export { f as g }; export declare function h(): void;`,
      "index.d.ts",
    );
    assert.deepEqual(Object.fromEntries(named), { g: "g(a)", h: "h()" });
  });
});

describe("object ids", () => {
  it("stay within the analysis document's 1,024 characters, distinct and stable", () => {
    const short = "JS_FUNCTION:[src/a.js].f";
    assert.equal(boundedId(short), short);
    const long = `JS_FUNCTION:[${"deep/".repeat(300)}a.js].f`;
    const other = `${long}g`;
    assert.equal(boundedId(long).length, 1024);
    assert.equal(boundedId(long), boundedId(long));
    assert.notEqual(boundedId(long), boundedId(other));
  });
});
