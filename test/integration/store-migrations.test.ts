/**
 * Every migration applied from an empty database, and from a store of each earlier schema version: a
 * store that stopped at migration k (the release that shipped k) and is then opened by this build ends
 * with the schema a new store has, on both stores. Migrations carry their own SQL (a lint rule keeps live
 * code out of them), and the read models are rebuilt once, after the last one, whatever the start.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { type Kysely, sql } from "kysely";
import { type Migration, Migrator } from "kysely/migration";
import { MIGRATIONS, openStore, type StoreHandle } from "../../src/store/database.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/** Tables, columns, indexes and triggers, as the database describes them, in a stable order. */
async function schemaOf(handle: StoreHandle): Promise<string[]> {
  const db = handle.db as unknown as Kysely<unknown>;
  if (handle.kind === "sqlite") {
    const { rows } = await sql<{ type: string; name: string; sql: string | null }>`select type, name, sql
        from sqlite_master where name not like 'sqlite_%' order by type, name`.execute(db);
    return rows.map((r) => `${r.type} ${r.name}: ${r.sql ?? ""}`);
  }
  const columns = await sql<{ line: string }>`select table_name || '.' || column_name || ' ' || data_type
        || ' ' || is_nullable || ' ' || coalesce(column_default, '') || ' ' || coalesce(collation_name, '')
        as line
      from information_schema.columns where table_schema = current_schema()
      order by table_name, column_name`.execute(db);
  const indexes = await sql<{ line: string }>`select indexdef as line from pg_indexes
      where schemaname = current_schema() order by indexname`.execute(db);
  const triggers = await sql<{ line: string }>`select trigger_name || ' ' || event_manipulation || ' '
        || event_object_table || ' ' || action_statement as line
      from information_schema.triggers where trigger_schema = current_schema()
      order by trigger_name, event_manipulation`.execute(db);
  return [...columns.rows, ...indexes.rows, ...triggers.rows].map((r) => r.line);
}

/** The names the store records as applied. */
async function appliedOf(handle: StoreHandle): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
    handle.db as unknown as Kysely<unknown>,
  );
  return rows.map((r) => r.name);
}

for (const kind of STORE_KINDS) {
  describe(`store migrations on ${kind}`, () => {
    const stores: TestStore[] = [];
    const newStore = async () => {
      const store = await createTestStore(kind);
      stores.push(store);
      return store;
    };
    const open = (store: TestStore, migrate = true) =>
      openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile, migrate, readWorkers: 0 });
    after(async () => {
      for (const store of stores) await store.drop();
    });

    let fresh: string[] = [];

    it("applies every migration to an empty database, in order, once", async () => {
      const handle = await open(await newStore());
      try {
        assert.deepEqual(
          handle.migrated,
          MIGRATIONS.map(([name]) => name),
        );
        assert.deepEqual(handle.notices, [], "a new store has nothing to rebuild");
        fresh = await schemaOf(handle);
        assert.ok(fresh.length > 50, `a schema of ${fresh.length} lines`);
      } finally {
        await handle.close();
      }
    });

    for (let k = 1; k < MIGRATIONS.length; k++) {
      const stop = (MIGRATIONS[k - 1] as (typeof MIGRATIONS)[number])[0];
      it(`from a store at ${stop}: the rest applied, the schema of a new store`, async () => {
        const store = await newStore();
        // the release that shipped migration k: its migrations, and no later one
        const released = await open(store, false);
        try {
          const migrations = Object.fromEntries(
            MIGRATIONS.slice(0, k).map(([name, migration]) => [name, migration(released.kind)]),
          ) as Record<string, Migration>;
          const { error } = await new Migrator({
            db: released.db,
            provider: { getMigrations: async () => migrations },
          }).migrateToLatest();
          assert.equal(error, undefined);
        } finally {
          await released.close();
        }
        const upgraded = await open(store);
        try {
          assert.deepEqual(
            upgraded.migrated,
            MIGRATIONS.slice(k).map(([name]) => name),
          );
          assert.deepEqual(
            await appliedOf(upgraded),
            MIGRATIONS.map(([name]) => name),
          );
          assert.deepEqual(await schemaOf(upgraded), fresh);
          // read models rebuilt once, from whatever migration asked: nothing is left asking
          const { rows } = await sql<{ n: number }>`select count(*) as n from read_model_rebuilds`.execute(
            upgraded.db as unknown as Kysely<unknown>,
          );
          assert.equal(Number(rows[0]?.n), 0);
        } finally {
          await upgraded.close();
        }
      });
    }
  });
}
