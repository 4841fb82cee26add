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
// Built once: these run on every proxied request.
const REQUEST_DROPPED: ReadonlySet<string> = new Set([...HOP_BY_HOP, ...REQUEST_ONLY]);
const RESPONSE_DROPPED: ReadonlySet<string> = new Set([...HOP_BY_HOP, ...RESPONSE_ONLY]);
/** Connection options that name no header (the usual value of a Connection header). */
const CONNECTION_OPTIONS: ReadonlySet<string> = new Set(["keep-alive", "close", "upgrade"]);

type Headers = IncomingHttpHeaders | OutgoingHttpHeaders | Record<string, unknown>;

/** Header names the Connection header names, beyond its usual options (`undefined` when none). */
function namedByConnection(value: unknown): Set<string> | undefined {
  if (value === undefined) return undefined;
  const list = Array.isArray(value) ? value.join(",") : typeof value === "string" ? value : "";
  let named: Set<string> | undefined;
  for (const raw of list.split(",")) {
    const token = raw.trim().toLowerCase();
    if (!token || CONNECTION_OPTIONS.has(token)) continue;
    named ??= new Set();
    named.add(token);
  }
  return named;
}

/** `headers` without the dropped names; names are lower case in Node's and undici's header objects. */
function without<T extends Headers>(
  headers: T,
  dropped: ReadonlySet<string>,
  extra?: ReadonlySet<string>,
): T {
  const named = namedByConnection(headers.connection);
  const kept: Record<string, unknown> = {};
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (dropped.has(lower) || extra?.has(lower) || named?.has(lower)) continue;
    kept[name] = headers[name as keyof T];
  }
  return kept as T;
}

/**
 * The client's headers as the upstream may see them (reply-from's rewriteRequestHeaders); `alsoDrop`
 * (lower case) leaves out more, in the same pass.
 */
export function forwardableRequestHeaders<T extends Headers>(headers: T, alsoDrop?: ReadonlySet<string>): T {
  return without(headers, REQUEST_DROPPED, alsoDrop);
}

/** The upstream's headers as the client may see them (reply-from's rewriteHeaders). */
export function forwardableResponseHeaders<T extends Headers>(headers: T): T {
  return without(headers, RESPONSE_DROPPED);
}
