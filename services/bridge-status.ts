/** native-bridge-status: the 10 bridge networks with vault addresses, custody floats, fees and in/out record counts from the chain's bridge records. */
import { defineService } from './define.js';
import { noInput } from './inputs.js';
import { chainHealth } from './health.js';
import { economyOf, formatUnits } from './market/economy.js';
import type { ServiceContext } from './types.js';


async function run(ctx: ServiceContext) {
  const eco = economyOf(ctx);
  const nets = await eco.bridgeNetworks();
  const networks = await Promise.all(
    nets.map(async (n) => {
      const [last] = await eco.bridgeRecords(n.name, { limit: 1 });
      return {
        network: n.name,
        index: n.index,
        vault: n.vault || null,
        vaultSet: n.vault !== '',
        custodyFloat: formatUnits(BigInt(n.float), 8),
        custodyFloatBase: n.float,
        bridgedIn: formatUnits(BigInt(n.inAmount), 8),
        bridgedOut: formatUnits(BigInt(n.outAmount), 8),
        fees: formatUnits(BigInt(n.fees), 8),
        feesBase: n.fees,
        inRecords: n.inCount,
        outRecords: n.outCount,
        lastRecordHeight: (last?.height as number | undefined) ?? null,
      };
    }),
  );
  const total = nets.reduce((s, n) => s + BigInt(n.float), 0n);
  return {
    count: networks.length,
    networks,
    totalCustodyFloat: formatUnits(total, 8),
    unit: 'NATIVE (value bridged, in NATIVE)',
    note: 'custody float = recorded in - recorded out per network vault (bridge records of the bridge authority); fees are the recorded bridge fees',
    height: ctx.chain.tip.height,
  };
}

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
  run,
  health: chainHealth,
});
