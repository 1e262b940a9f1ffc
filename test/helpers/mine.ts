/** Mines the mempool's candidates into a block on a real chain's tip (trivial-difficulty test params). */
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { blockTouchedKeys } from '../../consensus/apply.js';
import type { Block } from '../../consensus/block.js';
import type { Chain } from '../../chain/chain.js';
import type { Mempool } from '../../chain/mempool.js';

export async function mineFromPool(chain: Chain, pool: Mempool, miner: Uint8Array): Promise<Block> {
  await pool.idle();
  const params = chain.params;
  const txs = pool.blockCandidates(params.limits.maxBlockBytes - 1000, params.limits.maxBlockTxs).map((e) => e.tx);
  const tip = chain.tip;
  const keys = blockTouchedKeys({ coinbase: { miner }, txs } as unknown as Block);
  const draft = assembleBlock(
    { parent: { hash: tip.hash, height: tip.height, time: tip.header.time }, medianTimePast: chain.medianTimePast(tip), now: tip.header.time + 3, txs, miner, state: await chain.getStateView(keys) },
    params,
  );
  const block = { ...draft, header: grindHeader(draft.header, params.powLimit)! };
  await chain.addBlock(block);
  await pool.idle();
  return block;
}
