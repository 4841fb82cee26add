/**
 * A size-bounded map whose entries expire at their own instant. The oldest entry is evicted when
 * full, which is enough for tokens: they are short-lived and looked up by exact value.
 */
export class BoundedCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  readonly #max: number;
  readonly #now: () => number;

  constructor(max: number, now: () => number = Date.now) {
    this.#max = max;
    this.#now = now;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    if (expiresAt <= this.#now()) return;
    this.#entries.delete(key);
    if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, { value, expiresAt });
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
