import type { IncomingMessage } from "node:http";

/**
 * RFC 9112 §3.2.2: a server must accept the absolute form of the request target
 * (`GET http://host/path HTTP/1.1`), and its authority replaces the Host header. The gateway is no
 * forward proxy: like nginx, it serves the named path from its own routes and never contacts the host
 * named; everything downstream sees the origin form (`/path?query`).
 */
export function originFormTarget(request: IncomingMessage): string {
  const target = request.url ?? "/";
  if (target.startsWith("/") || target === "*") return target;
  let parsed: URL;
  try {
    parsed = new URL(target);
  } catch {
    return target;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return target;
  request.headers.host = parsed.host;
  return `${parsed.pathname}${parsed.search}`;
}
