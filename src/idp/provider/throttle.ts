/**
 * Failed sign-in throttling, per account and per client address: after `freeAttempts` failures
 * within `windowMs`, further attempts are refused for a lockout that doubles with each new failure
 * (from `baseLockMs` up to `maxLockMs`). A success clears the account's record. Pure in-memory state
 * with an injectable clock, bounded in size.
 */
export interface ThrottleRule {
  freeAttempts: number;
  baseLockMs: number;
  maxLockMs: number;
  /** Failures older than this (since the last one) are forgotten. */
  windowMs: number;
}

export interface ThrottleOptions {
  account: ThrottleRule;
  address: ThrottleRule;
  maxEntries?: number;
  now?: () => number;
}

export const DEFAULT_THROTTLE: ThrottleOptions = {
  account: { freeAttempts: 5, baseLockMs: 30_000, maxLockMs: 15 * 60_000, windowMs: 15 * 60_000 },
  address: { freeAttempts: 20, baseLockMs: 30_000, maxLockMs: 15 * 60_000, windowMs: 15 * 60_000 },
};

interface Entry {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
}

export type ThrottleVerdict =
  | { allowed: true }
  | { allowed: false; scope: "account" | "address"; retryAfterSeconds: number };

export class SignInThrottle {
  readonly #options: Required<ThrottleOptions>;
  readonly #entries = new Map<string, Entry>();

  constructor(options: Partial<ThrottleOptions> = {}) {
    this.#options = {
      account: options.account ?? DEFAULT_THROTTLE.account,
      address: options.address ?? DEFAULT_THROTTLE.address,
      maxEntries: options.maxEntries ?? 50_000,
      now: options.now ?? Date.now,
    };
  }

  /** Whether an attempt for this account from this address may be checked now. */
  check(account: string, address: string): ThrottleVerdict {
    const now = this.#options.now();
    for (const scope of ["account", "address"] as const) {
      const entry = this.#live(this.#key(scope, scope === "account" ? account : address), scope, now);
      if (entry && entry.lockedUntil > now) {
        return { allowed: false, scope, retryAfterSeconds: Math.ceil((entry.lockedUntil - now) / 1000) };
      }
    }
    return { allowed: true };
  }

  failure(account: string, address: string): void {
    const now = this.#options.now();
    for (const scope of ["account", "address"] as const) {
      const rule = this.#options[scope];
      const key = this.#key(scope, scope === "account" ? account : address);
      const entry = this.#live(key, scope, now) ?? { failures: 0, lastFailure: now, lockedUntil: 0 };
      entry.failures++;
      entry.lastFailure = now;
      if (entry.failures >= rule.freeAttempts) {
        const doublings = Math.min(entry.failures - rule.freeAttempts, 20);
        entry.lockedUntil = now + Math.min(rule.baseLockMs * 2 ** doublings, rule.maxLockMs);
      }
      this.#entries.delete(key);
      if (this.#entries.size >= this.#options.maxEntries) {
        const oldest = this.#entries.keys().next().value;
        if (oldest !== undefined) this.#entries.delete(oldest);
      }
      this.#entries.set(key, entry);
    }
  }

  success(account: string): void {
    this.#entries.delete(this.#key("account", account));
  }

  #key(scope: "account" | "address", value: string): string {
    return `${scope}:${scope === "account" ? value.toLowerCase() : value}`;
  }

  #live(key: string, scope: "account" | "address", now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    const rule = this.#options[scope];
    if (entry.lockedUntil <= now && now - entry.lastFailure > rule.windowMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
