/** native-price-feed: live native price from deepest AMM pool with 24h change, TVL, volume. Not runnable yet: it needs the on-chain AMM pools, which do not exist yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { noInput } from './inputs.js';

/** native-price-feed. */
export const priceFeed = defineService({
  id: 'native-price-feed',
  name: 'Native Price Feed',
  category: 'pricing',
  priceBase: 600_000n,
  description: 'live native price from deepest AMM pool with 24h change, TVL, volume',
  tags: ['price', 'native', 'amm', 'pool', 'tvl', 'volume', '24h'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
});
