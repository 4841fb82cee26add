import type { AddressInfo } from "node:net";

/**
 * The URL a client on this machine reaches a listening server at: its bound address and port, a wildcard
 * bind (0.0.0.0, ::) read as the loopback address of its family, an IPv6 address in brackets.
 */
export function listenUrl(address: AddressInfo | string | null, scheme: "http" | "https" = "http"): string {
  if (!address || typeof address === "string") throw new Error("server is not listening on a TCP port");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "[::]" ? "[::1]" : host;
  return `${scheme}://${reachable}:${address.port}`;
}
