/** native-swap-quote: exact AMM quote (output, price impact, fee, route, minimum received at a stated slippage) of `AMOUNT FROM -> TO`. */
import { defineService } from './define.js';
import { TOKEN_SYMBOL_PATTERN } from './inputs.js';
import { chainHealth } from './health.js';
import type { EconomyReader } from '../chain/economyReader.js';
import { decimalsOf, economyOf, formatUnits, inputRefusal, parseUnits, round } from './market/economy.js';
import { bestQuote, frozenTokens } from './market/quote.js';
import { ServiceError, type ServiceContext } from './types.js';


/** Most routes listed in an answer (every route is priced; the best is always the quote). */
export const MAX_LISTED_ROUTES = 50;

/** Slippage tolerance of the stated minimum received, basis points. */
export const QUOTE_SLIPPAGE_BPS = 50;

/** `100 NATIVE -> USDN` (also `=>`, `→`, `>`; symbols in any case) split into its parts. */
export function parseSwapRequest(text: string): { amount: string; from: string; to: string } | undefined {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s+(\S+?)\s*(?:->|=>|→|>)\s*(\S+)\s*$/.exec(text);
  return m ? { amount: m[1], from: m[2].toUpperCase(), to: m[3].toUpperCase() } : undefined;
}

/** The request's assets and amount in smallest units, or why this chain cannot quote it (an unknown token, a token its issuer froze, too many decimals, the same asset twice). */
async function resolveRequest(eco: EconomyReader, text: string): Promise<{ req: { amount: string; from: string; to: string }; df: number; dt: number; amountIn: bigint } | { code: string; reason: string }> {
  const req = parseSwapRequest(text)!;
  if (req.from === req.to) return { code: 'same_asset', reason: 'FROM and TO are the same asset' };
  const [df, dt] = await Promise.all([decimalsOf(eco, req.from), decimalsOf(eco, req.to)]);
  if (df === undefined || dt === undefined) return { code: 'unknown_token', reason: `no token ${df === undefined ? req.from : req.to} on this chain` };
  // The chain refuses a swap of a frozen token (token_frozen): no quote of one is feasible.
  const frozen = await frozenTokens(eco);
  const halted = [req.from, req.to].find((a) => frozen.has(a));
  if (halted) return { code: 'token_frozen', reason: `token ${halted} is frozen by its issuer: this chain refuses swaps of it` };
  const amountIn = parseUnits(req.amount, df);
  if (amountIn === undefined) return { code: 'too_many_decimals', reason: `${req.from} has ${df} decimals: ${req.amount} has more` };
  if (amountIn === 0n) return { code: 'zero_amount', reason: 'the amount is zero' };
  return { req, df, dt, amountIn };
}

/** Why no path of this chain's pools gives a quote (`no_route`: none joins the assets; `insufficient_liquidity`: none can fill the amount). */
function noRoute(from: string, to: string, considered: number): { code: string; reason: string } {
  return considered ? { code: 'insufficient_liquidity', reason: `no pool route from ${from} to ${to} can fill this amount` } : { code: 'no_route', reason: `no pool route from ${from} to ${to} (1-3 hops)` };
}

/** Refuses, before any quote, a request this chain cannot quote (400 `invalid_request`): unknown or frozen tokens, a bad amount, no route that fills it. */
async function precheck(ctx: ServiceContext, input: unknown): Promise<void> {
  const eco = economyOf(ctx);
  const r = await resolveRequest(eco, String(input));
  if ('code' in r) throw inputRefusal(r.code, r.reason);
  const { best, considered } = await bestQuote(eco, r.req.from, r.req.to, r.amountIn, ctx.params.economy.swapFeeBps);
  if (!best) {
    const n = noRoute(r.req.from, r.req.to, considered.length);
    throw inputRefusal(n.code, n.reason);
  }
}

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const height = ctx.chain.tip.height;
  const resolved = await resolveRequest(eco, String(input));
  // Reached only by a paid call whose payment skipped the precheck: no answer, so a refund.
  if ('code' in resolved) throw new ServiceError(resolved.code, resolved.reason);
  const { req, df, dt, amountIn } = resolved;
  const base = { request: String(input), from: req.from, to: req.to, amountIn: req.amount, height };
  const feeBps = ctx.params.economy.swapFeeBps;
  const { best, considered } = await bestQuote(eco, req.from, req.to, amountIn, feeBps);
  // Shorter paths first; a chain with many pools lists the first MAX_LISTED_ROUTES (all are priced).
  const routes = considered.slice(0, MAX_LISTED_ROUTES).map((c) => ({ path: c.path.join(' -> '), available: c.available, ...(c.amountOut ? { amountOut: formatUnits(BigInt(c.amountOut), dt) } : {}) }));
  // Refused before any quote; reached when the pools changed since (or a payment skipped the precheck): no quote, so a refund.
  if (!best) {
    const n = noRoute(req.from, req.to, considered.length);
    throw new ServiceError(n.code, n.reason);
  }
  const minOut = (best.amountOut * BigInt(10_000 - QUOTE_SLIPPAGE_BPS)) / 10_000n;
  const decimals = async (a: string) => (await decimalsOf(eco, a))!;
  const hops = await Promise.all(best.hops.map(async (h) => ({ pool: `${h.pool.a}-${h.pool.b}`, assetIn: h.assetIn, amountIn: formatUnits(h.amountIn, await decimals(h.assetIn)), assetOut: h.assetOut, amountOut: formatUnits(h.amountOut, await decimals(h.assetOut)), fee: formatUnits(h.fee, await decimals(h.assetIn)), feeAsset: h.assetIn })));
  const execPrice = Number(best.amountOut) / 10 ** dt / (Number(amountIn) / 10 ** df);
  return {
    ...base,
    feasible: true,
    amountOut: formatUnits(best.amountOut, dt),
    amountOutUnits: best.amountOut.toString(),
    executionPrice: round(execPrice, 10),
    priceNote: `${req.to} per ${req.from}`,
    priceImpactPct: round(best.priceImpactPct, 4),
    feeBps,
    fees: hops.map((h) => ({ amount: h.fee, asset: h.feeAsset, pool: h.pool })),
    route: best.path.length === 2 ? 'direct' : `via ${best.path.slice(1, -1).join(', ')}`,
    path: best.path,
    hops,
    routes,
    routesConsidered: considered.length,
    slippageBps: QUOTE_SLIPPAGE_BPS,
    minimumReceived: formatUnits(minOut, dt),
    minimumReceivedUnits: minOut.toString(),
    method: 'exact constant-product output per hop as consensus computes it (floor, fee kept by the pool); price impact = 1 - output / output at spot after fees; the best of every path of 1-3 hops over this chain\'s pools (the paths its swap transaction accepts), each asset at most once',
  };
}

/** native-swap-quote. */
export const swapQuote = defineService({
  id: 'native-swap-quote',
  name: 'Swap Quote',
  category: 'trading',
  priceBase: 600_000n,
  description: 'exact AMM quote with outcome, price impact, fees',
  tags: ['swap', 'quote', 'amm', 'price-impact', 'fees', 'trading', 'dex'],
  requestFormat: 'positive amount, space, FROM, arrow, TO (assets of this chain: NATIVE or a token issued on it), e.g. "100 NATIVE -> USDN"',
  requestRequired: true,
  inputSchema: { type: 'string', maxLength: 80, pattern: `^(?!0+(\\.0+)?\\s)[0-9]{1,20}(\\.[0-9]{1,18})?\\s+${TOKEN_SYMBOL_PATTERN}\\s*(->|=>|→|>)\\s*${TOKEN_SYMBOL_PATTERN}$`, description: 'Positive amount, FROM symbol, arrow, TO symbol, both tokens of this chain: 100 NATIVE -> USDN.' },
  precheck,
  run,
  health: chainHealth,
});
