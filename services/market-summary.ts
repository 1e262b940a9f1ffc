/** native-market-summary: price, TVL, 24h volume, top pools, latest swaps. Not runnable yet: it needs the on-chain AMM pools, which do not exist yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { noInput } from './inputs.js';

/** native-market-summary. */
export const marketSummary = defineService({
  id: 'native-market-summary',
  name: 'Market Summary',
  category: 'market-data',
  priceBase: 1_500_000n,
  description: 'price, TVL, 24h volume, top pools, latest swaps',
  tags: ['market', 'price', 'tvl', 'volume', 'pools', 'swaps', 'amm'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
});
