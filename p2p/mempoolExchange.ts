/**
 * Mempool exchange between peers (`mempoolProtocol.ts`), as Bitcoin Core (the `mempool`
 * message and INV on connect, rebroadcast of wallet transactions) and geth (eth/68: a new peer
 * gets NewPooledTransactionHashes for the whole pool, then asks GetPooledTransactions) do it.
 *
 * - **On connect**: when a peer that speaks the protocol connects, each side ANNOUNCEs the ids
 *   of its ready transactions (at most `MAX_INVENTORY`, highest fee rate first, each sender's
 *   in nonce order). The receiver fetches the ones it lacks with GET_TXS, in batches, and admits
 *   every fetched transaction through the normal mempool admission. Gossip alone reaches only
 *   the peers connected when a transaction arrives: a transaction sent while the miner was down
 *   stayed where it was.
 * - **Rebroadcast**: the node's own pending transactions — those that entered its mempool
 *   other than from a peer (the HTTP API, its refunds and payouts) — are announced again to
 *   every peer every `rebroadcastMs` until they leave the mempool (mined, or dropped: the
 *   submitter's resubmission decides then). A peer that refused one while it was behind fetches
 *   it again once it can admit it.
 *
 * While the node syncs (far behind), announcements wait: their transactions would be judged on a
 * stale state.
 *
 * Bounds: ANNOUNCEs per peer are rate-limited (a token bucket; excess ones are dropped), at most
 * `maxConcurrentFetches` peers are fetched from at once (a peer's announcements wait their
 * turn, merged), each id is in flight from one peer at a time, ids that failed admission are not asked
 * again for a while (`ignoredRetryMs` for stateful refusals, `rejectedRetryMs` for invalid
 * ones), and the transactions served to one peer are rate-limited (NOT_FOUND beyond).
 * A peer that breaks the protocol (malformed or oversized frames, a transaction other than the
 * one asked for) or sends an invalid transaction gets the same misbehaviour points as for
 * gossip (`verdict.ts`, `scoring.ts`). Peers without the protocol (older nodes) are simply not
 * asked.
 */
import './polyfill.js';
import { lpStream, type LengthPrefixedStream } from '@libp2p/utils';
import { peerIdFromString } from '@libp2p/peer-id';
import type { Libp2p, Stream, Connection } from '@libp2p/interface';
import { bytesEqual, fromHex, toHex } from '../consensus/hash.js';
import { decodeTx, txId } from '../consensus/tx.js';
import { silentLogger, type Logger, type MempoolEntry } from '../chain/types.js';
import {
  MAX_INVENTORY,
  MAX_MEMPOOL_REQUEST_BYTES,
  MAX_TXS_PER_REQUEST,
  TX_RESPONSE_BUDGET,
  decodeMempoolRequest,
  decodeTxFrame,
  encodeMempoolRequest,
  encodeTxFrame,
  encodeTxNotFound,
  type TxFrame,
} from './mempoolProtocol.js';
import { Offence } from './scoring.js';
import { P2PErrorCode, PeerError, peerErrorOf } from './syncProtocol.js';
import { RecentSet } from './gossip.js';
import { verdictOf } from './verdict.js';
import type { P2PMempool } from './types.js';

/** Options of the mempool exchange. */
export interface MempoolExchangeOptions {
  /** Interval between rebroadcasts of the node's own pending transactions, ms (0: none). */
  readonly rebroadcastMs?: number;
  /** Peers fetched from at once. */
  readonly maxConcurrentFetches?: number;
  /** ANNOUNCEs a peer may send in a burst. */
  readonly announceBurst?: number;
  /** One more ANNOUNCE is allowed per this many ms. */
  readonly announceRefillMs?: number;
  /** Transactions served to one peer per minute (and in a burst: twice that). */
  readonly txsServedPerMinute?: number;
  /** Time limit of one request, ms. */
  readonly requestTimeoutMs?: number;
  /** A transaction refused for the receiver's state (nonce, funds, full) is not asked again for this long, ms. */
  readonly ignoredRetryMs?: number;
  /** An invalid transaction is not asked again for this long, ms. */
  readonly rejectedRetryMs?: number;
  /** Clock, ms. */
  readonly now?: () => number;
}

/** Defaults of MempoolExchangeOptions. */
export const defaultMempoolExchangeOptions = {
  rebroadcastMs: 60_000,
  maxConcurrentFetches: 4,
  announceBurst: 4,
  announceRefillMs: 15_000,
  txsServedPerMinute: MAX_INVENTORY,
  requestTimeoutMs: 15_000,
  ignoredRetryMs: 30_000,
  rejectedRetryMs: 3_600_000,
} as const;

/** What the mempool exchange needs. */
export interface MempoolExchangeModules {
  /** The libp2p node (requests go out through it). */
  readonly node: Pick<Libp2p, 'dialProtocol'>;
  /** `/native/<net>/mempool/<version>`. */
  readonly protocol: string;
  readonly mempool: P2PMempool;
  /** Largest transaction, bytes (the chain's limit). */
  readonly maxTxBytes: number;
  /** Misbehaviour report. */
  readonly penalize: (peer: string, points: number, reason: string) => void;
  readonly isBanned: (peer: string) => boolean;
  /**
   * Whether the node is far behind the network (syncing): announcements then wait, since the
   * transactions they name would be judged on a stale state and refused (default: never).
   */
  readonly syncing?: () => boolean;
  /** Whether a peer is still connected (a fetch from one that left stops; default: yes). */
  readonly isConnected?: (peer: string) => boolean;
  readonly logger?: Logger;
}

/** Counters of the mempool exchange, for `/api/v1/peers`. */
export interface MempoolExchangeStats {
  /** ANNOUNCEs sent (on connect and rebroadcasts) and received; received ones dropped by the rate limit. */
  announces: { sent: number; received: number; rateLimited: number };
  /** Transactions asked for, and what became of them. */
  fetched: { requested: number; accepted: number; ignored: number; rejected: number; notFound: number };
  /** Transactions served to peers; ids answered NOT_FOUND because of the rate limit. */
  served: { txs: number; rateLimited: number };
  /** Requests refused as malformed or oversized (each penalised). */
  malformed: number;
  /** The node's own pending transactions it rebroadcasts. */
  localPending: number;
}

type ResolvedOptions = Required<Omit<MempoolExchangeOptions, 'now'>>;

/** Seconds a responder waits for the request frame, ms. */
const REQUEST_READ_TIMEOUT_MS = 10_000;
/** Peers whose rate-limit buckets are remembered, at most. */
const MAX_BUCKETS = 4096;
/** Failed ids remembered, at most. */
const MAX_FAILED = 50_000;

/** Token buckets by key (bounded; the oldest key is forgotten first). */
export class TokenBuckets {
  private readonly m = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly capacity: number,
    /** Ms per token refilled. */
    private readonly refillMs: number,
    private readonly now: () => number,
  ) {}

  /** Takes up to `n` tokens for `key`; returns how many it got. */
  take(key: string, n = 1): number {
    const t = this.now();
    const b = this.m.get(key) ?? { tokens: this.capacity, at: t };
    b.tokens = Math.min(this.capacity, b.tokens + (t - b.at) / this.refillMs);
    b.at = t;
    const got = Math.max(0, Math.min(n, Math.floor(b.tokens)));
    b.tokens -= got;
    this.m.delete(key);
    this.m.set(key, b);
    if (this.m.size > MAX_BUCKETS) this.m.delete(this.m.keys().next().value!);
    return got;
  }
}

/** Ready transactions ordered for an ANNOUNCE: the best `max` by fee rate, each sender's in nonce order (so a receiver admits them without gaps). */
export function inventoryOf(entries: readonly MempoolEntry[]): Uint8Array[] {
  const bySender = new Map<string, MempoolEntry[]>();
  for (const e of entries) {
    const k = toHex(e.tx.from);
    const list = bySender.get(k);
    if (list) list.push(e);
    else bySender.set(k, [e]);
  }
  const out: Uint8Array[] = [];
  // Senders in order of their best transaction (the map keeps first-insertion order).
  for (const list of bySender.values()) for (const e of list.sort((a, b) => (a.tx.nonce < b.tx.nonce ? -1 : a.tx.nonce > b.tx.nonce ? 1 : 0))) out.push(fromHex(e.id));
  return out;
}

/** The mempool exchange (see module comment). */
export class MempoolExchange {
  readonly stats: MempoolExchangeStats;
  private readonly opts: ResolvedOptions;
  private readonly now: () => number;
  private readonly log: Logger;
  /** Connected peers that speak the protocol. */
  private readonly peers = new Set<string>();
  /** The node's own pending transactions: id → when it entered. */
  private readonly local = new Map<string, number>();
  /** Transactions that came from peers (gossip or this exchange): not the node's own. */
  private readonly fromNetwork = new RecentSet(100_000);
  /** Ids not to ask for until the given time, ms. */
  private readonly failed = new Map<string, number>();
  private readonly inflight = new Set<string>();
  /** Each peer's announcements not yet fetched (merged, at most MAX_INVENTORY ids). */
  private readonly pending = new Map<string, readonly Uint8Array[]>();
  /** Peers being fetched from. */
  private readonly running = new Set<string>();
  private readonly announceBuckets: TokenBuckets;
  private readonly serveBuckets: TokenBuckets;
  private timer: NodeJS.Timeout | undefined;
  /** Looks again at waiting announcements while the node syncs. */
  private retry: NodeJS.Timeout | undefined;
  private stopped = true;
  private readonly stopSignal = new AbortController();
  private readonly onAdded = (entry: MempoolEntry) => {
    if (this.fromNetwork.has(entry.id)) return;
    this.local.delete(entry.id);
    this.local.set(entry.id, entry.addedAt);
    if (this.local.size > MAX_INVENTORY) this.local.delete(this.local.keys().next().value!);
  };

  constructor(
    opts: MempoolExchangeOptions,
    private readonly m: MempoolExchangeModules,
  ) {
    const d = defaultMempoolExchangeOptions;
    this.opts = {
      rebroadcastMs: opts.rebroadcastMs ?? d.rebroadcastMs,
      maxConcurrentFetches: opts.maxConcurrentFetches ?? d.maxConcurrentFetches,
      announceBurst: opts.announceBurst ?? d.announceBurst,
      announceRefillMs: opts.announceRefillMs ?? d.announceRefillMs,
      txsServedPerMinute: opts.txsServedPerMinute ?? d.txsServedPerMinute,
      requestTimeoutMs: opts.requestTimeoutMs ?? d.requestTimeoutMs,
      ignoredRetryMs: opts.ignoredRetryMs ?? d.ignoredRetryMs,
      rejectedRetryMs: opts.rejectedRetryMs ?? d.rejectedRetryMs,
    };
    this.now = opts.now ?? Date.now;
    this.log = m.logger ?? silentLogger;
    this.announceBuckets = new TokenBuckets(this.opts.announceBurst, this.opts.announceRefillMs, this.now);
    this.serveBuckets = new TokenBuckets(2 * this.opts.txsServedPerMinute, 60_000 / this.opts.txsServedPerMinute, this.now);
    this.stats = {
      announces: { sent: 0, received: 0, rateLimited: 0 },
      fetched: { requested: 0, accepted: 0, ignored: 0, rejected: 0, notFound: 0 },
      served: { txs: 0, rateLimited: 0 },
      malformed: 0,
      localPending: 0,
    };
  }

  /** Follows the mempool (to know the node's own transactions) and starts the rebroadcast timer. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.m.mempool.on('added', this.onAdded);
    if (this.opts.rebroadcastMs > 0) {
      this.timer = setInterval(() => void this.rebroadcast(), this.opts.rebroadcastMs);
      this.timer.unref();
    }
  }

  /** Stops announcing and fetching (requests in flight are cancelled). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.retry);
    this.m.mempool.off('added', this.onAdded);
    this.stopSignal.abort();
    this.pending.clear();
  }

  /** A transaction is about to be admitted from a peer (gossip): it is not one of the node's own. */
  noteFromNetwork(idHex: string): void {
    this.fromNetwork.add(idHex);
  }

  /** A peer that speaks the protocol connected (identify): announce our mempool to it, once per connection. */
  addPeer(peer: string): void {
    if (this.stopped || this.peers.has(peer)) return;
    this.peers.add(peer);
    void this.announce(peer, inventoryOf(this.m.mempool.list(MAX_INVENTORY)));
  }

  /** A peer disconnected (or was banned). */
  removePeer(peer: string): void {
    this.peers.delete(peer);
    this.pending.delete(peer);
  }

  /** The node's own transactions still pending (ready), oldest first, at most `MAX_INVENTORY`; drops those that left the mempool. */
  localPending(): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (const id of [...this.local.keys()]) {
      if (!this.m.mempool.has(id)) this.local.delete(id);
      else if (!this.m.mempool.isQueued(id)) out.push(fromHex(id));
    }
    this.stats.localPending = this.local.size;
    return out;
  }

  /** Announces the node's own pending transactions to every peer (run every `rebroadcastMs`). */
  async rebroadcast(): Promise<void> {
    if (this.stopped) return;
    const ids = this.localPending();
    if (ids.length === 0) return;
    this.log.debug({ txs: ids.length, peers: this.peers.size }, 'mempool rebroadcast');
    await Promise.all([...this.peers].map((p) => this.announce(p, ids)));
  }

  /** Sends one ANNOUNCE (failures are logged, not penalised: the peer may have just left). */
  private async announce(peer: string, ids: readonly Uint8Array[]): Promise<void> {
    const signal = this.signal();
    let stream: Stream;
    try {
      stream = await this.m.node.dialProtocol(peerIdFromString(peer), this.m.protocol, { signal });
    } catch (e) {
      this.log.debug({ peer, err: (e as Error).message }, 'mempool announce: cannot open a stream');
      return;
    }
    try {
      await lpStream(stream).write(encodeMempoolRequest({ type: 'announce', ids }), { signal });
      await stream.close({ signal });
      this.stats.announces.sent++;
      this.log.debug({ peer, txs: ids.length }, 'mempool announced');
    } catch (e) {
      stream.abort(e as Error);
      this.log.debug({ peer, err: (e as Error).message }, 'mempool announce failed');
    }
  }

  private signal(): AbortSignal {
    return AbortSignal.any([this.stopSignal.signal, AbortSignal.timeout(this.opts.requestTimeoutMs)]);
  }

  /** The stream handler of the protocol (register with `maxInboundStreams` small). */
  readonly handler = async (stream: Stream, connection: Connection): Promise<void> => {
    const peer = connection.remotePeer.toString();
    const lp = lpStream(stream, { maxDataLength: MAX_MEMPOOL_REQUEST_BYTES });
    let req: ReturnType<typeof decodeMempoolRequest>;
    try {
      const frame = await lp.read({ signal: AbortSignal.timeout(REQUEST_READ_TIMEOUT_MS) });
      req = decodeMempoolRequest(frame.subarray());
    } catch (e) {
      const err = peerErrorOf(e, 'mempool request');
      if (err.code === P2PErrorCode.PROTOCOL) {
        this.stats.malformed++;
        this.m.penalize(peer, err.points, `${err.message} (${err.code})`);
      }
      this.log.debug({ peer, code: err.code, err: err.message }, 'mempool request refused');
      stream.abort(err);
      return;
    }
    try {
      if (req.type === 'announce') {
        await stream.close();
        this.onAnnounce(peer, req.ids);
      } else {
        await this.serve(peer, req.ids, lp);
        await stream.close();
      }
    } catch (e) {
      this.log.debug({ peer, err: (e as Error).message }, 'mempool answer failed');
      stream.abort(e as Error);
    }
  };

  /** Answers GET_TXS from the ready pool, within the peer's rate limit and the byte budget. */
  private async serve(peer: string, ids: readonly Uint8Array[], lp: LengthPrefixedStream<Stream>): Promise<void> {
    let allowed = this.serveBuckets.take(peer, ids.length);
    let sent = 0;
    for (const id of ids) {
      if (sent >= TX_RESPONSE_BUDGET) break;
      const hex = toHex(id);
      const entry = allowed > 0 && !this.m.mempool.isQueued(hex) ? this.m.mempool.get(hex) : undefined;
      if (allowed <= 0) this.stats.served.rateLimited++;
      allowed--;
      if (!entry) {
        await lp.write(encodeTxNotFound(id));
        continue;
      }
      await lp.write(encodeTxFrame(entry.bytes));
      sent += entry.bytes.length;
      this.stats.served.txs++;
    }
  }

  /** An ANNOUNCE arrived: its ids wait for a fetch slot (rate-limited per peer). */
  private onAnnounce(peer: string, ids: readonly Uint8Array[]): void {
    if (this.stopped || this.m.isBanned(peer)) return;
    this.stats.announces.received++;
    if (this.announceBuckets.take(peer) < 1) {
      this.stats.announces.rateLimited++;
      this.log.debug({ peer, txs: ids.length }, 'mempool announce dropped: rate limit');
      return;
    }
    if (!ids.some((id) => this.wants(toHex(id)))) return;
    // Merged with one still waiting (a rebroadcast must not replace the inventory sent on connect).
    const waiting = this.pending.get(peer);
    if (waiting) {
      const seen = new Set(waiting.map(toHex));
      ids = [...waiting, ...ids.filter((id) => !seen.has(toHex(id)))].slice(0, MAX_INVENTORY);
    }
    this.pending.set(peer, ids);
    this.pump();
  }

  /** Whether to ask for a transaction: not held, not in flight, not failed lately. */
  private wants(hex: string): boolean {
    if (this.m.mempool.has(hex) || this.inflight.has(hex)) return false;
    const until = this.failed.get(hex);
    if (until === undefined) return true;
    if (until > this.now()) return false;
    this.failed.delete(hex);
    return true;
  }

  private markFailed(hex: string, ms: number): void {
    this.failed.delete(hex);
    this.failed.set(hex, this.now() + ms);
    if (this.failed.size > MAX_FAILED) this.failed.delete(this.failed.keys().next().value!);
  }

  /** Starts fetch jobs for waiting announcements while slots are free (not while the node syncs). */
  private pump(): void {
    if (this.stopped) return;
    if (this.m.syncing?.()) {
      this.retry ??= setTimeout(() => {
        this.retry = undefined;
        this.pump();
      }, 1_000).unref();
      return;
    }
    for (const [peer, ids] of this.pending) {
      if (this.stopped || this.running.size >= this.opts.maxConcurrentFetches) return;
      if (this.running.has(peer)) continue;
      this.pending.delete(peer);
      this.running.add(peer);
      void this.fetchFrom(peer, ids)
        .catch((e: unknown) => this.log.warn({ peer, err: e }, 'mempool fetch failed'))
        .finally(() => {
          this.running.delete(peer);
          this.pump();
        });
    }
  }

  /** Fetches the announced transactions we lack from `peer`, batch by batch, and admits them. */
  private async fetchFrom(peer: string, announced: readonly Uint8Array[]): Promise<void> {
    let want = announced.filter((id) => this.wants(toHex(id)));
    const live = () => !this.stopped && !this.m.isBanned(peer) && (this.m.isConnected?.(peer) ?? true);
    while (want.length > 0 && live()) {
      const batch = want.slice(0, MAX_TXS_PER_REQUEST).filter((id) => this.wants(toHex(id)));
      want = want.slice(MAX_TXS_PER_REQUEST);
      if (batch.length === 0) continue;
      const hexes = batch.map(toHex);
      for (const h of hexes) this.inflight.add(h);
      try {
        this.stats.fetched.requested += batch.length;
        const frames = await this.requestTxs(peer, batch);
        await this.admit(peer, batch, frames);
        // The responder stopped at its byte budget: the rest is asked again.
        if (frames.length < batch.length) want = [...batch.slice(frames.length), ...want];
      } catch (e) {
        const err = peerErrorOf(e, 'mempool txs');
        this.log.debug({ peer, code: err.code, err: err.message }, 'mempool fetch failed');
        if (err.points > 0) this.m.penalize(peer, err.points, `${err.message} (${err.code})`);
        return;
      } finally {
        for (const h of hexes) this.inflight.delete(h);
      }
    }
  }

  /** One GET_TXS; resolves with the answer frames in order (fewer than asked when the responder stopped early; at least one). */
  private async requestTxs(peer: string, ids: readonly Uint8Array[]): Promise<TxFrame[]> {
    const signal = this.signal();
    let stream: Stream;
    try {
      stream = await this.m.node.dialProtocol(peerIdFromString(peer), this.m.protocol, { signal });
    } catch (e) {
      throw new PeerError(P2PErrorCode.UNREACHABLE, `cannot open a mempool stream: ${(e as Error).message}`, 0);
    }
    const maxBuffer = TX_RESPONSE_BUDGET + this.m.maxTxBytes + 64 * 1024;
    stream.maxReadBufferLength = Math.max(stream.maxReadBufferLength, maxBuffer);
    const lp = lpStream(stream, { maxDataLength: this.m.maxTxBytes + 1, maxBufferSize: maxBuffer });
    const frames: TxFrame[] = [];
    try {
      await lp.write(encodeMempoolRequest({ type: 'getTxs', ids }), { signal });
      await stream.close({ signal });
      for (let i = 0; i < ids.length; i++) {
        let frame: Uint8Array;
        try {
          frame = (await lp.read({ signal })).subarray();
        } catch (e) {
          if ((e as Error).name === 'UnexpectedEOFError' && i > 0) break;
          throw e;
        }
        frames.push(decodeTxFrame(frame));
      }
      return frames;
    } catch (e) {
      stream.abort(e as Error);
      throw e;
    }
  }

  /**
   * Checks that each frame answers the id asked at its position, then admits the transactions
   * (each sender's in nonce order) through the mempool; invalid ones cost the peer their points.
   */
  private async admit(peer: string, ids: readonly Uint8Array[], frames: readonly TxFrame[]): Promise<void> {
    const txs: { hex: string; bytes: Uint8Array; from: string; nonce: bigint }[] = [];
    frames.forEach((f, i) => {
      if (f.type === 'notFound') {
        if (!bytesEqual(f.id, ids[i])) throw new PeerError(P2PErrorCode.PROTOCOL, `NOT_FOUND for ${toHex(f.id)} in the place of ${toHex(ids[i])}`, Offence.UNSOLICITED);
        // Mined or dropped since it was announced: nothing to hold against the peer.
        this.stats.fetched.notFound++;
        return;
      }
      const hex = toHex(txId(f.bytes));
      if (hex !== toHex(ids[i])) throw new PeerError(P2PErrorCode.PROTOCOL, `sent transaction ${hex} in the place of ${toHex(ids[i])}`, Offence.UNSOLICITED);
      let from = '';
      let nonce = 0n;
      try {
        const tx = decodeTx(f.bytes);
        from = toHex(tx.from);
        nonce = tx.nonce;
      } catch {
        // The admission refuses it with its codec error.
      }
      txs.push({ hex, bytes: f.bytes, from, nonce });
    });
    txs.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0));
    const banned = () => this.m.isBanned(peer);
    // Queued in this order at once: the mempool admits one at a time and checks signatures ahead.
    const results = await Promise.allSettled(
      txs.map((t) => {
        this.fromNetwork.add(t.hex);
        return this.m.mempool.add(t.bytes, { abandon: banned });
      }),
    );
    let accepted = 0;
    results.forEach((r, i) => {
      const t = txs[i];
      if (r.status === 'fulfilled') {
        accepted++;
        this.stats.fetched.accepted++;
        return;
      }
      const v = verdictOf('tx', r.reason);
      if (v.result === 'reject') {
        this.stats.fetched.rejected++;
        this.markFailed(t.hex, this.opts.rejectedRetryMs);
        this.log.debug({ peer, txId: t.hex, code: v.code }, 'mempool exchange rejected');
        this.m.penalize(peer, v.banScore, `mempool exchange tx: ${v.code}`);
      } else {
        this.stats.fetched.ignored++;
        this.markFailed(t.hex, this.opts.ignoredRetryMs);
      }
    });
    if (accepted > 0) this.log.info({ peer, accepted, refused: txs.length - accepted }, 'mempool transactions fetched from peer');
  }
}
