import { createHash } from "node:crypto";
import * as oauth from "oauth4webapi";
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT } from "../contracts/platform.ts";
import { tokenExchanges } from "../observability/metrics.ts";
import { BoundedCache } from "./bounded-cache.ts";
import { httpOptions, type IssuerMetadata } from "./issuer-metadata.ts";

/** The identity provider could not be asked (network, timeout, 5xx): retrying later may work. */
export class TokenExchangeUnavailableError extends Error {
  override name = "TokenExchangeUnavailableError";
}

/** The identity provider answered and refused the exchange: the subject token will not do. */
export class TokenExchangeRefusedError extends Error {
  override name = "TokenExchangeRefusedError";
  /** The OAuth error code and description the identity provider gave, when it gave them. */
  readonly error: string | undefined;
  readonly description: string | undefined;
  readonly status: number | undefined;

  constructor(message: string, details: { error?: string; description?: string; status?: number } = {}) {
    super(message);
    this.error = details.error;
    this.description = details.description;
    this.status = details.status;
  }
}

interface ExchangedToken {
  accessToken: string;
  /** Epoch milliseconds after which the token must not be forwarded. */
  expiresAt: number;
}

/** The SHA-256 of a token, base64url: how the token caches name a token without holding it. */
export const tokenDigest = (token: string): string => createHash("sha256").update(token).digest("base64url");

export interface TokenExchanger {
  /**
   * `subjectDigest`: the token's SHA-256 (base64url) when the caller has it already (the MCP access check
   * computes it for its own cache), so a request hashes the token once.
   */
  exchange(subjectToken: string, subjectExpiresAt: number, subjectDigest?: string): Promise<ExchangedToken>;
  /** Exchanges actually sent to the identity provider (cache and single-flight hits excluded). */
  readonly requests: number;
}

interface TokenExchangeOptions {
  metadata: IssuerMetadata;
  clientId: string;
  clientSecret: string;
  audience: string;
  maxCachedTokens?: number;
  /** Tokens are dropped from the cache this long before they expire. */
  expiryMarginMs?: number;
}

/**
 * RFC 8693 token exchange as a confidential client. Results are cached per subject token until the
 * earlier of both expiries, and concurrent requests with the same token share one exchange.
 */
export function createTokenExchanger(options: TokenExchangeOptions): TokenExchanger {
  const cache = new BoundedCache<ExchangedToken>(options.maxCachedTokens ?? 10_000);
  const inFlight = new Map<string, Promise<ExchangedToken>>();
  const margin = options.expiryMarginMs ?? 5_000;
  const client: oauth.Client = { client_id: options.clientId };
  const auth = oauth.ClientSecretBasic(options.clientSecret);
  let requests = 0;

  const send = async (subjectToken: string, subjectExpiresAt: number): Promise<ExchangedToken> => {
    let as: oauth.AuthorizationServer;
    try {
      as = await options.metadata.get();
    } catch (error) {
      throw new TokenExchangeUnavailableError((error as Error).message);
    }
    requests++;
    let response: Response;
    try {
      response = await oauth.genericTokenEndpointRequest(
        as,
        client,
        auth,
        TOKEN_EXCHANGE_GRANT,
        {
          subject_token: subjectToken,
          subject_token_type: ACCESS_TOKEN_TYPE,
          requested_token_type: ACCESS_TOKEN_TYPE,
          audience: options.audience,
        },
        {
          signal: AbortSignal.timeout(10_000),
          [oauth.customFetch]: options.metadata.fetch,
          ...httpOptions(as.issuer),
        },
      );
    } catch (error) {
      throw new TokenExchangeUnavailableError(`token endpoint unreachable: ${(error as Error).message}`);
    }
    if (response.status >= 500) {
      throw new TokenExchangeUnavailableError(`token endpoint answered ${response.status}`);
    }
    let result: oauth.TokenEndpointResponse;
    try {
      result = await oauth.processGenericTokenEndpointResponse(as, client, response);
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError) {
        throw new TokenExchangeRefusedError(
          `${error.error}${error.error_description ? `: ${error.error_description}` : ""}`,
          { error: error.error, description: error.error_description, status: error.status },
        );
      }
      throw new TokenExchangeRefusedError(`unexpected token endpoint answer: ${(error as Error).message}`, {
        status: response.status,
      });
    }
    const lifetime = typeof result.expires_in === "number" ? result.expires_in * 1000 : 60_000;
    return { accessToken: result.access_token, expiresAt: Math.min(Date.now() + lifetime, subjectExpiresAt) };
  };

  return {
    get requests() {
      return requests;
    },
    async exchange(subjectToken, subjectExpiresAt, subjectDigest) {
      // Keyed by a digest so the cache never holds client tokens in the clear.
      const key = subjectDigest ?? tokenDigest(subjectToken);
      const cached = cache.get(key);
      if (cached) {
        tokenExchanges.inc({ result: "hit" });
        return cached;
      }
      const pending = inFlight.get(key);
      if (pending) {
        tokenExchanges.inc({ result: "shared" });
        return pending;
      }
      const promise = send(subjectToken, subjectExpiresAt)
        .then(
          (token) => {
            tokenExchanges.inc({ result: "miss" });
            cache.set(key, token, token.expiresAt - margin);
            return token;
          },
          (error: unknown) => {
            tokenExchanges.inc({
              result: error instanceof TokenExchangeRefusedError ? "refused" : "unavailable",
            });
            throw error;
          },
        )
        .finally(() => inFlight.delete(key));
      inFlight.set(key, promise);
      return promise;
    },
  };
}
