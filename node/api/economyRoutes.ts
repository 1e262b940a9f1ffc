/**
 * The economy's HTTP read API: `/api/v1/tokens`, `/api/v1/token/:symbol`, `/api/v1/pools`,
 * `/api/v1/pool/:id`, `/api/v1/swaps?pool=&since=&limit=`, `/api/v1/bridge[?network=]`,
 * `/api/v1/staking`, `/api/v1/price`; and the economy fields `/api/v1/account/:address` adds
 * (`accountEconomyFields`). Amounts are base-unit strings with decimal strings beside them.
 * `economyErrorStatuses` gives the HTTP statuses of the economy's codes (422: a rule refused the tx).
 */
import { Router } from '@koa/router';
import { EconomyErrorCode, NodeError } from '../../consensus/errors.js';
import { poolAssets } from '../../consensus/economyState.js';
import { SYMBOL_RE } from '../../consensus/txTypes/economyRules.js';
import type { ChainParams } from '../../consensus/params.js';
import type { EconomyReader, SwapView } from '../../chain/economyReader.js';
import { HttpErrorCode, type ErrorStatuses } from './app.js';
import { formatUnits } from './economyAccount.js';

/** Codes of the economy's read API. */
export const EconomyApiErrorCode = {
  TOKEN_NOT_FOUND: 'token_not_found',
  POOL_NOT_FOUND: 'pool_not_found',
} as const;

/** HTTP statuses of the economy's codes, handed to the app: a consensus rule refused the tx (422), or nothing to read (404). */
export const economyErrorStatuses: ErrorStatuses = {
  ...Object.fromEntries(Object.values(EconomyErrorCode).map((c) => [c, 422])),
  token_not_found: 404,
  pool_not_found: 404,
};

function intQuery(v: unknown, name: string, max = 2 ** 31): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string' || !/^\d{1,10}$/.test(v) || Number(v) > max) throw new NodeError(HttpErrorCode.INVALID_QUERY, `${name} must be a non-negative integer`);
  return Number(v);
}

function symbolParam(v: string): string {
  const s = v.toUpperCase();
  if (!SYMBOL_RE.test(s)) throw new NodeError(EconomyErrorCode.BAD_SYMBOL, `"${v}" is not a token symbol (2-10 characters A-Z 0-9)`);
  return s;
}

function poolParam(v: string): string {
  const id = v.toUpperCase();
  const assets = poolAssets(id) ?? poolAssets(id.split('-').reverse().join('-'));
  if (!assets) throw new NodeError(HttpErrorCode.INVALID_QUERY, `"${v}" is not a pool id (two symbols joined by "-", e.g. NATIVE-USDN)`);
  return assets.join('-');
}

/** The economy router (see module comment). */
export function createEconomyRouter(eco: EconomyReader, params: ChainParams): Router {
  const router = new Router();
  router.get('/api/v1/tokens', async (ctx) => {
    const tokens = await eco.listTokens({ includeHidden: ctx.query.hidden === '1' || ctx.query.hidden === 'true' });
    ctx.body = { count: tokens.length, tokens };
  });
  router.get('/api/v1/token/:symbol', async (ctx) => {
    const symbol = symbolParam(ctx.params.symbol);
    const token = await eco.getToken(symbol);
    if (!token) throw new NodeError(EconomyApiErrorCode.TOKEN_NOT_FOUND, `no token ${symbol} on ${params.network}`);
    const [topHolders, pools, stable] = await Promise.all([eco.topHolders(symbol, 10), eco.listPools({ asset: symbol }), eco.stableHealth(symbol)]);
    ctx.body = { token, ...(stable ? { stable } : {}), topHolders: topHolders.map((h) => ({ ...h, balanceDecimal: formatUnits(h.balance, token.decimals) })), pools };
  });
  router.get('/api/v1/pools', async (ctx) => {
    const asset = typeof ctx.query.asset === 'string' && ctx.query.asset ? ctx.query.asset.toUpperCase() : undefined;
    const [pools, nativeUsd] = await Promise.all([eco.listPools(asset ? { asset } : {}), eco.nativeUsd()]);
    ctx.body = { count: pools.length, nativeUsd, pools };
  });
  router.get('/api/v1/pool/:id', async (ctx) => {
    const id = poolParam(ctx.params.id);
    const pool = await eco.getPool(id);
    if (!pool) throw new NodeError(EconomyApiErrorCode.POOL_NOT_FOUND, `no pool ${id} on ${params.network}`);
    const [vol, swaps, lastCandles] = await Promise.all([eco.volume24h(id), eco.swaps({ pool: id, limit: 20 }), eco.recentCandles(id, 24)]);
    ctx.body = { pool, volume24h: { a: vol.a.toString(), b: vol.b.toString(), swaps: vol.swaps }, recentSwaps: swaps, candles: lastCandles };
  });
  /**
   * Each swap row is one pool's leg; a transaction that swaps through several pools is one swap,
   * its `route` (what went in, what came out, through which pools, as the explorer and the
   * services describe it), and `leg` is the row's place in it.
   */
  const withRoutes = async (swaps: readonly SwapView[]) => {
    const byHeight = new Map<number, readonly SwapView[]>();
    for (const h of new Set(swaps.map((s) => s.height))) byHeight.set(h, await eco.blockSwaps(h));
    return swaps.map((s) => {
      const legs = (byHeight.get(s.height) ?? []).filter((l) => l.tx === s.tx);
      const first = legs[0] ?? s;
      const last = legs[legs.length - 1] ?? s;
      const leg = Math.max(0, legs.findIndex((l) => l.pool === s.pool && l.assetIn === s.assetIn && l.amountIn === s.amountIn));
      return { ...s, leg, route: { assetIn: first.assetIn, assetOut: last.assetOut, amountIn: first.amountIn, amountOut: last.amountOut, hops: Math.max(1, legs.length), pools: legs.length ? legs.map((l) => l.pool) : [s.pool] } };
    });
  };
  router.get('/api/v1/swaps', async (ctx) => {
    const pool = typeof ctx.query.pool === 'string' && ctx.query.pool ? poolParam(ctx.query.pool) : undefined;
    const since = intQuery(ctx.query.since, 'since');
    const limit = intQuery(ctx.query.limit, 'limit', 1000);
    const swaps = await eco.swaps({ ...(pool ? { pool } : {}), ...(since !== undefined ? { since } : {}), ...(limit !== undefined ? { limit } : {}) });
    ctx.body = { pool: pool ?? null, since: since ?? null, count: swaps.length, swaps: await withRoutes(swaps) };
  });
  router.get('/api/v1/bridge', async (ctx) => {
    const network = typeof ctx.query.network === 'string' && ctx.query.network ? ctx.query.network.toLowerCase() : undefined;
    const networks = await eco.bridgeNetworks();
    if (network && !networks.some((n) => n.name === network)) throw new NodeError(HttpErrorCode.INVALID_QUERY, `unknown bridge network ${network} (${networks.map((n) => n.name).join(', ')})`);
    const records = network ? await eco.bridgeRecords(network, { limit: intQuery(ctx.query.limit, 'limit', 1000) ?? 50 }) : undefined;
    ctx.body = { networks, ...(records ? { network, records } : {}) };
  });
  router.get('/api/v1/staking', async (ctx) => {
    const s = await eco.staking();
    ctx.body = { staked: s.staked.toString(), locked: s.locked.toString(), count: s.count, rewardsPaid: s.rewardsPaid.toString(), tiers: s.tiers };
  });
  router.get('/api/v1/price', async (ctx) => {
    ctx.body = await eco.nativeUsd();
  });
  return router;
}
