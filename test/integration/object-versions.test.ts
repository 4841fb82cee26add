import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { RunningService } from "../../src/service.ts";
import { runCli } from "../support/cli.ts";
import { MERGE, writeRepro } from "../support/issue32-repro.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/**
 * Issue 32's reproduction, end to end: an application requiring lodash 4.17.4 whose dev tool nests its
 * own lodash 4.17.10. Only 4.17.4 is loaded by the application's code, so only 4.17.4 lists
 * lodash.merge, in the CVE's occurrences (REST) and in `imaging export cyclonedx`; each version carries
 * its scope. Scanned with `imaging scan` offline, the OSV record imported with `imaging advisories import`.
 */

type CvePackage = { name: string; version: string; scope: string; objects: { fullName: string }[] };
type Component = {
  purl: string;
  scope?: string;
  /** identity: the lockfile each version was read from; occurrences: the code's uses of it. */
  evidence?: { occurrences?: { symbol: string }[] };
  properties?: { name: string; value: string }[];
};

for (const kind of STORE_KINDS) {
  describe(`objects of the version the code loads, nested duplicate versions, on ${kind}`, () => {
    let store: TestStore;
    let service: RunningService;
    let work: string;
    let admin: string;
    const env = () => ({ DATABASE_URL: store.databaseUrl ?? "", IMAGING_DATA_DIR: store.dataDir });

    before(async () => {
      work = mkdtempSync(join(tmpdir(), "object-versions-"));
      store = await createTestStore(kind);
      const app = join(work, "repro");
      writeRepro(app);
      const imported = await runCli(["advisories", "import", MERGE], env());
      assert.equal(imported.code, 0, imported.stderr);
      const scanned = await runCli(["scan", app, "--app", "repro", "--offline"], env());
      assert.equal(scanned.code, 0, scanned.stderr);
      assert.match(scanned.stdout, /packages: 3 \(2 dev only\)/);
      service = await startTestService(store, { npmRegistryUrl: "http://127.0.0.1:9" });
      admin = (await createApiKey(service.store.db, { user: "ci", role: "admin", applications: [] })).key;
    });
    after(async () => {
      await service?.stop();
      await store?.drop();
      rmSync(work, { recursive: true, force: true });
    });

    it("REST occurrences: lodash.merge on 4.17.4 only, each version with its scope", async () => {
      for (const id of ["CVE-2018-16487", "GHSA-4xc9-xhrj-v574"]) {
        const response = await fetch(
          `${service.gatewayUrl}/rest/applications/repro/insights/cve/${id}/occurrences?limit=10`,
          { headers: { "x-api-key": admin } },
        );
        assert.equal(response.status, 200, await response.clone().text());
        const packages = (await response.json()) as CvePackage[];
        assert.deepEqual(
          packages.map((p) => [p.name, p.version, p.scope, p.objects.map((o) => o.fullName)]),
          [
            ["lodash", "4.17.4", "production", ["lodash", "lodash.merge"]],
            ["lodash", "4.17.10", "dev", []],
          ],
        );
      }
    });

    it("REST packages, interactions, object search and CVE references: objects under 4.17.4 only", async () => {
      const get = async <T>(path: string): Promise<T> => {
        const response = await fetch(`${service.gatewayUrl}/rest/applications/repro${path}`, {
          headers: { "x-api-key": admin },
        });
        assert.equal(response.status, 200, await response.clone().text());
        return (await response.json()) as T;
      };
      const packages = await get<{ name: string; version: string; scope: string }[]>("/packages?limit=10");
      assert.deepEqual(
        packages.map((p) => [p.name, p.version, p.scope]),
        [
          ["lodash", "4.17.4", "production"],
          ["lodash", "4.17.10", "dev"],
          ["old-tool", "1.0.0", "dev"],
        ],
      );
      const interactions = await get<{ version: string; target: { fullName: string } }[]>(
        "/interactions?package=lodash&ecosystem=npm",
      );
      assert.deepEqual(
        interactions.map((i) => [i.target.fullName, i.version]),
        [
          ["lodash", "4.17.4"],
          ["lodash.merge", "4.17.4"],
        ],
      );
      const objects = await get<{ fullName: string; version: string }[]>("/objects?q=merge");
      assert.deepEqual(
        objects.map((o) => [o.fullName, o.version]),
        [["lodash.merge", "4.17.4"]],
      );
      const references = await get<{ version: string; reachesAffectedFunction: boolean | null }[]>(
        "/insights/cve/CVE-2018-16487/references?reachesAffectedFunction=true",
      );
      assert.deepEqual(
        references.map((r) => [r.version, r.reachesAffectedFunction]),
        [["4.17.4", true]],
      );
    });

    it("imaging export cyclonedx: evidence and reachesAffectedFunction on the loaded version only", async () => {
      const result = await runCli(["export", "cyclonedx", "--app", "repro"], env());
      assert.equal(result.code, 0, result.stderr);
      const bom = JSON.parse(result.stdout) as {
        components: Component[];
        vulnerabilities: { id: string; properties?: { name: string; value: string }[] }[];
      };
      const lodash = bom.components.filter((c) => c.purl.startsWith("pkg:npm/lodash@"));
      assert.deepEqual(
        lodash.map((c) => [c.purl, c.scope, c.evidence?.occurrences?.map((o) => o.symbol) ?? []]),
        [
          ["pkg:npm/lodash@4.17.4", "required", ["lodash", "lodash.merge"]],
          ["pkg:npm/lodash@4.17.10", "excluded", []],
        ],
      );
      const cve = bom.vulnerabilities.find((v) => v.id === "CVE-2018-16487");
      assert.deepEqual(
        cve?.properties?.filter((p) => p.name === "imaging:reachesAffectedFunction").map((p) => p.value),
        ["lodash@4.17.4: true", "lodash@4.17.10: false"],
      );
    });
  });
}
