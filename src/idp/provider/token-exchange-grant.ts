import { createLocalJWKSet, type JWK, errors as joseErrors, jwtVerify } from "jose";
import type { Kysely } from "kysely";
import { errors, type KoaContextWithOIDC, type Provider } from "oidc-provider";
import type { Database } from "../../store/schema.ts";
import { findUserById } from "../../store/users.ts";
import { ACCESS_TOKEN_TYPE, LIFETIMES, type RealmDefinition, TOKEN_EXCHANGE_GRANT } from "./realm.ts";
import { SIGNING_ALG } from "./signing-keys.ts";

/** Parameters of RFC 8693 section 2.1 the grant accepts (actor tokens are refused, scope is ignored). */
export const TOKEN_EXCHANGE_PARAMETERS = [
  "subject_token",
  "subject_token_type",
  "requested_token_type",
  "audience",
  "resource",
  "scope",
  "actor_token",
  "actor_token_type",
];

/** Claims an exchanged token carries besides the standard ones, keyed by the token being issued. */
export type PendingClaims = WeakMap<object, Record<string, unknown>>;

interface TokenExchangeGrantOptions {
  realm: RealmDefinition;
  db: Kysely<Database>;
  /** The provider's public keys (current, next, retired) to verify subject tokens; a new object per rotation. */
  publicKeys: () => { keys: JWK[] };
  pendingClaims: PendingClaims;
}

function refused(
  ErrorClass: (typeof errors)[keyof typeof errors],
  description: string,
): errors.OIDCProviderError {
  const error = new (ErrorClass as new () => errors.OIDCProviderError)();
  error.error_description = description;
  return error;
}

const single = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/**
 * RFC 8693 token exchange, for the confidential client `mcp-token-exchange` only: the subject token
 * must be an access token this provider signed, unexpired, whose audience includes that client. The
 * result is a platform token (audience `imaging-api`) carrying the user's current `roles` and
 * `applications` from the store, and living no longer than the subject token.
 */
export function tokenExchangeGrant(provider: Provider, options: TokenExchangeGrantOptions) {
  const { realm } = options;
  // One verifier per published key set (it changes only when the keys are rotated).
  const verifiers = new WeakMap<object, ReturnType<typeof createLocalJWKSet>>();
  const keySet = () => {
    const jwks = options.publicKeys();
    let verifier = verifiers.get(jwks);
    if (!verifier) {
      verifier = createLocalJWKSet(jwks);
      verifiers.set(jwks, verifier);
    }
    return verifier;
  };
  return async function tokenExchangeHandler(ctx: KoaContextWithOIDC): Promise<void> {
    const client = ctx.oidc.client;
    const params = ctx.oidc.params ?? {};
    if (!client || client.clientId !== realm.exchangeClientId) {
      throw refused(
        errors.UnauthorizedClient,
        `only the client ${realm.exchangeClientId} may exchange tokens`,
      );
    }
    if (params.actor_token !== undefined) {
      throw refused(errors.InvalidRequest, "delegation (actor_token) is not supported");
    }
    const subjectToken = single(params.subject_token);
    if (!subjectToken) throw refused(errors.InvalidRequest, "missing subject_token parameter");
    if (single(params.subject_token_type) !== ACCESS_TOKEN_TYPE) {
      throw refused(errors.InvalidRequest, `subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
    }
    const requestedType = single(params.requested_token_type);
    if (requestedType !== undefined && requestedType !== ACCESS_TOKEN_TYPE) {
      throw refused(errors.InvalidRequest, `requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
    }
    const audience = params.audience ?? params.resource;
    if (audience !== undefined && audience !== realm.platformAudience) {
      throw refused(
        errors.InvalidTarget,
        `tokens can only be exchanged for the audience ${realm.platformAudience}`,
      );
    }

    let payload: Awaited<ReturnType<typeof jwtVerify>>["payload"];
    try {
      ({ payload } = await jwtVerify(subjectToken, keySet(), {
        issuer: provider.issuer,
        audience: realm.exchangeClientId,
        algorithms: [SIGNING_ALG],
        typ: "at+jwt",
        requiredClaims: ["exp", "sub"],
      }));
    } catch (error) {
      throw refused(errors.InvalidGrant, `subject_token refused: ${describe(error, realm.exchangeClientId)}`);
    }

    const user = typeof payload.sub === "string" ? await findUserById(options.db, payload.sub) : undefined;
    if (!user || user.disabled) {
      throw refused(errors.InvalidGrant, "subject_token refused: its user no longer exists or is disabled");
    }

    // A revoked (deleted) registered client's access tokens end here, at their next exchange.
    const issuedTo = typeof payload.client_id === "string" ? payload.client_id : undefined;
    if (issuedTo && !/^https?:\/\//i.test(issuedTo) && !(await provider.Client.find(issuedTo))) {
      throw refused(errors.InvalidGrant, "subject_token refused: the client it was issued to was revoked");
    }

    const remaining = (payload.exp as number) - Math.floor(Date.now() / 1000);
    const lifetime = Math.min(LIFETIMES.exchangedToken, remaining);
    if (lifetime < 1) throw refused(errors.InvalidGrant, "subject_token refused: it has expired");

    // The typings require a grantId, the library does not (lib/models/access_token.js only carries it):
    // an exchanged token belongs to no grant of this provider; its lifetime is bounded by the subject's.
    const GrantlessAccessToken = provider.AccessToken as unknown as new (
      properties: Omit<ConstructorParameters<typeof provider.AccessToken>[0], "grantId">,
    ) => InstanceType<typeof provider.AccessToken>;
    const token = new GrantlessAccessToken({
      accountId: user.id,
      client,
      gty: TOKEN_EXCHANGE_GRANT,
      expiresIn: lifetime,
    });
    token.resourceServer = new provider.ResourceServer(realm.platformAudience, {
      scope: "",
      audience: realm.platformAudience,
      accessTokenFormat: "jwt",
      accessTokenTTL: lifetime,
      jwt: { sign: { alg: SIGNING_ALG } },
    });
    options.pendingClaims.set(token, {
      roles: user.roles,
      applications: user.applications,
      preferred_username: user.username,
    });
    const value = await token.save();

    ctx.body = {
      access_token: value,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: "Bearer",
      expires_in: lifetime,
    };
  };
}

function describe(error: unknown, exchangeClientId: string): string {
  if (error instanceof joseErrors.JWTExpired) return "it has expired";
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === "aud") return `its audience does not include ${exchangeClientId}`;
    if (error.claim === "iss") return "it was not issued by this identity provider";
    return `its ${error.claim} claim is not accepted`;
  }
  if (
    error instanceof joseErrors.JWKSNoMatchingKey ||
    error instanceof joseErrors.JWSSignatureVerificationFailed
  ) {
    return "it was not signed by this identity provider";
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "its signing algorithm is not accepted";
  return "it is not a valid access token of this identity provider";
}
