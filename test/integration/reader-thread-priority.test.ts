import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { READER_THREAD_NAME } from "../../src/store/sqlite-read-pool.ts";
import { SCHED_IDLE } from "../../src/store/thread-priority.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/** The scheduling policy and nice value of this process's reader threads, as the kernel reports them. */
function readerThreads(): { policy: number; nice: number }[] {
  const found: { policy: number; nice: number }[] = [];
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() !== READER_THREAD_NAME) continue;
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      // Fields after the command's closing parenthesis start at field 3 (state): nice is 19, policy 41.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      found.push({ nice: Number(fields[16]), policy: Number(fields[38]) });
    } catch {
      // the thread ended
    }
  }
  return found;
}

/** Each reader of a pool of `size` started: a read per reader, all at once. */
async function startReaders(handle: StoreHandle, size: number): Promise<void> {
  await Promise.all(
    Array.from({ length: size }, (_, i) => sql<{ n: number }>`select ${i} as n`.execute(handle.db)),
  );
}

const onLinux = process.platform === "linux";

describe("the SQLite readers' CPU priority", {
  skip: !onLinux && "thread priorities are read from Linux /proc",
}, () => {
  let store: TestStore;
  let handle: StoreHandle | undefined;

  before(async () => {
    store = await createTestStore("sqlite");
  });
  after(async () => {
    await handle?.close();
    await store?.drop();
  });

  it("runs every reader at SCHED_IDLE: the event loop gets a core the moment it wants one", async () => {
    handle = await openStore({ sqliteFile: store.sqliteFile, readWorkers: 2 });
    await startReaders(handle, 2);
    try {
      const readers = readerThreads();
      assert.equal(readers.length, 2, "two reader threads");
      for (const reader of readers) assert.equal(reader.policy, SCHED_IDLE, JSON.stringify(readers));
      // The main thread keeps the normal policy.
      const main = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
      assert.equal(Number(main.slice(main.lastIndexOf(")") + 2).split(" ")[38]), 0);
    } finally {
      await handle.close();
      handle = undefined;
    }
  });

  it("without chrt, readers run below normal priority and answer as before", async () => {
    // Workers copy the environment when they start: a PATH without chrt for the readers of this store.
    const empty = mkdtempSync(join(tmpdir(), "no-chrt-"));
    const path = process.env.PATH;
    process.env.PATH = empty;
    try {
      handle = await openStore({ sqliteFile: store.sqliteFile, readWorkers: 2 });
      await startReaders(handle, 2);
    } finally {
      process.env.PATH = path;
      rmSync(empty, { recursive: true, force: true });
    }
    try {
      const readers = readerThreads();
      assert.equal(readers.length, 2, "two reader threads");
      for (const reader of readers) {
        assert.equal(reader.policy, 0, JSON.stringify(readers));
        assert.ok(reader.nice >= 10, `nice ${reader.nice}: below normal`);
      }
      const rows = await handle.db.selectFrom("api_keys").select("id").execute();
      assert.deepEqual(rows, []);
    } finally {
      await handle.close();
      handle = undefined;
    }
  });
});
