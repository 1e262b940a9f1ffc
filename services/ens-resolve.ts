/** native-ens-resolve: name-service forward and reverse resolution with avatar when available. Not runnable yet: it needs an Ethereum RPC provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { evmAddressInput } from './inputs.js';

/** native-ens-resolve. */
export const ensResolve = defineService({
  id: 'native-ens-resolve',
  name: 'ENS Resolver',
  category: 'explorer',
  priceBase: 400_000n,
  description: 'name-service forward and reverse resolution with avatar when available',
  tags: ['ens', 'name-service', 'resolve', 'reverse', 'avatar', 'ethereum'],
  requestFormat: 'name ending .eth, or a 0x address',
  requestRequired: false,
  inputSchema: { anyOf: [{ type: 'string', maxLength: 255, pattern: '^[^\\s./]+(\\.[^\\s./]+)*\\.[Ee][Tt][Hh]$' }, evmAddressInput()], description: 'ENS name ending .eth, or an EVM address.' },
});
