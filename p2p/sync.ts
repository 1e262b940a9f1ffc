/**
 * Header-first sync with parallel block download.
 *
 * Each connected peer's STATUS (height, tip, cumulative work) is refreshed every
 * `statusIntervalMs`, and at once when it relays a block we cannot attach. When a peer claims
 * more work than our tip, a job starts:
 *
 *  1. Headers: GET_HEADERS with a locator of our best chain (Bitcoin's: the last 10 blocks,
 *     then exponentially sparser, then genesis), repeated from the last header until the peer
 *     has no more or `maxHeadersPerJob` are held. Every header is checked in context as it
 *     arrives (link, ASERT bits, proof of work, median time past, future limit), so a peer
 *     cannot make us download bodies of a chain it did not do the work for.
 *  2. Bodies: the header chain's blocks are requested in batches (GET_BLOCKS, `batchSize`
 *     hashes) from every peer that is high enough (up to `maxInflightPerPeer` batches each),
 *     within a window of `windowBlocks` past the next block to connect and a byte budget.
 *     Each block must be the one asked for and match its header's merkle root; it is then
 *     handed to the chain strictly in height order while the other downloads continue. A
 *     batch that fails or times out goes back to the queue for another peer.
 *  3. Signatures ahead: the transactions of downloaded blocks after the one being connected are
 *     submitted to the signature pool (`preverifyBlocks` blocks ahead at most) as background
 *     work, which the pool runs only while the chain's own checks do not wait, and never twice
 *     (a check the chain asks for while it is queued ahead joins it). Its cache of verified tx
 *     ids then answers the chain at once, so signature checking overlaps the chain's writes
 *     instead of alternating with them. Blocks are taken in order, each once the keys published
 *     by every block before it are known. The chain still checks every block in
 *     full; this only warms the cache (a key is looked up by the sender's address, to which
 *     consensus binds it, so the same tx id always means the same check).
 *
 * Faults are charged to the peer that caused them (`scoring.ts`); an invalid block ends the
 * job. Sync state (height, target height, rate, ETA) is what `/api/v1/status`, the progress bar
 * and the paid routes (`isSyncing()`) read.
 */
import { EventEmitter } from 'node:events';
import { blockHash, decodeBlock, type BlockHeader } from '../consensus/block.js';
import { addressOfPublicKey, type HybridPublicKey } from '../consensus/keys.js';
import { accountKey, decodeAccount } from '../consensus/state.js';
import { txSighash } from '../consensus/tx.js';
import { ValidationError } from '../consensus/errors.js';
import { bytesEqual, toHex } from '../consensus/hash.js';
import { blockWork } from '../consensus/pow.js';
import { medianTime, validateHeader } from '../consensus/validate.js';
import { silentLogger, type ChainEntry, type Logger, type SignatureVerifier } from '../chain/types.js';
import { MAX_HEADERS, MAX_LOCATOR_HASHES, zeroHash } from './protocol.js';
import { Offence } from './scoring.js';
import { P2PErrorCode, PeerError, peerErrorOf, type SyncTransport } from './syncProtocol.js';
import { checkBlockIntegrity, verdictOf } from './verdict.js';
import type { P2PChain, SyncState, SyncStatusReader } from './types.js';

/** Options of the sync manager. */
export interface SyncOptions {
  /** Housekeeping interval (status refresh, stall check, restart), ms. */
  readonly tickMs?: number;
  /** How often each peer's status is refreshed, ms. */
  readonly statusIntervalMs?: number;
  /** Time limit of one request, ms. */
  readonly requestTimeoutMs?: number;
  /** Hashes per GET_BLOCKS. */
  readonly batchSize?: number;
  /** Concurrent GET_BLOCKS per peer. */
  readonly maxInflightPerPeer?: number;
  /** Blocks requested at most past the next one to connect. */
  readonly windowBlocks?: number;
  /** Downloaded bytes waiting to be connected, at most. */
  readonly maxBufferedBytes?: number;
  /** Headers fetched ahead in one job. */
  readonly maxHeadersPerJob?: number;
  /** Blocks behind the best peer from which the node counts as syncing (paid calls refused). */
  readonly farBehindBlocks?: number;
  /** A job without a connected block for this long is abandoned, ms. */
  readonly stallMs?: number;
  /** Downloaded blocks whose signatures may be checking ahead of the chain at once. */
  readonly preverifyBlocks?: number;
  /** Clock, ms. */
  readonly now?: () => number;
}

/** Defaults of SyncOptions. */
export const defaultSyncOptions = {
  tickMs: 1_000,
  statusIntervalMs: 10_000,
  requestTimeoutMs: 30_000,
  batchSize: 16,
  maxInflightPerPeer: 2,
  windowBlocks: 512,
  maxBufferedBytes: 128 * 1024 * 1024,
  maxHeadersPerJob: 20_000,
  farBehindBlocks: 10,
  stallMs: 60_000,
  preverifyBlocks: 8,
} as const;

/** What the sync manager uses besides the chain. */
export interface SyncModules {
  readonly chain: P2PChain;
  readonly transport: SyncTransport;
  /** Misbehaviour report. */
  readonly penalize: (peer: string, points: number, reason: string) => void;
  /** Called with each block hash (hex) before the sync hands it to the chain (so it is not relayed back). */
  readonly onBlockFromNetwork?: (hashHex: string) => void;
  /** The verifier whose cache the chain consults: downloaded blocks are checked on it ahead of time. */
  readonly verifier?: SignatureVerifier;
  readonly logger?: Logger;
}

/** What the sync knows about one peer. */
interface PeerSync {
  readonly id: string;
  height: number;
  work: bigint;
  tipHex: string;
  /** ms of the last STATUS answer (0: none yet). */
  statusAt: number;
  statusPending: boolean;
  inflight: number;
  /** The peer's work when a job from it last found nothing better; it is asked again only once its work grows. */
  exhaustedWork: bigint;
  /**
   * Whether that last job showed the claim hollow (invalid headers or blocks, or no heavier
   * chain) rather than merely failing (a timeout): only then does the peer stop counting
   * towards "syncing" until it claims more work.
   */
  discredited: boolean;
  /** Blocks it served in the current job. */
  served: number;
}

/** A validated header the job will download. */
interface HeaderItem {
  readonly hash: Uint8Array;
  readonly hex: string;
  readonly height: number;
}

/** Events of the sync manager. */
export interface SyncEvents {
  /** A download job finished (`ok` false: abandoned). */
  jobDone: [info: { ok: boolean; blocks: number; seconds: number; reason?: string }];
}

type ResolvedSyncOptions = Required<Omit<SyncOptions, 'now'>>;

/** The sync manager (see module comment). */
export class SyncManager extends EventEmitter<SyncEvents> implements SyncStatusReader {
  private readonly opts: ResolvedSyncOptions;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly chain: P2PChain;
  private readonly peers = new Map<string, PeerSync>();
  private readonly genesisHash: Uint8Array;
  private job: BlockDownload | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private readonly stopSignal = new AbortController();
  /** (ms, height) after each connected block of a job, for the rate. */
  private samples: [number, number][] = [];
  private lastProgressLog = 0;

  constructor(
    opts: SyncOptions,
    private readonly mods: SyncModules,
  ) {
    super();
    this.opts = { ...defaultSyncOptions, ...Object.fromEntries(Object.entries(opts).filter(([k, v]) => v !== undefined && k !== 'now')) } as ResolvedSyncOptions;
    this.now = opts.now ?? Date.now;
    this.log = mods.logger ?? silentLogger;
    this.chain = mods.chain;
    this.genesisHash = this.chain.getEntryByHeight(0)!.hash;
  }

  /** Starts the housekeeping timer. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.timer = setInterval(() => this.tick(), this.opts.tickMs);
    this.timer.unref();
  }

  /** Stops: abandons the job, cancels requests, waits for the loop. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.stopSignal.abort();
    this.job?.fail('stopping');
    await this.running?.catch(() => undefined);
  }

  /** A peer that speaks the sync protocol connected. */
  addPeer(id: string): void {
    if (this.stopped || this.peers.has(id)) return;
    const p: PeerSync = { id, height: 0, work: 0n, tipHex: '', statusAt: 0, statusPending: false, inflight: 0, exhaustedWork: -1n, discredited: false, served: 0 };
    this.peers.set(id, p);
    void this.refreshStatus(p);
  }

  /** A peer disconnected (or was banned). */
  removePeer(id: string): void {
    this.peers.delete(id);
    this.job?.peerGone(id);
  }

  /** A peer relayed a block we could not attach: it is ahead of us, ask where it is. */
  noteUnknownBlock(id: string): void {
    const p = this.peers.get(id);
    if (p) void this.refreshStatus(p);
  }

  /** Connected peers the sync knows, with their last status. */
  peerInfo(id: string): { height: number; tip: string; work: bigint } | undefined {
    const p = this.peers.get(id);
    return p && p.statusAt > 0 ? { height: p.height, tip: p.tipHex, work: p.work } : undefined;
  }

  isSyncing(): boolean {
    return this.syncState().syncing;
  }

  /** Whether any connected peer has answered a status request yet (before that, "not syncing" means "not known"). */
  hasPeerStatus(): boolean {
    for (const p of this.peers.values()) if (p.statusAt > 0) return true;
    return false;
  }

  syncState(): SyncState {
    const tip = this.chain.tip;
    let target = tip.height;
    // A peer whose claim proved hollow (see `discredited`) does not count until it claims more work.
    for (const p of this.peers.values()) if (p.statusAt > 0 && p.work > tip.chainWork && !(p.discredited && p.work <= p.exhaustedWork)) target = Math.max(target, p.height);
    if (this.job) target = Math.max(target, this.job.lastHeight);
    const rate = this.rate();
    const remaining = target - tip.height;
    return {
      syncing: remaining > this.opts.farBehindBlocks,
      height: tip.height,
      targetHeight: target,
      rate: Math.round(rate * 100) / 100,
      eta: rate > 0 && remaining > 0 ? Math.ceil(remaining / rate) : null,
      downloading: this.job !== undefined,
    };
  }

  private rate(): number {
    const now = this.now();
    this.samples = this.samples.filter(([t]) => now - t <= 10_000);
    if (this.samples.length < 2) return 0;
    const [t0, h0] = this.samples[0];
    const [t1, h1] = this.samples[this.samples.length - 1];
    return t1 > t0 ? ((h1 - h0) * 1000) / Math.max(t1 - t0, 1000) : 0;
  }

  private tick(): void {
    if (this.stopped) return;
    const now = this.now();
    for (const p of this.peers.values()) if (!p.statusPending && now - p.statusAt >= this.opts.statusIntervalMs) void this.refreshStatus(p);
    const job = this.job;
    if (job) {
      if (now - job.lastProgress > this.opts.stallMs) job.fail(`no block connected for ${this.opts.stallMs / 1000} s`);
      if (now - this.lastProgressLog >= 5_000) {
        this.lastProgressLog = now;
        this.log.info({ ...this.syncState() }, 'sync progress');
      }
    }
    this.kick();
  }

  private signal(): AbortSignal {
    return AbortSignal.any([this.stopSignal.signal, AbortSignal.timeout(this.opts.requestTimeoutMs)]);
  }

  private penalize(peer: string, points: number, reason: string): void {
    if (points > 0) this.mods.penalize(peer, points, reason);
  }

  private async refreshStatus(p: PeerSync): Promise<void> {
    if (p.statusPending || this.stopped) return;
    p.statusPending = true;
    try {
      const s = await this.mods.transport.status(p.id, this.signal());
      if (s.chainId !== this.chain.params.chainId || !bytesEqual(s.genesis, this.genesisHash)) {
        throw new PeerError(P2PErrorCode.PROTOCOL, `status of another chain (chain id ${s.chainId})`, Offence.MALFORMED);
      }
      p.height = s.height;
      p.work = s.chainWork;
      p.tipHex = toHex(s.tip);
      p.statusAt = this.now();
      // A job that failed only in transit (a timeout, a stall) is tried again at each status refresh.
      if (!p.discredited) p.exhaustedWork = -1n;
      if (p.work > this.chain.tip.chainWork && p.work > p.exhaustedWork) this.kick();
    } catch (e) {
      const err = peerErrorOf(e, 'status');
      this.log.debug({ peer: p.id, err: err.message }, 'status request failed');
      this.penalize(p.id, err.points, err.message);
      // Without an answer, try again at the next interval rather than at every tick.
      p.statusAt = Math.max(p.statusAt, this.now() - this.opts.statusIntervalMs / 2);
    } finally {
      p.statusPending = false;
    }
  }

  /** Runs the sync loop unless it runs already (then it runs once more after). */
  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run()
      .catch((e) => this.log.error({ err: e }, 'sync loop failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private pickPeer(): PeerSync | undefined {
    const ours = this.chain.tip.chainWork;
    let best: PeerSync | undefined;
    for (const p of this.peers.values()) {
      if (p.statusAt === 0 || p.work <= ours || p.work <= p.exhaustedWork) continue;
      if (!best || p.work > best.work) best = p;
    }
    return best;
  }

  private async run(): Promise<void> {
    // Each round either connects blocks or marks a peer as exhausted at its current work.
    for (let round = 0; round < 50 && !this.stopped; round++) {
      const peer = this.pickPeer();
      if (!peer) return;
      const items = await this.fetchHeaders(peer);
      if (!items || this.stopped) continue;
      await this.download(peer, items);
    }
  }

  /** Our best chain's locator: the last 10 blocks, then doubling steps back, then genesis. */
  locator(): Uint8Array[] {
    const out: Uint8Array[] = [];
    let step = 1;
    for (let h = this.chain.tip.height; h > 0 && out.length < MAX_LOCATOR_HASHES - 1; h -= step) {
      out.push(this.chain.getEntryByHeight(h)!.hash);
      if (out.length >= 10) step *= 2;
    }
    out.push(this.genesisHash);
    return out;
  }

  /** Times of `entry` and its ancestors, oldest first, at most `medianTimeSpan`. */
  private timesUpTo(entry: ChainEntry): number[] {
    const times: number[] = [];
    let cur: ChainEntry | undefined = entry;
    while (cur && times.length < this.chain.params.medianTimeSpan) {
      times.unshift(cur.header.time);
      cur = cur.height === 0 ? undefined : this.chain.getEntryByHash(toHex(cur.header.prevHash));
    }
    return times;
  }

  /** Fetches and checks the peer's headers past our best chain; undefined when there is nothing (better) to download. */
  private async fetchHeaders(peer: PeerSync): Promise<HeaderItem[] | undefined> {
    const params = this.chain.params;
    const items: HeaderItem[] = [];
    let prev: { hash: Uint8Array; height: number; time: number; work: bigint } | undefined;
    let times: number[] = [];
    let locator = this.locator();
    let complete = false;
    const workAtStart = peer.work;
    /** `transient`: the request failed in transit (a timeout, a dropped stream), which says nothing of the peer's chain. */
    const giveUp = (points: number, reason: string, transient = false): undefined => {
      peer.exhaustedWork = workAtStart;
      peer.discredited = !transient;
      this.penalize(peer.id, points, reason);
      if (reason) this.log.debug({ peer: peer.id, reason }, 'header sync abandoned');
      return undefined;
    };
    const maxRounds = Math.ceil(this.opts.maxHeadersPerJob / MAX_HEADERS) + 1;
    rounds: for (let round = 0; round < maxRounds && !this.stopped; round++) {
      let headers: BlockHeader[];
      try {
        headers = await this.mods.transport.headers(peer.id, locator, zeroHash(), MAX_HEADERS, this.signal());
      } catch (e) {
        const err = peerErrorOf(e, 'headers');
        return giveUp(err.points, err.message, err.code === P2PErrorCode.TIMEOUT);
      }
      if (headers.length === 0) {
        complete = true;
        break;
      }
      const nowSec = Math.floor(this.now() / 1000);
      for (const h of headers) {
        const hash = blockHash(h);
        const hex = toHex(hash);
        if (!prev) {
          // Headers we already hold (the locator is sparse) only move the base forward.
          const known = this.chain.getEntryByHash(hex);
          if (known) {
            locator = [known.hash];
            continue;
          }
          const parent = this.chain.getEntryByHash(toHex(h.prevHash));
          if (!parent) return giveUp(Offence.UNCONNECTED_HEADERS, 'headers do not connect to our chain');
          prev = { hash: parent.hash, height: parent.height, time: parent.header.time, work: parent.chainWork };
          times = this.timesUpTo(parent);
        } else if (!bytesEqual(h.prevHash, prev.hash)) {
          return giveUp(Offence.UNCONNECTED_HEADERS, 'headers are not a chain');
        }
        try {
          validateHeader(h, { prevHash: prev.hash, prevHeight: prev.height, prevTime: prev.time, medianTimePast: medianTime(times), now: nowSec }, params);
        } catch (e) {
          if (e instanceof ValidationError && e.action === 'ignore') {
            // Too far in the future for now: download what precedes it.
            complete = true;
            break rounds;
          }
          const v = verdictOf('block', e);
          return giveUp(v.banScore, `invalid header at height ${prev.height + 1}: ${v.code}`);
        }
        prev = { hash, height: prev.height + 1, time: h.time, work: prev.work + blockWork(h.bits) };
        times.push(h.time);
        if (times.length > params.medianTimeSpan) times.shift();
        items.push({ hash, hex, height: prev.height });
      }
      if (headers.length < MAX_HEADERS) {
        complete = true;
        break;
      }
      if (items.length >= this.opts.maxHeadersPerJob) break;
      if (prev) locator = [prev.hash];
    }
    if (items.length === 0 || !prev) return giveUp(0, '');
    // A finished header chain that is not heavier than ours is not worth its bodies.
    if (complete && prev.work <= this.chain.tip.chainWork) return giveUp(0, '');
    return items;
  }

  private async download(source: PeerSync, items: HeaderItem[]): Promise<void> {
    const started = this.now();
    for (const p of this.peers.values()) p.served = 0;
    const job = new BlockDownload(items, {
      peers: () => [...this.peers.values()],
      source,
      transport: this.mods.transport,
      chain: this.chain,
      opts: this.opts,
      signal: () => this.signal(),
      penalize: (peer, points, reason) => this.penalize(peer, points, reason),
      onBlockFromNetwork: (hex) => this.mods.onBlockFromNetwork?.(hex),
      verifier: this.mods.verifier,
      onConnected: (height) => {
        this.samples.push([this.now(), height]);
        if (this.samples.length > 4096) this.samples.splice(0, this.samples.length - 4096);
      },
      now: this.now,
      log: this.log,
    });
    this.job = job;
    this.lastProgressLog = started;
    this.log.info({ peer: source.id, from: items[0].height, to: items[items.length - 1].height, blocks: items.length }, 'sync started');
    try {
      await job.done;
    } finally {
      this.job = undefined;
    }
    const seconds = (this.now() - started) / 1000;
    const served = Object.fromEntries([...this.peers.values()].filter((p) => p.served > 0).map((p) => [p.id, p.served]));
    const info = { ok: job.ok, blocks: job.connected, seconds: Math.round(seconds * 100) / 100, reason: job.reason };
    if (job.ok) this.log.info({ ...info, height: this.chain.tip.height, rate: seconds > 0 ? Math.round((job.connected / seconds) * 10) / 10 : 0, peers: served }, 'sync done');
    else {
      this.log.warn({ ...info, height: this.chain.tip.height, peers: served }, 'sync abandoned');
      // Do not loop on the same peer's chain; a better status lifts this.
      source.exhaustedWork = source.work;
      source.discredited = job.invalidBlock;
    }
    this.emit('jobDone', info);
  }
}

/** What a block download needs from its manager. */
interface DownloadContext {
  peers(): PeerSync[];
  readonly source: PeerSync;
  readonly transport: SyncTransport;
  readonly chain: P2PChain;
  readonly opts: ResolvedSyncOptions;
  signal(): AbortSignal;
  penalize(peer: string, points: number, reason: string): void;
  onBlockFromNetwork(hashHex: string): void;
  readonly verifier: SignatureVerifier | undefined;
  onConnected(height: number): void;
  readonly now: () => number;
  readonly log: Logger;
}

/** The body download of one header chain (see module comment, step 2). */
class BlockDownload {
  private nextConnect = 0;
  private nextFresh = 0;
  private readonly retry = new Set<number>();
  private readonly inflight = new Set<number>();
  /** Downloaded blocks waiting to be connected, with their transaction ids (from the merkle check). */
  private readonly received = new Map<number, { bytes: Uint8Array; peer: string; txIds: Uint8Array[] }>();
  private readonly notFound = new Map<number, Set<string>>();
  private bufferedBytes = 0;
  private connecting = false;
  private finished = false;
  /** Next block whose signatures go to the pool ahead of the chain. */
  private nextVerify = 0;
  /**
   * Every block up to this index had its published keys noted (or is connected): a block's
   * checks ahead are built only once all blocks before it are, since a sender's first
   * transaction, which carries its keys, may sit in any earlier block.
   */
  private notedThrough = -1;
  private verifyingBatches = 0;
  private preverifying = false;
  /** Keys published by downloaded blocks not yet connected, by sender (hex). */
  private readonly published = new Map<string, HybridPublicKey>();
  private readonly abort = new AbortController();
  private resolveDone!: () => void;
  readonly done = new Promise<void>((r) => (this.resolveDone = r));
  ok = false;
  reason: string | undefined;
  /** The job ended on a block the chain rejected as invalid. */
  invalidBlock = false;
  lastProgress: number;

  constructor(
    private readonly items: readonly HeaderItem[],
    private readonly ctx: DownloadContext,
  ) {
    this.lastProgress = ctx.now();
    queueMicrotask(() => this.fill());
  }

  /** Height of the last header of the job. */
  get lastHeight(): number {
    return this.items[this.items.length - 1].height;
  }

  /** Blocks connected so far. */
  get connected(): number {
    return this.nextConnect;
  }

  fail(reason: string): void {
    this.end(false, reason);
  }

  peerGone(_id: string): void {
    // Its requests fail on their own (stream reset) and go back to the queue.
    queueMicrotask(() => this.fill());
  }

  private end(ok: boolean, reason?: string): void {
    if (this.finished) return;
    this.finished = true;
    this.ok = ok;
    this.reason = reason;
    this.abort.abort();
    this.resolveDone();
  }

  private eligible(p: PeerSync, i: number): boolean {
    if (p !== this.ctx.source && (p.statusAt === 0 || p.height < this.items[i].height)) return false;
    return !this.notFound.get(i)?.has(p.id);
  }

  private takeBatch(p: PeerSync): number[] {
    const { batchSize, windowBlocks, maxBufferedBytes } = this.ctx.opts;
    const out: number[] = [];
    for (const i of [...this.retry].sort((a, b) => a - b)) {
      if (out.length >= batchSize) break;
      if (this.eligible(p, i)) {
        out.push(i);
        this.retry.delete(i);
      }
    }
    const limit = Math.min(this.items.length, this.nextConnect + windowBlocks);
    while (out.length < batchSize && this.nextFresh < limit && this.bufferedBytes < maxBufferedBytes && this.eligible(p, this.nextFresh)) out.push(this.nextFresh++);
    for (const i of out) this.inflight.add(i);
    return out;
  }

  private fill(): void {
    if (this.finished) return;
    const peers = this.ctx.peers().sort((a, b) => a.inflight - b.inflight);
    for (const p of peers) {
      for (let k = 0; k < this.ctx.opts.maxInflightPerPeer && p.inflight < this.ctx.opts.maxInflightPerPeer; k++) {
        const batch = this.takeBatch(p);
        if (batch.length === 0) break;
        void this.request(p, batch);
      }
    }
    if (this.inflight.size === 0 && this.received.size === 0 && !this.connecting && this.nextConnect < this.items.length) {
      this.fail(`no connected peer serves block ${this.items[this.nextConnect].height}`);
    }
  }

  private async request(p: PeerSync, batch: number[]): Promise<void> {
    p.inflight++;
    let pos = 0;
    try {
      await this.ctx.transport.blocks(
        p.id,
        batch.map((i) => this.items[i].hash),
        (frame) => {
          if (this.finished) throw new PeerError(P2PErrorCode.TIMEOUT, 'job over', 0);
          if (pos >= batch.length) throw new PeerError(P2PErrorCode.PROTOCOL, 'more blocks than asked for', Offence.UNSOLICITED);
          const i = batch[pos++];
          const item = this.items[i];
          if (frame.type === 'notFound') {
            if (!bytesEqual(frame.hash, item.hash)) throw new PeerError(P2PErrorCode.PROTOCOL, 'NOT_FOUND for a block not asked for', Offence.UNSOLICITED);
            this.inflight.delete(i);
            let set = this.notFound.get(i);
            if (!set) this.notFound.set(i, (set = new Set()));
            set.add(p.id);
            this.retry.add(i);
            return;
          }
          const { hash, txIds } = checkBlockIntegrity(frame.bytes);
          if (!bytesEqual(hash, item.hash)) throw new PeerError(P2PErrorCode.PROTOCOL, `block ${toHex(hash)} was not asked for`, Offence.UNSOLICITED);
          this.inflight.delete(i);
          this.received.set(i, { bytes: frame.bytes, peer: p.id, txIds });
          this.bufferedBytes += frame.bytes.length;
          p.served++;
          void this.pump();
          void this.preverify();
        },
        AbortSignal.any([this.abort.signal, this.ctx.signal()]),
      );
    } catch (e) {
      if (!this.finished) {
        const err = peerErrorOf(e, 'blocks');
        this.ctx.log.debug({ peer: p.id, err: err.message, cause: (e as Error).message }, 'block request failed');
        if (err.points > 0) this.ctx.penalize(p.id, err.points, err.message);
      }
    } finally {
      p.inflight--;
      for (const i of batch) {
        if (this.inflight.delete(i)) this.retry.add(i);
      }
      this.fill();
    }
  }

  /** Submits the signatures of downloaded blocks past the one being connected to the pool (see module comment, step 3). */
  private async preverify(): Promise<void> {
    const verifier = this.ctx.verifier;
    if (!verifier || this.preverifying || this.finished) return;
    this.preverifying = true;
    try {
      for (let n = 0; n < this.items.length && !this.finished; n++) {
        // The block being connected is checked by the chain itself; start after it.
        if (this.nextVerify <= this.nextConnect) this.nextVerify = this.nextConnect + 1;
        if (this.verifyingBatches >= this.ctx.opts.preverifyBlocks) break;
        if (this.notedThrough < this.nextVerify - 1) break; // an earlier block's keys are not known yet
        const r = this.received.get(this.nextVerify);
        if (!r) break;
        this.notedThrough = this.nextVerify;
        this.nextVerify++;
        let jobs: Parameters<SignatureVerifier['verifyBatch']>[0];
        try {
          jobs = await this.signatureJobs(r.bytes, r.txIds);
        } catch {
          continue; // malformed: the chain will say so
        }
        if (jobs.length === 0) continue;
        this.verifyingBatches++;
        void verifier
          .verifyBatch(jobs, { background: true })
          .catch(() => undefined)
          .finally(() => {
            this.verifyingBatches--;
            void this.preverify();
          });
      }
    } finally {
      this.preverifying = false;
    }
  }

  /**
   * Remembers the key a transaction publishes, only when it is its sender's (the address is the
   * key's hash): the block is not validated yet, and a key that is not the sender's would make
   * the check ahead of an honest transaction fail, an answer the chain's own check would join.
   */
  private notePublishedKey(tx: { readonly from: Uint8Array; readonly publicKey?: HybridPublicKey }): void {
    if (tx.publicKey && bytesEqual(addressOfPublicKey(tx.publicKey), tx.from)) this.published.set(toHex(tx.from), tx.publicKey);
  }

  private notePublishedKeys(bytes: Uint8Array): void {
    try {
      for (const tx of decodeBlock(bytes).block.txs) this.notePublishedKey(tx);
    } catch {
      // malformed: the chain will say so
    }
  }

  /** Signature checks of a block's transactions whose key is known here (others are left to the chain). */
  private async signatureJobs(bytes: Uint8Array, txIds: readonly Uint8Array[]): Promise<Parameters<SignatureVerifier['verifyBatch']>[0]> {
    const { block } = decodeBlock(bytes);
    const missing: string[] = [];
    for (const tx of block.txs) {
      if (tx.publicKey) this.notePublishedKey(tx);
      else if (!this.published.has(toHex(tx.from))) missing.push(accountKey(tx.from));
    }
    const view = missing.length ? await this.ctx.chain.getStateView(missing) : undefined;
    const jobs: { id: string; pub: HybridPublicKey; msg: Uint8Array; sig: (typeof block.txs)[number]['signature'] }[] = [];
    block.txs.forEach((tx, i) => {
      let pub = tx.publicKey ?? this.published.get(toHex(tx.from));
      if (!pub && view) {
        const raw = view.get(accountKey(tx.from));
        pub = raw ? decodeAccount(raw).publicKey : undefined;
      }
      if (pub) jobs.push({ id: toHex(txIds[i]), pub, msg: txSighash(tx), sig: tx.signature });
    });
    if (this.published.size > 100_000) this.published.clear();
    return jobs;
  }

  /** Hands downloaded blocks to the chain in height order, one at a time. */
  private async pump(): Promise<void> {
    if (this.connecting || this.finished) return;
    this.connecting = true;
    try {
      for (let n = 0; n <= this.items.length && !this.finished; n++) {
        const r = this.received.get(this.nextConnect);
        if (!r) break;
        this.received.delete(this.nextConnect);
        this.bufferedBytes -= r.bytes.length;
        const item = this.items[this.nextConnect];
        this.ctx.onBlockFromNetwork(item.hex);
        // The chain checks this block's signatures itself; keys it publishes serve the checks ahead.
        if (this.ctx.verifier && this.notedThrough < this.nextConnect) {
          this.notePublishedKeys(r.bytes);
          this.notedThrough = this.nextConnect;
          void this.preverify();
        }
        try {
          const res = await this.ctx.chain.addBlock(r.bytes);
          if (res.status === 'orphan') throw new Error('parent missing');
        } catch (e) {
          const v = verdictOf('block', e);
          if (v.result === 'reject') {
            this.invalidBlock = true;
            this.ctx.penalize(r.peer, v.banScore, `invalid block at height ${item.height}: ${v.code}`);
          }
          this.fail(`block ${item.hex} at height ${item.height}: ${v.code === 'internal_error' ? (e as Error).message : v.code}`);
          return;
        }
        this.nextConnect++;
        this.lastProgress = this.ctx.now();
        this.ctx.onConnected(item.height);
        void this.preverify();
        if (this.nextConnect === this.items.length) {
          this.end(true);
          return;
        }
      }
    } finally {
      this.connecting = false;
    }
    this.fill();
  }
}
