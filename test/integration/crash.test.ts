/**
 * Crash safety: the real node process mines and accepts transfers while it is killed with SIGKILL
 * at seeded-random moments of its work. After every kill the data directory must reopen at a valid
 * tip, at or above every block the node had logged as connected, whose state equals a replay of
 * the stored best chain from genesis.
 *
 * Budget: the kills run for about BUDGET_MS (at least MIN_KILLS, at most KILLS): a kill starts
 * only if the slowest kill so far still fits, so a loaded machine does fewer kills, each as fully
 * checked, instead of running into the test's timeout.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
import { loadFactor, startNode, type NodeProc } from '../helpers/nodeProcess.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { Rng } from '../helpers/rng.js';

/** The most kills (CRASH_KILLS overrides), done when the budget allows. */
const KILLS = Number(process.env.CRASH_KILLS ?? 20);
/** The fewest kills, done whatever the load. */
const MIN_KILLS = Math.min(KILLS, 5);
/** Time for the kill cycles, ms: no kill starts that would end past it (judged by the slowest so far). */
const BUDGET_MS = 120_000;
/** Longest silence of a running node (no log line, no transfer accepted) before the test gives up, ms on an idle machine, scaled by the load. */
const QUIET_MS = 20_000;
let dir: string;
let dataDir: string;
let node: NodeProc | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'native-crash-'));
  dataDir = join(dir, 'data');
});

afterAll(() => {
  node?.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Sends transfers from the dev wallet as fast as the node takes them, until `stop()` is called; `onAccepted` after each one taken. */
function sendLoop(url: string, params: ChainParams, rng: Rng, onAccepted: () => void): { stop: () => Promise<number> } {
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
        if (res.ok) {
          sent++;
          onAccepted();
        }
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

/**
 * Resolves once `done()` holds, checked after every log line of the node and every `poke()`;
 * rejects when the node exits first or stays silent for `QUIET_MS × loadFactor()`.
 */
function progress(node: NodeProc, done: () => boolean): { reached: Promise<void>; poke: () => void } {
  let poke = () => undefined as void;
  const reached = new Promise<void>((resolve, reject) => {
    const quietMs = Math.round(QUIET_MS * loadFactor());
    let timer: NodeJS.Timeout | undefined;
    const finish = (err?: Error) => {
      clearTimeout(timer);
      node.child.stdout!.off('data', check);
      poke = () => undefined;
      if (err) reject(err);
      else resolve();
    };
    function check() {
      if (done()) return finish();
      clearTimeout(timer);
      timer = setTimeout(() => finish(new Error(`the node made no progress for ${quietMs} ms`)), quietMs);
    }
    // spawnJsonReady's reader was attached first: `node.lines` already holds the chunk's lines here.
    node.child.stdout!.on('data', check);
    void node.exited.then((code) => finish(new Error(`the node exited (${code}) before the kill`)));
    poke = check;
    check();
  });
  return { reached, poke: () => poke() };
}

/** The highest height in the node's `block connected` lines (each logged after its batch was written), or `floor`. */
function connectedHeight(node: NodeProc, floor: number): number {
  let h = floor;
  for (const l of node.lines) if (l.msg === 'block connected' && typeof l.height === 'number' && l.height > h) h = l.height;
  return h;
}

describe('crash safety', () => {
  test(`SIGKILL at up to ${KILLS} random moments (at least ${MIN_KILLS}, within ${BUDGET_MS / 1000} s) while mining and accepting transactions: every reopen is consistent`, async () => {
    const txRng = new Rng(20261122);
    const killRng = new Rng(20261123);
    const startedAt = performance.now();
    let slowest = 0;
    let kills = 0;
    let lastHeight = 0;
    let totalSent = 0;
    let params: ChainParams | undefined;
    while (kills < KILLS && (kills < MIN_KILLS || performance.now() - startedAt + slowest <= BUDGET_MS)) {
      const cycleStart = performance.now();
      // Interval mining (a block a second, no hashing): the same block-writing path as a hashing miner,
      // without a core spent on hashes that a loaded CI host needs for the test.
      node = await startNode(['--dev', '--data-dir', dataDir, '--http-port', '0', '--no-stratum', '--block-time', '1'], { cwd: dir });
      params ??= createParamsFromJson(JSON.parse(readFileSync(join(dataDir, 'genesis.json'), 'utf8')));
      // The moment: once this life has connected 1-4 blocks and had 1-8 transfers accepted, both
      // drawn at random; the node keeps mining and admitting meanwhile, so the kill falls anywhere
      // in its work, never before it did any.
      const blocks = 1 + killRng.int(4);
      const transfers = 1 + killRng.int(8);
      let accepted = 0;
      const life = node;
      const wait = progress(life, () => connectedHeight(life, 0) >= lastHeight + blocks && accepted >= transfers);
      const sender = sendLoop(life.url, params, txRng, () => {
        accepted++;
        wait.poke();
      });
      await wait.reached;
      life.child.kill('SIGKILL');
      await life.exited;
      node = undefined;
      const logged = connectedHeight(life, lastHeight);
      totalSent += await sender.stop();
      const { height } = await checkConsistent(params);
      // Nothing the node had logged as connected was lost.
      expect(height).toBeGreaterThanOrEqual(logged);
      lastHeight = height;
      kills++;
      slowest = Math.max(slowest, performance.now() - cycleStart);
    }
    const final = await checkConsistent(params!);
    console.log(`crash: ${kills} kills in ${Math.round((performance.now() - startedAt) / 1000)} s (slowest ${Math.round(slowest)} ms, load factor ${loadFactor().toFixed(1)}), height ${final.height}, ${final.txs} transfers mined, ${totalSent} accepted`);
    expect(kills).toBeGreaterThanOrEqual(MIN_KILLS);
    // The node really worked in every life: blocks were mined and transfers were accepted and mined.
    expect(final.height).toBeGreaterThanOrEqual(kills);
    expect(totalSent).toBeGreaterThanOrEqual(kills);
    expect(final.txs).toBeGreaterThan(0);
  }, 600_000);
});
