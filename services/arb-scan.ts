/** native-arb-scan: cross-pool implied prices and widest spot spread. Not runnable yet: the on-chain AMM pools do not exist yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { noInput } from './inputs.js';

/** native-arb-scan. */
export const arbScan = defineService({
  id: 'native-arb-scan',
  name: 'Arbitrage Scan',
  category: 'trading',
  priceBase: 2_000_000n,
  description: 'cross-pool implied prices and widest spot spread',
  tags: ['arbitrage', 'spread', 'pools', 'prices', 'trading', 'amm'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
});
