import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";

/**
 * RFC 9110 §7.6.1: these describe one connection, never the next one, so a proxy removes them (and
 * every header the Connection header names) in both directions.
 */
const HOP_BY_HOP = ["connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade"];
/**
 * Request headers the gateway answers itself: it sends `100 Continue` to the client and reads the
 * whole body before forwarding (as nginx does), and credentials for a proxy stop at the first proxy.
 */
const REQUEST_ONLY = ["expect", "proxy-authorization"];
const RESPONSE_ONLY = ["proxy-authenticate"];

type Headers = IncomingHttpHeaders | OutgoingHttpHeaders | Record<string, unknown>;

function connectionTokens(value: unknown): string[] {
  const list = Array.isArray(value) ? value.join(",") : typeof value === "string" ? value : "";
  return list
    .split(",")
    .map((token) => token.trim().toLowerCase())
    .filter(Boolean);
}

function without<T extends Headers>(headers: T, names: readonly string[]): T {
  const drop = new Set([...names, ...connectionTokens(headers.connection)]);
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!drop.has(name.toLowerCase())) kept[name] = value;
  }
  return kept as T;
}

/** The client's headers as the upstream may see them (reply-from's rewriteRequestHeaders). */
export function forwardableRequestHeaders<T extends Headers>(headers: T): T {
  return without(headers, [...HOP_BY_HOP, ...REQUEST_ONLY]);
}

/** The upstream's headers as the client may see them (reply-from's rewriteHeaders). */
export function forwardableResponseHeaders<T extends Headers>(headers: T): T {
  return without(headers, [...HOP_BY_HOP, ...RESPONSE_ONLY]);
}
