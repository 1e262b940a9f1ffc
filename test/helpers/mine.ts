/** Mining in-process chains at trivial difficulty (test params): one block from the pool, or blocks until the pool is empty. */
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { blockTouchedKeys } from '../../consensus/apply.js';
import type { Block } from '../../consensus/block.js';
import type { Chain } from '../../chain/chain.js';
import type { Mempool } from '../../chain/mempool.js';
import { createBlockTemplate } from '../../chain/template.js';
import { getDevnetActor } from '../../consensus/devnet.js';
import type { ChainParams } from '../../consensus/params.js';

/** Mines the mempool's candidates into one block on the chain's tip, 3 s after it. */
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

/**
 * Mines until the mempool is empty (at most 20 blocks, at least one) through the block template,
 * each block at the time `advance()` returns. For chains built with the economy simulator.
 */
export async function mineUntilEmpty(chain: Chain, mempool: Mempool, params: ChainParams, advance: () => number): Promise<void> {
  const miner = getDevnetActor('miner-test').address;
  await mempool.idle();
  for (let i = 0; i < 20 && (mempool.count > 0 || i === 0); i++) {
    const now = advance();
    const tpl = await createBlockTemplate(chain, mempool, params, { miner, now: () => now });
    await chain.addBlock({ ...tpl.block, header: grindHeader(tpl.block.header, params.powLimit)! });
    await mempool.idle();
  }
}
