/**
 * native-gas-price: gas price in gwei on Base and Ethereum, with the cost of a standard transfer
 * (21,000 gas; on Base plus the L1 data fee the OP-stack oracle quotes) in ETH and USD (ETH/USD
 * from CoinGecko).
 */
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { anyCase } from './inputs.js';
import { badResponse } from './providers/call.js';
import { formatUnits } from './providers/decimal.js';
import { TRANSFER_GAS, type EvmNetwork, type GasReading } from './providers/evm.js';
import { callProvider, providersHealth, providersReady, type ProviderKey } from './providers/index.js';
import type { ServiceContext } from './types.js';

const MONITOR: Readonly<Record<EvmNetwork, ProviderKey>> = { base: 'evmBase', ethereum: 'evmEthereum' };

const networksOf = (input: unknown): EvmNetwork[] => (typeof input === 'string' && input !== '' ? [input.toLowerCase() as EvmNetwork] : ['base', 'ethereum']);

function reading(network: EvmNetwork, g: GasReading, ethUsd: number) {
  const feeWei = g.gasPriceWei * TRANSFER_GAS + (g.l1FeeWei ?? 0n);
  return {
    network,
    chainId: network === 'base' ? 8453 : 1,
    blockNumber: Number(g.blockNumber),
    gasPriceGwei: formatUnits(g.gasPriceWei, 9),
    gasPriceWei: g.gasPriceWei.toString(),
    baseFeeGwei: g.baseFeeWei === null ? null : formatUnits(g.baseFeeWei, 9),
    standardTransfer: {
      gas: Number(TRANSFER_GAS),
      l1DataFeeWei: g.l1FeeWei === null ? null : g.l1FeeWei.toString(),
      feeWei: feeWei.toString(),
      feeEth: formatUnits(feeWei, 18),
      // An estimate for display: float precision is plenty for cents.
      feeUsd: Math.round((Number(feeWei) / 1e18) * ethUsd * 1e6) / 1e6,
    },
  };
}

async function run(ctx: ServiceContext, input: unknown) {
  const networks = networksOf(input);
  const readings = await Promise.all(networks.map((n) => callProvider(ctx, MONITOR[n], (p) => p.evm[n].gas(ctx.signal))));
  const quotes = await callProvider(ctx, 'coins', (p) => p.coins.prices(['ethereum'], ctx.signal));
  const eth = quotes.get('ethereum');
  if (!eth) throw badResponse('CoinGecko', 'no price for ethereum');
  return {
    networks: networks.map((n, i) => reading(n, readings[i], eth.usd)),
    ethUsd: eth.usd,
    fetchedAt: new Date(ctx.now()).toISOString(),
    source: 'eth_gasPrice and the latest block of each chain (Base: plus GasPriceOracle.getL1Fee); ETH/USD from CoinGecko',
  };
}

const readyAll = { base: providersReady('evmBase', 'coins'), ethereum: providersReady('evmEthereum', 'coins') };

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
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  run,
  health: providersHealth('evmBase', 'evmEthereum', 'coins'),
  precheck: async (ctx, input) => {
    for (const n of networksOf(input)) await readyAll[n](ctx);
  },
});
