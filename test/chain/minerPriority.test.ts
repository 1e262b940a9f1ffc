/**
 * The built-in miner's hashing threads run at the lowest priority (nice 19) on Linux, and only
 * they: the node's own threads keep theirs. Read from /proc, so Linux only.
 */
import { afterAll, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { openChain } from '../../chain/chain.js';
import { createMempool } from '../../chain/mempool.js';
import { createMiner } from '../../chain/miner.js';
import { MINER_NICE } from '../../chain/minerWorker.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

afterAll(cleanupTmp);

/** Nice value of every thread of this process, by thread id (field 19 of /proc/…/stat). */
function niceByThread(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return out;
}

const linuxTest = process.platform === 'linux' ? test : test.skip;

linuxTest('hashing threads run at nice 19, the node main thread keeps its priority', async () => {
  const params = createDevnetChainParams({ genesisBits: 0x207fffff });
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: await tmpDir(), params, verifier, now: () => params.genesis.time + 1_000_000 });
  const pool = createMempool(chain, verifier, params);
  const before = niceByThread();
  const miner = createMiner(chain, pool, params, { threads: 2, address: testKey('miner').address, now: () => params.genesis.time + 1_000_000 });
  try {
    await miner.start();
    const after = niceByThread();
    const lowered = [...after].filter(([tid, nice]) => nice === MINER_NICE && before.get(tid) !== MINER_NICE);
    expect(lowered.length).toBe(2);
    expect(after.get(process.pid)).toBe(before.get(process.pid));
  } finally {
    await miner.stop();
    await chain.close();
  }
});
