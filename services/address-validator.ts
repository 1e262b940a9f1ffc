/** native-address-validator: validates an address of this chain or a bridge network (Solana, EVM, Bitcoin, Litecoin). */
import { classifyAddress } from './addresses.js';
import { defineService } from './define.js';
import { pureHealth } from './health.js';
import type { ServiceContext } from './types.js';

async function run(ctx: ServiceContext, input: unknown) {
  const a = classifyAddress(String(input));
  const out: Record<string, unknown> = {
    address: a.input,
    valid: a.valid,
    family: a.family,
    network: a.network,
    networks: a.networks,
    type: a.type,
    normalized: a.normalized,
    encoding: a.encoding,
    ...a.details,
    warnings: [...a.warnings],
  };
  if (a.reason) out.reason = a.reason;
  if (a.family === 'native') {
    // Whether this node's chain would accept it (mainnet `native1…`, other networks `tnative1…`).
    out.thisNetwork = a.valid && a.details.hrp === ctx.params.hrp;
    out.nodeNetwork = ctx.params.network;
  }
  return out;
}

/** native-address-validator. */
export const addressValidator = defineService({
  id: 'native-address-validator',
  name: 'Address Validator',
  category: 'utility',
  priceBase: 400_000n,
  description: 'validates an address on the chain and bridge networks (Solana, EVM, BTC, LTC)',
  tags: ['address', 'validation', 'checksum', 'bech32', 'bech32m', 'eip-55', 'solana', 'evm', 'bitcoin', 'litecoin', 'utility'],
  requestFormat: 'the address: native1…/tnative1…, 0x… (EVM), Solana base58, Bitcoin or Litecoin (base58 or bech32)',
  requestRequired: true,
  inputSchema: {
    type: 'string',
    minLength: 20,
    maxLength: 128,
    pattern: '^[0-9A-Za-z]+$',
    description: 'The address to check (letters and digits only).',
  },
  run,
  health: pureHealth,
});
