import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { CLI, INTERNAL_PORTS_ON_LOOPBACK, spawnService } from "../support/cli.ts";
import { freePort } from "../support/service.ts";

/**
 * Records every package the CLI process loads and prints them on exit (stderr, one JSON line; the store's
 * read workers load the hook too and stay silent).
 */
const RECORD_PACKAGES = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from "node:module";
import { isMainThread } from "node:worker_threads";
const packages = new Set();
registerHooks({ load(url, context, next) {
  const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(url);
  if (match) packages.add(match[1]);
  return next(url, context);
} });
let workers = 0;
process.on("worker", () => workers++);
if (isMainThread) process.on("exit", () => process.stderr.write("\\npackages:" + JSON.stringify([...packages]) + "\\nworkers:" + workers + "\\n"));
`)}`;

const HEAVY = ["oidc-provider", "fastify", "@modelcontextprotocol/server", "@keycloak/keycloak-admin-client"];

function packagesLoadedBy(args: string[]): { stdout: string; packages: string[]; workers: number } {
  const dataDir = mkdtempSync(join(tmpdir(), "imaging-lazy-"));
  const result = spawnSync(process.execPath, ["--import", RECORD_PACKAGES, CLI, ...args], {
    env: { ...process.env, IMAGING_DATA_DIR: dataDir },
    encoding: "utf8",
  });
  assert.equal(result.status, 0, result.stderr);
  const line = /^packages:(.*)$/m.exec(result.stderr)?.[1];
  assert.ok(line, "the recording hook reported the loaded packages");
  const workers = Number(/^workers:(\d+)$/m.exec(result.stderr)?.[1]);
  return { stdout: result.stdout, packages: JSON.parse(line) as string[], workers };
}

describe("imaging loads only what a command needs", () => {
  it("--version loads none of the service's heavy packages", () => {
    const { stdout, packages } = packagesLoadedBy(["--version"]);
    assert.match(stdout, /^\d+\.\d+\.\d+/);
    assert.deepEqual(
      HEAVY.filter((p) => packages.includes(p)),
      [],
    );
  });

  it("users list (embedded identity provider) loads neither oidc-provider, Fastify, the MCP SDK nor the Keycloak admin client, and starts no read worker", () => {
    const { packages, workers } = packagesLoadedBy(["users", "list"]);
    assert.ok(packages.includes("kysely"), "it does open the store");
    assert.equal(workers, 0, "it reads on its own connection: no read worker thread");
    assert.deepEqual(
      HEAVY.filter((p) => packages.includes(p)),
      [],
    );
  });

  it("start (embedded identity provider, SQLite) loads neither the registries' readers and fetcher, the PostgreSQL driver nor the Keycloak admin client until one is needed", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "imaging-lazy-"));
    const port = await freePort();
    const service = await spawnService(["--data-dir", dataDir, "--port", String(port)], {
      NODE_OPTIONS: `--import ${RECORD_PACKAGES}`,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...INTERNAL_PORTS_ON_LOOPBACK,
    });
    assert.equal(await service.stop(), 0, service.stderr());
    const line = /^packages:(.*)$/m.exec(service.stderr())?.[1];
    assert.ok(line, "the recording hook reported the loaded packages");
    const packages = JSON.parse(line) as string[];
    assert.ok(packages.includes("oidc-provider") && packages.includes("fastify"), "the service did start");
    assert.deepEqual(
      ["openpgp", "make-fetch-happen", "fast-xml-parser", "pg", "@keycloak/keycloak-admin-client"].filter(
        (p) => packages.includes(p),
      ),
      [],
    );
  });

  it("--help still lists every command", () => {
    const { stdout } = packagesLoadedBy(["--help"]);
    for (const command of ["start", "scan", "config", "users", "cimd", "doctor", "idp", "clients"]) {
      assert.match(stdout, new RegExp(`^  ${command}\\b`, "m"));
    }
  });
});
