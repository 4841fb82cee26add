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
        "Run .ci/run, or start a server and create the role: see README 'Running the tests'.",
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
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
