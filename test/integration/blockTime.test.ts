/**
 * Interval mining (`native-node start --dev --block-time 1`) in the real node process: blocks one
 * second apart by their timestamps, at the easiest bits, a transfer in the very next block, the
 * miner reporting no threads; mainnet and a data directory made otherwise refuse the flag with
 * their codes.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeAddress, TESTNET_HRP } from '../../consensus/address.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { toHex } from '../../consensus/hash.js';
import { DEVNET_POW_LIMIT_BITS } from '../../consensus/params.js';
import { createTransferTx } from '../../consensus/txBuilder.js';
import { createTrivialDevnetDir } from '../helpers/trivialDevnet.js';
import { runCli, startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';

let dir: string;
let node: NodeProc | undefined;

interface BlockSummary {
  height: number;
  time: number;
  bits: string;
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  return (await res.json()) as T;
}

/** Polls the node's height until `pred` holds (bounded). */
async function waitHeight(pred: (h: number) => boolean, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { height } = await getJson<{ height: number }>(`${node!.url}/api/v1/status`);
    if (pred(height)) return height;
    if (Date.now() > deadline) throw new Error(`height ${height} did not get there within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-blocktime-'));
  node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--no-stratum', '--block-time', '1'], { cwd: dir });
}, 120_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  rmSync(dir, { recursive: true, force: true });
});

describe('a devnet node with --block-time 1', () => {
  test('mines blocks one second apart (timestamps), at the easiest bits, with no miner threads', async () => {
    await waitHeight((h) => h >= 5);
    const { blocks } = await getJson<{ blocks: BlockSummary[] }>(`${node!.url}/api/v1/blocks?limit=100`);
    const asc = [...blocks].sort((a, b) => a.height - b.height);
    expect(asc[0].height).toBe(0);
    const floor = DEVNET_POW_LIMIT_BITS.toString(16);
    expect(asc[0].bits).toBe(floor);
    // Block 1's parent is genesis: ASERT puts it 2^(-1/120) below the floor (chain/pacing.ts); every later block is at the floor.
    expect(asc[1].bits).not.toBe(floor);
    for (const b of asc.slice(2)) expect(b.bits).toBe(floor);
    // Block 1 waits for slot 2 (the ASERT schedule), then one block a second.
    expect(asc[1].time - asc[0].time).toBeGreaterThanOrEqual(2);
    // A slot gets no block only when the node was too busy to reach it, and then it says so.
    const missed = node!.lines.filter((l) => l.msg === 'paced miner missed slots (the node was busy)').map((l) => ({ from: l.missedFrom as number, to: l.missedTo as number }));
    for (let i = 2; i < asc.length; i++) {
      const gap = asc[i].time - asc[i - 1].time;
      if (gap !== 1) expect(missed).toContainEqual({ from: asc[i - 1].time + 1, to: asc[i].time - 1 });
    }
    expect(missed.length).toBeLessThan(asc.length / 2);
    const status = await getJson<{ mining: { running: boolean; threads: number; blockTime?: number; blocksFound: number } }>(`${node!.url}/api/v1/status`);
    expect(status.mining).toMatchObject({ running: true, threads: 0, blockTime: 1 });
    expect(status.mining.blocksFound).toBeGreaterThanOrEqual(5);
  }, 60_000);

  test('a transfer submitted between slots is in the next block', async () => {
    const dev = getDevKeyPair();
    const acc = await getJson<{ pendingNonce: number; publicKeyKnown: boolean }>(`${node!.url}/api/v1/account/${encodeAddress(dev.address, TESTNET_HRP)}`);
    // Submit just after a block arrived, far from the next slot boundary.
    const h0 = await waitHeight(() => true);
    await waitHeight((h) => h > h0);
    const tx = createTransferTx({ key: dev, chainId: 1337, to: new Uint8Array(20).fill(9), amount: 12_345n, nonce: BigInt(acc.pendingNonce), includeKey: !acc.publicKeyKnown, feeRate: 1n });
    const res = await fetch(`${node!.url}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(tx.bytes) }) });
    expect(res.status).toBeLessThan(300);
    const after = await waitHeight(() => true);
    const deadline = Date.now() + 20_000;
    let t: { status: string; height?: number };
    for (;;) {
      t = await getJson<{ status: string; height?: number }>(`${node!.url}/api/v1/tx/${tx.id}`);
      if (t.status === 'mined' || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(t.status).toBe('mined');
    expect(t.height).toBe(after + 1);
  }, 60_000);
});

describe('refusals', () => {
  test('mainnet refuses --block-time with config_invalid', async () => {
    const r = await runCli(['start', '--network', 'mainnet', '--data-dir', join(dir, 'main'), '--block-time', '1', '--no-p2p', '--http-port', '0'], { cwd: dir, timeoutMs: 30_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error config_invalid: blockTime');
  }, 40_000);

  test('a data directory whose devnet was made without --block-time is refused with config_genesis_mismatch', async () => {
    const other = createTrivialDevnetDir('native-blocktime-pow-');
    try {
      const r = await runCli(['start', '--dev', '--data-dir', other.dataDir, '--block-time', '1', '--no-p2p', '--http-port', '0', '--log-level', 'error'], { cwd: other.dir, timeoutMs: 30_000 });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('error config_genesis_mismatch:');
      expect(r.stderr).toContain('new --data-dir');
    } finally {
      rmSync(other.dir, { recursive: true, force: true });
    }
  }, 40_000);
});
