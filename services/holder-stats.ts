/** native-holder-stats: holder count, top-10 concentration, HHI, largest wallets. Not runnable yet: it needs a holder index, which the chain does not keep yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { tokenOrPoolInput } from './inputs.js';

/** native-holder-stats. */
export const holderStats = defineService({
  id: 'native-holder-stats',
  name: 'Holder Stats',
  category: 'analytics',
  priceBase: 2_000_000n,
  description: 'holder count, top-10 concentration, HHI, largest wallets',
  tags: ['holders', 'concentration', 'hhi', 'whales', 'distribution', 'token'],
  requestFormat: 'token symbol or pool (TOKEN/TOKEN or 64-hex id)',
  requestRequired: false,
  inputSchema: tokenOrPoolInput(),
});
