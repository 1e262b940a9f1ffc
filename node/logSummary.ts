/**
 * Bounded logging of repeated per-client events (a Stratum authorisation, a refused connection, a
 * wrong RPC password): within each interval the first event of a client is logged in full, the
 * others are only counted, and at the end of the interval one summary line gives the counts
 * (`"<msg> (repeated)"` with `total`, `suppressed` and the busiest clients). A client that sends
 * a million events writes at most one line per interval, plus its share of one summary line.
 */
import type { Logger } from '../chain/types.js';

/** Options of a log summary. */
export interface LogSummaryOptions {
  /** Length of an interval, ms. */
  readonly intervalMs: number;
  readonly level: 'debug' | 'info' | 'warn';
  /** Clients named in a summary line (the busiest first). */
  readonly topClients?: number;
  /** Clients counted per interval at most (more are folded into `others`). */
  readonly maxClients?: number;
}

/** Default interval of the node's log summaries, ms. */
export const DEFAULT_LOG_SUMMARY_MS = 60_000;

/** Sampled logging of one kind of per-client event (see module comment). */
export class LogSummary {
  private counts = new Map<string, number>();
  private others = 0;
  private total = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Lines written, full and summary (for status and tests). */
  lines = 0;
  /** Events counted but not logged in full. */
  suppressed = 0;

  constructor(
    private readonly log: Logger,
    private readonly msg: string,
    private readonly opts: LogSummaryOptions,
  ) {}

  /** Records one event of `client`; logs it in full when it is the client's first in this interval. */
  note(client: string, fields: Record<string, unknown>): void {
    this.total++;
    const n = this.counts.get(client);
    if (n !== undefined) {
      this.counts.set(client, n + 1);
      this.suppressed++;
      this.arm();
      return;
    }
    if (this.counts.size >= (this.opts.maxClients ?? 1_000)) {
      this.others++;
      this.suppressed++;
      this.arm();
      return;
    }
    this.counts.set(client, 1);
    this.lines++;
    this.log[this.opts.level]({ ...fields, client }, this.msg);
    this.arm();
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), this.opts.intervalMs);
    this.timer.unref();
  }

  /** Ends the interval: one summary line when events were held back, then counting starts over. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const held = this.total - this.counts.size;
    if (held > 0) {
      const top = [...this.counts.entries()]
        .filter(([, n]) => n > 1)
        .sort((a, b) => b[1] - a[1])
        .slice(0, this.opts.topClients ?? 10)
        .map(([client, count]) => ({ client, count }));
      this.lines++;
      this.log[this.opts.level]({ total: this.total, suppressed: held, clients: this.counts.size, others: this.others, top, intervalMs: this.opts.intervalMs }, `${this.msg} (repeated)`);
    }
    this.counts = new Map();
    this.others = 0;
    this.total = 0;
  }

  /** Writes the pending summary and stops the timer. */
  stop(): void {
    this.flush();
  }
}
