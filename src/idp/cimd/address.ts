import { BlockList, isIPv4, isIPv6 } from "node:net";

/**
 * Addresses a metadata document is never fetched from unless an administrator listed the host itself
 * in the policy: private, loopback, link-local, CGNAT, multicast, unspecified, documentation and
 * other special-use ranges (RFC 6890 and its IPv6 counterparts).
 */
const special = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  special.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard
  ["2001::", 23], // IETF protocol assignments
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4 (embeds any IPv4 address)
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  special.addSubnet(net, prefix, "ipv6");
}

/** The IPv4 address embedded in an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  for (const prefix of ["::ffff:", "64:ff9b::"]) {
    if (!lower.startsWith(prefix)) continue;
    const rest = lower.slice(prefix.length);
    if (isIPv4(rest)) return rest;
    const groups = rest.split(":");
    if (groups.length === 2 && groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) {
      const [hi, lo] = groups.map((g) => Number.parseInt(g, 16)) as [number, number];
      return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
    }
  }
  return undefined;
}

/** True for special-use addresses, and for anything that is not an IP address (fail closed). */
export function isSpecialAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (isIPv4(bare)) return special.check(bare, "ipv4");
  if (!isIPv6(bare)) return true;
  const v4 = embeddedIpv4(bare);
  if (v4 !== undefined) return special.check(v4, "ipv4");
  return special.check(bare, "ipv6");
}
