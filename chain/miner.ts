/**
 * The built-in CPU miner: worker threads grind block templates, the main thread submits their
 * solutions to the chain.
 *
 * Work: a template (`chain/template.ts`) is cut into units `(extranonce, nonce range)`; each
 * worker gets its own slice of the nonce space under the generation's extranonce, and a worker
 * that exhausts its slice gets a fresh extranonce (and a fresh time). Every unit is unique, so
 * no two workers ever hash the same header.
 *
 * Templates come from the mining job feed (chain/jobFeed.ts), which owns the tip and mempool
 * subscriptions: the node's shared feed (Stratum and getblocktemplate follow the same one), or,
 * when none is given, a feed of the miner's own (`mempoolRefreshMs`, keep-alive every
 * `templateMaxAgeMs`), started and stopped with it. Each job is re-paid to the miner's address
 * (`templateForMiner`). Two policies are the miner's own: after one of its blocks was refused,
 * it mines coinbase-only on that parent (one build of its own, without the mempool); and when the
 * chain's times ran ahead of its clock (MTP + 1 beyond the future limit) it idles until the
 * clock has caught up.
 *
 * Switching work: a shared Int32 "generation" counter. A new tip bumps it at once, in the feed's
 * synchronous 'tip' event, so workers drop stale work within one check interval (2,048 hashes,
 * about 1.5 ms); the job for the new tip follows as job messages tagged with the new generation,
 * which each worker acknowledges (the 'job' event).
 *
 * Solutions are re-verified with the consensus hash on the main thread and submitted with
 * `chain.addBlock`, one per parent. A rejected block is logged and reported ('rejected'), never
 * thrown; the next template on that parent is then coinbase-only, so a bad mempool candidate
 * cannot make the miner produce invalid blocks forever.
 *
 * Files: this one (the miner's entry point; ~440 lines: work units, generations, solutions and
 * the job policies share the miner's state) hands work to the workers; their threads' lifecycle
 * is minerSlots.ts, the hashing loop minerWorker.ts, the options, events and interfaces
 * minerTypes.ts.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { tryDecodeAddress } from '../consensus/address.js';
import { blockHash, encodeBlock, EXTRANONCE_SIZE, type Block } from '../consensus/block.js';
import { NodeError } from '../consensus/errors.js';
import { toHex } from '../consensus/hash.js';
import { ADDRESS_SIZE } from '../consensus/keys.js';
import { checkProofOfWork } from '../consensus/pow.js';
import type { ChainParams } from '../consensus/params.js';
import { createBlockTemplate, encodeCoinbaseTag, templateBlock, templateForMiner, templateHeaderBytes, type BlockTemplate } from './template.js';
import { createJobFeed, type JobFeed, type MiningJob } from './jobFeed.js';
import { CTL_GENERATION, MINER_WORKER_KIND, type HasherKind, type MainToWorker, type MinerWorkerData, type WorkerToMain } from './minerWorker.js';
import { spawnSlot, stopSlot, type Slot, type SlotHandlers } from './minerSlots.js';
import { defaultMinerOptions, MinerErrorCode, type Miner, type MinerChain, type MinerEvents, type MinerMempool, type MinerOptions, type MinerStats } from './minerTypes.js';
import { silentLogger, type ChainEntry, type Logger } from './types.js';

/** The miner's vocabulary (minerTypes.ts), re-exported: this file is the miner's entry point. */
export * from './minerTypes.js';

const NONCE_SPACE = 0x1_0000_0000;
/** A failed coinbase-only build is retried after this, ms. */
const BUILD_RETRY_MS = 1_000;
const REJECT_BACKOFF_MS = 5_000;
const TICK_MS = 1_000;

interface Unit {
  readonly gen: number;
  readonly tpl: BlockTemplate;
  readonly extranonce: Uint8Array;
  readonly time: number;
  readonly worker: number;
  readonly postedAt: number;
}

function perfNow(): number {
  return performance.timeOrigin + performance.now();
}

function targetBytesLE(target: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let t = target;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(t & 0xffn);
    t >>= 8n;
  }
  return out;
}

/** The CPU miner (see module comment). */
class CpuMiner extends EventEmitter<MinerEvents> implements Miner {
  private readonly log: Logger;
  private readonly minerId: Uint8Array;
  private readonly threads: number;
  private readonly now: () => number;
  private readonly opts: Required<Pick<MinerOptions, 'hashrateWindowMs' | 'nonceRange'>>;
  private readonly feed: JobFeed;
  /** The feed is the miner's own: started and stopped with it. */
  private readonly ownFeed: boolean;
  private readonly control = new Int32Array(new SharedArrayBuffer(4 * 4));
  private readonly counters: BigInt64Array;
  private readonly slots: Slot[];
  private readonly slotHandlers: SlotHandlers;
  private readonly units = new Map<number, Unit>();
  private readonly pending = new Set<Promise<void>>();
  /** Parents on which an own block was rejected: their templates carry no transactions. */
  private readonly emptyParents = new Set<string>();
  private readonly extranoncePrefix = randomBytes(4);
  private extranonceCounter = 0;
  private running = false;
  private gen = 0;
  private nextJobId = 1;
  private template?: BlockTemplate;
  /** A coinbase-only build (after a refused block) is running. */
  private buildingEmpty = false;
  private submittedParent?: string;
  private tip?: { hash: string; at: number };
  private blocksFound = 0;
  private retryTimer?: NodeJS.Timeout;
  private tick?: NodeJS.Timeout;
  private samples: { t: number; total: number }[] = [];
  private readonly hasherOverride?: HasherKind;
  private readonly tag?: string;
  private clockWarned?: string;

  constructor(
    private readonly chain: MinerChain,
    private readonly mempool: MinerMempool,
    private readonly params: ChainParams,
    opts: MinerOptions,
  ) {
    super();
    if (!Number.isInteger(opts.threads) || opts.threads < 1 || opts.threads > 256) {
      throw new NodeError(MinerErrorCode.BAD_OPTIONS, `threads must be an integer in [1, 256], got ${opts.threads}`);
    }
    const id = typeof opts.address === 'string' ? tryDecodeAddress(opts.address, params.hrp) : opts.address;
    if (!id || id.length !== ADDRESS_SIZE) throw new NodeError(MinerErrorCode.BAD_ADDRESS, `miner address is not a valid ${params.hrp} address`);
    this.minerId = id;
    this.tag = opts.tag;
    encodeCoinbaseTag(opts.tag);
    this.threads = opts.threads;
    this.log = opts.logger ?? silentLogger;
    this.slotHandlers = { log: this.log, running: () => this.running, onMessage: (slot, worker, msg) => this.onWorkerMessage(slot, worker, msg) };
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
    const perThread = Math.floor(NONCE_SPACE / opts.threads);
    const nonceRange = Math.min(opts.nonceRange ?? perThread, perThread);
    if (!Number.isInteger(nonceRange) || nonceRange < 1) throw new NodeError(MinerErrorCode.BAD_OPTIONS, `nonceRange must be a positive integer`);
    this.opts = { hashrateWindowMs: opts.hashrateWindowMs ?? defaultMinerOptions.hashrateWindowMs, nonceRange };
    this.ownFeed = opts.feed === undefined;
    this.feed =
      opts.feed ??
      createJobFeed(
        { mempoolRefreshMs: opts.mempoolRefreshMs ?? defaultMinerOptions.mempoolRefreshMs, keepAliveMs: opts.templateMaxAgeMs ?? defaultMinerOptions.templateMaxAgeMs, tag: opts.tag ?? '', now: this.now },
        { chain, mempool, params, logger: this.log },
      );
    this.hasherOverride = opts.hasher;
    this.counters = new BigInt64Array(new SharedArrayBuffer(8 * opts.threads));
    this.slots = Array.from({ length: opts.threads }, (_, index) => ({ index, ready: false, failures: 0 }));
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.submittedParent = undefined;
    this.feed.on('tip', this.onTip);
    this.feed.on('job', this.onJob);
    this.tick = setInterval(() => this.onTick(), TICK_MS);
    this.tick.unref();
    this.samples = [{ t: Date.now(), total: this.totalHashes() }];
    const ready = this.slots.map((s) => spawnSlot(s, this.workerData(s), this.slotHandlers));
    // An own feed emits its first job while starting; a shared one that runs already has its latest job.
    if (this.ownFeed) await this.feed.start();
    else this.takeLatest();
    await Promise.all(ready);
    this.log.info({ threads: this.threads, height: this.template?.height, hashers: this.slots.map((s) => s.hasher), nice: this.slots.map((s) => s.nice) }, 'miner started');
  }

  async stop(): Promise<void> {
    if (!this.running) {
      await Promise.allSettled([...this.pending]);
      return;
    }
    this.running = false;
    this.feed.off('tip', this.onTip);
    this.feed.off('job', this.onJob);
    if (this.ownFeed) this.feed.stop();
    clearInterval(this.tick);
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.bumpGeneration();
    await Promise.all(this.slots.map((s) => stopSlot(s)));
    await Promise.allSettled([...this.pending]);
    this.units.clear();
    this.samples = [];
    this.template = undefined;
    this.log.info({ blocksFound: this.blocksFound }, 'miner stopped');
  }

  stats(): MinerStats {
    return {
      running: this.running,
      threads: this.threads,
      hashrate: this.running ? this.currentHashrate() : 0,
      blocksFound: this.blocksFound,
      height: this.template?.height ?? 0,
      hashes: this.totalHashes(),
      generation: this.gen,
      hashers: this.slots.map((s) => s.hasher),
    };
  }

  // ---- workers ----

  // ---- workers ----

  private workerData(slot: Slot): MinerWorkerData {
    return { kind: MINER_WORKER_KIND, index: slot.index, control: this.control.buffer as SharedArrayBuffer, counters: this.counters.buffer as SharedArrayBuffer, hasher: this.hasherOverride };
  }

  private onWorkerMessage(slot: Slot, worker: Worker, msg: WorkerToMain): void {
    if (slot.worker !== worker || !this.running) return;
    switch (msg.type) {
      case 'ready':
        // A (re)started worker joins the current generation with a unit of its own.
        if (this.template) this.assign(slot, this.template, this.freshExtranonce());
        break;
      case 'ack': {
        const unit = this.units.get(msg.jobId);
        if (!unit) break;
        const tip = this.tip;
        this.emit('job', {
          generation: msg.gen,
          worker: slot.index,
          jobId: msg.jobId,
          height: unit.tpl.height,
          parentHash: unit.tpl.parentHash,
          extranonce: toHex(unit.extranonce),
          postedAt: unit.postedAt,
          at: msg.at,
          sinceTipMs: tip && tip.hash === unit.tpl.parentHash ? msg.at - tip.at : undefined,
        });
        break;
      }
      case 'exhausted': {
        const unit = this.units.get(msg.jobId);
        this.units.delete(msg.jobId);
        // The worker is idle: roll the extranonce (and the time) for it.
        if (unit && msg.gen === this.gen && this.template) this.assign(slot, this.template, this.freshExtranonce());
        break;
      }
      case 'found':
        this.onFound(slot, msg.gen, msg.jobId, msg.nonce);
        break;
    }
  }

  // ---- work ----

  private totalHashes(): number {
    let n = 0n;
    for (let i = 0; i < this.counters.length; i++) n += Atomics.load(this.counters, i);
    return Number(n);
  }

  private bumpGeneration(): void {
    this.gen = (this.gen + 1) | 0;
    Atomics.store(this.control, CTL_GENERATION, this.gen);
  }

  private freshExtranonce(): Uint8Array {
    const e = new Uint8Array(EXTRANONCE_SIZE);
    e.set(this.extranoncePrefix, 0);
    new DataView(e.buffer).setUint32(4, this.extranonceCounter, true);
    this.extranonceCounter = (this.extranonceCounter + 1) >>> 0;
    return e;
  }

  /** Starts a new generation on `tpl`: one extranonce, one nonce slice per worker. */
  private dispatch(tpl: BlockTemplate): void {
    this.bumpGeneration();
    this.template = tpl;
    const extranonce = this.freshExtranonce();
    // Units of the previous generation can still be solved (same parent, other transactions); older ones are dropped.
    for (const [id, u] of this.units) if (u.gen !== this.gen && u.gen !== ((this.gen - 1) | 0)) this.units.delete(id);
    for (const slot of this.slots) if (slot.ready) this.assign(slot, tpl, extranonce);
    this.emit('template', tpl);
  }

  private assign(slot: Slot, tpl: BlockTemplate, extranonce: Uint8Array): void {
    const worker = slot.worker;
    if (!worker || !slot.ready) return;
    const range = this.opts.nonceRange;
    const nonceStart = slot.index * range;
    // Fresh units get the current time; the template's own time is already max(now, MTP + 1).
    const time = Math.max(this.now(), tpl.minTime, tpl.block.header.time);
    const jobId = this.nextJobId++;
    this.units.set(jobId, { gen: this.gen, tpl, extranonce, time, worker: slot.index, postedAt: perfNow() });
    const msg: MainToWorker = {
      type: 'job',
      gen: this.gen,
      jobId,
      header: templateHeaderBytes(tpl, { extranonce, time }),
      nonceStart,
      nonceEnd: nonceStart + range - 1,
      target: targetBytesLE(tpl.target),
    };
    worker.postMessage(msg);
  }

  private onFound(slot: Slot, gen: number, jobId: number, nonce: number): void {
    const unit = this.units.get(jobId);
    if (!unit) return;
    const { tpl } = unit;
    const block = templateBlock(tpl, { extranonce: unit.extranonce, time: unit.time, nonce });
    const hash = blockHash(block.header);
    const hashHex = toHex(hash);
    if (!checkProofOfWork(hash, block.header.bits, this.params.powLimit)) {
      this.log.error({ worker: slot.index, hasher: slot.hasher, nonce, hash: hashHex }, 'miner worker reported a nonce that misses the target');
      if (gen === this.gen) this.assign(slot, tpl, this.freshExtranonce());
      return;
    }
    if (tpl.parentHash !== this.chain.tip.hashHex || this.submittedParent === tpl.parentHash) {
      // Stale (the tip moved) or this height is already solved by another worker: ignore.
      this.log.debug({ hash: hashHex, height: tpl.height }, 'stale solution dropped');
      if (gen === this.gen && this.submittedParent !== tpl.parentHash) this.takeLatest();
      return;
    }
    // This height is solved: stop every worker until the next template.
    this.bumpGeneration();
    this.submittedParent = tpl.parentHash;
    this.log.info({ hash: hashHex, height: tpl.height, txs: tpl.txIds.length, worker: slot.index }, 'block found');
    const p = this.submit(block, tpl, hashHex);
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private async submit(block: Block, tpl: BlockTemplate, hashHex: string): Promise<void> {
    try {
      const res = await this.chain.addBlock(encodeBlock(block, tpl.txBytes));
      if (res.status === 'connected' || res.status === 'reorganized') {
        this.blocksFound++;
        this.log.info({ hash: hashHex, height: tpl.height, status: res.status }, 'mined block connected');
      } else {
        this.log.warn({ hash: hashHex, height: tpl.height, status: res.status }, 'mined block not connected');
        this.submittedParent = undefined;
        this.takeLatest();
      }
      this.emit('block', { hash: hashHex, height: tpl.height, status: res.status, txCount: tpl.txIds.length });
    } catch (e) {
      const code = e instanceof NodeError ? e.code : undefined;
      const message = (e as Error).message;
      this.log.error({ hash: hashHex, height: tpl.height, code, err: message }, 'mined block rejected');
      this.submittedParent = undefined;
      this.emit('rejected', { hash: hashHex, height: tpl.height, code, message });
      if (!this.running) return;
      if (tpl.txIds.length > 0) {
        this.emptyParents.add(tpl.parentHash);
        this.takeLatest();
      } else {
        // Even a coinbase-only block was refused (a clock or parameter mismatch?): do not spin on it.
        this.bumpGeneration();
        this.template = undefined;
        this.retryLater(REJECT_BACKOFF_MS);
      }
    }
  }

  // ---- templates ----

  /** The feed saw a new tip: stale work stops now; the job for the new tip follows. */
  private readonly onTip = (entry: ChainEntry, at: number): void => {
    this.tip = { hash: entry.hashHex, at };
    if (this.template?.parentHash !== entry.hashHex) this.bumpGeneration();
    for (const p of this.emptyParents) if (p !== entry.hashHex) this.emptyParents.delete(p);
  };

  private readonly onJob = (job: MiningJob): void => {
    this.take(job.template);
  };

  private onTick(): void {
    const now = Date.now();
    this.samples.push({ t: now, total: this.totalHashes() });
    while (this.samples.length > 2 && this.samples[0].t < now - this.opts.hashrateWindowMs) this.samples.shift();
  }

  /** Hashes per second from the oldest sample in the window to now. */
  private currentHashrate(): number {
    const first = this.samples[0];
    const now = Date.now();
    if (!first || now - first.t < 50) return 0;
    return ((this.totalHashes() - first.total) * 1000) / (now - first.t);
  }

  /** Mines the feed's latest job again (after a solved, refused or stale block); a job for a newer tip is on its way otherwise. */
  private takeLatest(): void {
    const job = this.feed.current;
    if (job) this.take(job.template);
  }

  /** Mines a job of the feed, re-paid to this miner, unless it is stale or this parent wants a coinbase-only block. */
  private take(feedTpl: BlockTemplate): void {
    if (!this.running || feedTpl.parentHash !== this.chain.tip.hashHex) return;
    if (this.emptyParents.has(feedTpl.parentHash) && feedTpl.txIds.length > 0) {
      void this.buildCoinbaseOnly();
      return;
    }
    this.use(templateForMiner(feedTpl, this.minerId));
  }

  /** After a refused block with transactions: the next block on that parent carries none. */
  private async buildCoinbaseOnly(): Promise<void> {
    if (this.buildingEmpty) return;
    this.buildingEmpty = true;
    try {
      const tpl = await createBlockTemplate(this.chain, this.mempool, this.params, { miner: this.minerId, tag: this.tag, now: this.now, includeTxs: false });
      // A newer tip's job from the feed replaces it.
      if (this.running && tpl.parentHash === this.chain.tip.hashHex) this.use(tpl);
    } catch (e) {
      this.log.error({ err: (e as Error).message, code: e instanceof NodeError ? e.code : undefined }, 'block template failed; retrying');
      this.retryLater(BUILD_RETRY_MS);
    } finally {
      this.buildingEmpty = false;
    }
  }

  /** Dispatches a template, unless the chain's times ran ahead of our clock (such a block would be refused). */
  private use(tpl: BlockTemplate): void {
    const ahead = tpl.block.header.time - this.now() - this.params.maxFutureBlockTime;
    if (ahead > 0) {
      // Idle the workers and try again when the clock has caught up.
      const where = `${tpl.parentHash}:${tpl.block.header.time}`;
      if (this.clockWarned !== where) this.log.warn({ height: tpl.height, time: tpl.block.header.time, aheadSeconds: ahead }, 'block time would be too far in the future; waiting');
      this.clockWarned = where;
      this.bumpGeneration();
      this.template = undefined;
      this.retryLater(Math.min(ahead, 60) * 1000);
      return;
    }
    this.dispatch(tpl);
  }

  private retryLater(ms: number): void {
    if (!this.running || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.takeLatest();
    }, ms);
    this.retryTimer.unref();
  }
}

/** Creates the CPU miner (call `start()`). */
export function createMiner(chain: MinerChain, mempool: MinerMempool, params: ChainParams, opts: MinerOptions): Miner {
  return new CpuMiner(chain, mempool, params, opts);
}
