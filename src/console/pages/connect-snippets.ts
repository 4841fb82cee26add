/**
 * What each AI client needs for one MCP server of this deployment: the same command and mcp.json entry
 * as `imaging client-config` prints (src/cli/commands/client-config.ts).
 */
import { MCP_ROUTES, MCP_SERVER_NAMES, type McpServerKind } from "../../contracts/platform.ts";

export interface McpServer {
  kind: McpServerKind;
  /** The name the client shows (src/contracts/platform.ts). */
  name: string;
  url: string;
}

export function mcpServers(baseUrl: string): McpServer[] {
  return [
    { kind: "analysis", name: MCP_SERVER_NAMES.analysis, url: `${baseUrl}${MCP_ROUTES.analysis}` },
    { kind: "gatekeeper", name: MCP_SERVER_NAMES.gatekeeper, url: `${baseUrl}${MCP_ROUTES.gatekeeper}` },
  ];
}

export const claudeCodeCommand = (server: McpServer): string =>
  `claude mcp add --transport http --scope user ${server.name} ${server.url}`;

export const vscodeMcpJson = (server: McpServer): string =>
  JSON.stringify({ servers: { [server.name]: { type: "http", url: server.url } } }, null, 2);

/** Any other MCP client: Streamable HTTP with OAuth discovery from the 401 challenge. */
export const genericSettings = (server: McpServer): string =>
  [
    `MCP server URL:              ${server.url}`,
    "Transport:                   Streamable HTTP",
    "Authorization:               OAuth 2.1 (authorization code + PKCE), discovered from the 401 challenge",
    `Protected resource metadata: ${resourceMetadataUrl(server)}`,
  ].join("\n");

function resourceMetadataUrl(server: McpServer): string {
  const url = new URL(server.url);
  return `${url.origin}/.well-known/oauth-protected-resource${url.pathname}`;
}
