/**
 * Known AI clients that sign in with a client ID metadata document: Claude Code and VS Code with the
 * values of Keycloak's MCP guide; Codex CLI with the client_id its binary sends (@openai/codex 0.171.0)
 * and a loopback redirect URI.
 */
interface CimdPreset {
  id: string;
  label: string;
  clientId: string;
  /** Profile trusted domains: where the document is fetched and what its URLs may use. */
  trustedDomains: string[];
  /** Policy trusted domains: the client_id's host. */
  policyDomains: string[];
}

export const CIMD_PRESETS: Readonly<Record<string, CimdPreset>> = {
  "claude-code": {
    id: "claude-code",
    label: "Claude Code",
    clientId: "https://claude.ai/oauth/claude-code-client-metadata",
    trustedDomains: ["claude.ai", "localhost", "127.0.0.1"],
    policyDomains: ["claude.ai"],
  },
  vscode: {
    id: "vscode",
    label: "VS Code",
    clientId: "https://vscode.dev/oauth/client-metadata.json",
    trustedDomains: ["vscode.dev", "code.visualstudio.com", "localhost", "127.0.0.1"],
    policyDomains: ["vscode.dev"],
  },
  codex: {
    id: "codex",
    label: "Codex CLI",
    clientId: "https://chatgpt.com/oauth/codex/client.json",
    trustedDomains: ["chatgpt.com", "localhost", "127.0.0.1"],
    policyDomains: ["chatgpt.com"],
  },
};

export const PRESET_IDS = Object.keys(CIMD_PRESETS);

export function findPreset(id: string): CimdPreset | undefined {
  return Object.hasOwn(CIMD_PRESETS, id) ? CIMD_PRESETS[id] : undefined;
}
