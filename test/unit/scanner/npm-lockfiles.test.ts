/** The shapes of npm, yarn and pnpm lockfiles the real subjects (test/integration/scan-npm-inputs) may not show. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ScanInputError } from "../../../src/scanner/inventory.ts";
import type { Manifest } from "../../../src/scanner/npm/manifest.ts";
import { readPackageLock } from "../../../src/scanner/npm/package-lock.ts";
import { readPnpmLock } from "../../../src/scanner/npm/pnpm-lock.ts";
import { readYarnLock } from "../../../src/scanner/npm/yarn-lock.ts";

const brief = (read: { packages: { name: string; version: string; dev: boolean; direct: boolean }[] }) =>
  read.packages.map((p) => `${p.name}@${p.version}${p.dev ? " dev" : ""}${p.direct ? " direct" : ""}`).sort();

function inputError(run: () => unknown): { file: string; line: number | undefined; reason: string } {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ScanInputError, String(error));
    return { file: error.file, line: error.line, reason: error.reason };
  }
  assert.fail("no ScanInputError");
}

const manifest = (production: Record<string, string>, dev: Record<string, string> = {}): Manifest => ({
  folder: "",
  production,
  dependencies: production,
  optional: {},
  peer: {},
  dev,
  workspaces: [],
});

describe("package-lock.json", () => {
  it("v3: aliases are the real package, links and workspace folders are the application", () => {
    const lock = {
      lockfileVersion: 3,
      packages: {
        "": { dependencies: { "str-old": "npm:string-width@^4", web: "*" }, devDependencies: { tap: "1" } },
        "node_modules/str-old": { name: "string-width", version: "4.2.3" },
        "node_modules/web": { resolved: "packages/web", link: true },
        "packages/web": { name: "web", version: "1.0.0" },
        "node_modules/tap": { version: "1.0.0", dev: true },
        "node_modules/tap/node_modules/@scope/x": { version: "2.0.0", dev: true },
        "node_modules/gitdep": { version: "github:user/repo#abc" },
      },
    };
    const read = readPackageLock(JSON.stringify(lock, null, 2), "package-lock.json");
    assert.deepEqual(brief(read), [
      "@scope/x@2.0.0 dev",
      "string-width@4.2.3 direct",
      "tap@1.0.0 dev direct",
    ]);
    assert.deepEqual(read.warnings, [
      {
        file: "package-lock.json",
        line: 33,
        message: 'node_modules/gitdep: version "github:user/repo#abc" is not a registry version, skipped',
      },
    ]);
  });

  it("v1: nested dependencies, npm: aliases, dev flags, direct ones from package.json", () => {
    const lock = {
      lockfileVersion: 1,
      dependencies: {
        a: { version: "1.0.0", dependencies: { b: { version: "2.0.0" } } },
        b: { version: "1.0.0", dev: true },
        c: { version: "npm:left-pad@1.3.0" },
      },
    };
    const read = readPackageLock(JSON.stringify(lock), "package-lock.json", () => new Set(["a", "c"]));
    assert.deepEqual(brief(read), ["a@1.0.0 direct", "b@1.0.0 dev", "b@2.0.0", "left-pad@1.3.0 direct"]);
  });

  it("malformed or unsupported: the file, the line and why", () => {
    assert.deepEqual(
      inputError(() =>
        readPackageLock('{\n  "lockfileVersion": 3,\n  "packages": {\n', "web/package-lock.json"),
      ),
      {
        file: "web/package-lock.json",
        line: 4,
        reason: "not valid JSON: Expected property name or '}'",
      },
    );
    assert.deepEqual(
      inputError(() => readPackageLock('{\n  "name": "x",\n  "lockfileVersion": 4\n}', "package-lock.json")),
      { file: "package-lock.json", line: 3, reason: "unsupported lockfileVersion 4 (1, 2 and 3 are read)" },
    );
    assert.equal(inputError(() => readPackageLock("", "package-lock.json")).reason, "is empty");
  });
});

describe("yarn.lock", () => {
  const classic = `# yarn lockfile v1


"@babel/code@^7.0.0", "@babel/code@^7.1.0":
  version "7.1.0"
  dependencies:
    ms "^2.0.0"

"cjs-width@npm:string-width@^4":
  version "4.2.3"

ms@^2.0.0:
  version "2.1.3"

mocha@^10:
  version "10.2.0"
  dependencies:
    ms "^2.0.0"

stale@^1:
  version "1.0.0"
`;

  it("v1: descriptors resolve the graph; dev is what only devDependencies reach", () => {
    const read = readYarnLock(classic, "yarn.lock", [
      manifest({ "@babel/code": "^7.0.0", "cjs-width": "npm:string-width@^4" }, { mocha: "^10" }),
    ]);
    assert.deepEqual(brief(read), [
      "@babel/code@7.1.0 direct",
      "mocha@10.2.0 dev direct",
      "ms@2.1.3",
      "stale@1.0.0",
      "string-width@4.2.3 direct",
    ]);
  });

  it("v1 without its package.json: every entry, with a warning that dev cannot be told", () => {
    const read = readYarnLock(classic, "yarn.lock", []);
    assert.equal(read.packages.length, 5);
    assert.ok(read.packages.every((p) => !p.dev));
    assert.match(read.warnings[0]?.message ?? "", /no package.json beside the lockfile/);
  });

  it("Berry: npm: descriptors, patches as their package, workspaces left out", () => {
    const berry = `__metadata:
  version: 8
  cacheKey: 10c0

"app@workspace:.":
  version: 0.0.0-use.local
  resolution: "app@workspace:."
  dependencies:
    resolve: "npm:^1.22.0"
    web: "workspace:packages/web"
  languageName: unknown
  linkType: soft

"web@workspace:packages/web":
  version: 0.0.0-use.local
  resolution: "web@workspace:packages/web"
  languageName: unknown
  linkType: soft

"resolve@patch:resolve@npm%3A^1.22.0#optional!builtin<compat/resolve>":
  version: 1.22.8
  resolution: "resolve@patch:resolve@npm%3A1.22.8#optional!builtin<compat/resolve>::version=1.22.8&hash=c3c19d"
  languageName: node
  linkType: hard

"resolve@npm:^1.22.0":
  version: 1.22.8
  resolution: "resolve@npm:1.22.8"
  languageName: node
  linkType: hard
`;
    const read = readYarnLock(berry, "yarn.lock", [
      manifest({ resolve: "^1.22.0", web: "workspace:packages/web" }),
    ]);
    // The patched entry and the one it patches are both resolve 1.22.8 (the scan dedupes them).
    assert.deepEqual(brief(read), ["resolve@1.22.8", "resolve@1.22.8 direct"]);
  });

  it("malformed: the line the parser stopped at; merge conflicts refused", () => {
    const broken = inputError(() =>
      readYarnLock('# yarn lockfile v1\n\na@^1:\n  version "1.0.0"\n  resolved {\n', "yarn.lock", []),
    );
    assert.equal(broken.line, 5);
    // after several blank lines too (@yarnpkg/lockfile miscounts them)
    const later = '# yarn lockfile v1\n\n\na@^1:\n  version "1"\n\n\nb@^1:\n  version {\n';
    assert.equal(inputError(() => readYarnLock(later, "yarn.lock", [])).line, 9);
    assert.match(broken.reason, /^not a valid yarn v1 lockfile: /);
    const berry = inputError(() =>
      readYarnLock('__metadata:\n  version: 8\n\n"a@npm:^1":\n  version: 1.0.0\n  x: [\n', "yarn.lock", []),
    );
    assert.equal(berry.line, 7);
    const conflict = inputError(() =>
      readYarnLock(
        '# yarn lockfile v1\n\n<<<<<<< HEAD\na@^1:\n  version "1.0.0"\n=======\na@^1:\n  version "1.1.0"\n>>>>>>> x\n',
        "yarn.lock",
        [],
      ),
    );
    assert.deepEqual([conflict.line, conflict.reason], [3, "has unresolved merge conflicts"]);
  });
});

describe("pnpm-lock.yaml", () => {
  it("6.0: /name@version(peers) keys, aliases, links, dev reached only from devDependencies", () => {
    const v6 = `lockfileVersion: '6.0'

dependencies:
  react-dom:
    specifier: ^18
    version: 18.2.0(react@18.2.0)
  sw:
    specifier: npm:string-width@^4
    version: /string-width@4.2.3
  local:
    specifier: link:../local
    version: link:../local

devDependencies:
  jest:
    specifier: ^29
    version: 29.0.0

packages:

  /react-dom@18.2.0(react@18.2.0):
    resolution: {integrity: sha512-x}
    dependencies:
      react: 18.2.0
    dev: false

  /react@18.2.0:
    resolution: {integrity: sha512-x}
    dev: false

  /string-width@4.2.3:
    resolution: {integrity: sha512-x}
    dev: false

  /jest@29.0.0:
    resolution: {integrity: sha512-x}
    dependencies:
      react: 18.2.0
    dev: true
`;
    assert.deepEqual(brief(readPnpmLock(v6, "pnpm-lock.yaml")), [
      "jest@29.0.0 dev direct",
      "react-dom@18.2.0 direct",
      "react@18.2.0",
      "string-width@4.2.3 direct",
    ]);
  });

  it("9.0: importers of every workspace, snapshots for the graph", () => {
    const v9 = `lockfileVersion: '9.0'

importers:
  .:
    devDependencies:
      typescript:
        specifier: ^5
        version: 5.4.5
  packages/api:
    dependencies:
      '@scope/web':
        specifier: workspace:*
        version: link:../web
      sw:
        specifier: npm:string-width@^4
        version: string-width@4.2.3

packages:
  typescript@5.4.5:
    resolution: {integrity: sha512-x}
  string-width@4.2.3:
    resolution: {integrity: sha512-x}

snapshots:
  typescript@5.4.5: {}
  string-width@4.2.3: {}
`;
    assert.deepEqual(brief(readPnpmLock(v9, "pnpm-lock.yaml")), [
      "string-width@4.2.3 direct",
      "typescript@5.4.5 dev direct",
    ]);
  });

  it("malformed or too old: the file, the line and why", () => {
    assert.deepEqual(
      inputError(() => readPnpmLock("lockfileVersion: 5.4\n", "pnpm-lock.yaml")),
      {
        file: "pnpm-lock.yaml",
        line: 1,
        reason: "unsupported lockfileVersion 5.4 (6 and 9 are read)",
      },
    );
    const broken = inputError(() =>
      readPnpmLock("lockfileVersion: '9.0'\nimporters:\n  .: [a, b\nsnapshots:\n", "pnpm-lock.yaml"),
    );
    assert.equal(broken.file, "pnpm-lock.yaml");
    assert.match(broken.reason, /^not valid YAML: /);
    assert.equal(typeof broken.line, "number");
  });
});
