/**
 * CoinGecko API v3 (docs.coingecko.com): `/simple/price` (USD price, 24h change, market cap,
 * volume, last update per coin id) and `/global` (total market cap). Keyless use is rate limited
 * (a few calls a minute from one IP); a demo or pro key goes in its header. Prices are cached
 * ten seconds, and the last answer for the five majors is kept for the protocol descriptor's
 * `priceFeed.majors`.
 */
import { z } from 'zod';
import type { OutboundClient } from '../outbound/types.js';
import { badResponse, joinUrl, providerJson } from './call.js';
import type { CoinsProviderOptions } from './options.js';

const PROVIDER = 'CoinGecko';

/** The majors of the catalog and their CoinGecko ids. */
export const MAJOR_IDS = Object.freeze({ BTC: 'bitcoin', ETH: 'ethereum', SOL: 'solana', BNB: 'binancecoin', LTC: 'litecoin' } as const);
/** A major's symbol. */
export type MajorSymbol = keyof typeof MAJOR_IDS;

const num = z.number().finite();
const coinSchema = z.object({
  usd: num,
  usd_24h_change: num.nullable().optional(),
  usd_market_cap: num.nullable().optional(),
  usd_24h_vol: num.nullable().optional(),
  last_updated_at: num.nullable().optional(),
});
const simplePriceSchema = z.record(z.string(), coinSchema);
const globalSchema = z.object({
  data: z.object({
    active_cryptocurrencies: num.optional(),
    total_market_cap: z.record(z.string(), num),
    total_volume: z.record(z.string(), num).optional(),
    market_cap_percentage: z.record(z.string(), num).optional(),
    market_cap_change_percentage_24h_usd: num.nullable().optional(),
    updated_at: num.optional(),
  }),
});

/** One coin's USD quote. */
export interface CoinQuote {
  readonly id: string;
  readonly usd: number;
  readonly change24hPct: number | null;
  readonly marketCapUsd: number | null;
  readonly volume24hUsd: number | null;
  /** Unix ms of CoinGecko's last update, when given. */
  readonly updatedAt: number | null;
}

/** Global market figures. */
export interface GlobalMarket {
  readonly totalMarketCapUsd: number;
  readonly totalVolumeUsd: number | null;
  readonly marketCapChange24hPct: number | null;
  readonly btcDominancePct: number | null;
  readonly activeCryptocurrencies: number | null;
  readonly updatedAt: number | null;
}

/** The CoinGecko adapter. */
export interface CoinGecko {
  /** Quotes of the given ids; ids CoinGecko does not know are absent from the map. */
  prices(ids: readonly string[], signal?: AbortSignal): Promise<Map<string, CoinQuote>>;
  global(signal?: AbortSignal): Promise<GlobalMarket>;
  /** The last quotes of the five majors fetched by this node and when (Unix ms), if any. */
  lastMajors(): { readonly at: number; readonly usd: Readonly<Record<MajorSymbol, number | null>> } | undefined;
  probe(signal?: AbortSignal): Promise<void>;
}

/** Creates the adapter over the outbound client. */
export function createCoinGecko(opts: CoinsProviderOptions, outbound: OutboundClient, now: () => number = Date.now): CoinGecko {
  const headers: Record<string, string> = opts.apiKey ? { [opts.apiKeyHeader]: opts.apiKey } : {};
  let majors: { at: number; usd: Record<MajorSymbol, number | null> } | undefined;
  const ms = (s: number | null | undefined) => (typeof s === 'number' ? Math.round(s * 1000) : null);
  return {
    async prices(ids, signal) {
      const u = new URL(joinUrl(opts.url, 'simple/price'));
      u.searchParams.set('ids', [...ids].sort().join(','));
      u.searchParams.set('vs_currencies', 'usd');
      u.searchParams.set('include_market_cap', 'true');
      u.searchParams.set('include_24hr_vol', 'true');
      u.searchParams.set('include_24hr_change', 'true');
      u.searchParams.set('include_last_updated_at', 'true');
      const doc = await providerJson(outbound, PROVIDER, { url: u.toString(), headers, signal, cacheTtlMs: 10_000, maxBytes: 256 * 1024 }, simplePriceSchema);
      const out = new Map<string, CoinQuote>();
      for (const id of ids) {
        const c = doc[id];
        if (c) out.set(id, { id, usd: c.usd, change24hPct: c.usd_24h_change ?? null, marketCapUsd: c.usd_market_cap ?? null, volume24hUsd: c.usd_24h_vol ?? null, updatedAt: ms(c.last_updated_at) });
      }
      const majorIds = Object.values(MAJOR_IDS) as string[];
      if (majorIds.every((id) => ids.includes(id))) {
        const usd = Object.fromEntries(Object.entries(MAJOR_IDS).map(([sym, id]) => [sym, out.get(id)?.usd ?? null])) as Record<MajorSymbol, number | null>;
        majors = { at: now(), usd };
      }
      return out;
    },
    async global(signal) {
      const doc = await providerJson(outbound, PROVIDER, { url: joinUrl(opts.url, 'global'), headers, signal, cacheTtlMs: 60_000, maxBytes: 256 * 1024 }, globalSchema);
      const d = doc.data;
      const usd = d.total_market_cap.usd;
      if (usd === undefined) throw badResponse(PROVIDER, 'data.total_market_cap.usd is missing');
      return {
        totalMarketCapUsd: usd,
        totalVolumeUsd: d.total_volume?.usd ?? null,
        marketCapChange24hPct: d.market_cap_change_percentage_24h_usd ?? null,
        btcDominancePct: d.market_cap_percentage?.btc ?? null,
        activeCryptocurrencies: d.active_cryptocurrencies ?? null,
        updatedAt: ms(d.updated_at),
      };
    },
    lastMajors: () => majors,
    async probe(signal) {
      // One real quote of the five majors: as cheap as /ping, and it keeps the descriptor's priceFeed.majors fresh.
      await this.prices(Object.values(MAJOR_IDS), signal);
    },
  };
}
