import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * CSRF protection of the interaction forms: a random per-browser cookie, and in each form a token
 * that is an HMAC of that cookie and the interaction id. A forged cross-site post has neither the
 * cookie value nor the interaction id; a token taken from one interaction is useless for another.
 * Posts whose Origin (or Sec-Fetch-Site) says they come from elsewhere are refused as well.
 */
export const CSRF_COOKIE = "imaging_csrf";

export function newCsrfCookieValue(): string {
  return randomBytes(32).toString("base64url");
}

export function csrfToken(key: string, cookieValue: string, interactionId: string): string {
  return createHmac("sha256", key).update(`csrf:${cookieValue}:${interactionId}`).digest("base64url");
}

export function csrfTokenValid(
  key: string,
  cookieValue: string | undefined,
  interactionId: string,
  token: string | undefined,
): boolean {
  if (!cookieValue || !token) return false;
  const expected = Buffer.from(csrfToken(key, cookieValue, interactionId));
  const actual = Buffer.from(token);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Why a form post is refused for its origin, or undefined when it comes from our own pages. */
export function crossSiteProblem(
  headers: { origin?: string | undefined; secFetchSite?: string | undefined },
  ownOrigin: string,
): string | undefined {
  // Sec-Fetch-Site is authoritative when sent: our pages' no-referrer policy makes browsers send
  // `Origin: null` on same-origin posts, so Origin is only consulted by clients without it.
  if (headers.secFetchSite) {
    return ["same-origin", "none"].includes(headers.secFetchSite)
      ? undefined
      : `the form was posted from another site (Sec-Fetch-Site: ${headers.secFetchSite})`;
  }
  if (headers.origin && headers.origin !== ownOrigin) {
    return `the form was posted from ${headers.origin}, not from ${ownOrigin}`;
  }
  return undefined;
}
