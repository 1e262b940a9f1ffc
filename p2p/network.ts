/**
 * The node's peer-to-peer network: one object over the libp2p host (`host.ts`), the sync
 * protocol responder and requester (`syncProtocol.ts`), the sync manager (`sync.ts`), gossip
 * (`gossip.ts`) and peer scores (`scoring.ts`), with a `start()/stop()` lifecycle.
 *
 * Peers: the bootstrap addresses are dialled at start and again whenever they are not connected
 * (every `maintenanceMs`); while fewer than `targetPeers` are connected, known peers are dialled
 * and the DHT is walked (closest peers to a random key) to find more. A peer that completes
 * identify and speaks our sync protocol joins the sync; one that also speaks the mempool
 * exchange (`mempoolExchange.ts`) gets our mempool announced. A banned peer is disconnected at once.
 */
import './polyfill.js';
import { randomBytes } from 'node:crypto';
import type { PeerId, IdentifyResult } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { NodeError } from '../consensus/errors.js';
import { toHex } from '../consensus/hash.js';
import { silentLogger, type Logger } from '../chain/types.js';
import { createHost, parseBootstrap, type Host } from './host.js';
import { loadOrCreateIdentity } from './identity.js';
import { maxResponseFrame, protocolIds, type ProtocolIds } from './protocol.js';
import { PeerScores, type BanInfo, type PeerScoreOptions } from './scoring.js';
import { SyncManager, type SyncOptions } from './sync.js';
import { Libp2pSyncTransport, createSyncHandler } from './syncProtocol.js';
import { Gossip, RecentSet, type GossipStats } from './gossip.js';
import { MempoolExchange, type MempoolExchangeOptions, type MempoolExchangeStats } from './mempoolExchange.js';
import { ProgressBar, type ProgressOutput } from './progress.js';
import { CHAIN_INFO_PROTOCOL, createChainInfoHandler, otherChainNet, requestChainInfo, type OtherChainPeer } from './chainInfo.js';
import type { P2PModules, SyncState, SyncStatusReader } from './types.js';

/** Error codes of the p2p network's lifecycle. */
export const P2PNetworkErrorCode = {
  LISTEN_FAILED: 'p2p_listen_failed',
} as const;

/** Options of the p2p network. */
export interface P2POptions {
  /** Data directory (the identity key lives there). */
  readonly dataDir: string;
  /** Interface to listen on. */
  readonly host: string;
  /** TCP port; 0 picks a free one (logged in "p2p listening"). */
  readonly port: number;
  /** Multiaddrs to connect to at start and keep connected. */
  readonly bootstrap: readonly string[];
  /** `native-node/<version>` (identify). */
  readonly agentVersion: string;
  readonly maxConnections?: number;
  /** Below this many peers, the node looks for more. */
  readonly targetPeers?: number;
  /** Interval of peer maintenance, ms. */
  readonly maintenanceMs?: number;
  readonly sync?: SyncOptions;
  /** The mempool exchange with peers (on connect, and rebroadcasts of the node's own transactions). */
  readonly mempoolExchange?: MempoolExchangeOptions;
  readonly scores?: PeerScoreOptions;
  /** A TTY for the progress bar (none: no bar). */
  readonly progress?: ProgressOutput;
}

/** Most peers of other chains remembered for the status. */
const MAX_OTHER_CHAIN_PEERS = 32;

/** Defaults of P2POptions. */
export const defaultP2POptions = { host: '0.0.0.0', port: 8403, maxConnections: 64, targetPeers: 8, maintenanceMs: 5_000 } as const;

/** One connected peer, as `/api/v1/peers` shows it. */
export interface PeerView {
  readonly peerId: string;
  readonly address: string;
  readonly direction: 'inbound' | 'outbound';
  readonly agent: string | null;
  /** Round-trip time measured by the connection monitor, ms. */
  readonly latencyMs: number | null;
  /** Its best height and tip from the last STATUS (null before the first one). */
  readonly height: number | null;
  readonly tip: string | null;
  /** Misbehaviour score (0–100; 100 bans). */
  readonly score: number;
  readonly connectedAt: number;
}

/** The p2p network (see module comment). */
export class P2PNetwork implements SyncStatusReader {
  readonly scores: PeerScores;
  readonly sync: SyncManager;
  readonly gossip: Gossip;
  readonly mempoolExchange: MempoolExchange;
  private readonly log: Logger;
  private readonly agents = new Map<string, string>();
  private readonly bootstrapAddrs: ReturnType<typeof parseBootstrap>;
  /** Peer ids learnt by dialling bootstrap addresses given without `/p2p/<id>`. */
  private readonly bootstrapIds = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private progress: ProgressBar | undefined;
  private started = false;
  private walking = false;
  private nextWalkAt = 0;
  private walkDelayMs = 2_000;
  /** Peers found to be on another chain (chainInfo.ts), by peer id; at most `MAX_OTHER_CHAIN_PEERS`. */
  private readonly otherChain = new Map<string, OtherChainPeer>();

  private constructor(
    readonly host: Host,
    readonly ids: ProtocolIds,
    private readonly opts: P2POptions,
    private readonly modules: P2PModules,
    scores: PeerScores,
  ) {
    this.log = modules.logger ?? silentLogger;
    this.scores = scores;
    this.bootstrapAddrs = parseBootstrap(opts.bootstrap);
    const networkBlocks = new RecentSet(10_000);
    const penalize = (peer: string, points: number, reason: string) => this.scores.penalize(peer, points, reason);
    this.sync = new SyncManager({ initialPeers: this.bootstrapAddrs.length, ...opts.sync }, {
      chain: modules.chain,
      transport: new Libp2pSyncTransport(host, ids.sync, maxResponseFrame(modules.chain.params.limits.maxBlockBytes)),
      penalize,
      onBlockFromNetwork: (hex) => networkBlocks.add(hex),
      verifier: modules.verifier,
      logger: this.log,
    });
    this.mempoolExchange = new MempoolExchange(opts.mempoolExchange ?? {}, {
      node: host,
      protocol: ids.mempool,
      mempool: modules.mempool,
      maxTxBytes: modules.chain.params.limits.maxTxBytes,
      penalize,
      isBanned: (peer) => this.scores.isBanned(peer),
      isConnected: (peer) => host.getConnections(peerIdFromString(peer)).length > 0,
      syncing: () => this.sync.isSyncing(),
      logger: this.log,
    });
    this.gossip = new Gossip({
      pubsub: host.services.pubsub,
      ids,
      chain: modules.chain,
      mempool: modules.mempool,
      penalize,
      onUnknownParent: (peer) => this.sync.noteUnknownBlock(peer),
      downloading: () => this.sync.syncState().downloading,
      networkBlocks,
      isBanned: (peer) => this.scores.isBanned(peer),
      onNetworkTx: (id) => this.mempoolExchange.noteFromNetwork(id),
      logger: this.log,
    });
    this.scores.onBan = (info) => this.onBan(info);
  }

  /** Builds the network (loads or creates the identity key) without starting it. */
  static async create(opts: P2POptions, modules: P2PModules): Promise<P2PNetwork> {
    const { privateKey, peerId, created } = await loadOrCreateIdentity(opts.dataDir);
    const log = modules.logger ?? silentLogger;
    if (created) log.info({ peerId }, 'p2p identity created');
    const chain = modules.chain;
    const ids = protocolIds(chain.getEntryByHeight(0)!.hash);
    const scores = new PeerScores({ ...opts.scores, logger: log });
    const host = await createHost({
      privateKey,
      host: opts.host,
      port: opts.port,
      bootstrap: opts.bootstrap,
      ids,
      maxMessageBytes: chain.params.limits.maxBlockBytes + 64 * 1024,
      maxConnections: opts.maxConnections ?? defaultP2POptions.maxConnections,
      agentVersion: opts.agentVersion,
      isBanned: (peer) => scores.isBanned(peer.toString()),
    });
    return new P2PNetwork(host, ids, opts, modules, scores);
  }

  /** This node's peer id. */
  get peerId(): string {
    return this.host.peerId.toString();
  }

  /** The multiaddrs this node listens on (with `/p2p/<id>`). */
  get listen(): string[] {
    return this.host.getMultiaddrs().map(String);
  }

  /** Starts listening, serving and syncing; logs "p2p listening" with the addresses. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const host = this.host;
    host.addEventListener('peer:identify', this.onIdentify);
    host.addEventListener('peer:disconnect', this.onDisconnect);
    try {
      await host.start();
    } catch (e) {
      this.started = false;
      throw new NodeError(P2PNetworkErrorCode.LISTEN_FAILED, `cannot listen for peers on ${this.opts.host}:${this.opts.port}: ${(e as Error).message}`, { host: this.opts.host, port: this.opts.port });
    }
    await host.handle(
      this.ids.sync,
      createSyncHandler(this.modules.chain, {
        chainId: this.modules.chain.params.chainId,
        genesisHash: this.modules.chain.getEntryByHeight(0)!.hash,
        penalize: (peer, points, reason) => this.scores.penalize(peer, points, reason),
        logger: this.log,
      }),
      { maxInboundStreams: 16, maxOutboundStreams: 16 },
    );
    const params = this.modules.chain.params;
    await host.handle(CHAIN_INFO_PROTOCOL, createChainInfoHandler({ network: params.network, chainId: params.chainId, genesis: toHex(this.modules.chain.getEntryByHeight(0)!.hash) }), { maxInboundStreams: 4, maxOutboundStreams: 4 });
    // Older nodes do not speak it: they are not asked (see onIdentify).
    await host.handle(this.ids.mempool, this.mempoolExchange.handler, { maxInboundStreams: 4, maxOutboundStreams: 4 });
    this.gossip.start();
    this.mempoolExchange.start();
    this.sync.start();
    if (this.opts.progress) {
      this.progress = new ProgressBar(this.opts.progress, () => this.sync.syncState());
      this.progress.start();
    }
    this.log.info({ peerId: this.peerId, addrs: this.listen, bootstrap: this.opts.bootstrap, protocols: { sync: this.ids.sync, mempool: this.ids.mempool, tx: this.ids.txTopic, block: this.ids.blockTopic } }, 'p2p listening');
    this.timer = setInterval(() => void this.maintain(), this.opts.maintenanceMs ?? defaultP2POptions.maintenanceMs);
    this.timer.unref();
    void this.maintain();
  }

  /** Stops syncing and gossip, then the host (closes every connection). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    if (this.timer) clearInterval(this.timer);
    this.progress?.stop();
    this.host.removeEventListener('peer:identify', this.onIdentify);
    this.host.removeEventListener('peer:disconnect', this.onDisconnect);
    await this.sync.stop();
    this.mempoolExchange.stop();
    this.gossip.stop();
    await this.host.stop();
  }

  private readonly onIdentify = (evt: CustomEvent<IdentifyResult>) => {
    const id = evt.detail.peerId.toString();
    if (evt.detail.agentVersion) this.agents.set(id, evt.detail.agentVersion);
    if (this.scores.isBanned(id)) {
      void this.host.hangUp(evt.detail.peerId).catch(() => undefined);
      return;
    }
    if (evt.detail.protocols.includes(this.ids.sync)) {
      this.log.info({ peer: id, agent: evt.detail.agentVersion }, 'peer connected');
      this.sync.addPeer(id);
      // Identify runs again when a peer's protocols change: the exchange announces once per connection.
      if (evt.detail.protocols.includes(this.ids.mempool)) this.mempoolExchange.addPeer(id);
    } else {
      void this.noteOtherChain(id, evt.detail.protocols);
    }
  };

  /**
   * A peer without our sync protocol but with another chain's (or the chain-info protocol): warn
   * once, naming both genesis hashes, and list it in the status.
   */
  private async noteOtherChain(id: string, protocols: readonly string[]): Promise<void> {
    const net = otherChainNet(protocols, this.ids.net);
    const speaksInfo = protocols.includes(CHAIN_INFO_PROTOCOL);
    if ((!net && !speaksInfo) || this.otherChain.has(id)) return;
    let info: { genesis: string; network: string | null; chainId: number | null } = { genesis: `${net}…`, network: null, chainId: null };
    if (speaksInfo) {
      try {
        info = await requestChainInfo(this.host, id, AbortSignal.timeout(5_000));
      } catch (e) {
        if (!net) return;
        this.log.debug({ peer: id, err: (e as Error).message }, 'chain-info request failed');
      }
    }
    const ourGenesis = toHex(this.modules.chain.getEntryByHeight(0)!.hash);
    if (info.genesis === ourGenesis || this.otherChain.has(id)) return;
    const bootstrap = this.isBootstrapPeer(id);
    if (this.otherChain.size >= MAX_OTHER_CHAIN_PEERS) this.otherChain.delete(this.otherChain.keys().next().value!);
    this.otherChain.set(id, { peerId: id, genesis: info.genesis, network: info.network, chainId: info.chainId, bootstrap, seenAt: Date.now() });
    this.log.warn(
      { peer: id, bootstrap, ourGenesis, ourNetwork: this.modules.chain.params.network, theirGenesis: info.genesis, theirNetwork: info.network, theirChainId: info.chainId },
      `${bootstrap ? 'bootstrap peer' : 'peer'} is on another chain (genesis ${info.genesis}, ours ${ourGenesis}): not syncing with it`,
    );
  }

  /** Whether `id` is the peer of one of the `--bootstrap` addresses. */
  private isBootstrapPeer(id: string): boolean {
    return this.bootstrapAddrs.some((ma) => (ma.getComponents().find((c) => c.name === 'p2p')?.value ?? this.bootstrapIds.get(ma.toString())) === id);
  }

  /** Peers found to be on another chain, newest last. */
  otherChainPeers(): OtherChainPeer[] {
    return [...this.otherChain.values()];
  }

  private readonly onDisconnect = (evt: CustomEvent<PeerId>) => {
    const id = evt.detail.toString();
    this.sync.removePeer(id);
    this.mempoolExchange.removePeer(id);
    this.agents.delete(id);
    this.log.info({ peer: id }, 'peer disconnected');
  };

  private onBan(info: BanInfo): void {
    this.sync.removePeer(info.peerId);
    this.mempoolExchange.removePeer(info.peerId);
    void this.host.hangUp(peerIdFromString(info.peerId)).catch(() => undefined);
  }

  /** Keeps bootstrap peers connected and looks for more peers while below the target. */
  private async maintain(): Promise<void> {
    if (!this.started) return;
    const host = this.host;
    const connected = new Set(host.getPeers().map(String));
    for (const ma of this.bootstrapAddrs) {
      const key = ma.toString();
      const id = ma.getComponents().find((c) => c.name === 'p2p')?.value ?? this.bootstrapIds.get(key);
      if (id && (connected.has(id) || this.scores.isBanned(id))) continue;
      void host
        .dial(ma, { signal: AbortSignal.timeout(8_000) })
        .then((conn) => this.bootstrapIds.set(key, conn.remotePeer.toString()))
        .catch((e) => this.log.debug({ addr: key, err: (e as Error).message }, 'bootstrap dial failed'));
    }
    const target = this.opts.targetPeers ?? defaultP2POptions.targetPeers;
    if (connected.size >= target || connected.size === 0) return;
    // Known peers first (identify and the DHT fill the peer store).
    let dials = 0;
    for (const p of await host.peerStore.all()) {
      if (dials >= 3 || connected.size + dials >= target) break;
      const id = p.id.toString();
      if (connected.has(id) || this.scores.isBanned(id) || !p.protocols.includes(this.ids.sync) || p.addresses.length === 0) continue;
      dials++;
      void host.dial(p.id, { signal: AbortSignal.timeout(8_000) }).catch(() => undefined);
    }
    if (Date.now() >= this.nextWalkAt && !this.walking) void this.walkDht();
  }

  /** Asks the DHT for the peers closest to a random key and dials the new ones (bounded in time and count). */
  private async walkDht(): Promise<void> {
    this.walking = true;
    this.nextWalkAt = Date.now() + this.walkDelayMs;
    this.walkDelayMs = Math.min(this.walkDelayMs * 2, 60_000);
    const found: string[] = [];
    try {
      const connected = new Set(this.host.getPeers().map(String));
      for await (const info of this.host.peerRouting.getClosestPeers(randomBytes(32), { signal: AbortSignal.timeout(10_000) })) {
        const id = info.id.toString();
        if (id === this.peerId || connected.has(id) || this.scores.isBanned(id) || found.includes(id)) continue;
        found.push(id);
        if (info.multiaddrs.length) await this.host.peerStore.merge(info.id, { multiaddrs: info.multiaddrs });
        void this.host.dial(info.id, { signal: AbortSignal.timeout(8_000) }).catch(() => undefined);
        if (found.length >= 16) break;
      }
    } catch (e) {
      this.log.debug({ err: (e as Error).message }, 'dht walk ended');
    } finally {
      this.walking = false;
    }
    if (found.length) this.log.info({ found: found.length }, 'dht walk found peers');
  }

  /** Connected peers. */
  peers(): PeerView[] {
    const out: PeerView[] = [];
    for (const c of this.host.getConnections()) {
      const id = c.remotePeer.toString();
      if (out.some((p) => p.peerId === id)) continue;
      const s = this.sync.peerInfo(id);
      out.push({
        peerId: id,
        address: c.remoteAddr.toString(),
        direction: c.direction,
        agent: this.agents.get(id) ?? null,
        latencyMs: c.rtt ?? null,
        height: s?.height ?? null,
        tip: s?.tip ?? null,
        score: Math.round(this.scores.score(id)),
        connectedAt: c.timeline.open,
      });
    }
    return out;
  }

  /** Bans in force. */
  bans(): BanInfo[] {
    return this.scores.listBans();
  }

  /** Gossip counters. */
  gossipStats(): GossipStats {
    return this.gossip.stats;
  }

  /** Mempool exchange counters. */
  mempoolExchangeStats(): MempoolExchangeStats {
    this.mempoolExchange.localPending();
    return this.mempoolExchange.stats;
  }

  isSyncing(): boolean {
    return this.sync.isSyncing();
  }

  /** Whether any peer's chain status is known yet. */
  hasPeerStatus(): boolean {
    return this.sync.hasPeerStatus();
  }

  syncState(): SyncState {
    return this.sync.syncState();
  }

  /** Connected peers (distinct peer ids). */
  peerCount(): number {
    return new Set(this.host.getPeers().map(String)).size;
  }

  /** The p2p fields of `/api/v1/status`. */
  statusFields(): Record<string, unknown> {
    const s = this.sync.syncState();
    return {
      peers: this.peerCount(),
      otherChainPeers: this.otherChainPeers(),
      syncing: s.syncing,
      peerId: this.peerId,
      listen: this.listen,
      sync: { height: s.height, targetHeight: s.targetHeight, rate: s.rate, eta: s.eta },
    };
  }
}

/** Builds the p2p network (see `P2PNetwork.create`). */
export function createP2PNetwork(opts: P2POptions, modules: P2PModules): Promise<P2PNetwork> {
  return P2PNetwork.create(opts, modules);
}
