import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { type Browser, chromium } from "playwright-core";
import { type RunningMcpService, startMcpService } from "../../src/mcp/http-service.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
import { CHROMIUM_FLAGS } from "../support/mcp-sign-in.ts";
import { freePort, startTestService } from "../support/service.ts";
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
  { scenario: "server-sse-polling", specVersion: "2025-11-25" },
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
 * `test_logging_tool`, and `test_reconnection` that closes its stream mid-call for
 * server-sse-disconnect-resume: resuming with Last-Event-ID is tested below with a real tool). The suite
 * reports them as failures; anything else must pass.
 */
const notApplicable = (check: Check) =>
  check.id === "json-schema-2020-12-tool-found" ||
  check.id === "server-sse-disconnect-resume" ||
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

  it("a 2025 client that loses a POST stream after its priming event resumes it with Last-Event-ID", async () => {
    const endpoint = servers[0]?.endpoint as string;
    const token = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    };
    const opened = await fetch(endpoint, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "resume", version: "1" },
        },
      }),
    });
    await opened.text();
    const session = {
      ...headers,
      "mcp-session-id": opened.headers.get("mcp-session-id") as string,
      "mcp-protocol-version": "2025-11-25",
    };
    await fetch(endpoint, {
      method: "POST",
      headers: session,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });

    const call = await fetch(endpoint, {
      method: "POST",
      headers: session,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "applications", arguments: {} },
      }),
    });
    assert.equal(call.status, 200);
    assert.match(call.headers.get("content-type") ?? "", /^text\/event-stream/);
    // The first event primes the client: an id, a retry delay and empty data. Then the client goes away.
    const reader = (call.body as ReadableStream<Uint8Array>).getReader();
    let received = "";
    while (!received.includes("\n\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      received += new TextDecoder().decode(value);
    }
    await reader.cancel();
    const priming = /^id: (\S+)\nretry: (\d+)\ndata: \n\n/.exec(received);
    assert.ok(priming, `priming event first: ${JSON.stringify(received)}`);
    assert.equal(priming[2], "1000");
    // As an SSE client does: wait the retry delay, then reconnect naming the last event seen.
    await new Promise((resolve) => setTimeout(resolve, Number(priming[2])));

    const resumed = await fetch(endpoint, {
      method: "GET",
      headers: { ...session, accept: "text/event-stream", "last-event-id": priming[1] as string },
    });
    assert.equal(resumed.status, 200);
    const replay = (resumed.body as ReadableStream<Uint8Array>).getReader();
    let replayed = "";
    const stop = setTimeout(() => void replay.cancel(), 10_000);
    while (!/"id":7/.test(replayed)) {
      const { value, done } = await replay.read();
      if (done) break;
      replayed += new TextDecoder().decode(value);
    }
    clearTimeout(stop);
    await replay.cancel();
    const answer = /^data: (.*"id":7.*)$/m.exec(replayed)?.[1];
    assert.ok(answer, `the tool's answer is replayed: ${replayed}`);
    const message = JSON.parse(answer) as { result?: { content: { text: string }[] } };
    assert.match(message.result?.content[0]?.text ?? "", /payments-service/);
    await fetch(endpoint, { method: "DELETE", headers: session });
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

/**
 * The suite's authorization server scenarios against the embedded identity provider, through the
 * gateway. `authorization-code-grant` sends an authorization request without `scope` (RFC 6749
 * section 3.3: the server's default applies) from a public client, prints the URL for a person to
 * sign in, and redeems the code its loopback callback receives: here the person is headless Chromium.
 */
describe("MCP conformance suite (authorization server scenarios, embedded identity provider)", () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let idp: IdpService;
  let browser: Browser;

  before(async () => {
    documents = await startCimdDocumentServer();
    store = await createTestStore("sqlite");
    idp = await startIdpService(store, {
      idp: { cimdCa: documents.ca },
      seed: async (handle) => {
        await seedUsers(handle.db);
        await seedCimdClient(handle.db, "conformance", documents.clientId);
      },
    });
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  });
  after(async () => {
    await browser?.close();
    await idp?.stop();
    await documents?.close();
    await store?.drop();
  });

  /**
   * Runs every authorization server scenario, in the suite's order (authorization-code-grant needs the
   * metadata the first one read, so they cannot run one by one); `signIn` gets the authorization URL
   * the suite prints. The checks of each scenario, by scenario.
   */
  async function authorizationScenarios(signIn: (authorizationUrl: string) => Promise<void>) {
    const output = mkdtempSync(join(tmpdir(), "mcp-conformance-as-"));
    const port = await freePort();
    const args = [CLI, "authorization", "--url", idp.issuer, "--client-id", documents.clientId];
    args.push("--resource", idp.mcp, "--port", String(port), "-o", output);
    const child = spawn(process.execPath, args, {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const killer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    try {
      let signedIn: Promise<void> | undefined;
      child.stdout.on("data", (d) => {
        stdout += d;
        const url = stdout.split("\n").find((line) => line.startsWith(`${idp.issuer}/`));
        if (url && !signedIn) {
          signedIn = signIn(url.trim());
          // A failed sign-in leaves the suite waiting minutes for its callback: stop it at once.
          signedIn.catch(() => child.kill("SIGKILL"));
        }
      });
      await exited;
      await signedIn;
      const results = new Map<string, Check[]>();
      for (const dir of readdirSync(output)) {
        // One directory per scenario: authorization-server-<scenario>-<timestamp>.
        const scenario = dir.replace(/^authorization-server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
        results.set(scenario, JSON.parse(readFileSync(join(output, dir, "checks.json"), "utf8")) as Check[]);
      }
      if (results.size === 0) throw new Error(`no results: ${stderr}${stdout}`);
      return { results, stdout };
    } finally {
      clearTimeout(killer);
      rmSync(output, { recursive: true, force: true });
    }
  }

  const signInWithChromium = async (authorizationUrl: string) => {
    const page = await browser.newPage();
    try {
      await page.goto(authorizationUrl);
      await page.locator('input[name="username"]').fill("alice");
      await page.locator('input[name="password"]').fill(USERS.alice.password);
      await page.locator('input[name="password"]').press("Enter");
      await page.locator("#approve").waitFor({ timeout: 10_000 });
      const consent = await page.content();
      assert.match(consent, /mcp:tools/, "the consent page lists the default scopes");
      await page.locator("#approve").click();
      await page.waitForURL((url) => url.pathname === "/callback");
    } finally {
      await page.close();
    }
  };

  it("every scenario passes, authorization-code-grant (a request without scope) included", async () => {
    const { results, stdout } = await authorizationScenarios(signInWithChromium);
    assert.deepEqual(
      [...results.keys()].sort(),
      ["authorization-code-grant", "authorization-server-metadata-endpoint"],
      stdout,
    );
    for (const [scenario, checks] of results) {
      const failed = checks.filter(
        (c) => c.status === "FAILURE" || c.status === "WARNING" || c.status === "SKIPPED",
      );
      assert.deepEqual(
        failed.map((c) => `${c.id}: ${c.errorMessage}`),
        [],
        `failed checks of ${scenario}`,
      );
      assert.ok(
        checks.some((c) => c.status === "SUCCESS"),
        `${scenario} passed a check`,
      );
    }
    const grant = results.get("authorization-code-grant")?.find((c) => c.id === "authorization-code-grant");
    assert.equal(grant?.status, "SUCCESS", "the code was granted and redeemed for a token");
  });
});
