/**
 * Ends of claimed payments that could not be written because the ledger was unreachable
 * (PostgreSQL down, `ledger_unavailable`): the result of a call that ran, or its failure (a
 * refund, a failed USDC payment). Each is kept in memory and written again every `retryMs` until
 * the ledger takes it, so a claim of a node that stays up never stays `claimed` — before, such a
 * claim was ended by nobody (a fleet's recovery ends only the claims of nodes gone or restarted,
 * x402/ledger/pgLedger.ts `orphanedClaims`) and its payment was kept without a result or a refund.
 * A node that stops before the ledger is back leaves the claim to that recovery.
 */
import { silentLogger, type Logger } from '../../chain/types.js';
import { LedgerErrorCode } from './ledger.js';

const codeOf = (e: unknown) => (e as { code?: unknown }).code;

/** The queue of ends to write again (see module comment). */
export class PendingEnds {
  private readonly ends = new Map<string, { what: string; write: () => Promise<unknown> }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing = false;

  constructor(
    private readonly log: Logger = silentLogger,
    private readonly retryMs = 1000,
  ) {}

  /**
   * Writes the end `what` of payment `id`; when the ledger is unreachable, keeps it to be written
   * again (the latest end of a payment replaces an earlier one) and rethrows, so the caller still
   * answers 503 `ledger_unavailable`.
   */
  async write<T>(id: string, what: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (e) {
      if (codeOf(e) === LedgerErrorCode.UNAVAILABLE) {
        this.ends.set(id, { what, write });
        this.log.warn({ id, end: what }, 'the ledger is unreachable: this end of the payment is written once it is back');
        this.timer ??= setInterval(() => void this.flush(), this.retryMs);
        this.timer.unref();
      }
      throw e;
    }
  }

  /** Ends waiting to be written. */
  get size(): number {
    return this.ends.size;
  }

  /** Writes the waiting ends, oldest first, until the ledger is still unreachable. */
  async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      for (const [id, end] of [...this.ends]) {
        try {
          await end.write();
          this.log.info({ id, end: end.what }, 'payment ended once the ledger was back');
        } catch (e) {
          if (codeOf(e) === LedgerErrorCode.UNAVAILABLE) return;
          // Ended meanwhile by someone else (ledger_conflict), or refused for good: nothing more to write.
          if (codeOf(e) !== LedgerErrorCode.CONFLICT) this.log.error({ id, end: end.what, err: (e as Error).message }, 'could not write the end of a payment');
        }
        // Unless a newer end of the payment was queued meanwhile.
        if (this.ends.get(id) === end) this.ends.delete(id);
      }
    } finally {
      this.flushing = false;
      if (this.ends.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    }
  }
}
