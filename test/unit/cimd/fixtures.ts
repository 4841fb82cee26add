import type { CimdDocumentFetcher } from "../../../src/idp/cimd/fetcher.ts";
import type { CimdConfig, CimdPolicy, CimdProfile } from "../../../src/idp/cimd/model.ts";
import { CIMD_PRESETS } from "../../../src/idp/cimd/presets.ts";

export const CLAUDE_CODE_ID = "https://claude.ai/oauth/claude-code-client-metadata";
export const VSCODE_ID = "https://vscode.dev/oauth/client-metadata.json";

/** Claude Code's document: loopback redirect URIs without a port, no application_type. */
export const claudeCodeDocument = () => ({
  client_id: CLAUDE_CODE_ID,
  client_name: "Claude Code",
  client_uri: "https://claude.ai",
  redirect_uris: ["http://localhost/callback", "http://127.0.0.1/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
});

/** VS Code's document: a fixed loopback port, a vscode.dev redirect, its logo on code.visualstudio.com. */
export const vscodeDocument = () => ({
  client_id: VSCODE_ID,
  client_name: "Visual Studio Code",
  client_uri: "https://code.visualstudio.com",
  logo_uri: "https://code.visualstudio.com/assets/favicon.ico",
  redirect_uris: ["http://127.0.0.1:33418/", "https://vscode.dev/redirect"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
  application_type: "native",
});

/** The configuration `imaging cimd add CLIENT --preset CLIENT` creates (HTTPS variant). */
export function presetConfig(...clients: ("claude-code" | "vscode")[]): CimdConfig {
  const profiles: CimdProfile[] = [];
  const policies: CimdPolicy[] = [];
  for (const client of clients) {
    const preset = CIMD_PRESETS[client];
    if (!preset) throw new Error(client);
    profiles.push({
      name: `cimd-profile-${client}`,
      executor: "client-id-metadata-document",
      allowHttpScheme: false,
      restrictSameDomain: false,
      onlyAllowConfidentialClient: false,
      trustedDomains: [...preset.trustedDomains],
    });
    policies.push({
      name: `cimd-policy-${client}`,
      condition: "client-id-uri",
      uriSchemes: ["https"],
      trustedDomains: [...preset.policyDomains],
      profiles: [`cimd-profile-${client}`],
      enabled: true,
    });
  }
  return { profiles, policies };
}

/** A fetcher serving documents from a map, recording what it was asked. */
export function fakeFetcher(documents: Record<string, unknown>): CimdDocumentFetcher & {
  calls: { url: string; allowSpecialAddresses: boolean }[];
} {
  const calls: { url: string; allowSpecialAddresses: boolean }[] = [];
  return {
    calls,
    async fetchDocument(url, options) {
      calls.push({ url, allowSpecialAddresses: options.allowSpecialAddresses });
      if (!(url in documents)) throw new Error(`no document at ${url}`);
      return structuredClone(documents[url]);
    },
  };
}
