import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { zipSync } from "fflate";
import { openStore } from "../../src/store/database.ts";
import { findVulnerability } from "../../src/store/vulnerabilities.ts";
import { runCli } from "../support/cli.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const fixture = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../fixtures/osv/${name}`, import.meta.url)));

/** OSV's bucket layout on loopback: /npm/all.zip and /Maven/all.zip, with ETags. */
function osvMirror() {
  const archives: Record<string, Buffer> = {
    "/npm/all.zip": Buffer.from(
      zipSync({
        "GHSA-p6mc-m468-83gw.json": fixture("GHSA-p6mc-m468-83gw.json"),
        "GHSA-35jh-r3h4-6jhm.json": fixture("lodash-template-2025/GHSA-35jh-r3h4-6jhm.json"),
      }),
    ),
    "/Maven/all.zip": Buffer.from(
      zipSync({ "GHSA-jfh8-c2jp-5v3q.json": fixture("GHSA-jfh8-c2jp-5v3q.json") }),
    ),
  };
  const log: { path: string; status: number; authorization?: string }[] = [];
  const server = createServer((request, response) => {
    const path = request.url ?? "";
    const body = archives[path];
    const etag = body ? `"${body.length}"` : "";
    const status = !body ? 404 : request.headers["if-none-match"] === etag ? 304 : 200;
    log.push({ path, status, authorization: request.headers.authorization });
    if (status === 200) response.writeHead(200, { "content-type": "application/zip", etag }).end(body);
    else response.writeHead(status, body ? { etag } : {}).end();
  });
  return { server, log };
}

for (const kind of STORE_KINDS) {
  describe(`imaging advisories sync on ${kind}`, () => {
    let store: TestStore;
    let mirror: ReturnType<typeof osvMirror>;
    let url: string;
    const env = () => ({ DATABASE_URL: store.databaseUrl ?? "", IMAGING_DATA_DIR: store.dataDir });
    const sync = (...args: string[]) => runCli(["advisories", "sync", "--json", ...args], env());

    before(async () => {
      store = await createTestStore(kind);
      mirror = osvMirror();
      await new Promise<void>((resolve) => (mirror.server as Server).listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(mirror.server.address() as AddressInfo).port}`;
    });
    after(async () => {
      await new Promise<void>((resolve) => mirror.server.close(() => resolve()));
      await store?.drop();
    });

    it("downloads <url>/npm/all.zip and <url>/Maven/all.zip and imports them", async () => {
      const result = await sync("--url", url);
      assert.equal(result.code, 0, result.stderr);
      const output = JSON.parse(result.stdout);
      assert.deepEqual(
        {
          imported: output.imported,
          updated: output.updated,
          unchanged: output.unchanged,
          skipped: output.skipped,
        },
        { imported: 3, updated: 0, unchanged: 0, skipped: 0 },
      );
      assert.deepEqual(
        mirror.log.map((r) => `${r.path} ${r.status}`),
        ["/npm/all.zip 200", "/Maven/all.zip 200"],
      );
      const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
      try {
        assert.equal((await findVulnerability(handle.db, "GHSA-jfh8-c2jp-5v3q"))?.cveId, "CVE-2021-44228");
        assert.equal((await findVulnerability(handle.db, "CVE-2021-23337"))?.severity, "HIGH");
        // Affected functions come along: GHSA-p6mc-m468-83gw names lodash.baseSet in lodash and lodash-es.
        const functions = await handle.db
          .withTables<{
            affected_functions: { id: number; record_id: string; function: string; member: string };
          }>()
          .selectFrom("affected_functions")
          .select(["record_id", "function", "member"])
          .orderBy("id")
          .execute();
        assert.deepEqual(
          functions.map((f) => `${f.record_id} ${f.function} ${f.member}`),
          ["GHSA-p6mc-m468-83gw lodash.baseSet baseSet", "GHSA-p6mc-m468-83gw lodash.baseSet baseSet"],
        );
      } finally {
        await handle.close();
      }
    });

    it("revalidates an unchanged archive instead of downloading it, and changes nothing", async () => {
      mirror.log.length = 0;
      const result = await sync("--url", url, "--ecosystem", "npm");
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(
        mirror.log.map((r) => `${r.path} ${r.status}`),
        ["/npm/all.zip 304"],
      );
      const output = JSON.parse(result.stdout);
      assert.equal(output.unchanged, 2);
      assert.equal(output.archives[0].fromCache, true);
    });

    it("--offline uses the archives downloaded before, without a request", async () => {
      mirror.log.length = 0;
      const result = await sync("--url", url, "--offline");
      assert.equal(result.code, 0, result.stderr);
      assert.equal(mirror.log.length, 0);
      assert.equal(JSON.parse(result.stdout).unchanged, 3);
    });

    it("says in one line when the mirror has no archive, never printing its credentials", async () => {
      const withCredentials = url.replace("http://", "http://ci:t0ken-s3cret@");
      const result = await sync("--url", `${withCredentials}/nowhere`, "--ecosystem", "maven");
      assert.equal(result.code, 1);
      const lines = result.stderr.trim().split("\n");
      assert.match(
        lines.at(-1) ?? "",
        /^imaging: http:\/\/\*\*\*@127\.0\.0\.1:\d+\/nowhere\/Maven\/all\.zip: the mirror has no such archive \(HTTP 404\)$/,
      );
      assert.doesNotMatch(result.stderr + result.stdout, /t0ken-s3cret/);
    });

    it("refuses an unknown ecosystem", async () => {
      const result = await sync("--url", url, "--ecosystem", "pypi");
      assert.equal(result.code, 2);
      assert.equal(result.stderr.trim(), "imaging: --ecosystem must be npm or maven, got 'pypi'");
    });
  });
}
