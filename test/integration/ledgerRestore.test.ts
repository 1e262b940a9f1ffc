/**
 * Restores as an operator does them, on real node processes: a selling node (not mining) follows
 * a mining peer; its ledger is backed up, it serves one call and leaves one payment unsettled,
 * then (a) the ledger alone is restored and `chain/` deleted (the chain comes back from the
 * peer), and (b) the whole data directory is restored from the snapshot, with a witness file kept
 * outside it (`--ledger-witness`). Each time the restored ledger is found behind its witness,
 * however few blocks it trails: the served payment is not served again, the unsettled one is not
 * refunded after the window, and `ledger gap` lists both before any decision.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { createAgentClient } from '../../sdk/client.js';
import { settleCode } from '../helpers/settleCode.js';
import { runCli } from '../helpers/nodeProcess.js';
import { createP2PCluster, getJson, stopProc, waitUntil, writeSharedGenesis, type P2PCluster, type P2PProc } from '../p2p/helpers/processes.js';
import { DEVNET_POW_LIMIT_BITS } from '../../consensus/params.js';

/** A devnet genesis for interval mining at one block a second. */
const PACED = { targetSpacing: 1, genesisBits: DEVNET_POW_LIMIT_BITS, powLimitBits: DEVNET_POW_LIMIT_BITS };

const SERVICE = 'native-world-clock';
const WINDOW_S = 6;

let cluster: P2PCluster;
let miner: P2PProc;
let seller: P2PProc | undefined;
let sellerDir: string;
let outsideWitness: string;

beforeAll(async () => {
  cluster = createP2PCluster('native-ledger-restore-', ['miner', 'seller']);
  // Interval mining, a block a second (the genesis --block-time 1 needs): calls settle within the short window.
  writeSharedGenesis(['miner', 'seller'].map((n) => join(cluster.dir, n)), PACED);
  sellerDir = join(cluster.dir, 'seller');
  outsideWitness = join(cluster.dir, 'elsewhere', 'seller-witness.json');
  miner = await cluster.start('miner', ['--mine', '--block-time', '1']);
}, 120_000);

afterAll(async () => {
  await cluster.stop();
});

async function startSeller(): Promise<P2PProc> {
  seller = await cluster.start('seller', ['--no-mine', '--bootstrap', miner.addr, '--refund-window', String(WINDOW_S), '--ledger-witness', outsideWitness]);
  const s = seller;
  // Caught up with the miner before it sells (a chain downloaded again arrives block by block).
  await waitUntil(async () => ((await getJson(s.url, '/api/v1/status')).height as number) >= ((await getJson(miner.url, '/api/v1/status')).height as number) - 1, 60_000, "the seller to reach the miner's tip");
  return s;
}

async function stopSeller(): Promise<void> {
  const s = seller!;
  seller = undefined;
  await stopProc(s);
}

/** Waits until the status lists one gap of `invokes` payments (a chain downloaded again is counted as it arrives). */
async function waitForGap(url: string, invokes: number): Promise<void> {
  let last: unknown;
  await waitUntil(
    async () => {
      last = (await getJson(url, '/api/v1/status')).payments.ledgerGaps;
      return (last as { invokes?: number }[])[0]?.invokes === invokes;
    },
    60_000,
    `${invokes} payments counted in the gap`,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; the status lists ${JSON.stringify(last)}`);
  });
}

function restoreDir(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
}

describe('a restored ledger, found by its witness', () => {
  test('ledger restored with chain/ deleted, then the whole data directory restored: nothing served twice, nothing refunded', async () => {
    const key = getDevKeyPair();
    // A first run, then the operator's snapshot of the whole data directory (node stopped).
    await startSeller();
    await stopSeller();
    cpSync(sellerDir, join(cluster.dir, 'snapshot'), { recursive: true });
    expect(existsSync(join(sellerDir, 'ledger-witness.json'))).toBe(true);
    expect(existsSync(outsideWitness)).toBe(true);

    // After the snapshot: one call served, one payment left unsettled — a block or two, no more.
    let s = await startSeller();
    let client = createAgentClient({ nodeUrl: s.url, key });
    const served = await client.call(SERVICE, 'Europe/Berlin', { timeoutMs: 60_000 });
    const q = await client.quote(SERVICE, 'Asia/Tokyo');
    const unsettled = await client.pay(q);
    await waitUntil(async () => (await getJson(s.url, `/api/v1/tx/${unsettled}`)).status === 'mined', 60_000, 'the unsettled payment to be mined at the seller');
    await stopSeller();

    // (a) The ledger alone restored, the chain deleted (downloaded again from the miner).
    restoreDir(join(cluster.dir, 'snapshot', 'ledger'), join(sellerDir, 'ledger'));
    rmSync(join(sellerDir, 'chain'), { recursive: true, force: true });
    const listed = await runCli(['ledger', 'gap', '--data-dir', sellerDir, '--dev', '--ledger-witness', outsideWitness, '--json'], { cwd: cluster.dir });
    expect(listed.code).toBe(0);
    expect(listed.json).toEqual({ gaps: [expect.objectContaining({ cause: 'ledger_restored' })] });
    s = await startSeller();
    expect(s.lines.some((l) => String(l.msg).includes('behind its witness'))).toBe(false); // found by the command already, recorded once
    await waitForGap(s.url, 2);
    client = createAgentClient({ nodeUrl: s.url, key });
    expect(await settleCode(client, SERVICE, 'Europe/Berlin', served.txId, served.salt!)).toBe('payment_in_ledger_gap');
    expect(await settleCode(client, SERVICE, 'Asia/Tokyo', unsettled, q.salt!)).toBe('payment_in_ledger_gap');
    // New calls sell as usual; past the window neither payment is refunded.
    const utc = await client.call(SERVICE, 'UTC', { timeoutMs: 60_000 });
    expect(utc.receipt.serviceId).toBe(SERVICE);
    await new Promise((r) => setTimeout(r, (WINDOW_S + 2) * 1000));
    const p = (await getJson(s.url, '/api/v1/status')).payments;
    expect({ refunded: p.refunded, refundsPending: p.refundsPending }).toEqual({ refunded: 0, refundsPending: 0 });
    await stopSeller();

    // (b) The whole data directory restored from the snapshot: its own witness comes back with it; the one outside does not.
    restoreDir(join(cluster.dir, 'snapshot'), sellerDir);
    s = await startSeller();
    expect(s.lines.some((l) => String(l.msg).includes('behind its witness (restored from a backup?)'))).toBe(true);
    // The snapshot knows none of the three payments made since: the two of before and the one served in (a).
    await waitForGap(s.url, 3);
    client = createAgentClient({ nodeUrl: s.url, key });
    expect(await settleCode(client, SERVICE, 'Europe/Berlin', served.txId, served.salt!)).toBe('payment_in_ledger_gap');
    expect(await settleCode(client, SERVICE, 'UTC', utc.txId, utc.salt!)).toBe('payment_in_ledger_gap');
    await new Promise((r) => setTimeout(r, (WINDOW_S + 2) * 1000));
    expect((await getJson(s.url, '/api/v1/status')).payments.refunded).toBe(0);
    await stopSeller();
  }, 400_000);
});
