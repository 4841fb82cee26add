import type { Kysely } from "kysely";
import {
  type AccessToken,
  type Client,
  type ClientCredentials,
  type Configuration,
  errors,
  type KoaContextWithOIDC,
  type ResourceServer,
} from "oidc-provider";
import {
  CONSOLE_CLIENT_ID,
  CONSOLE_CLIENT_NAME,
  consolePostLogoutUri,
  consoleRedirectUri,
} from "../../auth/console-client.ts";
import { MCP_TOOLS_SCOPE } from "../../contracts/platform.ts";
import { alphanumericId } from "../../domain/generated-ids.ts";
import type { OidcAdapter } from "../../store/oidc-adapter.ts";
import type { Database } from "../../store/schema.ts";
import { findUserById } from "../../store/users.ts";
import { LIFETIMES, type RealmDefinition, TOKEN_EXCHANGE_GRANT } from "./realm.ts";
import { SIGNING_ALG, type StoredSigningKey } from "./signing-keys.ts";
import type { PendingClaims } from "./token-exchange-grant.ts";
import { errorView, loggedOutView, logoutView, PAGE_HEADERS } from "./views.ts";

interface ConfigurationInput {
  realm: RealmDefinition;
  issuerPath: string;
  db: Kysely<Database>;
  adapter: (model: string) => OidcAdapter;
  keys: readonly StoredSigningKey[];
  /** Cookie signing keys, newest first. */
  cookieKeys: string[];
  secureCookies: boolean;
  exchangeClientSecret: string;
  pendingClaims: PendingClaims;
  /** Dynamic client registration (RFC 7591) open to anyone, under the policy of registration.ts. */
  registration: boolean;
}

const htmlPage = (ctx: KoaContextWithOIDC, body: string) => {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
  ctx.type = "text/html; charset=utf-8";
  ctx.body = body;
};

interface RefreshTokenEntity {
  ttlPercentagePassed(): number;
  readonly resourceIndicators: ReadonlySet<string>;
}

/**
 * A refresh asking for a `resource` its grant does not cover is refused (invalid_target), and a
 * refused request must change nothing (RFC 6749 section 5.2). oidc-provider resolves the resource only
 * after it has consumed the rotated token, and has no option to check it first; its rotateRefreshToken
 * hook runs just before the rotation, so the same check is made there (as its resolve_resource.js
 * does it: with several `resource` values, defaultResource below picks the first).
 */
function refuseUngrantedResource(ctx: KoaContextWithOIDC, token: RefreshTokenEntity): void {
  const requested = ctx.oidc.params?.resource as string | string[] | undefined;
  const resource = Array.isArray(requested) ? requested[0] : requested;
  if (resource && !token.resourceIndicators.has(resource)) {
    throw new errors.InvalidTarget(`the refresh token was not granted for ${resource}`);
  }
}

/** Token claims only platform tokens may carry: never in a token issued to an AI client. */
const PLATFORM_CLAIMS = ["roles", "applications"];

/**
 * The whole oidc-provider configuration of the embedded identity provider, in one place. Choices:
 * - authorization code only, PKCE (S256) required for every client, `iss` in authorization responses;
 * - clients: the static confidential client `mcp-token-exchange` (client_secret_basic, token exchange
 *   only) and public clients identified by client ID metadata documents (resolved elsewhere);
 * - RFC 8707 resource indicators: the MCP URLs are the only resources a client can ask for; their
 *   access tokens are JWTs whose audience is [resource, mcp-token-exchange] and whose scope is the
 *   `mcp:*` scopes granted; `imaging-api` is only reached by token exchange;
 * - refresh tokens for clients allowed the grant, rotated at each use for public clients, bound to the
 *   sign-in session unless `offline_access` was granted;
 * - dynamic registration (RFC 7591) only when DYNAMIC_CLIENT_REGISTRATION is on: open (no initial
 *   access token), no registration access token (clients cannot read or change their registration
 *   afterwards), the policy applied in front of it (registration.ts);
 * - DPoP, PAR, introspection and the development interactions are off.
 */
export function providerConfiguration(input: ConfigurationInput): Configuration {
  const { realm } = input;
  const mcpResources = new Set(realm.mcpResources);
  const mcpScope = realm.mcpScopes.join(" ");
  const cookie = { httpOnly: true, sameSite: "lax" as const, signed: true, secure: input.secureCookies };
  /**
   * RFC 6749 section 3.3: an authorization request without `scope` gets the MCP resources' default
   * scopes, those the gateway's 401 challenge names, instead of an empty consent ending in
   * access_denied. oidc-provider has no default-scope setting: this runs where it resolves the
   * request's resource (both hooks below), before consent is computed and the request is saved.
   */
  const defaultScopeWhenOmitted = (ctx: KoaContextWithOIDC) => {
    const params = ctx.oidc?.params;
    if (ctx.oidc?.route === "authorization" && params && params.scope === undefined) params.scope = mcpScope;
  };

  return {
    adapter: input.adapter,
    clients: [
      {
        client_id: realm.exchangeClientId,
        client_secret: input.exchangeClientSecret,
        client_name: "Gateway token exchange",
        token_endpoint_auth_method: "client_secret_basic",
        grant_types: [TOKEN_EXCHANGE_GRANT],
        response_types: [],
        redirect_uris: [],
      },
      {
        client_id: CONSOLE_CLIENT_ID,
        client_name: CONSOLE_CLIENT_NAME,
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        redirect_uris: [consoleRedirectUri(realm.baseUrl)],
        post_logout_redirect_uris: [consolePostLogoutUri(realm.baseUrl)],
      },
    ],
    // The console is first-party: signing in to it asks for no consent (what it may do is the user's own
    // rights, applied by the REST API); every other client gets the consent page.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const { client, result, session, provider } = ctx.oidc;
      if (!client || !session) return undefined;
      const clientId = client.clientId;
      const grantId = result?.consent?.grantId || session.grantIdFor(clientId);
      if (grantId) return provider.Grant.find(grantId);
      if (clientId !== CONSOLE_CLIENT_ID || !session.accountId) return undefined;
      const grant = new provider.Grant({ clientId, accountId: session.accountId });
      grant.addOIDCScope("openid profile");
      grant.addResourceScope(realm.mcpResources[0] as string, MCP_TOOLS_SCOPE);
      await grant.save();
      return grant;
    },
    jwks: { keys: input.keys.map((k) => k.jwk) },
    cookies: {
      keys: input.cookieKeys,
      names: {
        session: "imaging_session",
        interaction: "imaging_interaction",
        resume: "imaging_interaction_resume",
      },
      long: cookie,
      short: cookie,
    },
    claims: { openid: ["sub"], profile: ["preferred_username", "name"] },
    scopes: ["openid", "offline_access", "profile"],
    clientAuthMethods: ["none", "client_secret_basic"],
    responseTypes: ["code"],
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    clockTolerance: 15,
    discovery: {
      client_id_metadata_document_supported: true,
      service_documentation: `${realm.baseUrl}/rest/openapi.json`,
    },
    features: {
      devInteractions: { enabled: false },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      registration: input.registration
        ? {
            enabled: true,
            initialAccessToken: false,
            issueRegistrationAccessToken: false,
            // oidc-provider's default ids (nanoid) start with `-` once in 64: the CLI took them for options.
            idFactory: () => alphanumericId(),
          }
        : { enabled: false },
      introspection: { enabled: false },
      clientIdMetadataDocument: { enabled: false },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContextWithOIDC, form: string) =>
          htmlPage(ctx, logoutView(form, new URL(realm.baseUrl).host)),
        postLogoutSuccessSource: async (ctx: KoaContextWithOIDC) =>
          htmlPage(ctx, loggedOutView(ctx.oidc.client?.clientName)),
      },
      resourceIndicators: {
        enabled: true,
        // Clients that send no `resource` but ask for MCP scopes get the analysis MCP server.
        defaultResource: async (ctx: KoaContextWithOIDC, _client: Client, oneOf?: readonly string[]) => {
          defaultScopeWhenOmitted(ctx);
          if (oneOf) return oneOf[0];
          const scope = typeof ctx.oidc.params?.scope === "string" ? ctx.oidc.params.scope : "";
          return scope.split(" ").some((s) => realm.mcpScopes.includes(s))
            ? realm.mcpResources[0]
            : undefined;
        },
        useGrantedResource: async () => true,
        getResourceServerInfo: async (
          ctx: KoaContextWithOIDC,
          indicator: string,
          client: Client,
        ): Promise<ResourceServer> => {
          defaultScopeWhenOmitted(ctx);
          if (!mcpResources.has(indicator) || client.clientId === realm.exchangeClientId) {
            throw new errors.InvalidTarget(
              `unknown resource ${indicator}: tokens are issued for ${realm.mcpResources.join(" and ")}`,
            );
          }
          return {
            scope: mcpScope,
            accessTokenFormat: "jwt",
            accessTokenTTL: LIFETIMES.accessToken,
            jwt: { sign: { alg: SIGNING_ALG } },
          };
        },
      },
    },
    extraTokenClaims: async (_ctx: KoaContextWithOIDC, token: AccessToken | ClientCredentials) =>
      input.pendingClaims.get(token),
    formats: {
      customizers: {
        jwt: async (
          _ctx: KoaContextWithOIDC,
          token: AccessToken | ClientCredentials,
          jwt: { payload: Record<string, unknown>; header?: Record<string, unknown> },
        ) => {
          const resource = token.resourceServer?.identifier();
          if (resource && mcpResources.has(resource)) {
            // The gateway exchanges MCP tokens as mcp-token-exchange: it must be an audience too.
            jwt.payload.aud = [resource, realm.exchangeClientId];
            for (const claim of PLATFORM_CLAIMS) delete jwt.payload[claim];
          }
        },
      },
    },
    issueRefreshToken: async (_ctx: KoaContextWithOIDC, client: Client, code: { scopes: Set<string> }) =>
      client.grantTypeAllowed("refresh_token") &&
      (code.scopes.has("offline_access") || client.clientAuthMethod === "none"),
    rotateRefreshToken: (ctx: KoaContextWithOIDC) => {
      const client = ctx.oidc.entities.Client as Client;
      const token = ctx.oidc.entities.RefreshToken as RefreshTokenEntity;
      refuseUngrantedResource(ctx, token);
      return client.clientAuthMethod === "none" || token.ttlPercentagePassed() >= 70;
    },
    ttl: {
      AccessToken: (_ctx: KoaContextWithOIDC, token: AccessToken) =>
        token.resourceServer?.accessTokenTTL ?? LIFETIMES.accessToken,
      AuthorizationCode: LIFETIMES.authorizationCode,
      IdToken: LIFETIMES.idToken,
      // A rotated refresh token keeps its predecessor's expiry: rotation never extends the lifetime.
      RefreshToken: (ctx: KoaContextWithOIDC) => {
        const rotated = ctx?.oidc?.entities.RotatedRefreshToken as { remainingTTL: number } | undefined;
        return rotated ? Math.max(1, rotated.remainingTTL) : LIFETIMES.refreshToken;
      },
      Session: LIFETIMES.session,
      Grant: LIFETIMES.grant,
      Interaction: LIFETIMES.interaction,
    },
    interactions: {
      url: async (_ctx: KoaContextWithOIDC, interaction: { uid: string }) =>
        `${input.issuerPath}/interaction/${interaction.uid}`,
    },
    findAccount: async (_ctx: KoaContextWithOIDC, sub: string) => {
      const user = await findUserById(input.db, sub);
      if (!user || user.disabled) return undefined;
      return {
        accountId: user.id,
        claims: async () => ({ sub: user.id, preferred_username: user.username, name: user.username }),
      };
    },
    renderError: async (
      ctx: KoaContextWithOIDC,
      out: { error: string; error_description?: string },
      _error: unknown,
    ) => {
      htmlPage(
        ctx,
        errorView("Sign-in cannot continue", out.error_description ?? out.error, {
          error: out.error,
          client_id: typeof ctx.oidc?.params?.client_id === "string" ? ctx.oidc.params.client_id : undefined,
        }),
      );
    },
  };
}
