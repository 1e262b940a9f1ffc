/** native-price-history: hourly OHLC candles from executed swaps. Not runnable yet: it needs executed swaps of the on-chain AMM, which does not exist yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { noInput } from './inputs.js';

/** native-price-history. */
export const priceHistory = defineService({
  id: 'native-price-history',
  name: 'Price History',
  category: 'market-data',
  priceBase: 1_500_000n,
  description: 'hourly OHLC candles from executed swaps',
  tags: ['price', 'history', 'ohlc', 'candles', 'hourly', 'swaps', 'chart'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
});
