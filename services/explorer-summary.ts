/** native-explorer-summary: recent blocks, transaction-type distribution, mempool size and supply effects. */
import { encodeAddress } from '../consensus/address.js';
import { difficultyOfBits } from '../consensus/pow.js';
import { addToMix, chainTotals, mixJson, recentBlocks, type TypeMix } from './chainStats.js';
import { defineService } from './define.js';
import { chainHealth } from './health.js';
import { amountFields, isoOfSeconds } from './format.js';
import { noInput } from './inputs.js';
import type { ServiceContext } from './types.js';

/** Blocks summarised one by one. */
const LISTED_BLOCKS = 10;
/** Blocks over which the type distribution and supply effects are counted. */
const SUMMARY_WINDOW = 20;

async function run(ctx: ServiceContext) {
  const { chain, mempool, params } = ctx;
  const blocks = await recentBlocks(chain, SUMMARY_WINDOW, params);
  const mix = new Map<string, TypeMix>();
  let minted = 0n;
  let burned = 0n;
  let fees = 0n;
  for (const b of blocks) {
    for (const [name, m] of b.mix) {
      const acc = mix.get(name) ?? { count: 0, fees: 0n };
      acc.count += m.count;
      acc.fees += m.fees;
      mix.set(name, acc);
    }
    if (b.entry.height > 0) minted += b.subsidy; // genesis allocations are not a block's issuance
    burned += b.burned;
    fees += b.fees;
  }
  const pending = mempool.list();
  const supply = await chain.getSupply();
  const totals = chainTotals(chain);
  return {
    network: params.network,
    height: chain.tip.height,
    tip: chain.tip.hashHex,
    recentBlocks: blocks.slice(0, LISTED_BLOCKS).map((b) => ({
      height: b.entry.height,
      hash: b.entry.hashHex,
      time: b.entry.header.time,
      timeIso: isoOfSeconds(b.entry.header.time),
      txCount: b.block.txs.length,
      size: b.entry.size,
      difficulty: difficultyOfBits(b.entry.header.bits),
      miner: encodeAddress(b.block.coinbase.miner, params.hrp),
      ...amountFields('fees', b.fees),
      ...amountFields('burned', b.burned),
    })),
    window: { blocks: blocks.length, fromHeight: blocks[blocks.length - 1]?.entry.height ?? null, toHeight: blocks[0]?.entry.height ?? null },
    txTypeDistribution: mixJson(mix, (b) => amountFields('fees', b)),
    mempool: {
      count: mempool.count,
      bytes: mempool.bytes,
      typeDistribution: mixJson(addToMix(new Map(), pending.map((e) => e.tx)), (b) => amountFields('fees', b)),
    },
    supplyEffects: {
      window: {
        ...amountFields('minted', minted),
        ...amountFields('feesPaid', fees),
        ...amountFields('burned', burned),
        ...amountFields('netIssuance', minted - burned),
      },
      total: {
        ...amountFields('minted', supply.minted),
        ...amountFields('burned', supply.burned),
        ...amountFields('circulating', supply.minted - supply.burned),
      },
    },
    totals,
  };
}

/** native-explorer-summary. */
export const explorerSummary = defineService({
  id: 'native-explorer-summary',
  name: 'Explorer Summary',
  category: 'explorer',
  priceBase: 600_000n,
  description: 'recent blocks, tx-type distribution, mempool size, supply effects',
  tags: ['explorer', 'blocks', 'transactions', 'mempool', 'supply', 'burn', 'summary'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  run,
  health: chainHealth,
});
