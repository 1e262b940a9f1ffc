/** In-process nodes for p2p tests: a real Chain and Mempool in a temp dir, a real P2PNetwork on 127.0.0.1. */
import { join } from 'node:path';
import { assembleBlock, grindHeader } from '../../../consensus/assemble.js';
import { blockTouchedKeys } from '../../../consensus/apply.js';
import { encodeBlock, type Block } from '../../../consensus/block.js';
import type { ChainParams } from '../../../consensus/params.js';
import type { Tx } from '../../../consensus/tx.js';
import { openChain, type Chain } from '../../../chain/chain.js';
import { createMempool, type Mempool } from '../../../chain/mempool.js';
import type { Logger } from '../../../chain/types.js';
import { createP2PNetwork, type P2PNetwork, type P2POptions } from '../../../p2p/network.js';
import { CountingVerifier } from '../../helpers/verifier.js';

export interface TestNode {
  chain: Chain;
  mempool: Mempool;
  p2p: P2PNetwork;
  stop(): Promise<void>;
}

/** Opens a chain + mempool in `dir` and builds (does not start) its p2p network on 127.0.0.1:0. */
export async function createTestNode(dir: string, params: ChainParams, opts: Partial<P2POptions> = {}, logger?: Logger): Promise<TestNode> {
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now: () => Math.floor(Date.now() / 1000) + 3600 * 24 * 365 });
  const mempool = createMempool(chain, verifier, params);
  mempool.start();
  const p2p = await createP2PNetwork({ dataDir: dir, host: '127.0.0.1', port: 0, bootstrap: [], agentVersion: 'native-node/test', ...opts }, { chain, mempool, logger });
  return {
    chain,
    mempool,
    p2p,
    async stop() {
      await p2p.stop();
      mempool.stop();
      await chain.close();
    },
  };
}

/** Builds (does not add) a block on the chain's tip with `txs`, at trivial difficulty. */
export async function buildBlock(chain: Chain, miner: Uint8Array, txs: Tx[] = [], timeStep = 3): Promise<Block> {
  const params = chain.params;
  const tip = chain.tip;
  const keys = blockTouchedKeys({ coinbase: { miner }, txs } as unknown as Block);
  const draft = assembleBlock(
    { parent: { hash: tip.hash, height: tip.height, time: tip.header.time }, medianTimePast: chain.medianTimePast(tip), now: tip.header.time + timeStep, txs, miner, state: await chain.getStateView(keys) },
    params,
  );
  return { ...draft, header: grindHeader(draft.header, params.powLimit)! };
}

/** Mines `n` empty blocks onto the chain. */
export async function mineBlocks(chain: Chain, n: number, miner: Uint8Array): Promise<void> {
  for (let i = 0; i < n; i++) {
    const b = await buildBlock(chain, miner);
    const r = await chain.addBlock(encodeBlock(b));
    if (r.status !== 'connected') throw new Error(`block not connected: ${r.status}`);
  }
}

/** Waits (bounded) until `cond()` holds. */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
