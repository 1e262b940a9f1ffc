/**
 * `npm run bench -- relay [--txs-per-block N] [--blocks N]`
 *
 * One gossip hop of a full block: two nodes in this process (LevelDB chains, mempools, libp2p
 * on 127.0.0.1), A connected to B. Blocks of N signed transfers (default 1,666: 8 MB of 4.8 kB
 * transfers, mainnet's `maxBlockBytes`; block 1 also carries every sender's keys) are added to
 * A's chain one at a time (A trusts their signatures: it stands for the miner); A publishes each
 * on the block topic and B validates it in full (merkle check, state, every signature on a cold
 * verification pool, as for transactions it never saw) before gossipsub would forward it. The
 * hop is the time from A's connect to B's. Both nodes share this process's two cores, so the
 * figure is an upper bound for a hop between two machines with fast links.
 */
import '../p2p/polyfill.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { acceptAllVerifier } from './acceptAllVerifier.js';
import { createVerifyPool } from '../chain/verifyPool.js';
import { buildTransferChain } from './transferChain.js';
import { node } from './sync.js';

/** Runs the relay benchmark. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { blocks: { type: 'string', default: '4' }, 'txs-per-block': { type: 'string', default: '1666' } } });
  const nBlocks = Number(values.blocks);
  const perBlock = Number(values['txs-per-block']);
  console.log(`preparing ${nBlocks} blocks × ${perBlock} transfers…`);
  const prep = await buildTransferChain({ blocks: nBlocks, perBlock, seedPrefix: 'bench-relay-sender-', genesisTime: Math.floor(Date.now() / 1000) - 3 * nBlocks - 600, limits: { maxBlockBytes: 16_000_000, maxBlockTxs: 10_000 } });
  const root = await mkdtemp(join(tmpdir(), 'native-bench-relay-'));
  const pool = await createVerifyPool();
  const load0 = loadavg();
  const a = await node(join(root, 'a'), prep.params, acceptAllVerifier, []);
  await a.p2p.start();
  const b = await node(join(root, 'b'), prep.params, pool, [a.p2p.listen[0]]);
  try {
    await b.p2p.start();
    // Wait until both see each other in the block topic's mesh (gossipsub heartbeat: 1 s).
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (a.p2p.peerCount() < 1 || b.p2p.peerCount() < 1)) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 3_000));
    console.log('');
    // When B's gossip handler hands the block to its chain (after receiving and the merkle check).
    let handedAt = 0;
    const addBlock = b.chain.addBlock.bind(b.chain);
    b.chain.addBlock = (input) => {
      handedAt = performance.now();
      return addBlock(input);
    };
    console.log('| block | bytes | transfers | A connect → B connect (ms) | of which transfer to B and merkle check (ms) | B validates and connects (ms) |');
    console.log('|---:|---:|---:|---:|---:|---:|');
    const hops: number[] = [];
    for (let i = 0; i < prep.blocks.length; i++) {
      const raw = prep.blocks[i];
      const atB = new Promise<number>((resolve) => {
        const on = (entry: { height: number }) => {
          if (entry.height !== i + 1) return;
          b.chain.off('connect', on);
          resolve(performance.now());
        };
        b.chain.on('connect', on);
      });
      let atA = 0;
      a.chain.once('connect', () => (atA = performance.now()));
      const r = await a.chain.addBlock(raw);
      if (r.status !== 'connected') throw new Error(`A did not connect block ${i + 1}: ${r.status}`);
      const t = await Promise.race([atB, new Promise<number>((_, reject) => setTimeout(() => reject(new Error(`B did not connect block ${i + 1} in 60 s`)), 60_000))]);
      hops.push(t - atA);
      console.log(`| ${i + 1} | ${raw.length} | ${perBlock} | ${Math.round(t - atA)} | ${Math.round(handedAt - atA)} | ${Math.round(t - handedAt)} |`);
    }
    const later = hops.slice(1).sort((x, y) => x - y);
    console.log('');
    console.log(`hop, blocks 2…${nBlocks} (keys already published): median ${Math.round(later[Math.floor(later.length / 2)])} ms`);
    console.log(`load average (1/5/15 min) before: ${load0.map((l) => l.toFixed(2)).join(' ')}, after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    // A block B did not take from gossip came by the sync's status poll: that is no hop.
    // (The gossip verdict is counted once the chain's addBlock returns, just after 'connect'.)
    const until = Date.now() + 2_000;
    while (b.p2p.gossipStats().blocks.accept < nBlocks && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const byGossip = b.p2p.gossipStats().blocks.accept;
    console.log(`blocks B accepted from gossip: ${byGossip} of ${nBlocks}`);
    if (byGossip !== nBlocks) throw new Error(`only ${byGossip} of ${nBlocks} blocks were relayed by gossip: the figures above are not hops`);
  } finally {
    await b.stop();
    await a.stop();
    await pool.stop();
    await rm(root, { recursive: true, force: true });
  }
}
