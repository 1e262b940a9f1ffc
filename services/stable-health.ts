/** native-stable-health: collateral backing %, redeemable supply, health flag per on-chain stablecoin. Not runnable yet: on-chain stablecoins do not exist on this chain yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { noInput } from './inputs.js';

/** native-stable-health. */
export const stableHealth = defineService({
  id: 'native-stable-health',
  name: 'Stablecoin Health',
  category: 'audit',
  priceBase: 1_500_000n,
  description: 'collateral backing %, redeemable supply, health flag per on-chain stablecoin',
  tags: ['stablecoin', 'collateral', 'backing', 'redeemable', 'health', 'audit'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
});
