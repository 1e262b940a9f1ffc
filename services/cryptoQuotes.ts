/** What the crypto price services share: NATIVE's price from the node's price source, and a CoinGecko quote as the services show it. */
import type { CoinQuote } from './providers/coinGecko.js';
import type { ServiceContext } from './types.js';

/** Source line of CoinGecko quotes. */
export const COINGECKO_SOURCE = 'CoinGecko API (simple/price)';

/** NATIVE in USD from the node's price source (the chain's price; no 24h change is known for it yet). */
export function nativeQuote(ctx: ServiceContext) {
  const p = ctx.nativeUsd.get();
  return { symbol: 'NATIVE', usd: Number(p.microUsd) / 1e6, usdMicro: p.microUsd.toString(), change24hPct: null, source: p.source, live: p.live };
}

/** A CoinGecko quote as the services return it. */
export function quoteJson(q: CoinQuote) {
  return {
    usd: q.usd,
    change24hPct: q.change24hPct,
    marketCapUsd: q.marketCapUsd,
    volume24hUsd: q.volume24hUsd,
    updatedAt: q.updatedAt === null ? null : new Date(q.updatedAt).toISOString(),
  };
}
