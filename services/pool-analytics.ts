/** native-pool-analytics: reserves, TVL, volume, LP APR estimate, five-size price-impact table. Not runnable yet: the on-chain AMM pools do not exist yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { tokenOrPoolInput } from './inputs.js';

/** native-pool-analytics. */
export const poolAnalytics = defineService({
  id: 'native-pool-analytics',
  name: 'Pool Analytics',
  category: 'analytics',
  priceBase: 1_500_000n,
  description: 'reserves, TVL, volume, LP APR estimate, five-size price-impact table',
  tags: ['pool', 'amm', 'reserves', 'tvl', 'volume', 'apr', 'price-impact', 'liquidity'],
  requestFormat: 'token symbol or pool (TOKEN/TOKEN or 64-hex id)',
  requestRequired: false,
  inputSchema: tokenOrPoolInput(),
});
