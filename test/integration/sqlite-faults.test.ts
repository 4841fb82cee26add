import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, it } from "node:test";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { openStore } from "../../src/store/database.ts";
import { INTERNAL_PORTS_ON_LOOPBACK, spawnService } from "../support/cli.ts";
import { freePort } from "../support/service.ts";

/**
 * Issue 36 on SQLite: the store file locked by another process (an `imaging` command importing into it)
 * and the file that cannot be written (a full disk: here the process's file-size limit set to nothing
 * with prlimit, so every write of SQLite fails with an I/O error while reads go on). A real `imaging
 * start` process: a write waits for the lock without blocking the process (other requests are answered
 * meanwhile), then gets 503 with Retry-After; an I/O error is a 503 too; the process lives on and writes
 * again once the fault is gone.
 */
describe("SQLite store: locked by another process, failing writes", () => {
  let dir: string;
  let service: Awaited<ReturnType<typeof spawnService>>;
  let base: string;
  let apiKey: string;
  const file = () => join(dir, "imaging.db");

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "imaging-sqlite-faults-"));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    service = await spawnService(["--demo", "--data-dir", dir], {
      ...INTERNAL_PORTS_ON_LOOPBACK,
      PORT: String(port),
      PUBLIC_URL: base,
      // Long enough that the first test's reads, slow on a loaded machine, finish while the write waits.
      STORE_WAIT_TIMEOUT: "10",
    });
    const handle = await openStore({ sqliteFile: file(), migrate: false, readWorkers: 0 });
    try {
      apiKey = (await createApiKey(handle.db, { user: "sqlite-admin", role: "admin", applications: [] })).key;
    } finally {
      await handle.close();
    }
  });
  after(async () => {
    await service?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const write = (user: string) =>
    fetch(`${base}/rest/admin/api-keys`, {
      method: "POST",
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      body: JSON.stringify({ user, role: "viewer" }),
    });
  const read = () => fetch(`${base}/rest/applications?limit=50`, { headers: { "x-api-key": apiKey } });

  /** Another process's write transaction on the store file (what `imaging advisories import` holds). */
  const holdWriteLock = () => {
    const other = new DatabaseSync(file());
    other.exec("BEGIN IMMEDIATE");
    return {
      release() {
        other.exec("ROLLBACK");
        other.close();
      },
    };
  };

  it("a write waits for the lock another process holds, while the process answers other requests; it succeeds once the lock is released", async () => {
    const lock = holdWriteLock();
    const order: string[] = [];
    let released = false;
    try {
      const pending = write("waits-for-the-lock").then(async (response) => {
        order.push("write answered");
        return { status: response.status, body: await response.text() };
      });
      // While the write waits for the lock, the process reads, answers its probes and the REST API.
      await new Promise((resolve) => setTimeout(resolve, 300));
      for (let i = 0; i < 3; i++) {
        const live = await fetch(`${base}/livez`);
        assert.equal(live.status, 200);
        const answer = await read();
        assert.equal(answer.status, 200);
        await answer.body?.cancel();
        order.push("read answered");
      }
      lock.release();
      released = true;
      const answer = await pending;
      assert.equal(answer.status, 201, answer.body);
      assert.deepEqual(order, ["read answered", "read answered", "read answered", "write answered"]);
    } finally {
      if (!released) lock.release();
    }
  });

  it("a lock held longer than STORE_WAIT_TIMEOUT: 503 problem+json with Retry-After; the next write after it goes through", async () => {
    const lock = holdWriteLock();
    try {
      const response = await write("lock-held-too-long");
      assert.equal(response.status, 503);
      assert.equal(response.headers.get("retry-after"), "2");
      assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json/);
      const problem = (await response.json()) as { status: number; detail: string };
      assert.equal(problem.status, 503);
      assert.match(problem.detail, /locked by another process.*retry in 2 s/);
    } finally {
      lock.release();
    }
    assert.equal(service.child.exitCode, null, "the process lives on");
    assert.equal((await write("after-the-lock")).status, 201);
  });

  it("a file that cannot be written (no file size allowed): writes answer 503 with Retry-After, reads go on; writes resume once it can", async () => {
    const pid = String(service.child.pid);
    // The soft limit only: the process could raise it again, as an administrator frees the disk.
    execFileSync("prlimit", ["--pid", pid, "--fsize=1:unlimited"]);
    try {
      const response = await write("disk-full");
      assert.equal(response.status, 503, await response.clone().text());
      assert.ok(response.headers.get("retry-after"));
      assert.match(((await response.json()) as { detail: string }).detail, /cannot be read or written/);
      const answer = await read();
      assert.equal(answer.status, 200, "reads go on");
      await answer.body?.cancel();
      assert.equal((await fetch(`${base}/readyz`)).status, 200, "the store still answers");
    } finally {
      execFileSync("prlimit", ["--pid", pid, "--fsize=unlimited:unlimited"]);
    }
    assert.equal(service.child.exitCode, null, "the process lives on");
    const after = await write("after-the-disk-is-back");
    assert.equal(after.status, 201, await after.text());
    assert.doesNotMatch(service.stderr(), /\[bug\]/);
  });
});
