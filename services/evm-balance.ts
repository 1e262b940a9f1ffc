/** native-evm-balance: ETH and USDC balances of an EVM address on Base, read at one block over the operator's Base RPC. */
import type { Address } from 'viem';
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { evmAddressInput } from './inputs.js';
import { formatUnits } from './providers/decimal.js';
import { loadViem, USDC_BASE } from './providers/evm.js';
import { callProvider, inputAndProvidersReady, providersHealth } from './providers/index.js';
import type { ServiceContext } from './types.js';

async function run(ctx: ServiceContext, input: unknown) {
  const address = (await loadViem()).getAddress(String(input)) as Address;
  const b = await callProvider(ctx, 'evmBase', (p) => p.evm.base.balances(address, ctx.signal));
  return {
    address,
    network: 'base',
    chainId: 8453,
    blockNumber: Number(b.blockNumber),
    eth: { wei: b.ethWei.toString(), balance: formatUnits(b.ethWei, 18) },
    usdc: { contract: USDC_BASE, atomic: b.usdcAtomic.toString(), balance: formatUnits(b.usdcAtomic, 6), decimals: 6 },
    fetchedAt: new Date(ctx.now()).toISOString(),
  };
}

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
  needsInput: true,
  inputSchema: evmAddressInput(),
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  run,
  health: providersHealth('evmBase'),
  // The spec lists the input as optional, but there is no balance without an address.
  precheck: inputAndProvidersReady('an EVM address (0x followed by 40 hex digits)', 'evmBase'),
});
