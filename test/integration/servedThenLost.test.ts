/**
 * A reorganization deeper than `--confirmations` after serving, with real node processes: a
 * seller (not mining, `--confirmations 2`) follows miner A and serves a paid call; miner B, cut
 * off from before the payment, mines a longer branch without it. When B reaches the seller, the
 * seller reorganizes onto B's branch, one block deeper than its confirmations at least, and the
 * payment goes back to the mempool: no verdict yet. The seller restarts; then the payer's nonce
 * goes to a transfer at a higher fee, which B mines: the payment can never be mined again. The
 * restarted seller logs it, counts it in `native_payments_served_then_lost` and lists it in
 * status `servedThenLost` (it kept the payments it was watching in its ledger).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { encodeAddress } from '../../consensus/address.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { COIN, DEVNET_POW_LIMIT_BITS } from '../../consensus/params.js';
import { toHex } from '../../consensus/hash.js';
import { createTransferTx } from '../../consensus/txBuilder.js';
import { createAgentClient } from '../../sdk/client.js';
import { testKey } from '../helpers/keys.js';
import { createP2PCluster, getJson, isMined, sendTransfer, status, stopProc, waitUntil, writeSharedGenesis, type P2PCluster, type P2PProc } from '../p2p/helpers/processes.js';

/** A devnet genesis for interval mining at one block a second. */
const PACED = { targetSpacing: 1, genesisBits: DEVNET_POW_LIMIT_BITS, powLimitBits: DEVNET_POW_LIMIT_BITS };
const SERVICE = 'native-world-clock';
const CONFIRMATIONS = 2;

let cluster: P2PCluster;

beforeAll(() => {
  cluster = createP2PCluster('native-served-lost-', ['a', 'b', 'seller']);
  writeSharedGenesis(['a', 'b', 'seller'].map((n) => join(cluster.dir, n)), PACED);
});

afterAll(async () => {
  await cluster.stop();
});

/** The hash of the block at `height` on the node's best chain. */
async function hashAt(url: string, height: number): Promise<string> {
  return (await getJson<{ hash: string }>(url, `/api/v1/block/${height}`)).hash;
}

describe('served, then lost to a reorganization deeper than --confirmations', () => {
  test('across a restart of the seller: logged, counted in the metric and listed in status', async () => {
    const params = cluster.params;
    const payer = testKey('served-lost-payer');
    const sellerArgs = ['--no-mine', '--confirmations', String(CONFIRMATIONS), '--refund-window', '600', '--metrics-port', '0'];
    let a = await cluster.start('a', ['--mine', '--block-time', '1']);
    let seller = await cluster.start('seller', [...sellerArgs, '--bootstrap', a.addr]);
    let b: P2PProc = await cluster.start('b', ['--no-mine', '--bootstrap', a.addr]);

    // The payer is funded on the common chain; B has it, then is cut off.
    const fund = await sendTransfer(a.url, params, getDevKeyPair(), payer.address, 10n * COIN);
    await waitUntil(async () => (await isMined(b.url, fund)) && (await isMined(seller.url, fund)), 60_000, 'the funding to be mined at B and the seller');
    await stopProc(b);

    // The seller serves a call; A mines on until the payment has one block more than its confirmations.
    const client = createAgentClient({ nodeUrl: seller.url, key: payer });
    const served = await client.call(SERVICE, 'Europe/Berlin', { timeoutMs: 60_000 });
    expect(served.receipt.serviceId).toBe(SERVICE);
    const paidAt = (await getJson<{ height: number }>(seller.url, `/api/v1/tx/${served.txId}`)).height;
    await waitUntil(async () => (await status(seller.url)).height >= paidAt + CONFIRMATIONS, 30_000, 'one more block on the payment');
    await stopProc(a);
    const before = await status(seller.url);
    const oldHashes = new Map<number, string>();
    for (let h = 1; h <= before.height; h++) oldHashes.set(h, await hashAt(seller.url, h));

    // B, alone, mines a longer branch without the payment, then comes back dialling the seller.
    b = await cluster.start('b', ['--mine', '--block-time', '1']);
    expect((await status(b.url)).peers).toBe(0);
    await waitUntil(async () => (await status(b.url)).height >= before.height + 2, 60_000, "B's branch to pass the seller's");
    await stopProc(b);
    b = await cluster.start('b', ['--no-mine', '--bootstrap', seller.addr]);
    const bTip = await status(b.url);
    await waitUntil(async () => (await status(seller.url)).tip === bTip.tip, 60_000, "the seller to take B's branch");
    let fork = 0;
    for (let h = 1; h <= before.height; h++) if ((await hashAt(seller.url, h)) === oldHashes.get(h)) fork = h;
    expect(fork).toBeLessThan(paidAt);
    // Blocks disconnected: at least one more than the confirmations the payment waited for.
    expect(before.height - fork).toBeGreaterThanOrEqual(CONFIRMATIONS + 1);
    // Back in the mempool: it may be mined again, no verdict yet.
    await waitUntil(async () => (await getJson(seller.url, `/api/v1/tx/${served.txId}`)).status === 'pending', 30_000, 'the payment back in the mempool');
    expect((await getJson(seller.url, '/api/v1/status')).payments.servedThenLost.total).toBe(0);

    // The seller restarts (its mempool kept); the payer's nonce then goes to a transfer at a higher fee rate, which B mines.
    await new Promise((r) => setTimeout(r, 1000));
    await stopProc(seller);
    seller = await cluster.start('seller', [...sellerArgs, '--bootstrap', b.addr]);
    const acc = await getJson<{ pendingNonce: string }>(b.url, `/api/v1/account/${encodeAddress(payer.address, params.hrp)}`);
    expect(acc.pendingNonce).not.toBe('0'); // the payment waits at B too: the transfer replaces it
    const conflict = createTransferTx({ key: payer, chainId: params.chainId, to: testKey('served-lost-other').address, amount: COIN, nonce: 0n, includeKey: true, feeRate: params.minFeeRate * 50n });
    const sent = await fetch(`${b.url}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(conflict.bytes) }) });
    expect(sent.status).toBe(200);
    const conflictId = ((await sent.json()) as { txId: string }).txId;
    await stopProc(b);
    b = await cluster.start('b', ['--mine', '--block-time', '1', '--bootstrap', seller.addr]);
    await waitUntil(async () => (await isMined(seller.url, conflictId)) && (await status(seller.url)).height > bTip.height + 1, 60_000, 'the transfer to be mined at the seller');
    expect(await isMined(seller.url, served.txId)).toBe(false);

    const s = seller;
    await waitUntil(async () => (await getJson(s.url, '/api/v1/status')).payments.servedThenLost.total === 1, 30_000, 'the loss to be counted');
    const lost = (await getJson(seller.url, '/api/v1/status')).payments.servedThenLost;
    expect(lost.recent).toEqual([expect.objectContaining({ id: served.txId, serviceId: SERVICE, height: paidAt })]);
    const metricsUrl = String(seller.lines.find((l) => l.msg === 'metrics listening')?.url);
    expect(await (await fetch(metricsUrl)).text()).toMatch(/^native_payments_served_then_lost 1$/m);
    const line = seller.lines.find((l) => String(l.msg).includes('was served, then a reorganization deeper than its confirmations'));
    expect(line).toMatchObject({ txId: served.txId, serviceId: SERVICE, height: paidAt });
    void a;
  }, 240_000);
});
