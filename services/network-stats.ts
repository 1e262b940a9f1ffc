/** native-network-stats: height, hashrate, supply minted and burned, staking ratio, totals and mempool of this chain. */
import { difficultyOfBits } from '../consensus/pow.js';
import { chainTotals } from './chainStats.js';
import { estimateHashrate, HASHRATE_WINDOW } from '../chain/hashrate.js';
import { defineService } from './define.js';
import { chainHealth } from './health.js';
import { amountFields, isoOfSeconds } from './format.js';
import { noInput } from './inputs.js';
import type { ServiceContext } from './types.js';

/**
 * Staking at the tip from the consensus totals (the state key `/api/v1/staking` reads): staked,
 * the locked part, open stakes, rewards minted so far, and staked / circulating supply.
 */
async function stakingOf(ctx: ServiceContext, circulating: bigint) {
  const eco = ctx.chain.economy;
  if (!eco) return { active: null, note: 'this node keeps no economy index: staking totals are not available here' };
  const t = await eco.staking();
  return {
    ...amountFields('staked', t.staked),
    ...amountFields('locked', t.locked),
    stakes: t.count,
    ...amountFields('rewardsPaid', t.rewardsPaid),
    // Parts per million, as mintedShareOfMax: exact integer division, then a display number.
    ratio: circulating > 0n ? Number((t.staked * 1_000_000n) / circulating) / 1_000_000 : 0,
    ratioNote: 'staked / circulating supply (minted - burned)',
    active: true,
  };
}

async function run(ctx: ServiceContext) {
  const { chain, mempool, params } = ctx;
  const tip = chain.tip;
  const supply = await chain.getSupply();
  const circulating = supply.minted - supply.burned;
  const headroom = params.reward.maxSupply - supply.minted;
  const totals = chainTotals(chain);
  const staking = await stakingOf(ctx, circulating);
  const genesis = chain.getEntryByHeight(0);
  const ageSeconds = genesis ? tip.header.time - genesis.header.time : 0;
  return {
    network: params.network,
    chainId: params.chainId,
    height: tip.height,
    tip: tip.hashHex,
    tipTime: tip.header.time,
    tipTimeIso: isoOfSeconds(tip.header.time),
    difficulty: difficultyOfBits(tip.header.bits),
    bits: tip.header.bits.toString(16).padStart(8, '0'),
    chainWork: tip.chainWork.toString(16),
    hashrate: estimateHashrate(chain),
    hashrateWindowBlocks: Math.min(HASHRATE_WINDOW, tip.height),
    targetBlockSeconds: params.targetSpacing,
    averageBlockSeconds: tip.height > 0 ? ageSeconds / tip.height : null,
    supply: {
      ...amountFields('minted', supply.minted),
      ...amountFields('burned', supply.burned),
      ...amountFields('circulating', circulating),
      ...amountFields('maxSupply', params.reward.maxSupply),
      ...amountFields('headroom', headroom > 0n ? headroom : 0n),
      mintedShareOfMax: params.reward.maxSupply > 0n ? Number((supply.minted * 1_000_000n) / params.reward.maxSupply) / 1_000_000 : 0,
      burnShareBps: params.burnShareBps,
    },
    staking,
    totals: {
      blocks: totals.blocks,
      transactions: totals.transactions,
      bytes: totals.bytes,
    },
    mempool: {
      count: mempool.count,
      bytes: mempool.bytes,
    },
  };
}

/** native-network-stats. */
export const networkStats = defineService({
  id: 'native-network-stats',
  name: 'Network Stats',
  category: 'oracle',
  priceBase: 600_000n,
  description: 'height, hashrate, supply minted/burned, staking ratio, totals, mempool',
  tags: ['network', 'chain', 'height', 'hashrate', 'difficulty', 'supply', 'burn', 'staking', 'mempool', 'oracle'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  run,
  health: chainHealth,
});
