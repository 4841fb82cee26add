/** Request headers that carry credentials. */
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "x-api-key"] as const;

/**
 * The first credential header a request sends more than once, from Node's `rawHeaders` (name, value,
 * name, value...). Node keeps only the first `Authorization` of a request, so a second one would be
 * silently dropped and two parties (a proxy, this service) could each see a different credential:
 * such a request is refused instead (RFC 6750 section 3.1: invalid_request).
 */
export function repeatedCredentialHeader(rawHeaders: readonly string[]): string | undefined {
  // Runs on every request of the gateway: no allocation unless a credential header shows up.
  let seen: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i] ?? "";
    // The shortest credential header name is 9 characters ("x-api-key"), the longest 19.
    if (raw.length < 9 || raw.length > 19) continue;
    const name = raw.toLowerCase();
    if (!(CREDENTIAL_HEADERS as readonly string[]).includes(name)) continue;
    if (seen?.has(name)) return name;
    seen ??= new Set();
    seen.add(name);
  }
  return undefined;
}

export const repeatedHeaderDetail = (name: string) =>
  `The request sends the ${name} header more than once: send exactly one`;
