/**
 * Prometheus metrics (prom-client), served at `GET /metrics` on a listener of their own
 * (`--metrics-port`; off by default, 127.0.0.1 unless `--metrics-host`), so the paid API never
 * exposes operational figures.
 *
 * Three kinds of figure:
 * - read at scrape time from the parts (`collect`): chain height, tip age, difficulty, peers,
 *   mempool size and bytes, sync state, refunds pending, Stratum connections, shares, pool hashrate;
 * - counted by one koa middleware in front of the API: HTTP requests by route and status;
 * - reported by the paid-call core (x402/core/paidCall.ts, its `observe` port) for every call it
 *   answers, whatever the transport (HTTP and its 402 dialects, MCP): quotes, paid calls by
 *   service, rail and outcome, refunds sent and the settle latency (time in the core);
 * - prom-client's default process metrics: memory, CPU, event-loop lag, GC, handles.
 *
 * All names start with `native_` (process and Node.js metrics keep prom-client's names).
 */
import type Koa from 'koa';
import { Router } from '@koa/router';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { difficultyOfBits } from '../../consensus/pow.js';
import type { ChainEntry, Logger } from '../../chain/types.js';
import { createRouterServer, type HttpServer } from './app.js';
import type { PaidCallRecord } from '../../x402/core/paidCall.js';
import type { FleetMetrics } from '../../x402/fleet/fleet.js';
import type { QuoteAnswerStats } from './quoteAnswers.js';

/** What the metrics read at scrape time. */
export interface MetricsSources {
  readonly chain: { readonly tip: ChainEntry };
  readonly mempool: { readonly count: number; readonly bytes: number };
  readonly syncing: () => boolean;
  /** Connected peers (0 without p2p). */
  readonly peers?: () => number;
  /** Refunds signed and not mined yet. */
  readonly refundsPending?: () => number;
  /** Refunds owed that could not be sent (the payee's balance does not cover them). */
  readonly refundsStuck?: () => number;
  /** Payments in stretches of chain the ledger never judged, waiting for the operator (`native-node ledger gap`). */
  readonly ledgerGapPayments?: () => number;
  /** Payments served, then lost to a reorganization deeper than --confirmations (x402/native/unhonored.ts). */
  readonly servedThenLost?: () => number;
  /** Ledger records per payment status (USDC: settle_pending, expired_unsettled, failed…). */
  readonly paymentStatuses?: () => Readonly<Record<string, number>>;
  /** Stratum and built-in mining totals. */
  readonly mining?: () => { connections: number; accepted: number; rejected: number; stale: number; hashrate: number };
  /** The fleet on a PostgreSQL ledger (x402/fleet/fleet.ts); its gauges exist only with it (undefined: no recent view). */
  readonly fleet?: () => FleetMetrics | undefined;
  /** Hybrid receipt signatures made and the receipts they covered (x402/core/receipts.ts). */
  readonly receiptSigning?: () => { readonly signatures: number; readonly receipts: number; readonly failures: number } | undefined;
  /** The kept 402 answers of plain quotes (node/api/quoteAnswers.ts): hits, misses, entries, bytes. */
  readonly quoteCache?: () => QuoteAnswerStats | undefined;
  /** Unix seconds (tests). */
  readonly nowSeconds?: () => number;
}

/** Outcome label of a paid call. */
export type PaidCallOutcomeLabel = 'settled' | 'pending' | 'refused' | 'conflict' | 'refunded' | 'invalid' | 'unavailable' | 'error';

/** The outcome label of a paid call answered with `status` (and `body`, which says whether a refund was sent). */
export function paidCallOutcome(status: number, body: unknown): PaidCallOutcomeLabel {
  if (status === 200) return 'settled';
  if (status === 202) return 'pending';
  if (status === 402) return 'refused';
  if (status === 409) return 'conflict';
  if (typeof body === 'object' && body !== null && (body as { refunded?: unknown }).refunded === true) return 'refunded';
  if (status === 503) return 'unavailable';
  if (status >= 400 && status < 500) return 'invalid';
  return 'error';
}

/** The node's metrics: a registry of its own, the HTTP middleware and the paid-call observer that feed it. */
export class NodeMetrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly paidCalls: Counter<'service' | 'rail' | 'outcome'>;
  private readonly quotes: Counter<'service'>;
  private readonly refundsSent: Counter<'service'>;
  private readonly settleSeconds: Histogram<'rail' | 'outcome'>;

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    const now = sources.nowSeconds ?? (() => Date.now() / 1000);
    collectDefaultMetrics({ register: this.registry });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    /** A counter whose total is read at scrape time from the part that counts. */
    const counter = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    gauge('native_chain_height', 'Height of the best block.', () => sources.chain.tip.height);
    gauge('native_chain_tip_age_seconds', 'Seconds since the timestamp of the best block.', () => Math.max(0, now() - sources.chain.tip.header.time));
    gauge('native_chain_difficulty', 'Difficulty of the best block (1 = 2^32 hashes).', () => difficultyOfBits(sources.chain.tip.header.bits));
    gauge('native_p2p_peers', 'Connected peers.', () => sources.peers?.() ?? 0);
    gauge('native_sync_syncing', '1 while the node is more than 10 blocks behind the best peer (paid calls refused), else 0.', () => (sources.syncing() ? 1 : 0));
    if (sources.fleet) {
      const fleet = sources.fleet;
      gauge('native_fleet_nodes', 'Live nodes of the fleet sharing this PostgreSQL ledger (heartbeat within the timeout).', () => fleet()?.live ?? 0);
      gauge('native_fleet_best_height', 'Best chain tip height among the fleet\'s live nodes.', () => fleet()?.bestHeight ?? 0);
      gauge('native_fleet_lag_blocks', 'Blocks this node\'s tip is behind the fleet\'s best tip.', () => fleet()?.lag ?? 0);
      gauge('native_fleet_behind', '1 while this node is too far behind the fleet\'s best tip to sell (503 node_syncing), else 0.', () => (fleet()?.behind ? 1 : 0));
      gauge('native_fleet_lease_holder', '1 while this node holds the fleet\'s signer lease (signs refunds and payouts), else 0.', () => (fleet()?.leaseHolder ? 1 : 0));
      gauge('native_fleet_ledger_bytes', 'Bytes of the ledger\'s tables in PostgreSQL (pg_total_relation_size: tables, indexes, TOAST).', () => fleet()?.ledgerBytes ?? 0);
      new Gauge({
        name: 'native_fleet_ledger_rows',
        help: 'Rows of the ledger\'s tables in PostgreSQL, by table (read every 30 s).',
        labelNames: ['table'],
        registers,
        collect() {
          this.reset();
          for (const [table, rows] of Object.entries(fleet()?.ledgerRows ?? {})) this.set({ table }, rows);
        },
      });
    }
    gauge('native_mempool_transactions', 'Transactions in the mempool.', () => sources.mempool.count);
    gauge('native_mempool_bytes', 'Bytes of the transactions in the mempool.', () => sources.mempool.bytes);
    gauge('native_refunds_pending', 'Refunds asked for or signed and not mined yet.', () => sources.refundsPending?.() ?? 0);
    gauge('native_refunds_stuck', 'Refunds owed that the payee cannot pay (services it could not refund are not quoted while any).', () => sources.refundsStuck?.() ?? 0);
    gauge('native_payments_served_then_lost', 'Payments whose call was served, then lost to a reorganization deeper than --confirmations (a conflicting transaction took their place): calls delivered unpaid, since the ledger was created.', () => sources.servedThenLost?.() ?? 0);
    gauge('native_ledger_gap_payments', 'Payments mined in stretches of chain the ledger never judged, neither served nor refunded until the operator decides (npx native-node ledger gap).', () => sources.ledgerGapPayments?.() ?? 0);
    gauge('native_stratum_connections', 'Open Stratum connections.', () => sources.mining?.().connections ?? 0);
    gauge('native_pool_hashrate_hps', 'Hashrate of the Stratum and RPC miners, from their shares (hashes per second).', () => sources.mining?.().hashrate ?? 0);
    new Counter({
      name: 'native_stratum_shares_total',
      help: 'Shares submitted by miners, by result.',
      labelNames: ['result'],
      registers,
      collect() {
        const m = sources.mining?.();
        this.reset();
        for (const result of ['accepted', 'rejected', 'stale'] as const) this.inc({ result }, m?.[result] ?? 0);
      },
    });
    const receipts = () => sources.receiptSigning?.();
    counter('native_x402_receipt_signatures_total', 'Hybrid (ML-DSA-87 + Ed25519) signatures of paid-call receipts; the calls settled in one turn of the event loop share one.', () => receipts()?.signatures ?? 0);
    counter('native_x402_receipts_signed_total', 'Paid-call receipts signed (each covered by one of native_x402_receipt_signatures_total).', () => receipts()?.receipts ?? 0);
    counter('native_x402_receipt_failures_total', 'Paid calls answered without a signed receipt part because signing it failed (the result is stored and returned all the same; the error is in the log).', () => receipts()?.failures ?? 0);
    counter('native_x402_quote_cache_hits_total', '402 answers to calls without payment served from a kept rendering (same quote, base URL, request and option choice).', () => sources.quoteCache?.()?.hits ?? 0);
    counter('native_x402_quote_cache_misses_total', '402 answers to calls without payment rendered anew (first of their kind, a changed price or offer window, or not kept).', () => sources.quoteCache?.()?.misses ?? 0);
    gauge('native_x402_quote_cache_entries', 'Rendered 402 answers kept.', () => sources.quoteCache?.()?.entries ?? 0);
    gauge('native_x402_quote_cache_bytes', 'Bytes of the rendered 402 answers kept (bodies, headers, keys).', () => sources.quoteCache?.()?.bytes ?? 0);
    new Gauge({
      name: 'native_payments',
      help: 'Payments in the ledger by status (settle_pending: USDC settlement being reconciled from Base; expired_unsettled: never used before validBefore).',
      labelNames: ['status'],
      registers,
      collect() {
        this.reset();
        for (const [status, n] of Object.entries(sources.paymentStatuses?.() ?? {})) if (status !== 'refused') this.set({ status }, n);
      },
    });
    this.httpRequests = new Counter({ name: 'native_http_requests_total', help: 'HTTP requests of the API, by route pattern and status.', labelNames: ['method', 'route', 'status'], registers });
    this.paidCalls = new Counter({ name: 'native_x402_paid_calls_total', help: 'Paid calls (requests carrying a payment), by service, rail and outcome.', labelNames: ['service', 'rail', 'outcome'], registers });
    this.quotes = new Counter({ name: 'native_x402_quotes_total', help: 'Quotes given (402 answers to requests without payment), by service.', labelNames: ['service'], registers });
    this.refundsSent = new Counter({ name: 'native_refunds_sent_total', help: 'Refunds sent after a paid service failed, by service.', labelNames: ['service'], registers });
    this.settleSeconds = new Histogram({
      name: 'native_x402_settle_duration_seconds',
      help: 'Time to answer a paid call (payment check, wait for the block, service run, settlement), by rail and outcome.',
      labelNames: ['rail', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 60],
      registers,
    });
  }

  /** The koa middleware counting requests; mount it first (outside the error middleware) to see final statuses. */
  middleware(): Koa.Middleware {
    return async (ctx, next) => {
      try {
        await next();
      } finally {
        this.record(ctx);
      }
    };
  }

  private record(ctx: Koa.Context): void {
    const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
    this.httpRequests.inc({ method: ctx.method, route: route === undefined ? 'unmatched' : String(route), status: String(ctx.status) });
  }

  /**
   * Counts one call answered by the paid-call core (its `observe` port), whatever carried it:
   * HTTP, any 402 dialect, MCP. A call without payment answered 402 is a quote; a call with one
   * is a paid call, by rail (`unknown` for a malformed carrier that did not say) and outcome.
   * The core reports only services its catalog knows, so unknown ids never become labels.
   */
  readonly recordPaidCall = (r: PaidCallRecord): void => {
    const service = r.serviceId;
    if (!r.paymentPresented) {
      if (r.outcome.kind === 'quote') this.quotes.inc({ service });
      return;
    }
    const rail = r.rail ?? 'unknown';
    const outcome = paidCallOutcome(r.outcome.status, 'body' in r.outcome ? r.outcome.body : undefined);
    this.paidCalls.inc({ service, rail, outcome });
    this.settleSeconds.observe({ rail, outcome }, r.seconds);
    if (outcome === 'refunded') this.refundsSent.inc({ service });
  };

  /** The Prometheus text exposition of every metric. */
  async text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** Builds the metrics of a node. */
export function createNodeMetrics(sources: MetricsSources): NodeMetrics {
  return new NodeMetrics(sources);
}

/** Options of the metrics listener. */
export interface MetricsServerOptions {
  readonly host: string;
  /** 0 picks a free port (see the `metrics listening` line). */
  readonly port: number;
}

/** The `GET /metrics` listener (call `start()`). */
export function createMetricsServer(opts: MetricsServerOptions, metrics: NodeMetrics, logger?: Logger): HttpServer {
  const router = new Router();
  router.get('/metrics', async (ctx) => {
    ctx.set('Content-Type', metrics.registry.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await metrics.text();
  });
  return createRouterServer({ host: opts.host, port: opts.port, bodyLimit: 1024, timeoutMs: 10_000, version: '' }, [router], logger);
}
