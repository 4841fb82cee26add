/**
 * Failed sign-in throttling, per account and per client address: after `freeAttempts` failures
 * within `windowMs`, further attempts are refused for a lockout that doubles with each new failure
 * (from `baseLockMs` up to `maxLockMs`). A success clears the account's record. The counters live in
 * a `ThrottleState`: the store's (src/store/sign-in-failures.ts) so every replica counts the same
 * failures, or memory (tests, a single process); the clock is injectable.
 */
interface ThrottleRule {
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
  state?: ThrottleState;
}

const DEFAULT_THROTTLE: ThrottleOptions = {
  account: { freeAttempts: 5, baseLockMs: 30_000, maxLockMs: 15 * 60_000, windowMs: 15 * 60_000 },
  address: { freeAttempts: 20, baseLockMs: 30_000, maxLockMs: 15 * 60_000, windowMs: 15 * 60_000 },
};

interface ThrottleEntry {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
}
type Entry = ThrottleEntry;

/** Where the counters live. `update` is atomic per key (replicas failing at once both count). */
interface ThrottleState {
  get(key: string): Promise<ThrottleEntry | undefined>;
  update(key: string, change: (entry: ThrottleEntry | undefined) => ThrottleEntry): Promise<void>;
  delete(key: string): Promise<void>;
}

/** Counters of one process, bounded in size (oldest dropped first). */
function memoryThrottleState(maxEntries = 50_000): ThrottleState {
  const entries = new Map<string, ThrottleEntry>();
  return {
    get: async (key) => entries.get(key),
    async update(key, change) {
      const entry = change(entries.get(key));
      entries.delete(key);
      if (entries.size >= maxEntries) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      entries.set(key, entry);
    },
    delete: async (key) => {
      entries.delete(key);
    },
  };
}

type ThrottleVerdict =
  | { allowed: true }
  | { allowed: false; scope: "account" | "address"; retryAfterSeconds: number };

export class SignInThrottle {
  readonly #options: Required<Omit<ThrottleOptions, "state" | "maxEntries">>;
  readonly #state: ThrottleState;

  constructor(options: Partial<ThrottleOptions> = {}) {
    this.#options = {
      account: options.account ?? DEFAULT_THROTTLE.account,
      address: options.address ?? DEFAULT_THROTTLE.address,
      now: options.now ?? Date.now,
    };
    this.#state = options.state ?? memoryThrottleState(options.maxEntries);
  }

  /** Whether an attempt for this account from this address may be checked now. */
  async check(account: string, address: string): Promise<ThrottleVerdict> {
    const now = this.#options.now();
    for (const scope of ["account", "address"] as const) {
      const entry = this.#live(
        await this.#state.get(this.#key(scope, scope === "account" ? account : address)),
        scope,
        now,
      );
      if (entry && entry.lockedUntil > now) {
        return { allowed: false, scope, retryAfterSeconds: Math.ceil((entry.lockedUntil - now) / 1000) };
      }
    }
    return { allowed: true };
  }

  async failure(account: string, address: string): Promise<void> {
    const now = this.#options.now();
    for (const scope of ["account", "address"] as const) {
      const rule = this.#options[scope];
      await this.#state.update(this.#key(scope, scope === "account" ? account : address), (stored) => {
        const live = this.#live(stored, scope, now);
        const entry = live ? { ...live } : { failures: 0, lastFailure: now, lockedUntil: 0 };
        entry.failures++;
        entry.lastFailure = now;
        if (entry.failures >= rule.freeAttempts) {
          const doublings = Math.min(entry.failures - rule.freeAttempts, 20);
          entry.lockedUntil = now + Math.min(rule.baseLockMs * 2 ** doublings, rule.maxLockMs);
        }
        return entry;
      });
    }
  }

  async success(account: string): Promise<void> {
    await this.#state.delete(this.#key("account", account));
  }

  #key(scope: "account" | "address", value: string): string {
    return `${scope}:${scope === "account" ? value.toLowerCase() : value}`;
  }

  /** The entry unless it is forgotten (no lock and its last failure outside the window). */
  #live(entry: Entry | undefined, scope: "account" | "address", now: number): Entry | undefined {
    if (!entry) return undefined;
    const rule = this.#options[scope];
    if (entry.lockedUntil <= now && now - entry.lastFailure > rule.windowMs) return undefined;
    return entry;
  }
}
