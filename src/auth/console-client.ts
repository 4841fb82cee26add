/**
 * The web console's first-party OIDC client, created at start-up on both identity providers: public
 * (authorization code + PKCE, no secret to share between gateway replicas), redirect URI on the gateway,
 * refresh tokens allowed. Its access tokens are MCP tokens the gateway exchanges for platform tokens
 * exactly as for AI clients, so the REST API sees the signed-in user's roles and nothing more.
 */
export const CONSOLE_CLIENT_ID = "imaging-console";
export const CONSOLE_CLIENT_NAME = "imaging-services console";

export const consoleRedirectUri = (baseUrl: string): string => `${baseUrl}/console/callback`;
export const consolePostLogoutUri = (baseUrl: string): string => `${baseUrl}/console/signed-out`;
