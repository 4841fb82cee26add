import { createHash } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { bearerToken } from "../auth/bearer.ts";
import { BoundedCache } from "../auth/bounded-cache.ts";
import { repeatedCredentialHeader, repeatedHeaderDetail } from "../auth/credential-headers.ts";
import type { JwtVerifier } from "../auth/jwt-verifier.ts";
import { type Principal, principalFromClaims } from "../auth/principal.ts";
import { PLATFORM_AUDIENCE } from "../contracts/platform.ts";
import { verifyApiKey } from "../domain/api-keys.ts";
import type { Database } from "../store/schema.ts";

type Authentication =
  | { ok: true; principal: Principal }
  | { ok: false; detail: string; tokenGiven: boolean; unavailable?: boolean; malformed?: boolean };

/** The status a refused authentication answers with: the store or identity provider down, a malformed header, else 401. */
export function refusalStatus(result: Extract<Authentication, { ok: false }>): 503 | 400 | 401 {
  return result.unavailable ? 503 : result.malformed ? 400 : 401;
}

export type Authenticator = (request: FastifyRequest) => Promise<Authentication>;

/**
 * A verified platform token is remembered (by its SHA-256) until it expires, and for at most this long, so
 * that repeated calls with one token (an MCP tool per call, a script) do no signature work; the bound keeps
 * a key withdrawn from the issuer's JWKS taking effect as soon as it does without the cache (jose keeps a
 * fetched JWKS for 10 minutes).
 */
const VERIFIED_TOKEN_TTL_MS = 60_000;

/** Platform tokens (Bearer, audience imaging-api) or API keys (X-API-KEY) for scripts. */
export function createAuthenticator(deps: {
  db: Kysely<Database>;
  verifier: JwtVerifier;
  now?: () => number;
}): Authenticator {
  const now = deps.now ?? Date.now;
  const verified = new BoundedCache<Principal>(10_000, now);
  const verifyToken = async (token: string): Promise<Authentication> => {
    const key = createHash("sha256").update(token).digest("base64url");
    const cached = verified.get(key);
    if (cached) return { ok: true, principal: cached };
    const result = await deps.verifier.verify(token, PLATFORM_AUDIENCE);
    if (!result.ok && result.unavailable) {
      return {
        ok: false,
        tokenGiven: true,
        unavailable: true,
        detail: `Cannot verify the token now: ${result.reason}`,
      };
    }
    if (!result.ok) return { ok: false, tokenGiven: true, detail: `Invalid bearer token: ${result.reason}` };
    const principal = principalFromClaims(result.payload);
    Object.freeze(principal.roles);
    Object.freeze(principal.applications);
    // exp is required by the verifier: never cached past it.
    const expiresAt = Math.min((result.payload.exp ?? 0) * 1000, now() + VERIFIED_TOKEN_TTL_MS);
    verified.set(key, Object.freeze(principal), expiresAt);
    return { ok: true, principal };
  };
  return async (request) => {
    const repeated = repeatedCredentialHeader(request.raw.rawHeaders);
    if (repeated)
      return { ok: false, tokenGiven: true, malformed: true, detail: repeatedHeaderDetail(repeated) };
    const authorization = request.headers.authorization;
    const apiKey = request.headers["x-api-key"];
    // A present Authorization header is the credential, even empty: never fall back to the API key.
    if (typeof authorization === "string") {
      const token = bearerToken(authorization);
      if (!token) {
        return { ok: false, tokenGiven: true, detail: "The Authorization header must be 'Bearer <token>'" };
      }
      return verifyToken(token);
    }
    if (typeof apiKey === "string" && apiKey !== "") {
      const info = await verifyApiKey(deps.db, apiKey.trim());
      if (!info) return { ok: false, tokenGiven: false, detail: "The X-API-KEY is unknown or revoked" };
      return {
        ok: true,
        principal: {
          subject: info.user,
          roles: [info.role],
          applications: info.applications,
          via: "api-key",
        },
      };
    }
    return {
      ok: false,
      tokenGiven: false,
      detail: "Authentication required: send 'Authorization: Bearer <token>' or an 'X-API-KEY' header",
    };
  };
}
