/** native-crypto-price: USD price with 24h change of BTC, ETH, SOL, BNB or LTC (CoinGecko), or of NATIVE (the chain's price). */
import { COINGECKO_SOURCE, nativeQuote, quoteJson } from './cryptoQuotes.js';
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { anyCase } from './inputs.js';
import { badResponse } from './providers/call.js';
import { MAJOR_IDS, type MajorSymbol } from './providers/coinGecko.js';
import { callProvider, providersHealth, providersReady } from './providers/index.js';
import type { ServiceContext } from './types.js';

/** Symbol of an empty request. */
export const DEFAULT_SYMBOL = 'BTC';

const symbolOf = (input: unknown) => (typeof input === 'string' && input !== '' ? input.toUpperCase() : DEFAULT_SYMBOL);

async function run(ctx: ServiceContext, input: unknown) {
  const symbol = symbolOf(input);
  if (symbol === 'NATIVE') return { ...nativeQuote(ctx), fetchedAt: new Date(ctx.now()).toISOString() };
  const id = MAJOR_IDS[symbol as MajorSymbol];
  // All five at once: the same cached answer then serves every symbol (and the descriptor's majors).
  const quotes = await callProvider(ctx, 'coins', (p) => p.coins.prices(Object.values(MAJOR_IDS), ctx.signal));
  const q = quotes.get(id);
  if (!q) throw badResponse('CoinGecko', `no price for ${id}`);
  return { symbol, id, ...quoteJson(q), fetchedAt: new Date(ctx.now()).toISOString(), source: COINGECKO_SOURCE };
}

const ready = providersReady('coins');

/** native-crypto-price. */
export const cryptoPrice = defineService({
  id: 'native-crypto-price',
  name: 'Crypto Price',
  category: 'pricing',
  priceBase: 200_000n,
  description: 'USD price with 24h change for a major asset (BTC, ETH, SOL, BNB, LTC, native)',
  tags: ['price', 'usd', 'btc', 'eth', 'sol', 'bnb', 'ltc', 'native', '24h'],
  requestFormat: `asset symbol: BTC, ETH, SOL, BNB, LTC or NATIVE (empty: ${DEFAULT_SYMBOL})`,
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 6, pattern: anyCase(['BTC', 'ETH', 'SOL', 'BNB', 'LTC', 'NATIVE']), description: 'BTC, ETH, SOL, BNB, LTC or NATIVE.' },
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  run,
  health: providersHealth('coins'),
  // NATIVE's price is the node's own: it needs no provider.
  precheck: async (ctx, input) => (symbolOf(input) === 'NATIVE' ? undefined : ready(ctx)),
});
