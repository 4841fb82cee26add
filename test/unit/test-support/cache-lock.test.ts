import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { withCacheLock } from "../../support/cache-lock.ts";

// The lock the cache builders take (scan subjects, Maven subjects, Python environments) so that test
// files run in parallel by test/support/run-suite.ts never build one cache entry twice at once.
const LOCK = new URL("../../support/cache-lock.ts", import.meta.url).pathname;

/** A separate process that builds `entry` once: it logs each build it runs, taking 300 ms. */
function builder(entry: string, log: string): Promise<number | null> {
  const script = `
    import { appendFileSync, existsSync, mkdirSync } from "node:fs";
    import { withCacheLockSync } from ${JSON.stringify(LOCK)};
    const entry = ${JSON.stringify(entry)};
    if (!existsSync(entry)) withCacheLockSync(entry, () => {
      if (existsSync(entry)) return;
      appendFileSync(${JSON.stringify(log)}, process.pid + "\\n");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      mkdirSync(entry);
    });`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
  return new Promise((resolve) => child.on("exit", resolve));
}

describe("cache lock", () => {
  const dir = mkdtempSync(join(tmpdir(), "imaging-cache-lock-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("four processes needing the same entry at once build it once, and all of them get it", async () => {
    const entry = join(dir, "subject");
    const log = join(dir, "builds.log");
    const codes = await Promise.all([1, 2, 3, 4].map(() => builder(entry, log)));
    assert.deepEqual(codes, [0, 0, 0, 0]);
    assert.ok(existsSync(entry));
    assert.equal(readFileSync(log, "utf8").trim().split("\n").length, 1);
    assert.equal(existsSync(`${entry}.lock`), false, "the lock is released");
  });

  test("a lock left by a process that is gone is taken over", async () => {
    const entry = join(dir, "abandoned");
    mkdirSync(`${entry}.lock`);
    writeFileSync(`${entry}.lock/pid`, "2147483646"); // no such process
    assert.equal(await withCacheLock(entry, async () => "built"), "built");
    assert.equal(existsSync(`${entry}.lock`), false);
  });

  test("a failed build releases the lock, so the next one can try again", async () => {
    const entry = join(dir, "failing");
    await assert.rejects(
      withCacheLock(entry, async () => {
        throw new Error("registry unreachable");
      }),
      /registry unreachable/,
    );
    assert.equal(await withCacheLock(entry, async () => "retried"), "retried");
  });
});
