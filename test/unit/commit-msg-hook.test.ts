import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";

const HOOK = new URL("../../.githooks/commit-msg", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "commit-msg-"));

/** Runs the hook as git does (with the message file) and returns its status and what it printed. */
function check(message: string) {
  const file = join(dir, "COMMIT_EDITMSG");
  writeFileSync(file, message);
  const run = spawnSync("sh", [HOOK, file], { encoding: "utf8" });
  return { status: run.status, stderr: run.stderr };
}

describe("the commit-msg hook (subject ≤ 72 characters, area first)", () => {
  it("accepts a subject with its area, a body and git's comment lines", () => {
    assert.equal(check("store: key objects by package version\n\nWhy and figures.\n").status, 0);
    assert.equal(check("# Please enter the message\nrest, mcp: unknown CVE is a 404\n").status, 0);
    assert.equal(check(`docs: ${"x".repeat(66)}`).status, 0, "exactly 72 characters");
  });

  it("refuses a subject over 72 characters, counting characters rather than bytes", () => {
    const refused = check(`docs: ${"x".repeat(67)}`);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /73 characters; at most 72/);
    assert.equal(check(`docs: ${"é".repeat(66)}`).status, 0, "66 two-byte characters are 72 characters");
  });

  it("refuses a subject without an area", () => {
    const refused = check("Fix the flaky test\n");
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /starts with its area/);
    assert.equal(check("store:no space after the colon").status, 1);
  });

  it("lets git's own merge and revert subjects through", () => {
    assert.equal(check("Merge branch 'idp29'\n").status, 0);
    assert.equal(check('Revert "store: key objects by package version"\n').status, 0);
  });
});
