/**
 * Gossip of transactions and blocks over gossipsub (topics in `protocol.ts`).
 *
 * Inbound: each message is validated before gossipsub delivers or forwards it, and the outcome
 * maps to gossipsub's results — accept (valid and new: forwarded), ignore (duplicate, stale,
 * not attachable yet, or a local condition: dropped without penalty) or reject (invalid:
 * dropped, the sender penalised with the error's ban score). Limits: a transaction message is at
 * most `maxTxBytes`, a block message at most `maxBlockBytes` (larger ones are rejected; frames
 * past the transport limit never reach us). Duplicates are suppressed twice: gossipsub's seen
 * cache by message id (SHA-256 of the data, so the same bytes from two peers are one message),
 * and a check against the mempool and the chain before any validation work.
 *
 * Outbound: blocks that join the best chain and transactions that enter the mempool are
 * published, unless they came from the network (gossipsub forwards those itself). Transactions
 * that a reorganisation puts back into the mempool are published again.
 */
import './polyfill.js';
import { TopicValidatorResult, type GossipSub } from '@libp2p/gossipsub';
import type { PeerId } from '@libp2p/interface';
import type { Block } from '../consensus/block.js';
import { toHex } from '../consensus/hash.js';
import { txId } from '../consensus/tx.js';
import { silentLogger, type ChainEntry, type Logger, type MempoolEntry } from '../chain/types.js';
import type { ProtocolIds } from './protocol.js';
import { Offence } from './scoring.js';
import { reportBadGossipFrames, type BadFrameStats } from './gossipFrames.js';
import { checkBlockIntegrity, verdictOf, type GossipResult } from './verdict.js';
import type { P2PChain, P2PMempool } from './types.js';

/** A bounded set of recent keys (insertion order, oldest evicted). */
export class RecentSet {
  private readonly set = new Set<string>();
  constructor(private readonly max: number) {}
  add(key: string): void {
    this.set.delete(key);
    this.set.add(key);
    if (this.set.size > this.max) this.set.delete(this.set.values().next().value!);
  }
  has(key: string): boolean {
    return this.set.has(key);
  }
  delete(key: string): void {
    this.set.delete(key);
  }
}

/** What gossip needs. */
export interface GossipModules {
  readonly pubsub: GossipSub;
  readonly ids: ProtocolIds;
  readonly chain: P2PChain;
  readonly mempool: P2PMempool;
  /** Misbehaviour report. */
  readonly penalize: (peer: string, points: number, reason: string) => void;
  /** A peer relayed a block whose parent we lack: the sync should look at that peer. */
  readonly onUnknownParent: (peer: string) => void;
  /** Whether a header-first download runs (blocks it connects are not re-published). */
  readonly downloading: () => boolean;
  /** Block hashes that came from the network (gossip or sync): not re-published. */
  readonly networkBlocks: RecentSet;
  /** Whether a peer is banned: its messages still waiting are dropped unchecked. */
  readonly isBanned?: (peer: string) => boolean;
  /** Called with a relayed transaction's id before it is admitted (it is not one of the node's own). */
  readonly onNetworkTx?: (idHex: string) => void;
  readonly logger?: Logger;
}

/** Counters of the gossip layer, for `/api/v1/peers`. */
export interface GossipStats {
  txs: Record<GossipResult, number>;
  blocks: Record<GossipResult, number>;
  published: { txs: number; blocks: number };
  /** Frames gossipsub dropped before validation (over the size limit, undecodable), each reported to peer scoring. */
  frames: BadFrameStats;
}

const RESULT: Record<GossipResult, TopicValidatorResult> = {
  accept: TopicValidatorResult.Accept,
  ignore: TopicValidatorResult.Ignore,
  reject: TopicValidatorResult.Reject,
};

/** The gossip layer (see module comment). */
export class Gossip {
  private readonly log: Logger;
  private readonly networkTxs = new RecentSet(50_000);
  readonly stats: GossipStats;
  private readonly onConnect = (entry: ChainEntry, _block: Block) => void this.publishBlock(entry);
  private readonly onAdded = (entry: MempoolEntry) => void this.publishTx(entry);
  // A transaction of a disconnected block that the mempool takes back is relayed again: the
  // peers on the winning branch may never have seen it.
  private readonly onDisconnect = (_entry: ChainEntry, block: Block) => {
    for (const tx of block.txs) this.networkTxs.delete(toHex(txId(tx)));
  };

  constructor(private readonly m: GossipModules) {
    this.log = m.logger ?? silentLogger;
    // Before any stream opens: frames gossipsub drops on its own still cost their sender.
    const frames = reportBadGossipFrames(m.pubsub, (peer, points, reason) => m.penalize(peer, points, reason));
    this.stats = { txs: { accept: 0, ignore: 0, reject: 0 }, blocks: { accept: 0, ignore: 0, reject: 0 }, published: { txs: 0, blocks: 0 }, frames };
  }

  /** Subscribes to both topics, installs the validators and follows the chain and the mempool. */
  start(): void {
    const { pubsub, ids } = this.m;
    pubsub.topicValidators.set(ids.txTopic, (peer, msg) => this.validateTx(peer, msg.data));
    pubsub.topicValidators.set(ids.blockTopic, (peer, msg) => this.validateBlock(peer, msg.data));
    pubsub.subscribe(ids.txTopic);
    pubsub.subscribe(ids.blockTopic);
    this.m.chain.on('connect', this.onConnect);
    this.m.chain.on('disconnect', this.onDisconnect);
    this.m.mempool.on('added', this.onAdded);
  }

  stop(): void {
    this.m.chain.off('connect', this.onConnect);
    this.m.chain.off('disconnect', this.onDisconnect);
    this.m.mempool.off('added', this.onAdded);
    try {
      this.m.pubsub.unsubscribe(this.m.ids.txTopic);
      this.m.pubsub.unsubscribe(this.m.ids.blockTopic);
    } catch {
      // already stopped
    }
    this.m.pubsub.topicValidators.delete(this.m.ids.txTopic);
    this.m.pubsub.topicValidators.delete(this.m.ids.blockTopic);
  }

  private verdict(kind: 'tx' | 'block', peer: string, result: GossipResult, points: number, reason: string): TopicValidatorResult {
    this.stats[kind === 'tx' ? 'txs' : 'blocks'][result]++;
    if (result === 'reject') {
      this.log.debug({ peer, kind, reason }, 'gossip rejected');
      this.m.penalize(peer, points, `gossip ${kind}: ${reason}`);
    }
    return RESULT[result];
  }

  /** Validates a relayed transaction by admitting it to the mempool. */
  async validateTx(peerId: PeerId, data: Uint8Array): Promise<TopicValidatorResult> {
    const peer = peerId.toString();
    const max = this.m.chain.params.limits.maxTxBytes;
    if (data.length > max) return this.verdict('tx', peer, 'reject', Offence.OVERSIZED, `${data.length} bytes, limit ${max}`);
    // Messages of a peer banned meanwhile (received before the ban, validated after) cost nothing more.
    const banned = () => this.m.isBanned?.(peer) ?? false;
    if (banned()) return this.verdict('tx', peer, 'ignore', 0, 'banned peer');
    const id = toHex(txId(data));
    if (this.m.mempool.has(id)) return this.verdict('tx', peer, 'ignore', 0, 'duplicate');
    this.networkTxs.add(id);
    this.m.onNetworkTx?.(id);
    try {
      const r = await this.m.mempool.add(data, { abandon: banned });
      // Kept beyond a nonce gap, not forwarded: a queued transaction is relayed once it is ready (geth does not broadcast its queue either).
      if (r?.queued) return this.verdict('tx', peer, 'ignore', 0, 'queued');
      return this.verdict('tx', peer, 'accept', 0, '');
    } catch (e) {
      if (banned()) return this.verdict('tx', peer, 'ignore', 0, 'banned peer');
      const v = verdictOf('tx', e);
      return this.verdict('tx', peer, v.result, v.banScore, v.code);
    }
  }

  /** Validates a relayed block by adding it to the chain (when its parent is known). */
  async validateBlock(peerId: PeerId, data: Uint8Array): Promise<TopicValidatorResult> {
    const peer = peerId.toString();
    if (this.m.isBanned?.(peer)) return this.verdict('block', peer, 'ignore', 0, 'banned peer');
    const max = this.m.chain.params.limits.maxBlockBytes;
    if (data.length > max) return this.verdict('block', peer, 'reject', Offence.OVERSIZED, `${data.length} bytes, limit ${max}`);
    let hash: Uint8Array;
    let prevHash: Uint8Array;
    try {
      ({ hash, prevHash } = checkBlockIntegrity(data));
    } catch (e) {
      const v = verdictOf('block', e);
      return this.verdict('block', peer, v.result, v.banScore, v.code);
    }
    const hex = toHex(hash);
    if (this.m.chain.getEntryByHash(hex)) return this.verdict('block', peer, 'ignore', 0, 'duplicate');
    if (!this.m.chain.getEntryByHash(toHex(prevHash))) {
      // Ahead of us (or on a branch we lack): not relayed, the sync fetches the chain.
      this.m.onUnknownParent(peer);
      return this.verdict('block', peer, 'ignore', 0, 'unknown parent');
    }
    this.m.networkBlocks.add(hex);
    try {
      const r = await this.m.chain.addBlock(data);
      if (r.status === 'duplicate' || r.status === 'orphan') return this.verdict('block', peer, 'ignore', 0, r.status);
      this.log.debug({ peer, hash: hex, height: r.height, status: r.status }, 'gossip block accepted');
      return this.verdict('block', peer, 'accept', 0, '');
    } catch (e) {
      const v = verdictOf('block', e);
      return this.verdict('block', peer, v.result, v.banScore, v.code);
    }
  }

  private async publishBlock(entry: ChainEntry): Promise<void> {
    if (this.m.networkBlocks.has(entry.hashHex) || this.m.downloading()) return;
    const bytes = await this.m.chain.getBlockBytes(entry.hashHex);
    if (!bytes) return;
    await this.publish(this.m.ids.blockTopic, bytes, 'blocks', { hash: entry.hashHex, height: entry.height });
  }

  private async publishTx(entry: MempoolEntry): Promise<void> {
    if (this.networkTxs.has(entry.id)) return;
    await this.publish(this.m.ids.txTopic, entry.bytes, 'txs', { txId: entry.id });
  }

  private async publish(topic: string, data: Uint8Array, kind: 'txs' | 'blocks', what: object): Promise<void> {
    try {
      // A block (up to 8 MB) goes to the mesh (D = 6 peers), not flooded to every peer on the
      // topic as a transaction is: up to 64 connections × 8 MB per block otherwise.
      // (The class takes per-publish options; the exported GossipSub interface does not declare them.)
      const pubsub = this.m.pubsub as unknown as { publish(topic: string, data: Uint8Array, opts?: { floodPublish?: boolean }): ReturnType<GossipSub['publish']> };
      const r = await pubsub.publish(topic, data, kind === 'blocks' ? { floodPublish: false } : undefined);
      this.stats.published[kind]++;
      this.log.debug({ ...what, recipients: r.recipients.length }, `gossip published ${kind === 'txs' ? 'tx' : 'block'}`);
    } catch (e) {
      this.log.debug({ ...what, err: (e as Error).message }, 'gossip publish failed');
    }
  }
}
