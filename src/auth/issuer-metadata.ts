import * as oauth from "oauth4webapi";

export class IssuerUnavailableError extends Error {
  override name = "IssuerUnavailableError";
}

export interface IssuerMetadata {
  issuer: string;
  get(): Promise<oauth.AuthorizationServer>;
}

/** oauth4webapi refuses plain http unless told: allowed only for http issuers (development). */
export function httpOptions(url: string): { [oauth.allowInsecureRequests]?: boolean } {
  return url.startsWith("http:") ? { [oauth.allowInsecureRequests]: true } : {};
}

/**
 * The issuer's discovery document (OIDC, else RFC 8414), fetched once and shared; a failed fetch is
 * retried on the next call rather than cached.
 */
export function issuerMetadata(issuer: string, refreshMs = 3_600_000): IssuerMetadata {
  let cached: { value: oauth.AuthorizationServer; at: number } | undefined;
  let pending: Promise<oauth.AuthorizationServer> | undefined;
  const url = new URL(issuer);

  const fetchOnce = async (): Promise<oauth.AuthorizationServer> => {
    let lastError: unknown;
    for (const algorithm of ["oidc", "oauth2"] as const) {
      try {
        const response = await oauth.discoveryRequest(url, {
          algorithm,
          signal: AbortSignal.timeout(5_000),
          ...httpOptions(issuer),
        });
        return await oauth.processDiscoveryResponse(url, response);
      } catch (error) {
        lastError = error;
      }
    }
    throw new IssuerUnavailableError(
      `cannot read the discovery document of ${issuer}: ${(lastError as Error)?.message ?? "unknown error"}`,
    );
  };

  return {
    issuer,
    async get() {
      if (cached && Date.now() - cached.at < refreshMs) return cached.value;
      pending ??= fetchOnce()
        .then((value) => {
          cached = { value, at: Date.now() };
          return value;
        })
        .finally(() => {
          pending = undefined;
        });
      return pending;
    },
  };
}
