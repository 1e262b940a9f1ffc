/** native-crypto-price-feed: real-time crypto/USD price as JSON. Not runnable yet: it needs an external market-data provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';

/** native-crypto-price-feed. */
export const cryptoPriceFeed = defineService({
  id: 'native-crypto-price-feed',
  name: 'Crypto Price Feed',
  category: 'market-data',
  priceBase: 500_000_000n,
  description: 'real-time crypto/USD price as JSON',
  tags: ['price', 'feed', 'crypto', 'usd', 'real-time'],
  requestFormat: 'coin id, e.g. bitcoin or usd-coin',
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9-]{0,63}$', description: 'Coin id, e.g. bitcoin.' },
});
