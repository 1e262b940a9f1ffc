/** native-crypto-prices: external BTC/ETH/SOL/BNB/LTC prices plus native price and global market cap. Not runnable yet: it needs an external market-data provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { noInput } from './inputs.js';

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
});
