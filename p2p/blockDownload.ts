/**
 * The body download of one header chain, for the sync manager (`sync.ts`, which fetches and
 * checks the headers and says which peers may serve them).
 *
 * The header chain's blocks are requested in batches (GET_BLOCKS, `batchSize` hashes) from every
 * peer that is high enough (up to `maxInflightPerPeer` batches each), within a window of
 * `windowBlocks` past the next block to connect and a byte budget. Each block must be the one
 * asked for and match its header's merkle root; it is then handed to the chain strictly in
 * height order while the other downloads continue. A batch that fails or times out goes back to
 * the queue for another peer; a peer that answers NOT_FOUND is not asked for that block again.
 *
 * Signatures ahead: the transactions of downloaded blocks after the one being connected are
 * submitted to the signature pool (`preverifyBlocks` blocks ahead at most) as background work
 * (chain/signatureLookahead.ts), taken in order, each once the keys published by every block
 * before it are noted. The chain still checks every block in full; this only warms the pool's
 * cache.
 */
import { bytesEqual, toHex } from '../consensus/hash.js';
import { prepareBlock, type PreparedBlock } from '../chain/blockQueue.js';
import { SignatureLookahead, type LookaheadJob } from '../chain/signatureLookahead.js';
import type { Logger, SignatureVerifier } from '../chain/types.js';
import { Offence } from './scoring.js';
import { P2PErrorCode, PeerError, peerErrorOf, type SyncTransport } from './syncProtocol.js';
import { checkBlockIntegrity, verdictOf } from './verdict.js';
import type { P2PChain } from './types.js';

/** The sync options a download uses (see `SyncOptions` in sync.ts). */
export interface DownloadOptions {
  readonly batchSize: number;
  readonly maxInflightPerPeer: number;
  readonly windowBlocks: number;
  readonly maxBufferedBytes: number;
  readonly preverifyBlocks: number;
}

/** What the sync knows about one peer. */
export interface PeerSync {
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
export interface HeaderItem {
  readonly hash: Uint8Array;
  readonly hex: string;
  readonly height: number;
}

/** What a block download needs from its manager. */
export interface DownloadContext {
  peers(): PeerSync[];
  readonly source: PeerSync;
  readonly transport: SyncTransport;
  readonly chain: P2PChain;
  readonly opts: DownloadOptions;
  signal(): AbortSignal;
  penalize(peer: string, points: number, reason: string): void;
  onBlockFromNetwork(hashHex: string): void;
  readonly verifier: SignatureVerifier | undefined;
  onConnected(height: number): void;
  readonly now: () => number;
  readonly log: Logger;
}

/**
 * A downloaded block waiting to be connected: decoded once (`prepareBlock`, whose ids the merkle
 * check used), then its checks ahead and the chain use that. `prepared` is undefined when the
 * bytes are well framed but do not decode: the chain says why when their turn comes.
 */
interface Received {
  readonly bytes: Uint8Array;
  readonly peer: string;
  readonly prepared: PreparedBlock | undefined;
}

/** The body download of one header chain (see module comment, step 2). */
export class BlockDownload {
  private nextConnect = 0;
  private nextFresh = 0;
  private readonly retry = new Set<number>();
  private readonly inflight = new Set<number>();
  /** Downloaded blocks waiting to be connected, with their transaction ids (from the merkle check). */
  private readonly received = new Map<number, Received>();
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
  /** Keys published by downloaded blocks not yet connected, and the checks ahead built from them. */
  private readonly lookahead: SignatureLookahead | undefined;
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
    this.lookahead = ctx.verifier && new SignatureLookahead(ctx.verifier, (keys) => ctx.chain.getStateView(keys));
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
          let prepared: PreparedBlock | undefined;
          try {
            prepared = prepareBlock(frame.bytes);
          } catch {
            prepared = undefined;
          }
          const { hash } = checkBlockIntegrity(frame.bytes, prepared);
          if (!bytesEqual(hash, item.hash)) throw new PeerError(P2PErrorCode.PROTOCOL, `block ${toHex(hash)} was not asked for`, Offence.UNSOLICITED);
          this.inflight.delete(i);
          this.received.set(i, { bytes: frame.bytes, peer: p.id, prepared });
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

  /** Submits the signatures of downloaded blocks past the one being connected to the pool (see module comment). */
  private async preverify(): Promise<void> {
    const lookahead = this.lookahead;
    if (!lookahead || this.preverifying || this.finished) return;
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
        let jobs: LookaheadJob[];
        try {
          jobs = r.prepared ? await lookahead.jobs(r.prepared.block.txs, r.prepared.txIds, r.prepared.sighashes) : []; // undecodable: the chain will say why
        } catch {
          continue; // the state could not be read: the chain checks it anyway
        }
        if (jobs.length === 0) continue;
        this.verifyingBatches++;
        void lookahead
          .submit(jobs)
          .finally(() => {
            this.verifyingBatches--;
            void this.preverify();
          });
      }
    } finally {
      this.preverifying = false;
    }
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
          if (r.prepared) this.lookahead?.noteKeys(r.prepared.block.txs);
          this.notedThrough = this.nextConnect;
          void this.preverify();
        }
        try {
          const res = await this.ctx.chain.addBlock(r.prepared ?? r.bytes);
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
