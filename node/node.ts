/**
 * The full node: the composition root. It reads like the dependency graph it builds —
 *
 *   verify pool  (hybrid signatures, worker threads)
 *     → chain    (LevelDB store, fork choice; needs the verifier)
 *     → mempool  (needs the chain's tip state and events, and the verifier)
 *     → miner    (needs the chain to build on and the mempool's candidates)
 *     → stratum  (Stratum v1 and getblocktemplate: the chain and the mempool, like the miner)
 *     → p2p      (libp2p host, gossip, header-first sync: the chain and the mempool; started
 *                 after the mempool, stopped after the miner so no block arrives mid-shutdown)
 *     → HTTP API (reads the chain and the mempool, submits to the mempool, shows the miner)
 *
 * `start()` starts them in that order and `stop()` stops them in reverse: HTTP first (no new
 * work comes in), then the miner, the mempool, the chain (waits for its queue and closes the
 * database) and last the verify pool the chain may still be using.
 *
 * Data directory: `chain/` (LevelDB), `ledger/` (payments), `mempool.dat` (the mempool at the last save), `p2p-key` (the libp2p identity), `genesis.json` (devnet only: pins its generated genesis)
 * and `dev-wallet.json` (devnet only: the public dev key in clear).
 */
import { join } from 'node:path';
import { tryDecodeAddress } from '../consensus/address.js';
import { NodeError } from '../consensus/errors.js';
import type { ChainParams } from '../consensus/params.js';
import { createVerifyPool, type VerifyPool } from '../chain/verifyPool.js';
import { openChain, type Chain } from '../chain/chain.js';
import { createMempool, type Mempool } from '../chain/mempool.js';
import { createMempoolStore, MEMPOOL_FILE, type MempoolStore } from '../chain/mempoolStore.js';
import { createMiner, type Miner } from '../chain/miner.js';
import { createPacedMiner } from '../chain/pacedMiner.js';
import { ConfigErrorCode, mempoolOptionsOf, type NodeConfig } from './config.js';
import { isPacedGenesis, loadChainParams } from './chainParams.js';
import { createHttpServer, type HttpServer } from './api/http.js';
import type { P2PNetwork } from '../p2p/network.js';
import { createPeersRouter } from './api/p2pRoutes.js';
import type { NodeLogger } from './logger.js';
import { NODE_VERSION } from './version.js';
import { writeDevWallet } from './wallet.js';
import { createPayments, type Payments } from './payments.js';
import { isPostgresLocation } from '../x402/ledger/open.js';
import { createMiningEndpoints, createMiningJobFeed } from './mining/endpoints.js';
import type Koa from 'koa';
import { createHttpLimits } from './api/httpLimits.js';
import { createHostPolicy, type HostPolicy } from './api/publicUrl.js';
import { createEconomyRouter, economyErrorStatuses } from './api/economyRoutes.js';
import { EconomySimulator } from './economy/simulator.js';
import { createChainBackend } from './economy/backends.js';
import type { StratumServer } from './mining/stratum.js';
import type { JobFeed } from '../chain/jobFeed.js';
import type { RpcService } from './mining/rpc.js';
import { createOpsRouter, nodeReadiness } from './api/opsRoutes.js';
import { createMetricsServer, createNodeMetrics } from './api/metrics.js';
import { createViews, type Views } from './views.js';

/** Error codes of the node's lifecycle. */
export const NodeLifecycleErrorCode = {
  ALREADY_STARTED: 'node_already_started',
} as const;

/** Longest wait of the built-in miner for the bootstrap peers' chain status before it starts anyway, ms. */
export const MINING_STATUS_GRACE_MS = 10_000;

/** Name of the chain database directory inside the data directory. */
export const CHAIN_DIR = 'chain';

/** The running parts of a node. */
export interface NodeParts {
  readonly verifier: VerifyPool;
  readonly chain: Chain;
  readonly mempool: Mempool;
  /** The mempool file (undefined with --no-persist-mempool). */
  readonly mempoolStore: MempoolStore | undefined;
  readonly miner: Miner | undefined;
  /** The mining job feed Stratum and the getblocktemplate long poll follow. */
  readonly jobFeed: JobFeed;
  /** The Stratum v1 server (undefined with --no-stratum). */
  readonly stratum: StratumServer | undefined;
  /** getblocktemplate/submitblock: its service, and its own listener with --rpc-port. */
  readonly rpc: { readonly service: RpcService; readonly server: HttpServer | undefined };
  /** The peer-to-peer network (undefined with --no-p2p). */
  readonly p2p: P2PNetwork | undefined;
  readonly http: HttpServer;
  readonly payments: Payments;
  /** Devnet `--economy`: the built-in economy actors. */
  readonly economy?: EconomySimulator;
  /** The Prometheus `GET /metrics` listener (`--metrics-port`), undefined when off. */
  readonly metrics: HttpServer | undefined;
  /** The explorer, the operator's dashboard and its history (node/views.ts). */
  readonly views: Views;
  /** The public base URL documents and quotes name, and the allowed Hosts (node/api/publicUrl.ts). */
  readonly hosts: HostPolicy;
}

/** Two koa middleware run as one (the API's guard: the Host check, then the per-address limit). */
function chainMiddleware(first: Koa.Middleware, second: Koa.Middleware): Koa.Middleware {
  return (ctx, next) => first(ctx, () => second(ctx, next));
}

/** A full node built from a configuration (see module comment). */
export class FullNode {
  private started = false;
  private stopping: Promise<void> | undefined;
  /** Checks whether the built-in miner should pause for a sync (see `gateMining`). */
  private miningGate: NodeJS.Timeout | undefined;
  /** Miner start/stop in progress, one at a time. */
  private minerLane: Promise<void> = Promise.resolve();

  private constructor(
    readonly config: NodeConfig,
    readonly params: ChainParams,
    readonly parts: NodeParts,
    private readonly log: NodeLogger,
    /** The sync state the built-in miner follows (see `gateMining`). */
    private readonly network: { readonly isSyncing: () => boolean; readonly networkKnown: () => boolean },
    /** What `/ready` reads of the node's lifecycle. */
    private readonly lifecycle: { serving: boolean },
  ) {}

  /** Builds every part (opening the database and the worker pool) without starting them. */
  static async create(config: NodeConfig, log: NodeLogger): Promise<FullNode> {
    const params = loadChainParams(config);
    const devnet = params.network === 'native-devnet';
    if (config.blockTime === undefined && isPacedGenesis(params)) {
      log.warn(
        { dataDir: config.dataDir, targetSpacing: params.targetSpacing },
        `this devnet was made for --block-time ${params.targetSpacing} (easiest difficulty): without it the built-in miner free-runs and blocks come as fast as it hashes until ASERT raises the difficulty`,
      );
    }
    /** Whether the HTTP API serves: from the end of `start()` to the beginning of `stop()`. */
    const lifecycle = { serving: false };

    // Signatures are verified off the event loop; the pool is shared by the chain and the mempool.
    const verifier = await createVerifyPool(config.verifyThreads > 0 ? { threads: config.verifyThreads } : {});
    let chain: Chain | undefined;
    let payments: Payments | undefined;
    try {
      // The chain needs the verifier.
      chain = await openChain({ dataDir: join(config.dataDir, CHAIN_DIR), params, verifier, logger: log.child({ module: 'chain' }) });
      // The mempool needs the chain (tip state, connect/disconnect events) and the verifier.
      const mempool = createMempool(chain, verifier, params, { ...mempoolOptionsOf(config), logger: log.child({ module: 'mempool' }) });
      // The mempool file needs the mempool (saved at shutdown and periodically, re-admitted at start).
      const mempoolStore = config.persistMempool
        ? createMempoolStore(mempool, params, { path: join(config.dataDir, MEMPOOL_FILE), intervalMs: config.mempoolSaveInterval * 1000, logger: log.child({ module: 'mempool' }) })
        : undefined;
      // The mining job feed needs the chain (tip, state) and the mempool (candidates); the miner, Stratum and getblocktemplate follow it.
      const jobFeed = createMiningJobFeed(config, params, { chain, mempool, logger: log });
      // The miner needs the job feed (its work) and the chain (to submit blocks).
      // With --block-time the paced miner builds its own template at each slot (chain/pacedMiner.ts).
      const miner = !config.mine
        ? undefined
        : config.blockTime !== undefined
          ? createPacedMiner(chain, mempool, params, { blockTime: config.blockTime, address: minerId(config, params), tag: `native-node/${NODE_VERSION}`, logger: log.child({ module: 'miner' }) })
          : createMiner(chain, mempool, params, { threads: config.mineThreads, address: minerId(config, params), tag: `native-node/${NODE_VERSION}`, feed: jobFeed, logger: log.child({ module: 'miner' }) });
      // The p2p network needs the chain (serve, sync and relay blocks) and the mempool (relay transactions).
      // libp2p (~700 modules) is imported only by a node that runs the p2p network.
      const p2p = config.p2p
        ? await (await import('../p2p/network.js')).createP2PNetwork(
            { dataDir: config.dataDir, host: config.p2pHost, port: config.p2pPort, bootstrap: config.bootstrap, agentVersion: `native-node/${NODE_VERSION}`, progress: process.stderr.isTTY ? process.stderr : undefined },
            { chain, mempool, verifier, logger: log.child({ module: 'p2p' }) },
          )
        : undefined;
      /** Far behind the network (p2p sync): no paid calls, no block templates, no built-in mining. */
      const isSyncing = () => p2p?.isSyncing() ?? false;
      /**
       * Whether the node knows the network's chain: nothing to wait for without bootstrap peers;
       * with them, once one has answered, or after MINING_STATUS_GRACE_MS. Block templates and the
       * built-in miner (`gateMining`) wait for it.
       */
      const createdAt = Date.now();
      const networkKnown = () => p2p === undefined || config.bootstrap.length === 0 || p2p.hasPeerStatus() || Date.now() - createdAt >= MINING_STATUS_GRACE_MS;
      // Stratum and getblocktemplate need the chain and the mempool as the miner does; the miner feeds their block list.
      const mining = createMiningEndpoints(config, params, { chain, mempool, feed: jobFeed, miner, logger: log, isSyncing: () => isSyncing() || !networkKnown() });
      // Metrics read every part at scrape time; their middleware counts the API's requests
      // and the paid-call core reports every paid call to them (HTTP and MCP alike).
      const metrics =
        config.metricsPort === undefined
          ? undefined
          : createNodeMetrics({
              chain,
              mempool,
              syncing: isSyncing,
              peers: () => p2p?.peerCount() ?? 0,
              refundsPending: () => payments!.refunds?.pendingIds().length ?? 0,
              refundsStuck: () => payments!.refunds?.stuck().count ?? 0,
              ledgerGapPayments: () => (payments!.unhonored?.gapList() ?? []).reduce((n, g) => n + (g.invokes ?? 0), 0),
              servedThenLost: () => payments!.unhonored?.servedLostList().total ?? 0,
              paymentStatuses: () => payments!.ledger.counts(),
              quoteCache: () => payments?.quoteAnswers.stats(),
              receiptSigning: () => payments?.receiptStats,
              ...(config.ledger !== undefined && isPostgresLocation(config.ledger) ? { fleet: () => payments?.fleet?.metrics() } : {}),
              mining: () => {
                const t = mining.stats.snapshot().totals;
                return { connections: mining.stratum?.info().connections ?? 0, accepted: t.accepted, rejected: t.rejected, stale: t.stale, hashrate: t.hashrate };
              },
            });
      // The paid side needs the chain (payments, refunds), the mempool (refunds) and the registry.
      // The explorer and the dashboard read every part; the dashboard's history counts paid calls beside the metrics.
      const views = createViews({ chain, mempool, params, version: NODE_VERSION, dataDir: config.dataDir, peers: () => p2p?.peerCount() ?? 0, syncing: isSyncing, mining: () => ({ connections: mining.stratum?.info().connections ?? 0, ...mining.stats.snapshot().totals }), payments: () => payments, logger: log.child({ module: 'views' }), miner: miner ? () => miner.stats() : undefined, stratum: () => mining.stratum?.info(), p2p: p2p ? { bootstrap: config.bootstrap.length } : undefined, stallFactor: config.alertNoBlockFactor ?? (isPacedGenesis(params) ? 1.5 : 4) });
      // One public base URL: --public-url, else the listening address once bound; documents and quotes name it whatever the Host.
      const hosts = createHostPolicy({ publicUrl: config.publicUrl, allowedHosts: config.allowedHosts });
      payments = await createPayments(config, params, { chain, mempool, verifier, logger: log, isSyncing, observePaidCall: (r) => (metrics?.recordPaidCall(r), views.recordPaidCall(r)), baseUrl: hosts.baseUrl });
      // /health, /ready and the descriptor's .json alias, mounted first (the alias passes on to discovery).
      const ops = createOpsRouter({ version: NODE_VERSION, readiness: nodeReadiness({ chainOpen: () => chain!.isOpen, syncing: () => isSyncing() || payments?.fleet?.behind() !== undefined, serving: () => lifecycle.serving, refundsStuck: () => payments!.refunds?.stuck().count ?? 0, payeeFloatLow: () => payments?.payeeFloatLow() ?? false, ledgerAvailable: () => payments?.ledger.available() ?? true }) });
      const metricsServer = metrics && createMetricsServer({ host: config.metricsHost, port: config.metricsPort! }, metrics, log.child({ module: 'metrics' }));
      // Per-address limit on the expensive endpoints (tx submission, paid calls, MCP).
      const httpLimits = createHttpLimits({ ratePerSecond: config.httpExpensiveRate, burst: config.httpExpensiveBurst });
      const p2pHttp = p2p ? { routers: [createPeersRouter(p2p)], statusExtras: [() => p2p.statusFields()] } : { routers: [], statusExtras: [] };
      // The HTTP API reads the chain and the mempool, submits to the mempool, shows the miner and the peers and sells the services.
      const http = createHttpServer(
        { host: config.httpHost, port: config.httpPort, bodyLimit: config.httpBodyLimit, timeoutMs: config.httpTimeout, version: NODE_VERSION, guard: chainMiddleware(hosts.middleware, httpLimits.middleware) },
        { chain, mempool, params, miner, logger: log.child({ module: 'http' }), middleware: metrics ? [metrics.middleware()] : [], routers: [ops, payments.router, payments.discovery.router, ...mining.routers, ...p2pHttp.routers, createEconomyRouter(chain.economy, params), views.router], errorStatuses: { ...payments.errorStatuses, ...economyErrorStatuses }, admitTx: (bytes) => payments!.admitTx(bytes), statusExtras: [mining.statusExtra, () => payments!.statusExtra(), ...p2pHttp.statusExtras, () => ({ httpLimits: httpLimits.info() })] },
      );
      if (devnet) {
        const path = await writeDevWallet(config.dataDir, params.network, params.hrp);
        log.info({ path }, 'dev wallet written (devnet only; its seed is public)');
      }
      // The devnet economy acts on the chain and the mempool like any wallet would.
      const economy = devnet && config.economy ? new EconomySimulator(createChainBackend(chain, mempool), params, { rate: 2, log: log.child({ module: 'economy' }) }) : undefined;
      return new FullNode(config, params, { verifier, chain, mempool, mempoolStore, miner, jobFeed, stratum: mining.stratum, rpc: { service: mining.rpc, server: mining.rpcServer }, p2p, http, payments, economy, metrics: metricsServer, views, hosts }, log, { isSyncing, networkKnown }, lifecycle);
    } catch (e) {
      await payments?.stop().catch(() => undefined);
      await chain?.close().catch(() => undefined);
      await verifier.stop().catch(() => undefined);
      throw e;
    }
  }

  /** Base URL of the HTTP API (after `start`). */
  get url(): string {
    return this.parts.http.url;
  }

  /** Starts the parts in dependency order; logs `listening` with the URL once the API is up. */
  async start(): Promise<void> {
    if (this.started) throw new NodeError(NodeLifecycleErrorCode.ALREADY_STARTED, 'node already started');
    this.started = true;
    const { chain, mempool, miner, http, payments } = this.parts;
    try {
      mempool.start();
      // Saved transactions first: refunds and payments accepted before a restart are pending again.
      await this.parts.mempoolStore?.load();
      this.parts.mempoolStore?.start();
      await this.parts.p2p?.start();
      await payments.start();
      // With bootstrap peers, mining waits for their chain status (see `gateMining`).
      const deferMining = miner !== undefined && this.parts.p2p !== undefined && this.config.bootstrap.length > 0;
      // The job feed first: the miner, Stratum and the long poll take its jobs.
      await this.parts.jobFeed.start();
      if (deferMining) this.log.info({}, 'mining waits for the network’s chain status');
      else await miner?.start();
      await this.parts.stratum?.start();
      await this.parts.rpc.server?.start();
      if (this.parts.rpc.server) this.log.info({ url: this.parts.rpc.server.url }, 'rpc listening');
      await this.parts.views.start();
      await http.start();
      // The fleet's heartbeat names this node's API (x402/fleet/fleet.ts).
      if (payments.fleet) {
        payments.fleet.url = http.url;
        void payments.fleet.beat();
      }
      this.parts.hosts.listening(http.url);
      if (this.config.publicUrl === undefined && /^http:\/\/(0\.0\.0\.0|\[::\])[:/]/.test(http.url)) {
        this.log.warn({ url: http.url }, 'documents and quotes name the listening address, which clients cannot reach: set --public-url');
      }
      this.parts.economy?.start();
      await this.parts.metrics?.start();
      if (this.parts.metrics) this.log.info({ url: `${this.parts.metrics.url}/metrics` }, 'metrics listening');
      this.gateMining(!deferMining);
      this.lifecycle.serving = true;
    } catch (e) {
      await this.stop();
      throw e;
    }
    this.log.info(
      { url: http.url, publicUrl: this.parts.hosts.baseUrl(), network: this.params.network, chainId: this.params.chainId, height: chain.tip.height, tip: chain.tip.hashHex, mining: miner !== undefined, dataDir: this.config.dataDir, version: NODE_VERSION },
      'listening',
    );
  }

  /**
   * The built-in miner pauses while the node is far behind the network: blocks it found on an
   * old tip would only be orphaned, and its threads would slow the signature checks the sync
   * waits for. With bootstrap peers it also waits for their first chain status (at most
   * `MINING_STATUS_GRACE_MS`), since before it "not syncing" only means "not known". Checked
   * every second; a pause or a resume happens once the new state has held for two checks, so a
   * node hovering around the threshold does not restart its threads at every block.
   */
  private gateMining(started: boolean): void {
    const { miner, p2p } = this.parts;
    if (!miner || !p2p || this.stopping) return;
    let everStarted = started;
    let want: boolean | undefined;
    let streak = 0;
    this.miningGate = setInterval(() => {
      const run = (everStarted || this.network.networkKnown()) && !this.network.isSyncing();
      streak = run === want ? streak + 1 : 1;
      want = run;
      // Every change, the first start included, waits for two checks: the first peer to answer
      // may be one at our height while one far ahead is still to answer.
      if (run === miner.stats().running || streak < 2) return;
      this.minerLane = this.minerLane
        .then(async () => {
          if (this.stopping) return;
          const height = this.parts.chain.tip.height;
          if (!run && miner.stats().running) {
            this.log.info({ height }, 'mining paused while the node syncs');
            await miner.stop();
          } else if (run && !miner.stats().running) {
            const msg = everStarted ? 'mining resumed: the node has caught up' : p2p.hasPeerStatus() ? 'mining started: the node is in step with the network' : 'mining started: no peer answered within the grace period';
            this.log.info({ height }, msg);
            everStarted = true;
            await miner.start();
          }
        })
        .catch((e: unknown) => this.log.error({ err: e }, 'mining gate failed'));
    }, 1_000);
    this.miningGate.unref();
  }

  /** Stops the parts in reverse order; idempotent, errors of one part do not keep the others running. */
  stop(): Promise<void> {
    this.stopping ??= this.stopNow();
    return this.stopping;
  }

  private async stopNow(): Promise<void> {
    const { verifier, chain, mempool, miner, http, payments } = this.parts;
    this.lifecycle.serving = false;
    this.log.info({}, 'stopping');
    clearInterval(this.miningGate);
    const step = async (name: string, fn: () => unknown) => {
      try {
        await fn();
      } catch (e) {
        this.log.error({ err: e, part: name }, 'error while stopping');
      }
    };
    // Long polls answer first, so no request waits on a chain about to close.
    await step('rpc', async () => {
      this.parts.rpc.service.stop();
      await this.parts.rpc.server?.stop();
    });
    await step('economy', () => this.parts.economy?.stop());
    await step('views', () => this.parts.views.stop());
    await step('http', () => http.stop());
    await step('metrics', () => this.parts.metrics?.stop());
    await step('stratum', () => this.parts.stratum?.stop());
    await step('miner', () => this.minerLane.then(() => miner?.stop()));
    await step('job feed', () => this.parts.jobFeed.stop());
    await step('p2p', () => this.parts.p2p?.stop());
    await step('payments', () => payments.stop());
    await step('mempool', async () => {
      await this.parts.mempoolStore?.stop();
      mempool.stop();
    });
    await step('chain', () => chain.close());
    await step('verifier', () => verifier.stop());
    this.log.info({ height: chain.tip.height }, 'stopped');
  }
}

function minerId(config: NodeConfig, params: ChainParams): Uint8Array {
  const id = config.minerAddress === undefined ? undefined : tryDecodeAddress(config.minerAddress, params.hrp);
  if (!id) throw new NodeError(ConfigErrorCode.INVALID, `minerAddress ${String(config.minerAddress)} is not a ${params.network} address`, { option: 'minerAddress' });
  return id;
}

/** Builds a node (see `FullNode.create`). */
export function createNode(config: NodeConfig, log: NodeLogger): Promise<FullNode> {
  return FullNode.create(config, log);
}

/**
 * Runs a node until SIGINT or SIGTERM, then shuts it down gracefully; resolves when it has
 * stopped. A second signal during shutdown exits at once.
 */
export async function runNode(config: NodeConfig, log: NodeLogger): Promise<void> {
  const node = await createNode(config, log);
  let stopped!: () => void;
  const done = new Promise<void>((resolve) => (stopped = resolve));
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      log.warn({ signal }, 'second signal: exiting without finishing shutdown');
      process.exit(130);
    }
    log.info({ signal }, 'shutdown requested');
    void node.stop().then(stopped);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await node.start();
    await done;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
