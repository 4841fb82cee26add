import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { type RunningMcpService, startMcpService } from "../../src/mcp/http-service.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) run against each MCP server
 * directly (the suite cannot send a bearer token, so not through the gateway). Only the generic server
 * scenarios apply: the others call fixture tools of the reference server.
 */
const require = createRequire(import.meta.url);
const CLI = join(
  dirname(require.resolve("@modelcontextprotocol/conformance/package.json")),
  "dist",
  "index.js",
);

const RUNS: { scenario: string; specVersion: string }[] = [
  // 2025 era: initialize handshake, sessions
  { scenario: "server-initialize", specVersion: "2025-11-25" },
  { scenario: "ping", specVersion: "2025-11-25" },
  { scenario: "tools-list", specVersion: "2025-11-25" },
  { scenario: "dns-rebinding-protection", specVersion: "2025-11-25" },
  { scenario: "json-schema-2020-12", specVersion: "2025-11-25" },
  { scenario: "server-session-lifecycle", specVersion: "2025-11-25" },
  // 2026-07-28 era: stateless, server/discover
  { scenario: "server-stateless", specVersion: "2026-07-28" },
  { scenario: "tools-list", specVersion: "2026-07-28" },
  { scenario: "dns-rebinding-protection", specVersion: "2026-07-28" },
  { scenario: "json-schema-2020-12", specVersion: "2026-07-28" },
  { scenario: "http-header-validation", specVersion: "2026-07-28" },
];

/**
 * Checks that cannot apply to these servers: they need the reference server's fixture tools
 * (`json_schema_2020_12_tool`, `test_missing_capability`, `test_streaming_elicitation`,
 * `test_logging_tool`). The suite reports them as failures; anything else must pass.
 */
const notApplicable = (check: Check) =>
  check.id === "json-schema-2020-12-tool-found" ||
  /^Not testable: server does not list the diagnostic tool '\w+'/.test(check.errorMessage ?? "");

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";
  errorMessage?: string;
}

const run = promisify(execFile);

async function conformance(url: string, scenario: string, specVersion: string): Promise<Check[]> {
  const output = mkdtempSync(join(tmpdir(), "mcp-conformance-"));
  try {
    // Exits 1 when a check fails: the checks file says which.
    const result = await run(
      process.execPath,
      [CLI, "server", "--url", url, "--scenario", scenario, "--spec-version", specVersion, "-o", output],
      { timeout: 60_000, env: { ...process.env, NO_COLOR: "1" } },
    ).catch((error: { stdout?: string; stderr?: string }) => error);
    const dir = readdirSync(output).find((name) => name.startsWith(`server-${scenario}-`));
    if (!dir) throw new Error(`no result for ${scenario} (${specVersion}): ${result.stderr}${result.stdout}`);
    return JSON.parse(readFileSync(join(output, dir, "checks.json"), "utf8")) as Check[];
  } finally {
    rmSync(output, { recursive: true, force: true });
  }
}

describe("MCP conformance suite (generic server scenarios)", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: RunningService;
  const servers: RunningMcpService[] = [];

  before(async () => {
    issuer = await startTestIssuer();
    store = await createTestStore("sqlite");
    service = await startTestService(store, { issuer: issuer.issuer }, async (handle) => {
      await loadDemo(handle.db);
    });
    for (const kind of ["analysis", "gatekeeper"] as const) {
      servers.push(await startMcpService({ kind, host: "127.0.0.1", port: 0, restUrl: service.restUrl }));
    }
  });
  after(async () => {
    for (const server of servers) await server.close();
    await service?.stop();
    await issuer?.close();
    await store?.drop();
  });

  for (const [index, kind] of (["analysis", "gatekeeper"] as const).entries()) {
    describe(`${kind} server`, () => {
      for (const { scenario, specVersion } of RUNS) {
        it(`${scenario} (${specVersion})`, async () => {
          const endpoint = servers[index]?.endpoint as string;
          const checks = await conformance(endpoint, scenario, specVersion);
          assert.ok(checks.length > 0, "the scenario ran checks");
          const failed = checks.filter(
            (c) => (c.status === "FAILURE" || c.status === "WARNING") && !notApplicable(c),
          );
          assert.deepEqual(
            failed.map((c) => `${c.id}: ${c.errorMessage}`),
            [],
            `failed checks of ${scenario} at ${specVersion}`,
          );
          if (scenario !== "json-schema-2020-12") {
            assert.ok(
              checks.some((c) => c.status === "SUCCESS"),
              "at least one check passed",
            );
          }
        });
      }
    });
  }
});
