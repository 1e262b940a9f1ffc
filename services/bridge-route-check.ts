/** native-bridge-route-check: feasibility, estimated time and fees of a cross-chain route. Not runnable yet: the bridge does not exist yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';

/** native-bridge-route-check. */
export const bridgeRouteCheck = defineService({
  id: 'native-bridge-route-check',
  name: 'Bridge Route Check',
  category: 'bridge',
  priceBase: 500_000_000n,
  description: 'feasibility, estimated time and fees of a cross-chain route',
  tags: ['bridge', 'route', 'cross-chain', 'fees', 'feasibility'],
  requestFormat: 'source chain, destination chain and amount joined by hyphens, e.g. "ethereum-solana-100"',
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 80, pattern: '^[A-Za-z0-9]{2,20}-[A-Za-z0-9]{2,20}-[0-9]{1,15}(\\.[0-9]{1,18})?$', description: 'source-destination-amount, e.g. ethereum-solana-100.' },
});
