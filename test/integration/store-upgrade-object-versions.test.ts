import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { sql } from "kysely";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { RunningService } from "../../src/service.ts";
import { openStore } from "../../src/store/database.ts";
import { MERGE, writeRepro } from "../support/issue32-repro.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/**
 * A store written before objects were keyed by package version (issue 32 point 1), upgraded in place.
 * The release before it (main at RELEASED, the last commit before migration 024) is taken from the
 * repository's history with `git archive`, run as users ran it (its own `imaging` command, this checkout's
 * node_modules: the lockfile did not change), and records issue 32's reproduction: lodash 4.17.4 loaded
 * by the code, 4.17.10 nested under a dev tool. That release lists lodash.merge under both versions.
 * Opened by this build, migration 024 recomputes each object's version from what the store holds (the id
 * `npm:lodash@4.17.4:lodash.merge` names it), so every read shows it under 4.17.4 only, and the scope the
 * old store never recorded reads "unknown", never production or dev.
 */
const RELEASED = "972165c98c8257df02886f0de50b7f58b894ecbb";
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);

type CvePackage = { name: string; version: string; scope: string; objects: { fullName: string }[] };

describe("a store of the release before migration 024, upgraded", () => {
  let released: string;
  const work = mkdtempSync(join(tmpdir(), "store-upgrade-024-"));
  before(async () => {
    released = join(work, "released");
    mkdirSync(released);
    const archive = join(work, "released.tar");
    await run("git", ["-C", ROOT, "archive", "--output", archive, RELEASED, "src", "package.json"]);
    await run("tar", ["-xf", archive, "-C", released]);
    symlinkSync(join(ROOT, "node_modules"), join(released, "node_modules"));
    writeRepro(join(work, "repro"));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  /** The released `imaging` command, in its own process, on the test's store. */
  const releasedCli = async (args: string[], store: TestStore) =>
    run(process.execPath, [join(released, "src", "cli", "main.ts"), ...args], {
      env: { ...process.env, DATABASE_URL: store.databaseUrl ?? "", IMAGING_DATA_DIR: store.dataDir },
    });

  for (const kind of STORE_KINDS) {
    describe(`on ${kind}`, () => {
      let store: TestStore;
      let service: RunningService | undefined;
      let admin: string;
      const occurrences = async (date?: string) => {
        const response = await fetch(
          `${service?.gatewayUrl}/rest/applications/repro/insights/cve/CVE-2018-16487/occurrences?limit=10${date ? `&date=${date}` : ""}`,
          { headers: { "x-api-key": admin } },
        );
        assert.equal(response.status, 200, await response.clone().text());
        return ((await response.json()) as CvePackage[]).map((p) => [
          p.version,
          p.scope,
          p.objects.map((o) => o.fullName),
        ]);
      };

      before(async () => {
        store = await createTestStore(kind);
        await releasedCli(["advisories", "import", MERGE], store);
        await releasedCli(
          ["scan", join(work, "repro"), "--app", "repro", "--offline", "--date", "2026-01-10T00:00:00Z"],
          store,
        );
      });
      after(async () => {
        await service?.stop();
        await store?.drop();
      });

      it("the released build wrote the store at its schema: objects keyed by package, no version", async () => {
        const old = await openStore({
          databaseUrl: store.databaseUrl,
          sqliteFile: store.sqliteFile,
          migrate: false,
        });
        try {
          const applied = await sql<{
            name: string;
          }>`select name from kysely_migration order by name`.execute(old.db);
          assert.equal(applied.rows.at(-1)?.name, "023-package-sources-and-facts-queue");
          const objects = await sql<{
            object_id: string;
          }>`select object_id from external_objects order by object_id`.execute(old.db);
          assert.deepEqual(
            objects.rows.map((r) => r.object_id),
            ["npm:lodash@4.17.4:lodash", "npm:lodash@4.17.4:lodash.merge"],
          );
        } finally {
          await old.close();
        }
      });

      it("opened by this build: lodash.merge under 4.17.4 only, scopes unknown, as of the analysis too", async () => {
        service = await startTestService(store, { npmRegistryUrl: "http://127.0.0.1:9" });
        admin = (await createApiKey(service.store.db, { user: "ci", role: "admin", applications: [] })).key;
        const expected = [
          ["4.17.4", "unknown", ["lodash", "lodash.merge"]],
          ["4.17.10", "unknown", []],
        ];
        assert.deepEqual(await occurrences(), expected);
        assert.deepEqual(await occurrences("2026-01-10T00:00:00Z"), expected);
        const interactions = await fetch(
          `${service.gatewayUrl}/rest/applications/repro/interactions?package=lodash&ecosystem=npm`,
          { headers: { "x-api-key": admin } },
        );
        assert.equal(interactions.status, 200);
        assert.deepEqual(
          ((await interactions.json()) as { version: string; target: { fullName: string } }[]).map((i) => [
            i.target.fullName,
            i.version,
          ]),
          [
            ["lodash", "4.17.4"],
            ["lodash.merge", "4.17.4"],
          ],
        );
      });
    });
  }
});
