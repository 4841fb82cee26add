import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { expandWorkspaces } from "../../../src/scanner/npm/manifest.ts";
import { walkFiles } from "../../../src/scanner/walk.ts";

describe("walkFiles", () => {
  const root = mkdtempSync(join(tmpdir(), "imaging-walk-"));
  after(() => rmSync(root, { recursive: true, force: true }));

  it("lists the files of the tree, skipping installed packages, VCS data, build outputs and fixtures", () => {
    const files = [
      "package-lock.json",
      "web/yarn.lock",
      "web/src/index.ts",
      "node_modules/lodash/package-lock.json",
      "web/node_modules/.package-lock.json",
      ".git/config",
      "dist/bom.json",
      "target/classes/pom.xml",
      "test/fixtures/old-app/package-lock.json",
      "examples/demo/pnpm-lock.yaml",
    ];
    for (const file of files) {
      mkdirSync(join(root, file, ".."), { recursive: true });
      writeFileSync(join(root, file), "{}");
    }
    symlinkSync(root, join(root, "web", "loop"));
    assert.deepEqual(walkFiles(root, root), ["package-lock.json", "web/src/index.ts", "web/yarn.lock"]);
  });
});

describe("expandWorkspaces", () => {
  const root = mkdtempSync(join(tmpdir(), "imaging-workspaces-"));
  after(() => rmSync(root, { recursive: true, force: true }));

  it("expands npm/yarn workspace patterns, exclusions included, never into node_modules", () => {
    for (const folder of [
      "packages/a",
      "packages/b",
      "packages/legacy",
      "apps/web/admin",
      "apps/node_modules/x",
      "tools/cli",
      "other",
    ]) {
      mkdirSync(join(root, folder), { recursive: true });
    }
    const folders = expandWorkspaces(root, [
      "packages/*",
      "apps/**",
      "./tools/cli",
      "!packages/legacy",
      "missing/*",
    ]);
    assert.deepEqual([...folders].sort(), [
      "apps",
      "apps/web",
      "apps/web/admin",
      "packages/a",
      "packages/b",
      "tools/cli",
    ]);
  });
});
