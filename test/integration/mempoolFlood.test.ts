/**
 * The mempool under a flood, in the real node process: a devnet node with
 * `--block-time 1`, a 0.1 MiB pool and a 64-entry queue. Zero-balance keys send 16 future nonces
 * each (the free wedge of the issue): every one is refused `mempool_unpayable`. A funded sender
 * with a gap is queued (not mined, not counted in the ready pool). An honest payment at the
 * minimum fee is admitted and mined within two blocks, and the queued transactions are mined
 * once their gap is filled.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { toHex } from '../../consensus/hash.js';
import { createTransferTx } from '../../consensus/txBuilder.js';
import { COIN } from '../../consensus/params.js';
import { startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { testKey } from '../helpers/keys.js';

let dir: string;
let node: NodeProc | undefined;

interface Status {
  height: number;
  chainId: number;
  minFeeRate: string;
  mempool: { count: number; bytes: number; maxBytes: number; evictionFeeRate: number | null; queued: { count: number; bytes: number; maxCount: number; maxBytes: number; maxPerSender: number; expirySeconds: number } };
}

async function status(): Promise<Status> {
  return (await (await fetch(`${node!.url}/api/v1/status`)).json()) as Status;
}

async function submit(bytes: Uint8Array): Promise<{ status: number; body: { txId?: string; queued?: boolean; error?: { code: string } } }> {
  const res = await fetch(`${node!.url}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(bytes) }) });
  return { status: res.status, body: (await res.json()) as never };
}

async function txStatus(id: string): Promise<{ status: string; height: number | null }> {
  return (await (await fetch(`${node!.url}/api/v1/tx/${id}`)).json()) as never;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-mempool-flood-'));
  node = await startNode(
    ['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--no-stratum', '--block-time', '1', '--mempool-max-mb', '0.1', '--mempool-queue-max', '64', '--http-expensive-rate', '100000', '--http-expensive-burst', '100000'],
    { cwd: dir },
  );
}, 120_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  rmSync(dir, { recursive: true, force: true });
});

describe('a devnet node under a mempool flood (cap 0.1 MiB, queue 64)', () => {
  test('zero-balance future nonces refused; a funded sender with a gap is queued; an honest payment at the minimum fee is mined within two blocks', async () => {
    const s0 = await status();
    expect(s0.mempool).toMatchObject({ maxBytes: Math.floor(0.1 * 1024 * 1024), queued: { count: 0, maxCount: 64, maxPerSender: 16, expirySeconds: 1200 } });
    const chainId = s0.chainId;
    const minRate = BigInt(s0.minFeeRate);
    const to = testKey('flood-payee').address;

    // 12 zero-balance keys × nonces 1…16, claiming 1,000 NATIVE of fee each (the key on the first).
    const refused = new Map<string, number>();
    for (let k = 0; k < 12; k++) {
      const key = testKey(`flood-zero-${k}`);
      for (let n = 1n; n <= 16n; n++) {
        const { bytes } = createTransferTx({ key, chainId, to, amount: 1n, nonce: n, includeKey: n === 1n, fee: 1_000n * COIN });
        const r = await submit(bytes);
        const code = r.body.error?.code ?? `accepted ${r.status}`;
        refused.set(code, (refused.get(code) ?? 0) + 1);
      }
    }
    expect([...refused]).toEqual([['mempool_unpayable', 12 * 16]]);
    expect((await status()).mempool).toMatchObject({ count: 0, queued: { count: 0 } });

    // The dev wallet (funded) queues nonces 2…16 at a high fee: queued, nothing ready moves.
    const dev = getDevKeyPair();
    const queued: string[] = [];
    for (let n = 2n; n <= 16n; n++) {
      const r = await submit(createTransferTx({ key: dev, chainId, to, amount: COIN, nonce: n, includeKey: n === 2n, feeRate: minRate * 50n }).bytes);
      expect(r.body).toMatchObject({ queued: true });
      queued.push(r.body.txId!);
    }
    const s1 = await status();
    expect(s1.mempool.queued.count).toBe(15);
    expect(s1.mempool.count).toBe(0);

    // The honest payment: the dev wallet's nonce 0 at the minimum fee rate.
    const honest = createTransferTx({ key: dev, chainId, to, amount: COIN, nonce: 0n, includeKey: true, feeRate: minRate });
    const h0 = (await status()).height;
    const r = await submit(honest.bytes);
    expect(r.status).toBe(200);
    expect(r.body.queued).toBeUndefined();
    let mined: { status: string; height: number | null } = { status: 'pending', height: null };
    for (let i = 0; i < 100 && mined.status !== 'mined'; i++) {
      await new Promise((res) => setTimeout(res, 100));
      mined = await txStatus(honest.id);
    }
    expect(mined.status).toBe('mined');
    expect(mined.height!).toBeLessThanOrEqual(h0 + 2);

    // Nonce 1 fills the gap: the 15 queued move to the ready pool (those that fit the 0.1 MiB cap) and are mined.
    await submit(createTransferTx({ key: dev, chainId, to, amount: COIN, nonce: 1n, includeKey: false, feeRate: minRate * 50n }).bytes);
    expect((await status()).mempool.queued.count).toBe(0);
    for (let i = 0; i < 100; i++) {
      const states = await Promise.all(queued.map((id) => txStatus(id)));
      if (states.every((x) => x.status === 'mined')) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect((await Promise.all(queued.map((id) => txStatus(id)))).map((x) => x.status)).toEqual(queued.map(() => 'mined'));
  }, 120_000);
});
