/** A sliding-window rate limit by key (an address, an IP), in memory: `rate_limited` (429) past `max` events a window. */
import { NodeError } from '../consensus/errors.js';

/** Error code of a refused event. */
export const RATE_LIMITED = 'rate_limited';

/** Counts events per key over a sliding window. */
export class RateLimiter {
  private readonly recent = new Map<string, number[]>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    /** Keys remembered at most; the memory is emptied when full. */
    private readonly maxKeys = 50_000,
  ) {}

  /** Records one event for `key`; throws `rate_limited` (with `retryAfterMs`) when it is one too many. */
  hit(key: string, who: string): void {
    const now = this.now();
    const times = (this.recent.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (times.length >= this.max) {
      throw new NodeError(RATE_LIMITED, `${who} reached ${this.max} in the last ${this.windowMs / 1000} s; retry later`, { retryAfterMs: this.windowMs - (now - times[0]) });
    }
    times.push(now);
    if (!this.recent.has(key) && this.recent.size >= this.maxKeys) this.recent.clear();
    this.recent.set(key, times);
  }

  /** Whether `key` is at its limit now (nothing recorded). */
  blocked(key: string): boolean {
    const now = this.now();
    return (this.recent.get(key) ?? []).filter((t) => now - t < this.windowMs).length >= this.max;
  }
}
