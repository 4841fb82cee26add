import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { claudeCodeCommand, mcpServers, vscodeMcpJson } from "../../src/console/pages/connect-snippets.ts";
import { runCli } from "../support/cli.ts";

/**
 * The Connect page shows what `imaging client-config` prints for the same base_url: the same command
 * for Claude Code and the same mcp.json entry for VS Code, for both MCP servers.
 */
describe("Connect page snippets match imaging client-config", () => {
  const base = "https://gw.example.com";
  for (const server of mcpServers(base)) {
    it(`Claude Code and VS Code, ${server.kind} server`, async () => {
      const env = { PUBLIC_URL: base };
      const claude = await runCli(["client-config", "claude-code", "--server", server.kind, "--json"], env);
      assert.equal(claude.code, 0, claude.stderr);
      assert.equal((JSON.parse(claude.stdout) as { command: string }).command, claudeCodeCommand(server));
      const vscode = await runCli(["client-config", "vscode", "--server", server.kind, "--json"], env);
      assert.equal(vscode.code, 0, vscode.stderr);
      assert.deepEqual(JSON.parse(vscode.stdout), JSON.parse(vscodeMcpJson(server)));
    });
  }
});
