/**
 * The mining job feed: one owner of the chain's 'tip' and the mempool's 'added'/'removed'
 * subscriptions that builds block templates and emits them as jobs. A new tip
 * makes a job at once (`clean`: the parent changed); mempool changes make one at most every
 * `mempoolRefreshMs`; without either, a `keepalive` job goes out every `keepAliveMs`. Builds are
 * serialised (a request during a build makes one more build afterwards, with the strongest reason
 * asked for: tip > keepalive > mempool), a template whose parent is no longer the tip is built
 * again at once, and a failed build is retried after a second. A template with the same parent,
 * transactions and bits as the last job is not emitted again, except as a keep-alive. After a
 * new tip, once the mempool's queued work (the re-checks after a reorganisation) is done, a
 * mempool job follows at once if the mempool changed meanwhile.
 *
 * Nobody listening, no work: while the feed has no 'job' listener (a node mining by slots with
 * `--block-time`, Stratum off and no getblocktemplate long poll waiting) it builds nothing after
 * its first job and `current` is undefined once that job is stale; the first 'job' listener gets
 * a fresh job at once. A template of a full block costs the main thread tens of ms, which the
 * paced miner's slot would otherwise share.
 *
 * Before building for a new tip the feed emits 'tip' synchronously, so a consumer can drop stale
 * work before the job for the new parent is ready (the CPU miner stops its workers there).
 *
 * The template pays nobody (a zero payee): consumers put their own payee in (`templateForMiner`,
 * chain/template.ts). Consumers, sharing one feed in the node (node/node.ts): the CPU miner
 * (chain/miner.ts), the Stratum server (its jobs) and the getblocktemplate long poll (it ends at
 * the next job on a new parent or with new mempool work).
 */
import { EventEmitter } from 'node:events';
import type { ChainParams } from '../consensus/params.js';
import { ADDRESS_SIZE } from '../consensus/keys.js';
import { isNodeError } from '../consensus/errors.js';
import { createBlockTemplate, sameTemplateWork, type BlockTemplate, type TemplateChain, type TemplateMempool } from './template.js';
import { silentLogger, type ChainEntry, type Logger } from './types.js';

/** Why a job was made. */
export type JobReason = 'tip' | 'mempool' | 'keepalive';

/** One job: a template and why it was made. */
export interface MiningJob {
  readonly template: BlockTemplate;
  readonly reason: JobReason;
  /** The parent differs from the previous job's: earlier work is stale. */
  readonly clean: boolean;
  /** For the first job of a new tip: when the chain announced the tip (`performance.timeOrigin + performance.now()`, ms). */
  readonly tipSeenAt?: number;
}

/** Options of the job feed. */
export interface JobFeedOptions {
  /** Shortest interval between jobs caused by mempool changes, ms. */
  readonly mempoolRefreshMs: number;
  /** Longest time without a job, ms. */
  readonly keepAliveMs: number;
  /** Coinbase tag. */
  readonly tag: string;
  /** Clock in Unix seconds (block times). */
  readonly now?: () => number;
}

/** What the feed reads of the chain (the `Chain` implements it). */
export interface JobFeedChain extends TemplateChain {
  on(event: 'tip', listener: (entry: ChainEntry) => void): unknown;
  off(event: 'tip', listener: (entry: ChainEntry) => void): unknown;
}

/** What the feed reads of the mempool (the `Mempool` implements it). */
export interface JobFeedMempool extends TemplateMempool {
  on(event: 'added' | 'removed', listener: () => void): unknown;
  off(event: 'added' | 'removed', listener: () => void): unknown;
  /** Resolves when queued mempool work (e.g. re-checks after a reorganisation) is done. */
  idle?(): Promise<void>;
}

/** Events of the job feed. */
export interface JobFeedEvents {
  /** A new job. */
  job: [job: MiningJob];
  /** The chain's tip changed (emitted before the job for it is built); `at` as `MiningJob.tipSeenAt`. */
  tip: [entry: ChainEntry, at: number];
}

/** What the feed follows and builds from. */
export interface JobFeedModules {
  readonly chain: JobFeedChain;
  readonly mempool: JobFeedMempool;
  readonly params: ChainParams;
  readonly logger?: Logger;
}

/** Which reason wins when several arrive during one build. */
const REASON_RANK: Record<JobReason, number> = { mempool: 0, keepalive: 1, tip: 2 };
/** Placeholder payee of the feed's templates. */
const NOBODY = new Uint8Array(ADDRESS_SIZE);
const RETRY_MS = 1_000;

function perfNow(): number {
  return performance.timeOrigin + performance.now();
}

/** The job feed (see module comment). */
export class JobFeed extends EventEmitter<JobFeedEvents> {
  private readonly log: Logger;
  private readonly now: () => number;
  private running = false;
  private building = false;
  private again = false;
  private pendingReason: JobReason | undefined;
  private lastBuildMs = 0;
  private mempoolTimer: NodeJS.Timeout | undefined;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private tipSeen: { hash: string; at: number } | undefined;
  /** The mempool changed since the last build started. */
  private mempoolDirty = false;
  private last: MiningJob | undefined;
  /** A build was skipped because nobody listened (the first listener gets one at once). */
  private skipped = false;
  /** …for a new tip or new mempool work: `last` is stale (a skipped keep-alive leaves it valid). */
  private stale = false;
  /** Skipped builds so far: a build during which one was skipped does not clear the flags above. */
  private skips = 0;

  constructor(
    private readonly opts: JobFeedOptions,
    private readonly m: JobFeedModules,
  ) {
    super();
    (this as EventEmitter).on('newListener', (event: string | symbol) => {
      // The first listener after skipped builds: a fresh job, once it is subscribed.
      if (event === 'job' && this.skipped && this.running) queueMicrotask(() => void this.refresh('keepalive'));
    });
    this.log = m.logger ?? silentLogger;
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
  }

  /** The latest job (undefined before the first build, and while nobody listens once the chain or mempool moved on). */
  get current(): MiningJob | undefined {
    return this.stale ? undefined : this.last;
  }

  /** Follows the chain and the mempool and builds the first job. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.m.chain.on('tip', this.onTip);
    this.m.mempool.on('added', this.onMempool);
    this.m.mempool.on('removed', this.onMempool);
    await this.refresh('keepalive', true);
  }

  /** Stops following; no job is emitted afterwards. */
  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.m.chain.off('tip', this.onTip);
    this.m.mempool.off('added', this.onMempool);
    this.m.mempool.off('removed', this.onMempool);
    clearTimeout(this.mempoolTimer);
    clearTimeout(this.keepAliveTimer);
    clearTimeout(this.retryTimer);
    this.mempoolTimer = this.keepAliveTimer = this.retryTimer = undefined;
  }

  private readonly onTip = (entry: ChainEntry): void => {
    const at = perfNow();
    this.tipSeen = { hash: entry.hashHex, at };
    this.emit('tip', entry, at);
    void this.refresh('tip');
    // After a reorganisation the mempool re-checks its entries asynchronously: a job with the
    // result follows at once rather than after the mempool interval.
    this.m.mempool.idle?.().then(
      () => {
        if (this.mempoolDirty) void this.refresh('mempool');
      },
      () => undefined,
    );
  };

  private readonly onMempool = (): void => {
    this.mempoolDirty = true;
    if (this.mempoolTimer || !this.running) return;
    const wait = Math.max(0, this.lastBuildMs + this.opts.mempoolRefreshMs - Date.now());
    this.mempoolTimer = setTimeout(() => {
      this.mempoolTimer = undefined;
      void this.refresh('mempool');
    }, wait);
    this.mempoolTimer.unref();
  };

  private armKeepAlive(): void {
    clearTimeout(this.keepAliveTimer);
    if (!this.running) return;
    this.keepAliveTimer = setTimeout(() => void this.refresh('keepalive'), this.opts.keepAliveMs);
    this.keepAliveTimer.unref();
  }

  /** Builds a template and emits it when it is new work (see module comment). */
  async refresh(reason: JobReason, evenUnheard = false): Promise<void> {
    if (!this.running) return;
    if (!evenUnheard && this.listenerCount('job') === 0) {
      this.skips++;
      this.skipped = true;
      if (reason !== 'keepalive') this.stale = true;
      this.mempoolDirty = false;
      this.tipSeen = undefined; // the job a later listener gets is not this tip's first job
      return;
    }
    if (!this.pendingReason || REASON_RANK[reason] > REASON_RANK[this.pendingReason]) this.pendingReason = reason;
    if (this.building) {
      this.again = true;
      return;
    }
    this.building = true;
    try {
      do {
        this.again = false;
        const why = this.pendingReason ?? reason;
        this.pendingReason = undefined;
        this.lastBuildMs = Date.now();
        this.mempoolDirty = false;
        const skipsBefore = this.skips;
        const tpl = await createBlockTemplate(this.m.chain, this.m.mempool, this.m.params, { miner: NOBODY, tag: this.opts.tag, now: this.now });
        if (!this.running) return;
        if (tpl.parentHash !== this.m.chain.tip.hashHex) {
          // A block arrived during the build: build on the new tip at once.
          this.again = true;
          this.pendingReason = 'tip';
          continue;
        }
        const prev = this.last?.template;
        const clean = !prev || prev.parentHash !== tpl.parentHash;
        if (clean || why === 'keepalive' || !sameTemplateWork(prev, tpl) || prev.bits !== tpl.bits) {
          const tipSeenAt = clean && this.tipSeen?.hash === tpl.parentHash ? this.tipSeen.at : undefined;
          if (tipSeenAt !== undefined) this.tipSeen = undefined;
          // A job with other transactions is new mempool work whatever asked for it (a keep-alive,
          // or the first listener's job after skipped builds): a getblocktemplate long poll ends on it.
          this.last = { template: tpl, reason: clean ? 'tip' : prev && !sameTemplateWork(prev, tpl) ? 'mempool' : why, clean, tipSeenAt };
          if (this.skips === skipsBefore) this.skipped = this.stale = false;
          this.armKeepAlive();
          this.emit('job', this.last);
        }
      } while (this.again && this.running);
    } catch (e) {
      this.log.error({ err: (e as Error).message, code: isNodeError(e) ? e.code : undefined }, 'mining job template failed; retrying');
      if (this.running && !this.retryTimer) {
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          void this.refresh('keepalive');
        }, RETRY_MS);
        this.retryTimer.unref();
      }
    } finally {
      this.building = false;
    }
  }
}

/** Creates a job feed (call `start()`). */
export function createJobFeed(opts: JobFeedOptions, modules: JobFeedModules): JobFeed {
  return new JobFeed(opts, modules);
}
