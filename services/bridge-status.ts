/** native-bridge-status: the 10 bridge networks with vault addresses, custody floats, fee and record counts. Not runnable yet: the bridge does not exist yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { noInput } from './inputs.js';

/** native-bridge-status. */
export const bridgeStatus = defineService({
  id: 'native-bridge-status',
  name: 'Bridge Status',
  category: 'bridge',
  priceBase: 1_200_000n,
  description: 'the 10 bridge networks with vault addresses, custody floats, fee and record counts',
  tags: ['bridge', 'vaults', 'custody', 'networks', 'cross-chain'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
});
