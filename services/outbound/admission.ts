/**
 * The outbound client's admission and cache (client.ts): at most `hostConcurrency` requests in
 * flight per host, the rest queued in order (abortable), and the bounded cache of final GET
 * responses.
 */
import type { OutboundResponse } from './types.js';

/** Per-host admission: at most `limit` running, the rest wait in order. */
export class HostLimiter {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  constructor(private readonly limit: number) {}

  async acquire(host: string, signal: AbortSignal): Promise<() => void> {
    const n = this.running.get(host) ?? 0;
    if (n >= this.limit) {
      await new Promise<void>((resolve, reject) => {
        const queue = this.waiting.get(host) ?? [];
        const go = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = queue.indexOf(go);
          if (i >= 0) queue.splice(i, 1);
          reject(signal.reason);
        };
        queue.push(go);
        this.waiting.set(host, queue);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    } else {
      this.running.set(host, n + 1);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const queue = this.waiting.get(host);
      const next = queue?.shift();
      if (queue && queue.length === 0) this.waiting.delete(host);
      // The slot passes to the next waiter as is; otherwise it is freed.
      if (next) next();
      else {
        const left = (this.running.get(host) ?? 1) - 1;
        if (left <= 0) this.running.delete(host);
        else this.running.set(host, left);
      }
    };
  }
}

/** Bounded cache of final GET responses, oldest entry evicted first. */
export class ResponseCache {
  private readonly entries = new Map<string, { at: number; response: OutboundResponse }>();
  constructor(private readonly size: number) {}

  get(key: string, maxAgeMs: number, now: number): OutboundResponse | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (now - e.at > maxAgeMs) return undefined;
    return e.response;
  }

  set(key: string, response: OutboundResponse, now: number): void {
    if (this.size <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { at: now, response });
    while (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value as string);
  }
}
