import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/**
 * Both store backends, each test suite on a fresh database: a SQLite file in a temporary directory,
 * or a new PostgreSQL database on the server of TEST_POSTGRES_URL (default: local server, role imaging).
 */
export interface TestStore {
  kind: "sqlite" | "postgres";
  dataDir: string;
  databaseUrl: string | undefined;
  sqliteFile: string;
  drop(): Promise<void>;
}

export const STORE_KINDS = ["sqlite", "postgres"] as const;

export const postgresAdminUrl =
  process.env.TEST_POSTGRES_URL ?? "postgres://imaging:imaging@127.0.0.1:5432/postgres";

export async function createTestStore(kind: "sqlite" | "postgres"): Promise<TestStore> {
  const dataDir = mkdtempSync(join(tmpdir(), "imaging-test-"));
  const sqliteFile = join(dataDir, "imaging.db");
  if (kind === "sqlite") {
    return {
      kind,
      dataDir,
      databaseUrl: undefined,
      sqliteFile,
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `imaging_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is required for the store tests (TEST_POSTGRES_URL=${postgresAdminUrl}): ${(error as Error).message}. ` +
        "Run .ci/run, or start a server and create the role: see docs/contributing.md 'Running the tests'.",
    );
  }
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    kind,
    dataDir,
    databaseUrl: url.toString(),
    sqliteFile,
    async drop() {
      rmSync(dataDir, { recursive: true, force: true });
      const client = new pg.Client({ connectionString: postgresAdminUrl });
      await client.connect();
      try {
        await dropDatabase(client, name);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Drops a test database even while an autovacuum worker is in it. `with (force)` refuses (42501) to end
 * a process of a role the test role is not a member of, and an autovacuum worker is one; a plain drop
 * asks autovacuum to stop and waits for it, so that is the fallback, retried while it is still busy.
 */
export async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  try {
    await client.query(`drop database if exists ${name} with (force)`);
    return;
  } catch (error) {
    if ((error as { code?: string }).code !== "42501") throw error;
  }
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(`drop database if exists ${name}`);
      return;
    } catch (error) {
      // 55006: still in use (the worker had not stopped within PostgreSQL's own wait).
      if ((error as { code?: string }).code !== "55006" || attempt === 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}
