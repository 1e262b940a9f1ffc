/** native-gas-price: gas price in gwei on `base` and `ethereum` with standard-transfer USD estimate. Not runnable yet: it needs an EVM RPC provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { anyCase } from './inputs.js';

/** native-gas-price. */
export const gasPrice = defineService({
  id: 'native-gas-price',
  name: 'EVM Gas Price',
  category: 'pricing',
  priceBase: 200_000n,
  description: 'gas price in gwei on `base` and `ethereum` with standard-transfer USD estimate',
  tags: ['gas', 'gwei', 'evm', 'base', 'ethereum', 'fees'],
  requestFormat: 'optional network: base or ethereum (empty: both)',
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 8, pattern: anyCase(['base', 'ethereum']), description: 'base or ethereum.' },
});
