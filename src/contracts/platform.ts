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

/** The order of KNOWN_SEVERITIES as a rank, in any case: CRITICAL 4 .. LOW 1; anything else (UNKNOWN) 0. */
export function severityRank(severity: string): number {
  const index = (KNOWN_SEVERITIES as readonly string[]).indexOf(severity.toUpperCase());
  return index < 0 ? 0 : KNOWN_SEVERITIES.length - index;
}

/**
 * The `mcp:*` client scopes (DESIGN.md): what the gateway's protected resources support, what both
 * identity providers create and grant; calling tools needs `mcp:tools`.
 */
export const MCP_SCOPES = ["mcp:tools", "mcp:resources", "mcp:prompts"] as const;
export type McpScope = (typeof MCP_SCOPES)[number];
export const MCP_TOOLS_SCOPE = "mcp:tools" satisfies McpScope;

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
 * The scope of a package version in an application, as its package manager states it. npm: production
 * (`dependencies`), dev (reached only from `devDependencies`), optional (reached through an optional
 * dependency), peer (installed only as a peer dependency). Maven: the dependency scope Maven resolves.
 * "unknown" in answers: the input did not say, or the store was written before scopes were recorded.
 */
export const NPM_SCOPES = ["production", "dev", "optional", "peer"] as const;
export const MAVEN_SCOPES = ["compile", "runtime", "provided", "test", "system"] as const;
export const PACKAGE_SCOPES = [...NPM_SCOPES, ...MAVEN_SCOPES] as const;
export type PackageScope = (typeof PACKAGE_SCOPES)[number];
export const SCOPE_UNKNOWN = "unknown";
/** What a list's scope filter takes: a scope, or "unknown" for versions whose scope was not recorded. */
export const SCOPE_FILTERS = [...PACKAGE_SCOPES, SCOPE_UNKNOWN] as const;
/** The scopes a production install leaves out: quality gates skip them unless a rule counts all packages. */
export const DEVELOPMENT_SCOPES = ["dev", "test"] as const satisfies readonly PackageScope[];

/**
 * Where a version's release date comes from: the npm registry's `time`, the Maven repository's
 * Last-Modified, the creation time of the version's OpenPGP signature (`.pom.asc`), the time its jar was
 * packaged (its entries' modification times), or the project's release notes (a day, for the demo
 * data's npm versions the registry record does not cover). docs/scanner.md says how each is chosen.
 */
export const RELEASE_DATE_SOURCES = [
  "registry",
  "last-modified",
  "signature",
  "archive-entries",
  "release-notes",
] as const;
export type ReleaseDateSource = (typeof RELEASE_DATE_SOURCES)[number];

/**
 * The problem type of a vulnerability id no imported advisory names (REST 404). "Not known" is not "not
 * affected": the operations about one CVE answer it instead of an empty list, and the MCP tools say it.
 */
export const UNKNOWN_VULNERABILITY_TYPE = "urn:imaging:problem:unknown-vulnerability";
