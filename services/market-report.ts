/** native-market-report: composite markdown report. Not runnable yet: its market data (AMM pools, swaps, external prices) is not available yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { noInput } from './inputs.js';

/** native-market-report. */
export const marketReport = defineService({
  id: 'native-market-report',
  name: 'Market Report',
  category: 'reports',
  priceBase: 5_000_000n,
  description: 'composite markdown report',
  tags: ['market', 'report', 'markdown', 'summary', 'analysis'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
});
