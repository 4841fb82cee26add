import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
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
