/**
 * The application's package.json: its dependency maps and its `workspaces` globs, expanded against a
 * small folder tree (patterns are the user's text turned into regular expressions and walks).
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseJson } from "../../../src/scanner/input-files.ts";
import { expandWorkspaces, manifestOf } from "../../../src/scanner/npm/manifest.ts";
import { expectScanInputError, utf8 } from "./kit.ts";

const FILE = "package.json";
const tree = mkdtempSync(join(tmpdir(), "fuzz-workspaces-"));
for (const folder of [
  "packages/a",
  "packages/b/nested",
  "apps/web",
  "apps/.hidden",
  "node_modules/x",
  "tools",
])
  mkdirSync(join(tree, folder), { recursive: true });

export function fuzz(data: Buffer): void {
  let json: unknown;
  try {
    json = parseJson(utf8(data), FILE);
  } catch (error) {
    expectScanInputError(error, FILE);
    return;
  }
  const manifest = manifestOf(json, "");
  expandWorkspaces(tree, manifest.workspaces);
}
