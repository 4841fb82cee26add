import ipaddr from "ipaddr.js";

/**
 * Who a registration counts against: an IPv4 address (also written IPv4-mapped, `::ffff:192.0.2.1`),
 * or an IPv6 /64, the smallest block a site or a host is given (RFC 6177): one host picking a new
 * address of its /64 for each registration is still one sender. Anything else (a unix socket's empty
 * address) as it is.
 */
export function rateLimitKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed instanceof ipaddr.IPv4) return parsed.toString();
  const prefix = new ipaddr.IPv6([...parsed.parts.slice(0, 4), 0, 0, 0, 0]);
  return `${prefix.toRFC5952String()}/64`;
}

/** Counters of registrations per key in fixed windows. */
export interface RegistrationCounts {
  /** Counts one registration for `key`; the seconds to wait when `limit` is reached in this window. */
  take(key: string, now: number, windowMs: number, limit: number): Promise<number | undefined>;
}

/**
 * The counters of one process, bounded: past `maxKeys`, the keys whose window started first are
 * dropped (a key starting a new window moves to the end), so a flood of new senders forgets the
 * oldest counters one by one instead of everyone's at once.
 */
export function memoryRegistrationCounts(maxKeys = 10_000): RegistrationCounts {
  const counts = new Map<string, { windowStart: number; count: number }>();
  return {
    async take(key, now, windowMs, limit) {
      const entry = counts.get(key);
      if (entry && now - entry.windowStart < windowMs) {
        if (entry.count >= limit) return Math.max(1, Math.ceil((entry.windowStart + windowMs - now) / 1000));
        entry.count += 1;
        return undefined;
      }
      counts.delete(key);
      for (const oldest of counts.keys()) {
        if (counts.size < maxKeys) break;
        counts.delete(oldest);
      }
      counts.set(key, { windowStart: now, count: 1 });
      return undefined;
    },
  };
}
