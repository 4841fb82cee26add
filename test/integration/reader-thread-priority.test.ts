import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { READER_THREAD_NAME } from "../../src/store/sqlite-read-pool.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/** Fields of /proc/self/task/<tid>/stat after the command's closing parenthesis (field 3 onwards). */
function statFields(tid: string | number): string[] {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** The scheduling policy and nice value of this process's reader threads, as the kernel reports them. */
function readerThreads(): { policy: number; nice: number }[] {
  const found: { policy: number; nice: number }[] = [];
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() !== READER_THREAD_NAME) continue;
      const fields = statFields(tid);
      // nice is field 19, policy field 41.
      found.push({ nice: Number(fields[16]), policy: Number(fields[38]) });
    } catch {
      // the thread ended
    }
  }
  return found;
}

describe("the SQLite readers' CPU priority", {
  skip: process.platform !== "linux" && "thread priorities are read from Linux /proc",
}, () => {
  let store: TestStore;
  let handle: StoreHandle;

  before(async () => {
    store = await createTestStore("sqlite");
    handle = await openStore({ sqliteFile: store.sqliteFile, readWorkers: 2 });
  });
  after(async () => {
    await handle?.close();
    await store?.drop();
  });

  it("runs every reader below normal priority, the event loop's thread at the process's own", async () => {
    const mainNice = Number(statFields(process.pid)[16]);
    // A read per reader, at once: both readers start.
    await Promise.all([0, 1].map((i) => sql<{ n: number }>`select ${i} as n`.execute(handle.db)));
    const readers = readerThreads();
    assert.equal(readers.length, 2, "two reader threads");
    for (const reader of readers) {
      assert.equal(reader.policy, 0, "the normal policy");
      assert.ok(reader.nice >= 10 && reader.nice >= mainNice, `reader nice ${reader.nice}, main ${mainNice}`);
    }
    // Only the readers' own threads: the event loop's thread keeps the process's nice value.
    assert.equal(Number(statFields(process.pid)[16]), mainNice);
    const rows = await handle.db.selectFrom("api_keys").select("id").execute();
    assert.deepEqual(rows, []);
  });
});
