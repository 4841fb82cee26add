import { type RuleViolation, violation } from "./rules.ts";

/** The path of the URL exactly as written (before the URL parser resolves dot segments). */
function rawPath(value: string): string {
  const afterScheme = value.replace(/^[A-Za-z][A-Za-z0-9+.-]*:[/\\]{2}/, "");
  const end = afterScheme.search(/[?#]/);
  const beforeQuery = end === -1 ? afterScheme : afterScheme.slice(0, end);
  const slash = beforeQuery.search(/[/\\]/);
  return slash === -1 ? "" : beforeQuery.slice(slash);
}

/** The authority exactly as written ("user@host:port"). */
function rawAuthority(value: string): string {
  return value.replace(/^[A-Za-z][A-Za-z0-9+.-]*:[/\\]{2}/, "").split(/[/\\?#]/)[0] ?? "";
}

const isDotSegment = (segment: string) => {
  const decoded = segment.replace(/%2e/gi, ".");
  return decoded === "." || decoded === "..";
};

/**
 * The profile's checks of the client_id URL itself: https (http only with Allow http scheme), no
 * userinfo, no query, no fragment, no dot segments (also percent-encoded), a path other than "/".
 */
export function checkClientIdUrl(
  clientId: string,
  options: { allowHttpScheme: boolean; profile?: string },
): { ok: true; url: URL } | ({ ok: false } & RuleViolation) {
  const where = options.profile ? ` (profile ${options.profile})` : "";
  const url = URL.parse(clientId);
  if (!url) return { ok: false, ...violation("client-id-url", "client_id is not an absolute URL") };
  if (url.protocol === "http:") {
    if (!options.allowHttpScheme)
      return {
        ok: false,
        ...violation(
          "client-id-scheme",
          `client_id must use https: Allow http scheme is OFF${where} (the HTTP variant is for development only)`,
        ),
      };
  } else if (url.protocol !== "https:") {
    return {
      ok: false,
      ...violation(
        "client-id-scheme",
        `client_id scheme ${url.protocol.slice(0, -1)} is not allowed: use https`,
      ),
    };
  }
  if (url.username !== "" || url.password !== "" || rawAuthority(clientId).includes("@"))
    return { ok: false, ...violation("client-id-userinfo", "client_id must not contain userinfo (user@)") };
  if (clientId.includes("?"))
    return { ok: false, ...violation("client-id-query", "client_id must not contain a query string") };
  if (clientId.includes("#"))
    return { ok: false, ...violation("client-id-fragment", "client_id must not contain a fragment") };
  if (rawPath(clientId).split(/[/\\]/).some(isDotSegment))
    return {
      ok: false,
      ...violation(
        "client-id-dot-segment",
        "client_id must not contain '.' or '..' path segments (percent-encoded ones included)",
      ),
    };
  if (url.pathname === "/" || url.pathname === "")
    return {
      ok: false,
      ...violation(
        "client-id-path",
        "client_id must contain a path (e.g. /oauth/client-metadata.json), not just '/'",
      ),
    };
  return { ok: true, url };
}
