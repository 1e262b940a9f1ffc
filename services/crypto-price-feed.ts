/** native-crypto-price-feed: the USD price of any CoinGecko coin id (e.g. bitcoin, usd-coin) as JSON, with 24h change, market cap and volume. */
import { COINGECKO_SOURCE, quoteJson } from './cryptoQuotes.js';
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { ProviderCallErrorCode } from './providers/call.js';
import { callProvider, providersHealth, providersReady } from './providers/index.js';
import { ServiceError, type ServiceContext } from './types.js';

/** Coin id of an empty request. */
export const DEFAULT_COIN = 'bitcoin';

async function run(ctx: ServiceContext, input: unknown) {
  const id = typeof input === 'string' && input !== '' ? input.toLowerCase() : DEFAULT_COIN;
  const quotes = await callProvider(ctx, 'coins', async (p) => {
    const out = await p.coins.prices([id], ctx.signal);
    // CoinGecko answers {} for an id it does not know: the caller's input, refunded like any failed run.
    if (!out.has(id)) throw new ServiceError(ProviderCallErrorCode.NOT_FOUND, `CoinGecko knows no coin id "${id}" (ids are like bitcoin, ethereum, usd-coin; see its /coins/list)`);
    return out;
  });
  return { id, vsCurrency: 'usd', ...quoteJson(quotes.get(id)!), fetchedAt: new Date(ctx.now()).toISOString(), source: COINGECKO_SOURCE };
}

/** native-crypto-price-feed. */
export const cryptoPriceFeed = defineService({
  id: 'native-crypto-price-feed',
  name: 'Crypto Price Feed',
  category: 'market-data',
  priceBase: 500_000_000n,
  description: 'real-time crypto/USD price as JSON',
  tags: ['price', 'feed', 'crypto', 'usd', 'real-time'],
  requestFormat: `CoinGecko coin id, e.g. bitcoin or usd-coin (empty: ${DEFAULT_COIN})`,
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9-]{0,63}$', description: 'Coin id, e.g. bitcoin.' },
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  run,
  health: providersHealth('coins'),
  precheck: providersReady('coins'),
});
