import { isLoopbackHost, normalizeHost } from "./model.ts";

/**
 * Whether `requested` is one of the `registered` redirect URIs: an exact string match, except that
 * a loopback http redirect URI (localhost, 127.0.0.1, [::1]) matches on any port (RFC 8252 section
 * 7.3) whatever the document's application_type: Claude Code registers http://localhost/callback
 * without a port and then listens on a random one. Host, path and query must still match exactly.
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const wanted = URL.parse(requested);
  if (wanted?.protocol !== "http:" || !isLoopbackHost(wanted.hostname)) return false;
  if (wanted.username !== "" || wanted.password !== "" || requested.includes("#")) return false;
  return registered.some((candidate) => {
    const url = URL.parse(candidate);
    return (
      url !== null &&
      url.protocol === "http:" &&
      url.username === "" &&
      url.password === "" &&
      normalizeHost(url.hostname) === normalizeHost(wanted.hostname) &&
      url.pathname === wanted.pathname &&
      url.search === wanted.search &&
      // "http://localhost/cb?" and "http://localhost/cb" differ though both have an empty search.
      candidate.includes("?") === requested.includes("?")
    );
  });
}
