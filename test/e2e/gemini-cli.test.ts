/**
 * Gemini CLI (from npm, @google/gemini-cli 0.61.0) driven headless against the analysis MCP server, as
 * a developer configures it in `~/.gemini/settings.json` (`httpUrl` and an Authorization header): it
 * connects, lists the tools, and opens its event streams without an error. Issue 30 point 4: it logged
 * "Failed to open SSE stream: Conflict" at every start, when a second GET stream of a session was 409.
 *
 * Between the client and the server, a loopback relay records each request's method, JSON-RPC method
 * and status. The model Gemini would then ask is a closed loopback port: nothing leaves the machine.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type RunningMcpService, startMcpService } from "../../src/mcp/http-service.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { ensureGeminiCli } from "../support/real-clients.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

interface Seen {
  method: string;
  rpc: string;
  status: number;
}

/** A relay to `target` recording what crosses it; event streams are piped as they come. */
async function recordingRelay(target: URL): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      let rpc = "";
      try {
        rpc = String((JSON.parse(body.toString("utf8")) as { method?: unknown }).method ?? "");
      } catch {
        // a GET or DELETE has no body
      }
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: request.method,
          headers: request.headers,
        },
        (answer) => {
          seen.push({ method: request.method ?? "", rpc, status: answer.statusCode ?? 0 });
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      upstream.on("error", () => response.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen };
}

/** Runs Gemini CLI until it exits or `until` matches its output; returns what it printed. */
function runGemini(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  until?: RegExp,
): Promise<{ output: string; code: number | null }> {
  return new Promise((resolve) => {
    // its own process group: Gemini CLI may start a child of its own, and the whole group is stopped
    const child = spawn(process.execPath, [script, ...args], {
      env,
      cwd: env.HOME,
      stdio: "pipe",
      detached: true,
    });
    let output = "";
    let done = false;
    const finish = (code: number | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        process.kill(-(child.pid as number), "SIGKILL");
      } catch {
        // the group has ended already
      }
      resolve({ output, code });
    };
    const timer = setTimeout(() => finish(null), 120_000);
    const take = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (until?.test(output)) finish(0);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("exit", (code) => finish(code));
  });
}

describe("Gemini CLI against the analysis MCP server", () => {
  let store: TestStore;
  let issuer: TestIssuer;
  let service: RunningService;
  let analysis: RunningMcpService;
  let relay: Awaited<ReturnType<typeof recordingRelay>>;
  let home: string;
  let gemini: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    gemini = ensureGeminiCli();
    issuer = await startTestIssuer();
    store = await createTestStore("sqlite");
    service = await startTestService(store, { issuer: issuer.issuer }, async (handle) => {
      await loadDemo(handle.db);
    });
    analysis = await startMcpService({
      kind: "analysis",
      host: "127.0.0.1",
      port: 0,
      restUrl: service.restUrl,
    });
    relay = await recordingRelay(new URL(analysis.endpoint));
    const token = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
    home = mkdtempSync(join(tmpdir(), "imaging-gemini-"));
    mkdirSync(join(home, ".gemini"), { recursive: true });
    writeFileSync(
      join(home, ".gemini", "settings.json"),
      JSON.stringify({
        // the test's home folder is not one the user trusted: without this, Gemini CLI disables servers
        security: { folderTrust: { enabled: false }, auth: { selectedType: "gemini-api-key" } },
        mcpServers: { imaging: { httpUrl: relay.url, headers: { Authorization: `Bearer ${token}` } } },
      }),
    );
    env = {
      PATH: process.env.PATH,
      HOME: home,
      GEMINI_API_KEY: "not-used",
      GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9",
      GEMINI_TELEMETRY_ENABLED: "false",
      NO_COLOR: "1",
      // one process: it relaunches itself with a larger heap otherwise
      GEMINI_CLI_NO_RELAUNCH: "true",
    };
  });
  after(async () => {
    relay?.server.close();
    await analysis?.close();
    await service?.stop();
    await issuer?.close();
    await store?.drop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("`gemini mcp list` says the server is connected", async () => {
    const { output, code } = await runGemini(gemini, ["mcp", "list"], env);
    assert.equal(code, 0, output);
    assert.match(
      output,
      new RegExp(`✓ imaging: ${relay.url.replace(/[.]/g, "\\.")} \\(http\\) - Connected`),
      output,
    );
  });

  it("at start, discovers the tools and opens its streams without an error", async () => {
    const before = relay.seen.length;
    const { output } = await runGemini(
      gemini,
      ["-p", "hello", "--debug"],
      env,
      /Recording metric for phase: discover_tools/,
    );
    assert.match(output, /Registering notification handlers for server 'imaging'/, output);
    assert.doesNotMatch(output, /Failed to open SSE stream/, output);
    const seen = relay.seen.slice(before);
    assert.ok(
      seen.some((s) => s.rpc === "tools/list" && s.status === 200),
      `tools/list answered: ${JSON.stringify(seen)}`,
    );
    // its event stream was served; a second one of a session was 409 before. The only refusal the
    // transport allows is 405 to a GET (the SDK asks to resume the answered stream: nothing to resume).
    assert.ok(
      seen.some((s) => s.method === "GET" && s.status === 200),
      `a GET stream is served: ${JSON.stringify(seen)}`,
    );
    assert.deepEqual(
      seen.filter((s) => s.status >= 400 && !(s.method === "GET" && s.status === 405)),
      [],
      JSON.stringify(seen),
    );
  });
});
