import { timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";

export const CSRF_HEADER = "x-csrf-token";

/**
 * A change made with the console's session cookie must prove it comes from the console's own page: the
 * session's synchronizer token in the `X-CSRF-Token` header (a cross-site form cannot set headers, a
 * cross-site script cannot read the token), and, when the browser says where it comes from, the gateway's
 * own origin. Returns why it is refused, or undefined.
 */
export function csrfRefusal(
  request: FastifyRequest,
  expectedToken: string,
  baseUrl: string,
): string | undefined {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== new URL(baseUrl).origin) {
    return `Cross-site request refused: origin ${origin} is not ${new URL(baseUrl).origin}`;
  }
  const given = request.headers[CSRF_HEADER];
  if (typeof given !== "string" || given === "") {
    return "Missing CSRF token: changes need the X-CSRF-Token header of the console session";
  }
  const a = Buffer.from(given);
  const b = Buffer.from(expectedToken);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    return "Invalid CSRF token: reload the console and try again";
  }
  return undefined;
}

export const isSafeMethod = (method: string): boolean =>
  method === "GET" || method === "HEAD" || method === "OPTIONS";
