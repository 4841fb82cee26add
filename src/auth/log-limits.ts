/**
 * Keeping logs readable when the same thing happens on every request: a refused token exchange per
 * client and user, an identity provider that stopped answering. Administrators need the first line
 * and a count, not one line per request.
 */

/** At most one line per key and interval; the next admitted line tells how many were left out. */
export class LogThrottle {
  readonly #windows = new Map<string, { until: number; suppressed: number }>();
  readonly #intervalMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;

  constructor(options: { intervalMs?: number; maxKeys?: number; now?: () => number } = {}) {
    this.#intervalMs = options.intervalMs ?? 60_000;
    this.#maxKeys = options.maxKeys ?? 1_000;
    this.#now = options.now ?? Date.now;
  }

  /** undefined: stay quiet. Otherwise log now, saying that `suppressed` similar events went unlogged. */
  admit(key: string): { suppressed: number } | undefined {
    const now = this.#now();
    const window = this.#windows.get(key);
    if (window && window.until > now) {
      window.suppressed++;
      return undefined;
    }
    this.#windows.delete(key);
    if (this.#windows.size >= this.#maxKeys) {
      const oldest = this.#windows.keys().next().value;
      if (oldest !== undefined) this.#windows.delete(oldest);
    }
    this.#windows.set(key, { until: now + this.#intervalMs, suppressed: 0 });
    return { suppressed: window?.suppressed ?? 0 };
  }
}

/** At most `max` lines per interval in all, whatever their keys: a flood stays a trickle. */
export class LogBudget {
  #until = 0;
  #used = 0;
  #suppressed = 0;
  readonly #max: number;
  readonly #intervalMs: number;
  readonly #now: () => number;

  constructor(options: { max?: number; intervalMs?: number; now?: () => number } = {}) {
    this.#max = options.max ?? 20;
    this.#intervalMs = options.intervalMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** undefined: over budget, stay quiet. Otherwise log, saying how many lines were left out before. */
  admit(): { suppressed: number } | undefined {
    const now = this.#now();
    if (now >= this.#until) {
      this.#until = now + this.#intervalMs;
      this.#used = 0;
    }
    if (this.#used >= this.#max) {
      this.#suppressed++;
      return undefined;
    }
    this.#used++;
    const suppressed = this.#suppressed;
    this.#suppressed = 0;
    return { suppressed };
  }
}

interface OutageReport {
  /** The first failure of an outage, with its cause; then a reminder every `remindEveryMs`. */
  down(cause: string, failures: number): void;
  /** The dependency answers again, after `failures` failed requests. */
  up(failures: number): void;
}

/** A dependency's outage told in few lines: when it starts (with the cause), reminders, when it ends. */
export class OutageLog {
  #failures = 0;
  #lastReported = 0;
  readonly #report: OutageReport;
  readonly #remindEveryMs: number;
  readonly #now: () => number;

  constructor(report: OutageReport, options: { remindEveryMs?: number; now?: () => number } = {}) {
    this.#report = report;
    this.#remindEveryMs = options.remindEveryMs ?? 5 * 60_000;
    this.#now = options.now ?? Date.now;
  }

  failed(cause: string): void {
    this.#failures++;
    const now = this.#now();
    if (this.#failures === 1 || now - this.#lastReported >= this.#remindEveryMs) {
      this.#lastReported = now;
      this.#report.down(cause, this.#failures);
    }
  }

  answered(): void {
    if (this.#failures === 0) return;
    const failures = this.#failures;
    this.#failures = 0;
    this.#report.up(failures);
  }
}
