import assert from "node:assert/strict";
import { once } from "node:events";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { openStore } from "../../src/store/database.ts";
import { spawnService } from "../support/cli.ts";

/**
 * The data directory and the SQLite store (the database file, its -wal and -shm) are readable by the
 * service's user only, as `imaging start` leaves them: created so, or tightened at start with a log
 * line when an earlier version (or an operator) left them open to other local users.
 */
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
const STORE_FILES = ["imaging.db", "imaging.db-wal", "imaging.db-shm"];
const ENV = {
  PUBLIC_URL: "http://127.0.0.1:8090",
  REST_PORT: "0",
  MCP_ANALYSIS_PORT: "0",
  MCP_GATEKEEPER_PORT: "0",
  IMAGING_BIND_ADDRESS: "127.0.0.1",
  // Not silent, so the [store] lines are written; above info, so stdout holds only the summary.
  LOG_LEVEL: "warn",
};

describe("file modes of the data directory and the store", { skip: process.platform === "win32" }, () => {
  let parent: string;
  let umask: number;
  before(() => {
    parent = mkdtempSync(join(tmpdir(), "imaging-modes-"));
    // The usual umask, under which files are created world-readable unless asked otherwise.
    umask = process.umask(0o022);
  });
  after(() => {
    process.umask(umask);
    rmSync(parent, { recursive: true, force: true });
  });

  const running = async (dataDir: string) => {
    const service = await spawnService(["--data-dir", dataDir, "--port", "0"], ENV);
    return {
      ...service,
      async stop() {
        service.child.kill("SIGTERM");
        if (service.child.exitCode === null) await once(service.child, "exit");
      },
    };
  };

  it("a first start creates the directory 0700 and every store file 0600", async () => {
    const dataDir = join(parent, "fresh", "data");
    const service = await running(dataDir);
    try {
      assert.equal(mode(dataDir), "700");
      for (const file of STORE_FILES) {
        assert.ok(existsSync(join(dataDir, file)), `${file} exists while the service runs`);
        assert.equal(mode(join(dataDir, file)), "600", file);
      }
      assert.equal(mode(join(dataDir, "secrets")), "700");
    } finally {
      await service.stop();
    }
  });

  it("a start tightens a directory and store files left readable by others, and says so", async () => {
    const dataDir = join(parent, "old");
    mkdirSync(dataDir);
    const handle = await openStore({ sqliteFile: join(dataDir, "imaging.db") });
    await handle.close();
    // As versions before this one left them.
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, "imaging.db"), 0o644);
    const service = await running(dataDir);
    try {
      assert.equal(mode(dataDir), "700");
      for (const file of STORE_FILES) assert.equal(mode(join(dataDir, file)), "600", file);
      const log = service.stderr();
      assert.match(log, new RegExp(`\\[store\\] data directory ${dataDir} had mode 0755: tightened to 0700`));
      assert.match(log, /\[store\] store file \S+imaging\.db had mode 0644: tightened to 0600/);
    } finally {
      await service.stop();
    }
  });
});
