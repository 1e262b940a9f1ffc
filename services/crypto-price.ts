/** native-crypto-price: USD price with 24h change for a major asset (BTC, ETH, SOL, BNB, LTC, native). Not runnable yet: it needs an external market-data provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { anyCase } from './inputs.js';

/** native-crypto-price. */
export const cryptoPrice = defineService({
  id: 'native-crypto-price',
  name: 'Crypto Price',
  category: 'pricing',
  priceBase: 200_000n,
  description: 'USD price with 24h change for a major asset (BTC, ETH, SOL, BNB, LTC, native)',
  tags: ['price', 'usd', 'btc', 'eth', 'sol', 'bnb', 'ltc', 'native', '24h'],
  requestFormat: 'asset symbol: BTC, ETH, SOL, BNB, LTC or NATIVE',
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 6, pattern: anyCase(['BTC', 'ETH', 'SOL', 'BNB', 'LTC', 'NATIVE']), description: 'BTC, ETH, SOL, BNB, LTC or NATIVE.' },
});
