import type { IncomingMessage, ServerResponse } from "node:http";
import type { McpPath, McpServerKind } from "../contracts/platform.ts";
import { MCP_SCOPES } from "../contracts/platform.ts";

/** The MCP servers the gateway fronts, and the URLs derived from base_url for each. */
export interface McpResource {
  kind: McpServerKind;
  /** Public path, identical on the internal MCP service. */
  path: McpPath;
  name: string;
  upstreamUrl: string;
  /**
   * The MCP server's request entry when it runs in this process: checked requests are then handed to it
   * (mcp-direct.ts) instead of sent to `upstreamUrl`, which is still probed for health.
   */
  direct?: McpDirectEntry | undefined;
}

/** Serves one request of an MCP server's endpoint on the caller's connection; `body`: already read. */
export type McpDirectEntry = (req: IncomingMessage, res: ServerResponse, body?: Buffer) => void;

export const resourceUrl = (baseUrl: string, resource: Pick<McpResource, "path">) =>
  `${baseUrl}${resource.path}`;

export const metadataUrl = (baseUrl: string, resource: Pick<McpResource, "path">) =>
  `${baseUrl}/.well-known/oauth-protected-resource${resource.path}`;

/** RFC 9728 protected resource metadata. */
export function protectedResourceMetadata(baseUrl: string, issuer: string, resource: McpResource) {
  return {
    resource: resourceUrl(baseUrl, resource),
    authorization_servers: [issuer],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: resource.name,
    resource_documentation: `${baseUrl}/rest/openapi.json`,
  };
}

const SCOPE_LIST = MCP_SCOPES.join(" ");
const quote = (value: string) => value.replace(/["\\]/g, "'");

/**
 * The Bearer challenge. Without a token it is exactly the specification's value plus the full scope
 * set (clients request what the first challenge names); reasons are added only when a token was sent.
 */
export function bearerChallenge(
  baseUrl: string,
  resource: Pick<McpResource, "path">,
  problem?: { error: string; description: string },
): string {
  const head = `Bearer resource_metadata="${metadataUrl(baseUrl, resource)}", scope="${SCOPE_LIST}"`;
  if (!problem) return head;
  return `${head}, error="${problem.error}", error_description="${quote(problem.description)}"`;
}
