import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runStore, writeBenchArchive } from "../bench/advisories.bench.ts";
import { postgresAdminUrl, STORE_KINDS } from "../support/stores.ts";

/** bench:advisories at a tiny scale: the benchmark's own code keeps working (no timing asserted). */
describe("bench:advisories at a tiny scale", () => {
  const dir = mkdtempSync(join(tmpdir(), "imaging-bench-tiny-"));
  const archive = join(dir, "all.zip");
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const kind of STORE_KINDS) {
    it(`imports a 300-record archive, then finds every record unchanged, on ${kind}`, async () => {
      writeBenchArchive(archive, 300);
      const run = await runStore(kind, archive, postgresAdminUrl);
      assert.equal(run.first.imported, 300);
      assert.equal(run.first.malformed.length, 0);
      assert.equal(run.again.unchanged, 300);
      assert.equal(run.vulnerabilities, 300);
      assert.ok(run.ranges >= 300 && run.packages > 0);
    });
  }
});
