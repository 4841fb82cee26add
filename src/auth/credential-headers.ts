/** Request headers that carry credentials. */
export const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "x-api-key"] as const;

/**
 * The first credential header a request sends more than once, from Node's `rawHeaders` (name, value,
 * name, value...). Node keeps only the first `Authorization` of a request, so a second one would be
 * silently dropped and two parties (a proxy, this service) could each see a different credential:
 * such a request is refused instead (RFC 6750 section 3.1: invalid_request).
 */
export function repeatedCredentialHeader(rawHeaders: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]?.toLowerCase() ?? "";
    if (!(CREDENTIAL_HEADERS as readonly string[]).includes(name)) continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

export const repeatedHeaderDetail = (name: string) =>
  `The request sends the ${name} header more than once: send exactly one`;
