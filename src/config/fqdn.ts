import { lookup, lookupService } from "node:dns/promises";
import { hostname } from "node:os";

/** Best effort fully qualified name of this host: the hostname, completed by a reverse lookup. */
export async function detectFqdn(): Promise<string> {
  const host = hostname();
  if (host.includes(".")) return host.toLowerCase();
  try {
    const { address } = await lookup(host);
    const { hostname: reverse } = await lookupService(address, 0);
    if (reverse.startsWith(`${host}.`)) return reverse.toLowerCase();
  } catch {
    // Unresolvable hostname: the short name is still what this machine answers to locally.
  }
  return host.toLowerCase();
}
