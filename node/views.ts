/**
 * What people look at: the chain explorer (node/api/explorerRoutes.ts) and the
 * operator's dashboard, wired to the node's parts, with the dashboard's bounded history
 * (node/nodeHistory.ts).
 *
 *   GET /dashboard                        current figures and charts (uPlot)
 *   GET /dashboard/now.json               the tiles' figures and the alerts of the banner
 *   GET /dashboard/data.json?range=hour|day  the history as columns (per-minute rates derived)
 *   GET /dashboard/assets/uPlot.iife.min.js, uPlot.min.css, dashboard.js
 *
 * The paid side is read late (`payments()`): the views are built before it, so that the paid-call
 * observer can count calls into the history from the first one.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Router } from '@koa/router';
import type Koa from 'koa';
import { NodeError } from '../consensus/errors.js';
import { difficultyOfBits } from '../consensus/pow.js';
import type { ChainParams } from '../consensus/params.js';
import type { Chain } from '../chain/chain.js';
import type { Logger, MempoolReader } from '../chain/types.js';
import { estimateHashrate } from '../chain/hashrate.js';
import type { PaidCallRecord } from '../x402/core/paidCall.js';
import { dashboardAlerts, renderDashboard, DASHBOARD_JS, type DashboardNow } from '../discovery/pages/dashboard.js';
import { createExplorer, type Explorer } from './api/explorerRoutes.js';
import { HttpErrorCode } from './api/app.js';
import { paidCallOutcome } from './api/metrics.js';
import { createNodeHistory, type HistorySample, type NodeHistory } from './nodeHistory.js';
import type { Payments } from './payments.js';

/** What the views read. */
export interface ViewsModules {
  readonly chain: Chain;
  readonly mempool: MempoolReader;
  readonly params: ChainParams;
  readonly version: string;
  /** Data directory for the history file (undefined: memory only). */
  readonly dataDir?: string;
  readonly peers?: () => number;
  readonly syncing?: () => boolean;
  readonly mining?: () => { connections: number; accepted: number; rejected: number; hashrate: number };
  /** The paid side, once built. */
  readonly payments: () => Payments | undefined;
  readonly logger?: Logger;
  /** History sample interval, ms (default 5 s). */
  readonly historyIntervalMs?: number;
  /** The built-in miner (undefined: off). */
  readonly miner?: () => { running: boolean; hashrate: number } | undefined;
  /** Stratum (undefined: off). */
  readonly stratum?: () => { listening: boolean; url: string | null; connections: number } | undefined;
  /** p2p (undefined: --no-p2p): the bootstrap peers configured. */
  readonly p2p?: { readonly bootstrap: number };
  /** No block for this many target intervals raises the banner (default 4; 1.5 for a paced devnet, whose blocks come on time). */
  readonly stallFactor?: number;
}

/** The running views. */
export interface Views {
  readonly router: Router;
  readonly explorer: Explorer;
  readonly history: NodeHistory;
  /** The paid-call observer's share: counts the call into the history. */
  recordPaidCall(r: PaidCallRecord): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const CSP = "default-src 'none'; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/**
 * The history as columns for the charts: counts become per-minute rates. A minute record's count
 * is its rate; a 5-second sample's rate is the count of the minute ending with it (one call is 1
 * per minute for a minute, not 12 for 5 seconds).
 */
export function historyColumns(rows: readonly HistorySample[]): Record<string, (number | null)[]> {
  const col = (f: (r: HistorySample) => number | null) => rows.map(f);
  const rate = (f: (r: HistorySample) => number) =>
    rows.map((r, i) => {
      if (r.span >= 60) return (f(r) * 60) / r.span;
      let sum = 0;
      for (let j = i; j >= 0 && rows[j].span < 60 && rows[j].t > r.t - 60; j--) sum += f(rows[j]);
      return sum;
    });
  return {
    t: col((r) => r.t),
    height: col((r) => r.height),
    difficulty: col((r) => r.difficulty),
    hashrate: col((r) => r.hashrate),
    poolHashrate: col((r) => r.poolHashrate),
    blockInterval: col((r) => r.blockInterval),
    mempool: col((r) => r.mempool),
    peers: col((r) => r.peers),
    syncing: col((r) => r.syncing),
    workers: col((r) => r.workers),
    sharesPerMin: rate((r) => r.sharesAccepted),
    rejectedPerMin: rate((r) => r.sharesRejected),
    nativePerMin: rate((r) => r.callsNative),
    usdcPerMin: rate((r) => r.callsUsdc),
    refundsPending: col((r) => r.refundsPending),
    refundedPerMin: rate((r) => r.refunded),
    refundsSent: col((r) => r.refundsSent),
    settleMs: col((r) => r.settleMs),
  };
}

/** Builds the explorer, the dashboard and its history (call `start()`). */
export function createViews(m: ViewsModules): Views {
  const payments = m.payments;
  const history = createNodeHistory(
    {
      chain: m.chain,
      mempool: m.mempool,
      peers: m.peers,
      syncing: m.syncing,
      mining: m.mining,
      refundsPending: () => payments()?.refunds?.pendingIds().length ?? 0,
      refundsSent: () => payments()?.ledger.counts().refunded ?? 0,
    },
    { dataDir: m.dataDir, intervalMs: m.historyIntervalMs ?? 5_000, logger: m.logger },
  );
  const explorer = createExplorer({
    chain: m.chain,
    mempool: m.mempool,
    params: m.params,
    version: m.version,
    payments: {
      record: async (id) => payments()?.ledger.get(id),
      refundPending: (id) => payments()?.refunds?.pendingIds().includes(id) ?? false,
      serviceName: (id) => payments()?.registry.get(id)?.name,
    },
  });
  const info = { network: m.params.network, chainId: m.params.chainId, version: m.version };
  const router = new Router();
  router.use(explorer.router.routes());

  const require = createRequire(import.meta.url);
  const assets = new Map<string, { type: string; body: () => Buffer | string }>();
  const fromPackage = (file: string) => {
    let cached: Buffer | undefined;
    return () => (cached ??= readFileSync(require.resolve(`uplot/dist/${file}`)));
  };
  assets.set('uPlot.iife.min.js', { type: 'text/javascript; charset=utf-8', body: fromPackage('uPlot.iife.min.js') });
  assets.set('uPlot.min.css', { type: 'text/css; charset=utf-8', body: fromPackage('uPlot.min.css') });
  assets.set('dashboard.js', { type: 'text/javascript; charset=utf-8', body: () => DASHBOARD_JS });

  const headers = (ctx: Koa.Context) => {
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'no-cache');
  };
  /** The tiles' figures now. */
  const dashboardNow = (): DashboardNow => {
    const p = payments();
    const last = history.series('hour');
    let settled = 0;
    const down: string[] = [];
    const defs = p?.registry.list() ?? [];
    for (const def of defs) {
      const v = p!.ledger.volume(def.id);
      settled += v.calls + v.callsUsdc;
      const h = p!.registry.liveHealth(def.id) ?? p!.discovery.prober.get(def.id);
      if (h?.status === 'down') down.push(def.id);
    }
    // Shares per minute over the last minute of samples.
    const recent = last.filter((r) => r.t > (last.at(-1)?.t ?? 0) - 60 && r.span < 60);
    const sharesPerMin = (k: 'sharesAccepted' | 'sharesRejected') => recent.reduce((n, r) => n + r[k], 0);
    const tip = m.chain.tip;
    const st = m.stratum?.();
    const miner = m.miner?.();
    return {
      now: Math.floor(Date.now() / 1000),
      height: tip.height,
      tipTime: tip.header.time,
      targetSeconds: m.params.targetSpacing,
      stallFactor: m.stallFactor ?? 4,
      difficulty: difficultyOfBits(tip.header.bits),
      hashrate: estimateHashrate(m.chain),
      blockInterval: last.at(-1)?.blockInterval ?? 0,
      mempool: m.mempool.count,
      peers: m.peers?.() ?? 0,
      syncing: m.syncing?.() ?? false,
      p2p: m.p2p && { ...m.p2p, devnet: m.params.network === 'native-devnet' },
      miner: miner && { running: miner.running, hashrate: miner.hashrate },
      stratum: st && { listening: st.listening, url: st.url, connections: st.connections, workers: last.at(-1)?.workers ?? st.connections, acceptedPerMin: sharesPerMin('sharesAccepted'), rejectedPerMin: sharesPerMin('sharesRejected') },
      services: { total: defs.length, down },
      refundsPending: p?.refunds?.pendingIds().length ?? 0,
      refundsStuck: p?.refunds?.stuck().count ?? 0,
      refundsSent: p?.ledger.counts().refunded ?? 0,
      settled,
    };
  };
  router.get('/dashboard', (ctx) => {
    const started = process.hrtime.bigint();
    headers(ctx);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderDashboard(info, dashboardNow());
    ctx.set('Server-Timing', `app;dur=${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(2)}`);
  });
  router.get('/dashboard/now.json', (ctx) => {
    const now = dashboardNow();
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { now, alerts: dashboardAlerts(now) };
  });
  router.get('/dashboard/data.json', (ctx) => {
    const range = ctx.query.range === undefined || ctx.query.range === '' ? 'hour' : ctx.query.range;
    if (range !== 'hour' && range !== 'day') throw new NodeError(HttpErrorCode.INVALID_QUERY, 'range must be hour or day', { param: 'range' });
    const rows = history.series(range);
    const byService = new Map<string, number>();
    for (const r of rows) for (const [k, v] of Object.entries(r.calls)) byService.set(k, (byService.get(k) ?? 0) + v);
    const services = [...byService]
      .map(([k, calls]) => {
        const [rail, service] = k.split(' ');
        return { service, rail, calls };
      })
      .sort((a, b) => b.calls - a.calls || (a.service < b.service ? -1 : 1));
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = { range, points: rows.length, columns: historyColumns(rows), services };
  });
  router.get('/dashboard/assets/:file', (ctx) => {
    const a = assets.get(ctx.params.file);
    if (!a) return;
    ctx.type = a.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = a.body();
  });

  return {
    router,
    explorer,
    history,
    recordPaidCall(r) {
      const outcome = paidCallOutcome(r.outcome.status, 'body' in r.outcome ? r.outcome.body : undefined);
      history.recordCall({ serviceId: r.serviceId, rail: r.rail ?? 'native', paid: r.paymentPresented, refunded: outcome === 'refunded', seconds: r.seconds });
    },
    start: () => history.start(),
    async stop() {
      explorer.stop();
      await history.stop();
    },
  };
}
