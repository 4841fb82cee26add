import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli, runCliProcess, spawnService } from "../support/cli.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

describe("imaging command", () => {
  let store: TestStore;
  before(async () => {
    store = await createTestStore("sqlite");
  });
  after(async () => {
    await store?.drop();
  });

  it("has --help on every command", async () => {
    for (const args of [
      [],
      ["start"],
      ["demo", "load"],
      ["api-keys", "create"],
      ["api-keys", "list"],
      ["api-keys", "revoke"],
      ["config", "show"],
      ["client-config"],
    ]) {
      const result = await runCli([...args, "--help"]);
      assert.equal(result.code, 0, `${args.join(" ")} --help`);
      assert.match(result.stdout, /^Usage: imaging/m);
    }
  });

  // A real process: the exit code and the one line are what a shell sees.
  it("explains a bad flag value in one readable line", async () => {
    const result = await runCliProcess([
      "api-keys",
      "create",
      "--user",
      "u",
      "--role",
      "root",
      "--data-dir",
      store.dataDir,
    ]);
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim(), "imaging: --role must be admin or viewer, got 'root'");
  });

  it("reports invalid configuration naming the variable", async () => {
    const result = await runCli(["config", "show"], { PORT: "eighty" });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /PORT from environment/);
  });

  it("says which setting to change when the port is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const result = await runCliProcess(["start", "--data-dir", store.dataDir, "--port", String(port)], {
        PUBLIC_URL: "http://127.0.0.1:8090",
        REST_PORT: "0",
        MCP_ANALYSIS_PORT: "0",
        MCP_GATEKEEPER_PORT: "0",
        IMAGING_BIND_ADDRESS: "127.0.0.1",
        LOG_LEVEL: "silent",
      });
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr.trim(),
        `imaging: Port ${port} on 127.0.0.1 is already in use: stop the other process or change PORT (or --port)`,
      );
    } finally {
      blocker.close();
    }
  });

  it("config show --json prints the effective base_url", async () => {
    const result = await runCli(["config", "show", "--json"], { PUBLIC_URL: "https://gw.example.com" });
    assert.equal(result.code, 0);
    assert.equal(JSON.parse(result.stdout).baseUrl, "https://gw.example.com");
  });

  describe("client-config", () => {
    it("prints the Claude Code command with the gateway URL", async () => {
      const result = await runCli(["client-config", "claude-code"], {
        PUBLIC_URL: "http://gw.example.com:8090",
      });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        result.stdout.split("\n")[0],
        "claude mcp add --transport http --scope user imaging http://gw.example.com:8090/mcp",
      );
      assert.match(result.stdout, /plain http on a non-loopback host/);
    });

    it("omits port 443 over https and has no http warning", async () => {
      const result = await runCli(["client-config", "claude-code", "--server", "gatekeeper", "--json"], {
        PUBLIC_URL: "https://gw.example.com:443",
      });
      assert.deepEqual(JSON.parse(result.stdout), {
        client: "claude-code",
        name: "imaging-gatekeeper",
        url: "https://gw.example.com/mcp/gatekeeper",
        command:
          "claude mcp add --transport http --scope user imaging-gatekeeper https://gw.example.com/mcp/gatekeeper",
      });
    });

    it("prints the VS Code mcp.json object", async () => {
      const result = await runCli(["client-config", "vscode", "--name", "imaging", "--json"], {
        PUBLIC_URL: "https://gw.example.com",
      });
      assert.deepEqual(JSON.parse(result.stdout), {
        servers: { imaging: { type: "http", url: "https://gw.example.com/mcp" } },
      });
    });

    it("merges into an existing .vscode/mcp.json and keeps what it holds", async () => {
      const workspace = join(store.dataDir, "workspace");
      mkdirSync(join(workspace, ".vscode"), { recursive: true });
      const file = join(workspace, ".vscode", "mcp.json");
      writeFileSync(
        file,
        JSON.stringify({ inputs: [{ id: "x" }], servers: { other: { type: "stdio", command: "x" } } }),
      );
      const result = await runCli(["client-config", "vscode", "--write", "--workspace", workspace], {
        PUBLIC_URL: "https://gw.example.com",
      });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), {
        inputs: [{ id: "x" }],
        servers: {
          other: { type: "stdio", command: "x" },
          imaging: { type: "http", url: "https://gw.example.com/mcp" },
        },
      });
    });

    it("leaves a commented mcp.json unchanged and says why", async () => {
      const workspace = join(store.dataDir, "jsonc");
      mkdirSync(join(workspace, ".vscode"), { recursive: true });
      const file = join(workspace, ".vscode", "mcp.json");
      const original = '{\n  // mine\n  "servers": {}\n}\n';
      writeFileSync(file, original);
      const result = await runCli(["client-config", "vscode", "--write", "--workspace", workspace], {
        PUBLIC_URL: "https://gw.example.com",
      });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /is not plain JSON .* left unchanged/);
      assert.equal(readFileSync(file, "utf8"), original);
    });

    it("refuses an unknown client", async () => {
      const result = await runCli(["client-config", "cursor"]);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /client must be claude-code or vscode/);
    });
  });

  describe("against a running service on the same store", () => {
    let service: Awaited<ReturnType<typeof spawnService>>;
    before(async () => {
      service = await spawnService(["--data-dir", store.dataDir, "--port", "0", "--demo"], {
        PUBLIC_URL: "http://127.0.0.1:8090",
        REST_PORT: "0",
        MCP_ANALYSIS_PORT: "0",
        MCP_GATEKEEPER_PORT: "0",
        IMAGING_BIND_ADDRESS: "127.0.0.1",
      });
    });
    after(() => {
      if (service.child.exitCode === null) service.child.kill("SIGKILL");
    });

    it("loads the demo applications into an empty store at start", () => {
      assert.deepEqual(
        [...service.summary.demo].sort(),
        ["claims-portal", "payments-service", "storefront-web"].sort(),
      );
    });

    it("creates an API key that the running service accepts at once, and revokes it", async () => {
      const created = await runCli([
        "api-keys",
        "create",
        "--user",
        "ci-script",
        "--role",
        "admin",
        "--json",
        "--data-dir",
        store.dataDir,
      ]);
      assert.equal(created.code, 0, created.stderr);
      const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
      const url = `${service.summary.gateway}/rest/applications/payments-service/insights/cve/CVE-2021-44228/occurrences?limit=20&date=2024-02-01T00:00:00Z`;
      const response = await fetch(url, { headers: { "x-api-key": key } });
      assert.equal(response.status, 200);
      const body = (await response.json()) as { name: string; version: string }[];
      assert.ok(body.some((p) => p.name === "org.apache.logging.log4j:log4j-core" && p.version === "2.14.1"));

      const listed = await runCli(["api-keys", "list", "--json", "--data-dir", store.dataDir]);
      const keys = JSON.parse(listed.stdout) as { id: string; user: string; key?: string }[];
      assert.deepEqual(
        keys.map((k) => [k.id, k.user, "key" in k]),
        [[id, "ci-script", false]],
      );
      assert.ok(!listed.stdout.includes(key), "secrets are never listed");

      // Key ids are hex, never read as an option; `--` ends the options all the same.
      assert.match(id, /^[0-9a-f]{16}$/);
      const revoked = await runCli(["api-keys", "revoke", "--data-dir", store.dataDir, "--", id]);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal((await fetch(url, { headers: { "x-api-key": key } })).status, 401);
      const unknown = await runCli(["api-keys", "revoke", "0000", "--data-dir", store.dataDir]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /No API key with id '0000'/);
    });

    it("demo load on a populated store leaves existing applications alone", async () => {
      const result = await runCli(["demo", "load", "--json", "--data-dir", store.dataDir]);
      assert.equal(result.code, 0, result.stderr);
      const body = JSON.parse(result.stdout) as { applications: { skipped: boolean }[] };
      assert.ok(body.applications.every((a) => a.skipped));
    });

    it("shuts down on SIGTERM with exit code 0 and closes the store cleanly", async () => {
      service.child.kill("SIGTERM");
      const [code] = await once(service.child, "exit");
      assert.equal(code, 0, service.stderr());
      const wal = join(store.dataDir, "imaging.db-wal");
      // Closing the last connection checkpoints the write-ahead log into the database file.
      assert.ok(!existsSync(wal) || statSync(wal).size === 0, "WAL checkpointed on close");
    });
  });
});
