/**
 * The token of an `Authorization: Bearer <token>` header, by RFC 6750 §2.1: the scheme in any case
 * (RFC 9110 §11.1), spaces or tabs, then a b64token (letters, digits, `-._~+/`, trailing `=`); trailing
 * spaces or tabs tolerated. Undefined for anything else: every part reads credentials the same way.
 */
const BEARER = /^Bearer[ \t]+([A-Za-z0-9._~+/-]+=*)[ \t]*$/i;

export function bearerToken(authorization: string | null | undefined): string | undefined {
  if (!authorization) return undefined;
  return BEARER.exec(authorization)?.[1];
}
