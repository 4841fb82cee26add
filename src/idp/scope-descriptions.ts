// Shared by both identity providers (the embedded consent page, Keycloak's client scopes); kept apart from
// the embedded provider's modules so that provisioning Keycloak does not load oidc-provider.

import type { McpScope } from "../contracts/platform.ts";

/** What each scope lets a client do, in the consent page's words. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  "mcp:tools":
    "use the platform's MCP tools with your rights (read applications, analyses, CVE insights, quality gates)",
  "mcp:resources": "read the MCP resources the servers publish",
  "mcp:prompts": "use the MCP prompts the servers publish",
  openid: "know who you are (your user id)",
  profile: "see your user name",
  offline_access: "stay connected when you are away (refresh tokens)",
} satisfies Record<McpScope | "openid" | "profile" | "offline_access", string>; // every mcp:* scope has its words
