import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { RunningService } from "../../src/service.ts";
import { FIXTURE, loadFixture, loadPortalFixture } from "../support/fixture.ts";
import { seedCimdClient } from "../support/idp-service.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

/**
 * Schemathesis (from PyPI; .ci/run installs it and sets IMAGING_SCHEMATHESIS) generates requests for
 * every operation of /rest/openapi.json, valid and invalid, sends them through the gateway and checks
 * each answer against the document: no 5xx, documented status codes, content types and schemas,
 * schema-valid requests accepted, schema-violating ones refused, 405 with Allow for other methods,
 * bad credentials refused. Bounded (examples per operation, one worker) to about a minute or two.
 */
const SCHEMATHESIS = process.env.IMAGING_SCHEMATHESIS;
const MAX_EXAMPLES = process.env.SCHEMATHESIS_MAX_EXAMPLES ?? "50";
const SEED = process.env.SCHEMATHESIS_SEED ?? "20261124";

function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // One worker: several threads trip a CPython 3.11 AST bug inside Hypothesis.
    // Its working directory gets its example database: a temporary one, not the repository.
    const cwd = mkdtempSync(join(tmpdir(), "schemathesis-"));
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env, NO_COLOR: "1" } });
    child.on("exit", () => rmSync(cwd, { recursive: true, force: true }));
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, output }));
  });
}

describe("REST API: the OpenAPI document against a schema-driven fuzzer (Schemathesis)", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: RunningService;
  let apiKey: string;

  before(async () => {
    assert.ok(
      SCHEMATHESIS,
      "IMAGING_SCHEMATHESIS is not set: run .ci/run (it installs Schemathesis from PyPI and sets it), or point it at a schemathesis executable",
    );
    issuer = await startTestIssuer();
    store = await createTestStore("sqlite");
    // Uploaded analyses name packages the platform looks up in registries: none here (nothing listens).
    const registry = "http://127.0.0.1:9";
    const registries = { npmRegistryUrl: registry, mavenRepositoryUrl: registry };
    service = await startTestService(store, { issuer: issuer.issuer, ...registries }, async (handle) => {
      await loadFixture(handle.db);
      await loadPortalFixture(handle.db);
      await seedCimdClient(handle.db, "fuzz-client", "https://fuzz.example/client.json");
    });
    apiKey = (await createApiKey(service.store.db, { user: "fuzzer", role: "admin", applications: [] })).key;
  });
  after(async () => {
    await service?.stop();
    await issuer?.close();
    await store?.drop();
  });

  // A guard against a hang only: ~50 s alone, it ran past 300 s beside other files on a loaded machine.
  it("every operation, every check: 0 failures", { timeout: 900_000 }, async () => {
    const document = (await (await fetch(`${service.gatewayUrl}/rest/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.values(document.paths).reduce((n, path) => n + Object.keys(path).length, 0);
    assert.ok(operations >= 12, `the document lists the operations (${operations})`);

    // The operations about one CVE of an application need both a known application and a known CVE to
    // answer anything but 404 (an unknown CVE is 404 unknown-vulnerability): Schemathesis infers neither
    // from the document's links, so they are given here (its positive cases use them, negative ones do not).
    const configDir = mkdtempSync(join(tmpdir(), "schemathesis-config-"));
    const config = join(configDir, "schemathesis.toml");
    writeFileSync(
      config,
      [
        "[[operations]]",
        'include-path-regex = "^/rest/applications/\\\\{name\\\\}/insights/cve/\\\\{id\\\\}"',
        `parameters = { "path.name" = "shop", "path.id" = "${FIXTURE.cve}" }`,
        "",
        "[[operations]]",
        'include-path = "/rest/vulnerabilities/{id}"',
        `parameters = { "path.id" = "${FIXTURE.cve}" }`,
        "",
        // A client to read and change: random names are all 404, which Schemathesis reports as missing
        // test data. Named per operation (`include-name`): an `include-method` beside `include-path`
        // does not narrow the block, and the DELETE would remove the client before the others run.
        "[[operations]]",
        'include-name = "GET /rest/admin/cimd-policies/{client}"',
        'parameters = { "path.client" = "fuzz-client" }',
        "",
        "[[operations]]",
        'include-name = "PATCH /rest/admin/cimd-policies/{client}"',
        'parameters = { "path.client" = "fuzz-client" }',
        "",
      ].join("\n"),
    );
    const { code, output } = await run(
      SCHEMATHESIS as string,
      [
        "--config-file",
        config,
        "run",
        `${service.gatewayUrl}/rest/openapi.json`,
        "--url",
        service.gatewayUrl,
        "--header",
        `X-API-KEY: ${apiKey}`,
        "--checks",
        "all",
        "--max-examples",
        MAX_EXAMPLES,
        "--seed",
        SEED,
        "--workers",
        "1",
      ],
      {},
    );
    rmSync(configDir, { recursive: true, force: true });
    assert.equal(code, 0, output);
    assert.match(output, new RegExp(`Tested: ${operations}\\b`), output);
    assert.match(output, /No issues found/, output);
  });
});
