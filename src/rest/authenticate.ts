import type { FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { repeatedCredentialHeader, repeatedHeaderDetail } from "../auth/credential-headers.ts";
import type { JwtVerifier } from "../auth/jwt-verifier.ts";
import { type Principal, principalFromClaims } from "../auth/principal.ts";
import { verifyApiKey } from "../store/api-keys.ts";
import type { Database } from "../store/schema.ts";
import { PLATFORM_AUDIENCE } from "../version.ts";

export type Authentication =
  | { ok: true; principal: Principal }
  | { ok: false; detail: string; tokenGiven: boolean; unavailable?: boolean; malformed?: boolean };

export type Authenticator = (request: FastifyRequest) => Promise<Authentication>;

/** Platform tokens (Bearer, audience imaging-api) or API keys (X-API-KEY) for scripts. */
export function createAuthenticator(deps: { db: Kysely<Database>; verifier: JwtVerifier }): Authenticator {
  return async (request) => {
    const repeated = repeatedCredentialHeader(request.raw.rawHeaders);
    if (repeated)
      return { ok: false, tokenGiven: true, malformed: true, detail: repeatedHeaderDetail(repeated) };
    const authorization = request.headers.authorization;
    const apiKey = request.headers["x-api-key"];
    // A present Authorization header is the credential, even empty: never fall back to the API key.
    if (typeof authorization === "string") {
      const match = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i.exec(authorization);
      if (!match?.[1]) {
        return { ok: false, tokenGiven: true, detail: "The Authorization header must be 'Bearer <token>'" };
      }
      const result = await deps.verifier.verify(match[1], PLATFORM_AUDIENCE);
      if (!result.ok && result.unavailable) {
        return {
          ok: false,
          tokenGiven: true,
          unavailable: true,
          detail: `Cannot verify the token now: ${result.reason}`,
        };
      }
      if (!result.ok)
        return { ok: false, tokenGiven: true, detail: `Invalid bearer token: ${result.reason}` };
      return { ok: true, principal: principalFromClaims(result.payload) };
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
