/** native-evm-balance: native coin and USDC balance of an EVM address on `base`. Not runnable yet: it needs an EVM RPC provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { evmAddressInput } from './inputs.js';

/** native-evm-balance. */
export const evmBalance = defineService({
  id: 'native-evm-balance',
  name: 'EVM Balance',
  category: 'portfolio',
  priceBase: 200_000n,
  description: 'native coin and USDC balance of an EVM address on `base`',
  tags: ['evm', 'balance', 'base', 'usdc', 'eth', 'wallet'],
  requestFormat: 'EVM address (0x followed by 40 hex digits)',
  requestRequired: false,
  inputSchema: evmAddressInput(),
});
