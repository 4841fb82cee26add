import {
  ACCESS_TOKEN_TYPE,
  MCP_SCOPES,
  PLATFORM_AUDIENCE,
  TOKEN_EXCHANGE_GRANT,
} from "../../contracts/platform.ts";

/**
 * What the embedded identity provider defines at every start (DESIGN.md "Identity"): the `mcp:*`
 * scopes and the audiences they map to, the confidential client of the token exchange and the
 * platform audience. It is configuration, not stored state, so each start "creates" it identically.
 */
export interface RealmDefinition {
  baseUrl: string;
  realm: string;
  issuer: string;
  /** MCP resources (RFC 8707 indicators) and the audience their tokens carry besides themselves. */
  mcpResources: readonly string[];
  mcpScopes: readonly string[];
  /** Confidential client allowed the token exchange grant only; also in every MCP token's audience. */
  exchangeClientId: string;
  /** Audience of platform tokens, reachable only by token exchange. */
  platformAudience: string;
}

export function realmDefinition(input: {
  baseUrl: string;
  realm: string;
  exchangeClientId: string;
}): RealmDefinition {
  return {
    baseUrl: input.baseUrl,
    realm: input.realm,
    issuer: embeddedIssuer(input.baseUrl, input.realm),
    mcpResources: [`${input.baseUrl}/mcp`, `${input.baseUrl}/mcp/gatekeeper`],
    mcpScopes: MCP_SCOPES,
    exchangeClientId: input.exchangeClientId,
    platformAudience: PLATFORM_AUDIENCE,
  };
}

/** The issuer the embedded identity provider runs as. */
export function embeddedIssuer(baseUrl: string, realm: string): string {
  return `${baseUrl}/auth/realms/${realm}`;
}

/** Lifetimes in seconds, in one place. */
export const LIFETIMES = {
  accessToken: 15 * 60,
  idToken: 15 * 60,
  /** Upper bound of an exchanged platform token (never beyond the subject token's own expiry). */
  exchangedToken: 15 * 60,
  authorizationCode: 60,
  refreshToken: 14 * 24 * 3600,
  session: 14 * 24 * 3600,
  grant: 14 * 24 * 3600,
  interaction: 30 * 60,
} as const;

/** How long a retired signing key stays published: the longest lifetime of a token it signed, plus margin. */
export const KEY_RETENTION_SECONDS =
  Math.max(LIFETIMES.accessToken, LIFETIMES.idToken, LIFETIMES.exchangedToken) + 5 * 60;

export { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT };
