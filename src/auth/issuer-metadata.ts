import * as oauth from "oauth4webapi";

class IssuerUnavailableError extends Error {
  override name = "IssuerUnavailableError";
}

export interface IssuerMetadata {
  issuer: string;
  get(): Promise<oauth.AuthorizationServer>;
  /** How the gateway reaches the issuer's endpoints (discovery, JWKS, token): see backchannelFetch. */
  fetch: typeof fetch;
}

/**
 * A fetch that sends requests for public URLs under `publicPrefix` to `internalPrefix` instead: the
 * gateway talks to a Keycloak it fronts directly rather than through its own public address, which
 * may not even resolve from inside the deployment.
 */
export function backchannelFetch(publicPrefix: string, internalPrefix: string): typeof fetch {
  const from = publicPrefix.replace(/\/+$/, "");
  const to = internalPrefix.replace(/\/+$/, "");
  return (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url !== from && !url.startsWith(`${from}/`)) return fetch(input, init);
    const target = `${to}${url.slice(from.length)}`;
    return input instanceof Request ? fetch(new Request(target, input), init) : fetch(target, init);
  };
}

/** oauth4webapi refuses plain http unless told: allowed only for http issuers (development). */
export function httpOptions(url: string): { [oauth.allowInsecureRequests]?: boolean } {
  return url.startsWith("http:") ? { [oauth.allowInsecureRequests]: true } : {};
}

/**
 * The issuer's discovery document (OIDC, else RFC 8414), fetched once and shared; a failed fetch is
 * retried on the next call rather than cached.
 */
export function issuerMetadata(
  issuer: string,
  refreshMs = 3_600_000,
  backchannel: typeof fetch = fetch,
): IssuerMetadata {
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
          [oauth.customFetch]: backchannel,
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
    fetch: backchannel,
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
