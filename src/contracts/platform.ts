/**
 * The platform's constants, as DESIGN.md states the contract: every part that speaks it (REST, MCP,
 * gateway, identity providers, doctor, CLI, console, store) imports them from here.
 */

/** Audience of platform tokens: the REST API accepts only tokens issued for it (DESIGN.md). */
export const PLATFORM_AUDIENCE = "imaging-api";

/** Platform roles, carried by platform tokens (`roles`), users and API keys. */
export const ROLES = ["admin", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** RFC 8693 token exchange: the grant type and the token type of both the subject and the result. */
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

/** CVE severities, most severe first; UNKNOWN when an advisory gives none. */
export const SEVERITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW", "UNKNOWN"] as const;
export type Severity = (typeof SEVERITIES)[number];
/** The severities an advisory can state, most severe first (what a gate's minSeverity may name). */
export const KNOWN_SEVERITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW"] as const satisfies readonly Severity[];

/** The MCP servers' endpoint paths, the same on the gateway as on the internal services. */
export const MCP_ROUTES = { analysis: "/mcp", gatekeeper: "/mcp/gatekeeper" } as const;
export type McpServerKind = keyof typeof MCP_ROUTES;
export type McpPath = (typeof MCP_ROUTES)[McpServerKind];

/**
 * The one name of each MCP server: its `serverInfo.name`, what the gateway's protected resource metadata
 * calls it, and what `imaging client-config`, `imaging start` and the console tell an AI client to
 * register it as.
 */
export const MCP_SERVER_NAMES = {
  analysis: "imaging",
  gatekeeper: "imaging-gatekeeper",
} as const satisfies Record<McpServerKind, string>;

/**
 * The problem type of a vulnerability id no imported advisory names (REST 404). "Not known" is not "not
 * affected": the operations about one CVE answer it instead of an empty list, and the MCP tools say it.
 */
export const UNKNOWN_VULNERABILITY_TYPE = "urn:imaging:problem:unknown-vulnerability";
