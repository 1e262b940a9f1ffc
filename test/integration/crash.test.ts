/**
 * Crash safety: the real node process mines and accepts transfers while it is killed with SIGKILL
 * at 20 seeded-random moments. After every kill the data directory must reopen at a valid tip
 * whose state equals a replay of the stored best chain from genesis.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openChain } from '../../chain/chain.js';
import { applyBlock, writeChanges } from '../../consensus/apply.js';
import { blockHash } from '../../consensus/block.js';
import { encodeAddress } from '../../consensus/address.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { createGenesisState } from '../../consensus/genesis.js';
import { bytesEqual, toHex } from '../../consensus/hash.js';
import { createParamsFromJson, type ChainParams } from '../../consensus/params.js';
import { validateBlockBody, validateHeader } from '../../consensus/validate.js';
import { createTransferTx } from '../../consensus/txBuilder.js';
import { createTrivialDevnetDir } from '../helpers/trivialDevnet.js';
import { startNode, type NodeProc } from '../helpers/nodeProcess.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { Rng } from '../helpers/rng.js';

const KILLS = Number(process.env.CRASH_KILLS ?? 20);
let dir: string;
let dataDir: string;
let node: NodeProc | undefined;

beforeAll(() => {
  ({ dir, dataDir } = createTrivialDevnetDir('native-crash-'));
});

afterAll(() => {
  node?.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Sends transfers from the dev wallet as fast as the node takes them, until `stop()` is called. */
function sendLoop(url: string, params: ChainParams, rng: Rng): { stop: () => Promise<number> } {
  let running = true;
  let sent = 0;
  const dev = getDevKeyPair();
  const loop = (async () => {
    while (running) {
      try {
        const acc = (await (await fetch(`${url}/api/v1/account/${encodeURIComponent(devAddress(params))}`)).json()) as { pendingNonce: string; nonce: string };
        const nonce = BigInt(acc.pendingNonce);
        const tx = createTransferTx({ key: dev, chainId: params.chainId, to: rng.bytes(20), amount: BigInt(1 + rng.int(1_000_000)), nonce, includeKey: BigInt(acc.nonce) === 0n && nonce === 0n, feeRate: params.minFeeRate });
        const res = await fetch(`${url}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(tx.bytes) }) });
        if (res.ok) sent++;
      } catch {
        return; // the node was killed under us
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return sent;
    },
  };
}

function devAddress(params: ChainParams): string {
  return encodeAddress(getDevKeyPair().address, params.hrp);
}

/** Reopens the data directory and checks the tip and the state against a replay from genesis. */
async function checkConsistent(params: ChainParams): Promise<{ height: number; txs: number }> {
  const chain = await openChain({ dataDir: join(dataDir, 'chain'), params, verifier: new CountingVerifier(), now: () => Number.MAX_SAFE_INTEGER / 2 });
  try {
    const state = new Map<string, Uint8Array>();
    writeChanges(state, createGenesisState(params));
    const view = { get: (k: string) => state.get(k) };
    let txs = 0;
    for (let h = 1; h <= chain.tip.height; h++) {
      const entry = chain.getEntryByHeight(h)!;
      const parent = chain.getEntryByHeight(h - 1)!;
      const block = (await chain.getBlock(entry.hashHex))!;
      expect(bytesEqual(blockHash(block.header), entry.hash)).toBe(true);
      validateHeader(block.header, { prevHash: parent.hash, prevHeight: parent.height, prevTime: parent.header.time, medianTimePast: chain.medianTimePast(parent), now: block.header.time }, params);
      const body = validateBlockBody(block, h, params);
      writeChanges(state, applyBlock(view, block, params, body.txIds).changes);
      txs += block.txs.length;
      for (const id of body.txIds) expect((await chain.getTx(toHex(id)))?.height).toBe(h);
    }
    expect(await chain.exportState()).toEqual(state);
    return { height: chain.tip.height, txs };
  } finally {
    await chain.close();
  }
}

describe('crash safety', () => {
  test(`SIGKILL at ${KILLS} random moments while mining and accepting transactions: every reopen is consistent`, async () => {
    const rng = new Rng(20261122);
    let lastHeight = 0;
    let totalSent = 0;
    let params: ChainParams | undefined;
    for (let i = 0; i < KILLS; i++) {
      node = await startNode(['--dev', '--data-dir', dataDir, '--http-port', '0', '--mine-threads', '1'], { cwd: dir });
      params ??= createParamsFromJson(JSON.parse(readFileSync(join(dataDir, 'genesis.json'), 'utf8')));
      const sender = sendLoop(node.url, params, rng);
      await new Promise((r) => setTimeout(r, 200 + rng.int(1500)));
      node.child.kill('SIGKILL');
      await node.exited;
      node = undefined;
      totalSent += await sender.stop();
      const { height } = await checkConsistent(params);
      expect(height).toBeGreaterThanOrEqual(lastHeight);
      lastHeight = height;
    }
    const final = await checkConsistent(params!);
    // The node really worked between kills: blocks were mined and transfers were accepted and mined.
    expect(final.height).toBeGreaterThan(KILLS / 2);
    expect(totalSent).toBeGreaterThan(0);
    expect(final.txs).toBeGreaterThan(0);
  }, 240_000);
});
