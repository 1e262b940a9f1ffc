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
 *  2. Bodies: the header chain's blocks are downloaded from every high-enough peer in parallel
 *     and handed to the chain in height order, their signatures checked ahead on the pool
 *     (`blockDownload.ts`).
 *
 * Faults are charged to the peer that caused them (`scoring.ts`); an invalid block ends the
 * job. Sync state (height, target height, rate, ETA) is what `/api/v1/status`, the progress bar
 * and the paid routes (`isSyncing()`) read.
 */
import { EventEmitter } from 'node:events';
import { bytesEqual, toHex } from '../consensus/hash.js';
import { silentLogger, type Logger, type SignatureVerifier } from '../chain/types.js';
import { Offence } from './scoring.js';
import { P2PErrorCode, PeerError, peerErrorOf, type SyncTransport } from './syncProtocol.js';
import { BlockDownload, type HeaderItem, type PeerSync } from './blockDownload.js';
import { fetchHeaders } from './headerSync.js';
import { FAR_BEHIND_BLOCKS, type P2PChain, type SyncState, type SyncStatusReader } from './types.js';

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
  /**
   * Peers to hear from before the first download (the `--bootstrap` addresses): a node started
   * with several downloads from all of them in parallel instead of from whichever answered first.
   */
  readonly initialPeers?: number;
  /** The first download waits at most this long for `initialPeers` statuses, ms. */
  readonly initialWaitMs?: number;
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
  farBehindBlocks: FAR_BEHIND_BLOCKS,
  stallMs: 60_000,
  preverifyBlocks: 8,
  initialPeers: 0,
  initialWaitMs: 10_000,
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
  /** When start() ran, ms (the first download's wait for the bootstrap peers counts from it). */
  private startedAt = 0;
  /** Whether a download job has started since start(). */
  private downloaded = false;

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
    this.startedAt = this.now();
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

  /** Before the first download: whether to wait for more of the bootstrap peers' statuses (the tick and each status kick again). */
  private waitingForInitialPeers(): boolean {
    if (this.downloaded || this.opts.initialPeers <= 0) return false;
    if (this.now() - this.startedAt >= this.opts.initialWaitMs) return false;
    let answered = 0;
    for (const p of this.peers.values()) if (p.statusAt > 0) answered++;
    return answered < this.opts.initialPeers;
  }

  private async run(): Promise<void> {
    if (this.waitingForInitialPeers()) return;
    // Each round either connects blocks or marks a peer as exhausted at its current work.
    for (let round = 0; round < 50 && !this.stopped; round++) {
      const peer = this.pickPeer();
      if (!peer) return;
      const items = await fetchHeaders(peer, {
        chain: this.chain,
        transport: this.mods.transport,
        maxHeadersPerJob: this.opts.maxHeadersPerJob,
        signal: () => this.signal(),
        penalize: (id, points, reason) => this.penalize(id, points, reason),
        stopped: () => this.stopped,
        now: this.now,
        log: this.log,
      });
      if (!items || this.stopped) continue;
      await this.download(peer, items);
    }
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
    this.downloaded = true;
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
