import { MCP_TOOLS_SCOPE } from "../contracts/platform.ts";
import { tokenVerifications } from "../observability/metrics.ts";
import { bearerToken } from "./bearer.ts";
import { BoundedCache } from "./bounded-cache.ts";
import type { JwtVerifier } from "./jwt-verifier.ts";
import { tokenDigest } from "./token-exchange.ts";

/** Who a verified token speaks for, for logs: never the token itself. */
export interface TokenParty {
  /** The AI client (azp, else client_id). */
  client: string | undefined;
  /** preferred_username, when the issuer puts it in. */
  username: string | undefined;
  issuer: string | undefined;
}

type AccessDecision =
  | ({
      ok: true;
      subject: string;
      expiresAt: number;
      token: string;
      /** The token's SHA-256 (tokenDigest), for the exchange cache's key. */
      digest: string;
    } & TokenParty)
  | {
      ok: false;
      status: 401 | 403 | 503;
      error: "invalid_token" | "insufficient_scope" | "temporarily_unavailable";
      description: string;
    };

export interface McpAccessVerifier {
  check(authorization: string | undefined, resource: string): Promise<AccessDecision>;
}

interface VerifiedToken extends TokenParty {
  subject: string;
  scopes: string[];
  expiresAt: number;
}

/**
 * Checks a client's access token for one MCP resource: signature, issuer, audience = that resource,
 * expiry, then scope. Verified tokens are cached until they expire, so steady-state requests do no
 * signature work.
 */
export function createMcpAccessVerifier(jwt: JwtVerifier, maxCached = 10_000): McpAccessVerifier {
  const cache = new BoundedCache<VerifiedToken>(maxCached);
  return {
    async check(authorization, resource) {
      const token = bearerToken(authorization);
      if (!token) {
        return {
          ok: false,
          status: 401,
          error: "invalid_token",
          description: authorization
            ? "the Authorization header must be 'Bearer <token>'"
            : "no access token",
        };
      }
      const digest = tokenDigest(token);
      const key = `${resource} ${digest}`;
      let verified = cache.get(key);
      if (verified) tokenVerifications.inc({ result: "hit" });
      else {
        const result = await jwt.verify(token, resource);
        tokenVerifications.inc({
          result: result.ok ? "miss" : result.unavailable ? "unavailable" : "invalid",
        });
        if (!result.ok) {
          return result.unavailable
            ? { ok: false, status: 503, error: "temporarily_unavailable", description: result.reason }
            : { ok: false, status: 401, error: "invalid_token", description: result.reason };
        }
        const { sub, scope, exp, iss } = result.payload;
        const text = (value: unknown) => (typeof value === "string" ? value : undefined);
        verified = {
          client: text(result.payload.azp) ?? text(result.payload.client_id),
          username: text(result.payload.preferred_username),
          issuer: iss,
          subject: typeof sub === "string" ? sub : "",
          scopes: typeof scope === "string" ? scope.split(" ").filter(Boolean) : [],
          expiresAt: (exp ?? 0) * 1000,
        };
        cache.set(key, verified, verified.expiresAt);
      }
      if (!verified.subject) {
        return { ok: false, status: 401, error: "invalid_token", description: "the token names no subject" };
      }
      if (!verified.scopes.includes(MCP_TOOLS_SCOPE)) {
        return {
          ok: false,
          status: 403,
          error: "insufficient_scope",
          description: `the token lacks the ${MCP_TOOLS_SCOPE} scope`,
        };
      }
      return {
        ok: true,
        subject: verified.subject,
        expiresAt: verified.expiresAt,
        token,
        digest,
        client: verified.client,
        username: verified.username,
        issuer: verified.issuer,
      };
    },
  };
}
