/**
 * Token buckets for the node's per-client limits (Stratum submits, JSON-RPC wrong passwords, the
 * HTTP API's expensive endpoints): a bucket holds at most `burst` tokens and refills at
 * `ratePerSecond`; an event that finds no token is refused. `AddressBuckets` keeps one bucket per
 * client address, at most `maxTracked` of them (the least recently used is forgotten first, so an
 * attacker cycling addresses costs bounded memory). `RateLimiter` is a sliding-window count per
 * key (an address, an IP) for the provider boards and the inbox's failed signatures:
 * `rate_limited` (429) past `max` events a window.
 */
import { NodeError } from '../consensus/errors.js';

/** Rate and burst of a bucket. */
export interface TokenBucketOptions {
  /** Tokens added per second (0: the bucket never refills). */
  readonly ratePerSecond: number;
  /** Tokens the bucket holds at most (and starts with). */
  readonly burst: number;
}

/** One token bucket (clock in ms). */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly opts: TokenBucketOptions,
    now: number,
  ) {
    this.tokens = opts.burst;
    this.at = now;
  }

  private refill(now: number): void {
    if (now > this.at) this.tokens = Math.min(this.opts.burst, this.tokens + ((now - this.at) / 1000) * this.opts.ratePerSecond);
    this.at = now;
  }

  /** Takes `n` tokens (default one), all or none; false when there are fewer (the events are over the limit). */
  take(now: number, n = 1): boolean {
    this.refill(now);
    if (this.tokens < n) return false;
    this.tokens -= n;
    return true;
  }

  /** Whether a token is available now, without taking it. */
  has(now: number): boolean {
    this.refill(now);
    return this.tokens >= 1;
  }

  /** Seconds until `n` tokens (default one) are there (0 when they are; Infinity when the bucket never refills or holds fewer). */
  waitSeconds(now: number, n = 1): number {
    this.refill(now);
    if (this.tokens >= n) return 0;
    if (n > this.opts.burst) return Infinity;
    return this.opts.ratePerSecond > 0 ? Math.ceil((n - this.tokens) / this.opts.ratePerSecond) : Infinity;
  }
}

/** One token bucket per client address (see module comment). */
export class AddressBuckets {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly opts: TokenBucketOptions,
    private readonly maxTracked = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  private bucket(address: string): TokenBucket {
    let b = this.buckets.get(address);
    if (b) {
      // Most recently used last: the first key is the one to forget.
      this.buckets.delete(address);
    } else {
      b = new TokenBucket(this.opts, this.now());
      if (this.buckets.size >= this.maxTracked) this.buckets.delete(this.buckets.keys().next().value!);
    }
    this.buckets.set(address, b);
    return b;
  }

  /** Takes `n` tokens (default one) of `address`, all or none; false when it is over its limit. */
  take(address: string, n = 1): boolean {
    return this.bucket(address).take(this.now(), n);
  }

  /** Whether `address` has a token left (a request may go ahead), without taking it. */
  allowed(address: string): boolean {
    const b = this.buckets.get(address);
    return b === undefined || b.has(this.now());
  }

  /** Seconds until `address` has `n` tokens (default one) again (for `Retry-After`). */
  retryAfterSeconds(address: string, n = 1): number {
    const b = this.buckets.get(address);
    return b ? Math.max(1, Math.min(3600, b.waitSeconds(this.now(), n))) : 1;
  }

  /** Addresses currently tracked. */
  get size(): number {
    return this.buckets.size;
  }
}

/** The client address of a socket, without the IPv4-mapped prefix (`::ffff:1.2.3.4` → `1.2.3.4`). */
export function clientAddress(remoteAddress: string | undefined): string {
  if (!remoteAddress) return '?';
  return remoteAddress.startsWith('::ffff:') ? remoteAddress.slice(7) : remoteAddress;
}

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
