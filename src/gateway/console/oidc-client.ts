import * as oauth from "oauth4webapi";
import { CONSOLE_CLIENT_ID, consolePostLogoutUri, consoleRedirectUri } from "../../auth/console-client.ts";
import { httpOptions, type IssuerMetadata } from "../../auth/issuer-metadata.ts";
import { MCP_TOOLS_SCOPE } from "../../contracts/platform.ts";

/** The console's tokens as the identity provider returned them. */
export interface ConsoleTokens {
  accessToken: string;
  /** Epoch milliseconds. */
  accessExpiresAt: number;
  refreshToken: string | null;
  idToken: string | null;
  username: string | undefined;
}

/** The sign-in was refused or could not complete: shown to the user as one sentence. */
export class ConsoleSignInError extends Error {
  override name = "ConsoleSignInError";
}

/**
 * The console's side of the authorization code flow with PKCE (oauth4webapi), against whichever identity
 * provider the gateway fronts. The MCP resource and scope make the access token one the gateway's token
 * exchange accepts.
 */
export function consoleOidcClient(options: {
  baseUrl: string;
  metadata: IssuerMetadata;
  mcpResource: string;
}) {
  const client: oauth.Client = { client_id: CONSOLE_CLIENT_ID };
  const auth = oauth.None();
  const redirectUri = consoleRedirectUri(options.baseUrl);
  const requestOptions = (as: oauth.AuthorizationServer) => ({
    signal: AbortSignal.timeout(10_000),
    [oauth.customFetch]: options.metadata.fetch,
    ...httpOptions(as.issuer),
  });
  const tokensOf = (result: oauth.TokenEndpointResponse, previousRefresh: string | null): ConsoleTokens => {
    const claims = oauth.getValidatedIdTokenClaims(result);
    const lifetime = typeof result.expires_in === "number" ? result.expires_in * 1000 : 60_000;
    return {
      accessToken: result.access_token,
      accessExpiresAt: Date.now() + lifetime,
      refreshToken: result.refresh_token ?? previousRefresh,
      idToken: result.id_token ?? null,
      username: typeof claims?.preferred_username === "string" ? claims.preferred_username : undefined,
    };
  };

  return {
    async authorizationUrl(input: { state: string; codeVerifier: string; nonce: string }): Promise<string> {
      const as = await options.metadata.get();
      if (!as.authorization_endpoint)
        throw new ConsoleSignInError("the identity provider has no authorization endpoint");
      const url = new URL(as.authorization_endpoint);
      url.search = new URLSearchParams({
        client_id: CONSOLE_CLIENT_ID,
        response_type: "code",
        redirect_uri: redirectUri,
        scope: `openid profile ${MCP_TOOLS_SCOPE}`,
        resource: options.mcpResource,
        state: input.state,
        nonce: input.nonce,
        code_challenge: await oauth.calculatePKCECodeChallenge(input.codeVerifier),
        code_challenge_method: "S256",
      }).toString();
      return url.toString();
    },

    async redeemCode(
      callbackUrl: URL,
      expected: { state: string; codeVerifier: string; nonce: string },
    ): Promise<ConsoleTokens> {
      const as = await options.metadata.get();
      let params: URLSearchParams;
      try {
        params = oauth.validateAuthResponse(as, client, callbackUrl, expected.state);
      } catch (error) {
        const e = error as oauth.AuthorizationResponseError;
        throw new ConsoleSignInError(e.error_description ?? e.error ?? (error as Error).message);
      }
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        params,
        redirectUri,
        expected.codeVerifier,
        requestOptions(as),
      );
      try {
        const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
          expectedNonce: expected.nonce,
          requireIdToken: true,
        });
        return tokensOf(result, null);
      } catch (error) {
        const e = error as oauth.ResponseBodyError;
        throw new ConsoleSignInError(e.error_description ?? e.error ?? (error as Error).message);
      }
    },

    async refresh(refreshToken: string): Promise<ConsoleTokens> {
      const as = await options.metadata.get();
      const response = await oauth.refreshTokenGrantRequest(
        as,
        client,
        auth,
        refreshToken,
        requestOptions(as),
      );
      const result = await oauth.processRefreshTokenResponse(as, client, response);
      return tokensOf(result, refreshToken);
    },

    /** Where the browser goes to end its identity provider session too (RP-initiated logout). */
    async endSessionUrl(idToken: string | null): Promise<string> {
      const as = await options.metadata.get();
      const target = consolePostLogoutUri(options.baseUrl);
      if (!as.end_session_endpoint) return target;
      const url = new URL(as.end_session_endpoint);
      url.searchParams.set("client_id", CONSOLE_CLIENT_ID);
      url.searchParams.set("post_logout_redirect_uri", target);
      if (idToken) url.searchParams.set("id_token_hint", idToken);
      return url.toString();
    },
  };
}
