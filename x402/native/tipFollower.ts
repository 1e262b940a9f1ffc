/**
 * Serial background work re-run on every new tip and on a timer, with a start/stop lifecycle:
 * what refunds (x402/native/refunds.ts) and provider payouts (x402/providers/payouts.ts) share to finish and
 * re-send their transactions until they are mined.
 */
import type { Logger } from '../../chain/types.js';
import type { PaymentChain } from '../core/ports.js';

/** Runs `check` one at a time, after every tip and every `retryMs`; other work joins the same queue. */
export class TipFollower {
  private queue: Promise<unknown> = Promise.resolve();
  private timer?: NodeJS.Timeout;
  private readonly onTip = () => void this.serial(this.check);

  constructor(
    private readonly chain: Pick<PaymentChain, 'on' | 'off'>,
    private readonly check: () => Promise<void>,
    private readonly retryMs: number,
    private readonly log: Logger,
    /** Names the work in error logs, e.g. `refund`. */
    private readonly what: string,
  ) {}

  /** Follows the tip and runs a first check. */
  async start(): Promise<void> {
    this.chain.on('tip', this.onTip);
    this.timer = setInterval(this.onTip, this.retryMs);
    this.timer.unref();
    await this.serial(this.check);
  }

  stop(): void {
    this.chain.off('tip', this.onTip);
    if (this.timer) clearInterval(this.timer);
  }

  /** Waits for queued work. */
  async idle(): Promise<void> {
    await this.queue;
  }

  /** Queues `fn` behind the work already queued. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch((e) => this.log.error({ err: e }, `${this.what} work failed`));
    return run;
  }
}
