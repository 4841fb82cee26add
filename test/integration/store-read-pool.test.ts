import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Kysely, sql } from "kysely";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { RunningService } from "../../src/service.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { listOccurrencesJson, type OccurrenceQuery } from "../../src/store/insights.ts";
import { readPoolOf } from "../../src/store/pooled-sqlite-dialect.ts";
import { occurrencesPageForAnswer } from "../../src/store/read-task-runner.ts";
import type { Database } from "../../src/store/schema.ts";
import {
  BYTE_BUFFERS,
  createReadPool,
  type LeasedBytes,
  MAX_BYTE_BUFFERS,
} from "../../src/store/sqlite-read-pool.ts";
import { FIXTURE, loadFixture } from "../support/fixture.ts";
import { listOccurrencesPage } from "../support/occurrence-pages.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/** A read that keeps its connection busy for a while (seconds on a loaded 2-core machine). */
const HEAVY_ROWS = 2_000_000;
const heavyRead = (db: Kysely<Database>) =>
  sql<{
    n: number;
  }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < ${HEAVY_ROWS}) select count(*) as n from c`.execute(
    db,
  );

/** Starts the heavy read and tells, at any later moment, whether it has ended. */
function startHeavyRead(db: Kysely<Database>) {
  let settled = false;
  const result = heavyRead(db).finally(() => {
    settled = true;
  });
  return { result, settled: () => settled };
}

const occurrences = `/rest/applications/shop/insights/cve/${FIXTURE.cve}/occurrences?limit=3`;

for (const kind of STORE_KINDS) {
  describe(`store reads off the event loop on ${kind}`, () => {
    let store: TestStore;
    let service: RunningService;
    let key: string;

    before(async () => {
      store = await createTestStore(kind);
      service = await startTestService(store, {}, (handle) => loadFixture(handle.db));
      key = (await createApiKey(service.store.db, { user: "pool-test", role: "admin", applications: [] }))
        .key;
    });
    after(async () => {
      await service?.stop();
      await store?.drop();
    });

    it("answers the health check and another read while a heavy read runs", async () => {
      const heavy = startHeavyRead(service.store.db);
      const health = await fetch(`${service.gatewayUrl}/mcp/healthcheck`);
      assert.equal(health.status, 200);
      assert.equal(heavy.settled(), false, "the health check waited for the heavy read");
      // An authenticated page: the key lookup and the page's queries are reads beside the heavy one.
      const page = await fetch(`${service.gatewayUrl}${occurrences}`, { headers: { "X-API-KEY": key } });
      assert.equal(page.status, 200);
      assert.deepEqual(
        ((await page.json()) as { name: string }[]).map((p) => p.name),
        ["lib-02", "lib-03", "lib-04"],
      );
      assert.equal(heavy.settled(), false, "the page waited for the heavy read");
      const { rows } = await heavy.result;
      assert.equal(Number(rows[0]?.n), HEAVY_ROWS);
    });

    it("reads its own writes at once, and a transaction's writes only once committed", async () => {
      const db = service.store.db;
      // Each new key is accepted by the very next request (its lookup is a read on another connection).
      for (let i = 0; i < 20; i++) {
        const created = await createApiKey(db, { user: `ryw-${i}`, role: "admin", applications: [] });
        const response = await fetch(`${service.gatewayUrl}${occurrences}`, {
          headers: { "X-API-KEY": created.key },
        });
        assert.equal(response.status, 200, `key ${i} not seen right after it was written`);
      }
      const named = (from: Kysely<Database>) =>
        from.selectFrom("api_keys").select("id").where("user_name", "=", "in-transaction").execute();
      await db.transaction().execute(async (trx) => {
        await createApiKey(trx, { user: "in-transaction", role: "viewer", applications: [] });
        assert.equal((await named(trx)).length, 1, "the transaction reads what it wrote");
        assert.equal((await named(db)).length, 0, "outside the transaction nothing is committed yet");
      });
      assert.equal((await named(db)).length, 1, "committed: every read sees it");
    });

    it("reports a failing read with the database's own message", async () => {
      await assert.rejects(sql`select * from no_such_table`.execute(service.store.db), (error: Error) =>
        /no_such_table/.test(error.message),
      );
    });
  });

  describe(`closing a ${kind} store`, () => {
    let store: TestStore;
    let handle: StoreHandle;

    before(async () => {
      store = await createTestStore(kind);
      handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    });
    after(async () => {
      await store?.drop();
    });

    it("lets a read in progress finish, then refuses new ones", async () => {
      // A connection (or reader thread) ready, so that the heavy read starts at once.
      await handle.db.selectFrom("api_keys").selectAll().execute();
      const heavy = startHeavyRead(handle.db);
      // Let the read reach its connection before closing.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const closed = handle.close();
      const { rows } = await heavy.result;
      assert.equal(Number(rows[0]?.n), HEAVY_ROWS);
      await closed;
      await assert.rejects(handle.db.selectFrom("api_keys").selectAll().execute());
    });
  });
}

describe("the SQLite read pool's order", () => {
  let store: TestStore;
  let handle: StoreHandle;

  before(async () => {
    store = await createTestStore("sqlite");
    // Two readers: heavy reads take at most one of them.
    handle = await openStore({ sqliteFile: store.sqliteFile, readWorkers: 2 });
  });
  after(async () => {
    await handle?.close();
    await store?.drop();
  });

  it("answers a light read at once while heavy reads run and queue ahead of it", async () => {
    // Known heavy: the pool has timed this statement once.
    await heavyRead(handle.db);
    const order: string[] = [];
    const heavy = [1, 2, 3, 4].map((i) => heavyRead(handle.db).then(() => order.push(`heavy ${i}`)));
    // One heavy read runs, three wait; the light one arrives last and ends first.
    const light = handle.db
      .selectFrom("api_keys")
      .select("id")
      .execute()
      .then(() => order.push("light"));
    await Promise.all([...heavy, light]);
    assert.equal(order[0], "light", `order: ${order.join(", ")}`);
    assert.equal(order.length, 5);
  });
});

describe("the occurrences page as a read task of the SQLite read pool", () => {
  let store: TestStore;
  let handle: StoreHandle;
  /** The statements this thread's Kysely ran (the reader threads' own statements are not in it). */
  const statements: string[] = [];
  const pages: OccurrenceQuery[] = [];

  before(async () => {
    store = await createTestStore("sqlite");
    handle = await openStore({
      sqliteFile: store.sqliteFile,
      readWorkers: 2,
      log: (event) => statements.push(event.query.sql),
    });
    await loadFixture(handle.db);
    const application = await handle.db
      .selectFrom("applications")
      .select("id")
      .where("name", "=", "shop")
      .executeTakeFirstOrThrow();
    const vulnerability = await handle.db
      .selectFrom("vulnerabilities")
      .select("id")
      .where("cve_id", "=", FIXTURE.cve)
      .executeTakeFirstOrThrow();
    const analyses = await handle.db
      .selectFrom("analyses")
      .select("seq")
      .where("application_id", "=", application.id)
      .execute();
    assert.ok(analyses.length >= 2, "the fixture has a history");
    for (const { seq } of analyses) {
      for (const [limit, skip] of [
        [50, 0],
        [3, 0],
        [3, 2],
        [5, 100],
      ] as const) {
        pages.push({ applicationId: application.id, seq, vulnerabilityId: vulnerability.id, limit, skip });
      }
    }
  });
  after(async () => {
    await handle?.close();
    await store?.drop();
  });

  it("builds the page in a reader thread: the same text, none of its statements on this thread", async () => {
    let nonEmpty = 0;
    for (const query of pages) {
      const expected = await listOccurrencesJson(handle.db, query);
      statements.length = 0;
      const page = await listOccurrencesPage(handle.db, query);
      assert.equal(page, expected, JSON.stringify(query));
      assert.deepEqual(statements, [], "the page's statements ran on the main thread");
      if ((JSON.parse(expected) as unknown[]).length > 0) nonEmpty++;
    }
    assert.ok(nonEmpty >= 4, "pages with packages were compared");
  });

  it("hands an answer's page over as its UTF-8 bytes in a reused buffer, as text when none is free", async () => {
    const query = pages[0] as OccurrenceQuery;
    const expected = Buffer.from(await listOccurrencesJson(handle.db, query));
    assert.ok(expected.length > 100, "a page with packages");
    const first = await occurrencesPageForAnswer(handle.db, query);
    assert.ok(typeof first !== "string", "the page comes as bytes");
    assert.deepEqual(first.bytes, expected);
    first.release();
    first.release(); // idempotent: the buffer is in the pool once
    // Released, a buffer is reused; while leased, each page has its own; once all are leased, text.
    const held: Exclude<Awaited<ReturnType<typeof occurrencesPageForAnswer>>, string>[] = [];
    for (;;) {
      const page = await occurrencesPageForAnswer(handle.db, query);
      if (typeof page === "string") {
        assert.equal(page, expected.toString());
        break;
      }
      held.push(page);
      assert.ok(held.length <= MAX_BYTE_BUFFERS, "the pool's buffers are bounded");
    }
    assert.equal(held.length, MAX_BYTE_BUFFERS, "the released buffer was reused, every buffer leased once");
    // A leased buffer is never handed to a reader again: every page still holds its own bytes.
    for (const page of held) assert.deepEqual(page.bytes, expected);
    for (const page of held) page.release();
    const again = await occurrencesPageForAnswer(handle.db, query);
    assert.ok(typeof again !== "string", "released buffers serve again");
    assert.deepEqual(again.bytes, expected);
    again.release();
  });

  it("grows a buffer to a page longer than it, within the limits, and keeps it grown", async () => {
    // The default limits hold a wide limit-500 page (~7 MB) in a 1 MiB buffer grown to 8 MiB: the same
    // mechanism at the fixture's scale, with limits made small enough for its page.
    const query = pages[0] as OccurrenceQuery;
    const expected = Buffer.from(await listOccurrencesJson(handle.db, query));
    assert.ok(expected.length > 1000, `a page of ${expected.length} bytes`);
    assert.ok(BYTE_BUFFERS.maxBytes >= 16 * 1024 * 1024, "a wide limit-500 page fits the default cap");
    const initialBytes = 256;
    const limits = {
      count: 2,
      initialBytes,
      maxBytes: expected.length * 2,
      growthBytes: expected.length * 2,
    };
    const pool = createReadPool(store.sqliteFile, 1, limits);
    try {
      const first = await pool.taskBytes("occurrencesJson", query);
      assert.ok(typeof first !== "string", "a page longer than the buffer still comes as bytes");
      assert.deepEqual(first.bytes, expected, "byte for byte the text page");
      const grown = first.bytes.buffer.byteLength;
      assert.ok(grown >= expected.length && grown <= limits.maxBytes, `grown to ${grown} bytes`);
      // The budget (twice the page) leaves no room to grow a second buffer to it while the first is leased.
      const second = await pool.taskBytes("occurrencesJson", query);
      assert.equal(second, expected.toString(), "beyond the growth budget: the text");
      first.release();
      const third = (await pool.taskBytes("occurrencesJson", query)) as LeasedBytes;
      assert.ok(typeof third !== "string", "the grown buffer serves again");
      assert.equal(third.bytes.buffer.byteLength, grown, "it stayed grown: no new memory for the next page");
      assert.deepEqual(third.bytes, expected);
      third.release();
    } finally {
      await pool.close();
    }
  });

  it("answers a page longer than a buffer may grow to as text, the same", async () => {
    const query = pages[0] as OccurrenceQuery;
    const expected = await listOccurrencesJson(handle.db, query);
    const maxBytes = Buffer.byteLength(expected) - 1;
    const pool = createReadPool(store.sqliteFile, 1, {
      count: 2,
      initialBytes: 256,
      maxBytes,
      growthBytes: 1024 * 1024,
    });
    try {
      assert.equal(await pool.taskBytes("occurrencesJson", query), expected, "one byte over the cap: text");
      // A page that fits the cap still comes as bytes from the same pool.
      const small = { ...query, limit: 1 };
      const smallPage = await pool.taskBytes("occurrencesJson", small);
      assert.ok(typeof smallPage !== "string");
      assert.equal(smallPage.bytes.toString(), await listOccurrencesJson(handle.db, small));
      assert.ok(smallPage.bytes.buffer.byteLength <= maxBytes, "never grown beyond the cap");
      smallPage.release();
    } finally {
      await pool.close();
    }
  });

  it("runs it on the transaction's own connection inside a transaction", async () => {
    const query = pages[0] as OccurrenceQuery;
    const expected = await listOccurrencesJson(handle.db, query);
    await handle.db.transaction().execute(async (trx) => {
      statements.length = 0;
      const page = await listOccurrencesPage(trx, query);
      assert.equal(page, expected);
      assert.equal(await occurrencesPageForAnswer(trx, query), expected, "text, from the transaction");
      assert.ok(
        // The page's objects come from the stored lists (migration 020).
        statements.some((s) => s.includes("occurrence_object_lists")),
        "inside a transaction the page is read on its connection",
      );
    });
  });

  it("reports a failing task with a clear message, and the reader keeps serving", async () => {
    const pool = readPoolOf(handle.db);
    assert.ok(pool, "the store has a read pool");
    await assert.rejects(pool.task("noSuchTask", {}), /Unknown read task noSuchTask/);
    const page = await listOccurrencesPage(handle.db, pages[0] as OccurrenceQuery);
    assert.ok(page.length > 2);
  });
});

describe("the same heavy read on the event loop (STORE_READ_WORKERS=0, SQLite)", () => {
  let store: TestStore;
  let service: RunningService;

  before(async () => {
    store = await createTestStore("sqlite");
    service = await startTestService(store, { storeReadWorkers: 0 });
  });
  after(async () => {
    await service?.stop();
    await store?.drop();
  });

  it("holds the health check until it ends: what the read pool prevents", async () => {
    const heavy = startHeavyRead(service.store.db);
    const health = await fetch(`${service.gatewayUrl}/mcp/healthcheck`);
    assert.equal(health.status, 200);
    assert.equal(heavy.settled(), true, "on the event loop the heavy read ends before anything else runs");
    await heavy.result;
  });
});

describe("the SQLite read pool's light statements on the main thread", () => {
  let store: TestStore;
  let handle: StoreHandle;
  /** Cheap or not by its parameter (a statement of its own: the heavy read's text differs). */
  const counted = (db: Kysely<Database>, upTo: number) =>
    sql<{
      n: number;
    }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < ${upTo}) select count(x) as n from c`.execute(
      db,
    );
  const keysOf = (db: Kysely<Database>, user: string) =>
    db.selectFrom("api_keys").select(["id", "user_name"]).where("user_name", "=", user).execute();

  before(async () => {
    store = await createTestStore("sqlite");
    // One reader: a read that goes to the pool waits while a heavy read holds it.
    handle = await openStore({ sqliteFile: store.sqliteFile, readWorkers: 1 });
  });
  after(async () => {
    await handle?.close();
    await store?.drop();
  });

  it("answers a statement that always ran fast at once, even while the only reader is busy", async () => {
    await createApiKey(handle.db, { user: "inline-1", role: "viewer", applications: [] });
    const fromPool = await keysOf(handle.db, "inline-1");
    for (let i = 0; i < 25; i++) assert.deepEqual(await keysOf(handle.db, "inline-1"), fromPool);
    const heavy = startHeavyRead(handle.db);
    const order: string[] = [];
    const light = keysOf(handle.db, "inline-1").then((rows) => {
      order.push("known light");
      return rows;
    });
    // Never run before: the pool does not know it, so it waits for the reader.
    const unknown = handle.db
      .selectFrom("api_keys")
      .select("role")
      .execute()
      .then(() => order.push("unknown"));
    assert.deepEqual(await light, fromPool, "the same rows as from the pool's reader");
    assert.equal(heavy.settled(), false, "the known light read waited for the heavy one");
    await Promise.all([heavy.result, unknown]);
    assert.deepEqual(order, ["known light", "unknown"]);
  });

  it("still reads its own writes, and a transaction's writes only once committed", async () => {
    for (let i = 0; i < 5; i++) {
      await createApiKey(handle.db, { user: `inline-ryw-${i}`, role: "viewer", applications: [] });
      const rows = await keysOf(handle.db, `inline-ryw-${i}`);
      assert.equal(rows.length, 1, `key ${i} not seen right after it was written`);
    }
    await handle.db.transaction().execute(async (trx) => {
      await createApiKey(trx, { user: "inline-trx", role: "viewer", applications: [] });
      assert.equal((await keysOf(trx, "inline-trx")).length, 1, "the transaction reads what it wrote");
      assert.equal((await keysOf(handle.db, "inline-trx")).length, 0, "nothing committed yet");
    });
    assert.equal((await keysOf(handle.db, "inline-trx")).length, 1, "committed: every read sees it");
  });

  it("sends a statement back to the reader for good once it ran slow with other parameters", async () => {
    for (let i = 0; i < 25; i++) assert.equal(Number((await counted(handle.db, 3)).rows[0]?.n), 3);
    const first = startHeavyRead(handle.db);
    assert.equal(Number((await counted(handle.db, 3)).rows[0]?.n), 3);
    assert.equal(first.settled(), false, "known light: it ran on the main thread");
    await first.result;
    // The same statement, now slow (over 3 ms): it runs (once) where it was routed, and counts as slow from then on.
    assert.equal(Number((await counted(handle.db, 300_000)).rows[0]?.n), 300_000);
    const heavy = startHeavyRead(handle.db);
    assert.equal(Number((await counted(handle.db, 3)).rows[0]?.n), 3);
    assert.equal(heavy.settled(), true, "back in the pool: it waited for the only reader");
    await heavy.result;
  });
});
