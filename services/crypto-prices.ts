/** native-crypto-prices: BTC, ETH, SOL, BNB and LTC in USD with 24h change (CoinGecko), NATIVE from the chain's price, and the global crypto market cap. */
import { COINGECKO_SOURCE, nativeQuote, quoteJson } from './cryptoQuotes.js';
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { noInput } from './inputs.js';
import { badResponse } from './providers/call.js';
import { MAJOR_IDS } from './providers/coinGecko.js';
import { callProvider, providersHealth, providersReady } from './providers/index.js';
import type { ServiceContext } from './types.js';

async function run(ctx: ServiceContext) {
  const { quotes, global } = await callProvider(ctx, 'coins', async (p) => ({
    quotes: await p.coins.prices(Object.values(MAJOR_IDS), ctx.signal),
    global: await p.coins.global(ctx.signal),
  }));
  const prices: Record<string, ReturnType<typeof quoteJson> & { id: string }> = {};
  for (const [sym, id] of Object.entries(MAJOR_IDS)) {
    const q = quotes.get(id);
    if (!q) throw badResponse('CoinGecko', `no price for ${id}`);
    prices[sym] = { id, ...quoteJson(q) };
  }
  return {
    prices,
    native: nativeQuote(ctx),
    global: {
      totalMarketCapUsd: global.totalMarketCapUsd,
      totalVolume24hUsd: global.totalVolumeUsd,
      marketCapChange24hPct: global.marketCapChange24hPct,
      btcDominancePct: global.btcDominancePct,
      activeCryptocurrencies: global.activeCryptocurrencies,
      updatedAt: global.updatedAt === null ? null : new Date(global.updatedAt).toISOString(),
    },
    fetchedAt: new Date(ctx.now()).toISOString(),
    source: `${COINGECKO_SOURCE} and /global; NATIVE: the node's price source`,
  };
}

/** native-crypto-prices. */
export const cryptoPrices = defineService({
  id: 'native-crypto-prices',
  name: 'Crypto Prices',
  category: 'pricing',
  priceBase: 800_000n,
  description: 'external BTC/ETH/SOL/BNB/LTC prices plus native price and global market cap',
  tags: ['prices', 'btc', 'eth', 'sol', 'bnb', 'ltc', 'market-cap', 'crypto'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  run,
  health: providersHealth('coins'),
  precheck: providersReady('coins'),
});
