/**
 * Refunds that always get out, in real node processes:
 *   - a fresh devnet payee's first refund (an underpaid payment, refunded at once) does not stop
 *     the sales of other services, and the payer gets its refund on chain (the devnet payee holds
 *     a float from genesis);
 *   - a payee with no float at all (a genesis without it, as a new mainnet payee): the node warns
 *     at start, in `/ready` and the status; its first refund cannot be paid (the price plus a fee
 *     from a balance of the price), and it blocks only the services the payee could not refund
 *     from what it holds — they answer 503 `payee_underfunded` and the bazaar says so — while the
 *     cheaper ones keep selling; one of those sales pays for the refund, which is then mined;
 *   - a mempool filled with transfers at 3× the minimum fee rate does not keep an owed refund out:
 *     the payee bids a fee rate that enters the full pool, the node keeps quoting, `/ready` stays
 *     200, and the refund is mined in the next block.
 */
import { afterAll, afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, DEVNET_ADDRESSES, getDevKeyPair } from '../../consensus/devnet.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { paramsToJson } from '../../consensus/params.js';
import { fromHex } from '../../consensus/hash.js';
import { toHex } from '../../consensus/hash.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { COIN } from '../../consensus/params.js';
import { createTransferTx } from '../../consensus/txBuilder.js';
import { createAgentClient } from '../../sdk/client.js';
import { createTrivialDevnetDir } from '../helpers/trivialDevnet.js';
import { startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { testKey } from '../helpers/keys.js';

const dirs: string[] = [];
let node: NodeProc | undefined;

afterEach(async () => {
  if (node) await stopProcess(node);
  node = undefined;
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Status {
  chainId: number;
  hrp: string;
  height: number;
  minFeeRate: string;
  mempool: { count: number; bytes: number; maxBytes: number; evictionFeeRate: number | null };
  payments: { refundsPending: number; refundsStuck: number; refunded: number; refused: number; payee: { spendableBase: string; refundFeeBase: string; floatLow: boolean } | null };
}

const getJson = async <T>(path: string): Promise<T> => (await (await fetch(`${node!.url}${path}`)).json()) as T;
const status = () => getJson<Status>('/api/v1/status');
const balanceOf = async (key: HybridKeyPair, hrp: string) => BigInt((await getJson<{ balanceBase: string }>(`/api/v1/account/${encodeAddress(key.address, hrp)}`)).balanceBase);

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function submit(bytes: Uint8Array): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${node!.url}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(bytes) }) });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code };
}

/** An unpaid call: its HTTP status and error code (402 is a quote). */
async function quote(serviceId: string, request: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${node!.url}/api/x402/${serviceId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request }) });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code };
}

/** The dev wallet sends `amount` to `key` and the block that mines it is waited for. */
async function fund(key: HybridKeyPair, amount: bigint): Promise<void> {
  const s = await status();
  const dev = getDevKeyPair();
  const acc = await getJson<{ pendingNonce: number }>(`/api/v1/account/${encodeAddress(dev.address, s.hrp)}`);
  const tx = createTransferTx({ key: dev, chainId: s.chainId, to: key.address, amount, nonce: BigInt(acc.pendingNonce), includeKey: acc.pendingNonce === 0, feeRate: BigInt(s.minFeeRate) });
  expect((await submit(tx.bytes)).status).toBe(200);
  await waitFor('the funding block', async () => (await balanceOf(key, s.hrp)) === amount);
}

describe('a fresh payee', () => {
  test("its first refund does not stop the sales of other services, and the payer's refund is mined", async () => {
    const { dir, dataDir } = createTrivialDevnetDir('native-refund-fresh-');
    dirs.push(dir);
    node = await startNode(['--dev', '--data-dir', dataDir, '--http-port', '0', '--no-stratum', '--mine', '--mine-threads', '1'], { cwd: dir });
    const agent = testKey('refunds-out-fresh');
    await fund(agent, 5n * COIN);
    const s0 = await status();
    expect(s0.payments).toMatchObject({ refunded: 0, refundsStuck: 0 });

    // Underpaid by one base unit: refunded at once (amount_mismatch), the payee's first transaction.
    const client = createAgentClient({ nodeUrl: node.url, key: agent });
    const q = await client.quote('native-world-clock', 'UTC');
    const paid = await client.sendPayment({ ...q, amount: q.amount - 1n });
    // From the payment until its refund is mined (or found stuck), other services keep selling and the node stays ready.
    const answers = new Set<string>();
    await waitFor('the refund to be mined or stuck', async () => {
      const [other, ready, p] = await Promise.all([quote('native-block-inspect', '0'), fetch(`${node!.url}/ready`), status()]);
      answers.add(`quote ${other.status} ${other.code ?? ''}`.trim()).add(`ready ${ready.status}`);
      return p.payments.refundsStuck > 0 || (p.payments.refunded === 1 && p.payments.refundsPending === 0);
    });
    expect([...answers].sort()).toEqual(['quote 402', 'ready 200']);
    expect((await status()).payments).toMatchObject({ refused: 1, refunded: 1, refundsStuck: 0, refundsPending: 0 });
    expect(await quote('native-world-clock', 'Europe/Berlin')).toEqual({ status: 402 });

    // The payer gets back exactly what it paid; it is out only its invoke's fee.
    expect(await balanceOf(agent, s0.hrp)).toBe(5n * COIN - paid.feeBase);
  }, 180_000);
});

/** A trivial-difficulty devnet data dir whose genesis gives the payee nothing (a new mainnet payee's position). */
function noFloatDevnetDir(): { dir: string; dataDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'native-refund-nofloat-'));
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const json = paramsToJson(createDevnetChainParams({ genesisTime: Math.floor(Date.now() / 1000), genesisBits: 0x207fffff }));
  const payee = encodeAddress(fromHex(DEVNET_ADDRESSES.payee), json.hrp);
  json.allocations = json.allocations.filter((a) => a.address !== payee);
  writeFileSync(join(dataDir, 'genesis.json'), `${JSON.stringify(json, null, 2)}\n`);
  return { dir, dataDir };
}

describe('a payee with no float', () => {
  test('warned at start; its first refund blocks only the sales it could not refund, the cheaper ones go on and pay for it', async () => {
    const { dir, dataDir } = noFloatDevnetDir();
    dirs.push(dir);
    node = await startNode(['--dev', '--data-dir', dataDir, '--http-port', '0', '--no-stratum', '--mine', '--mine-threads', '1'], { cwd: dir });
    const agent = testKey('refunds-out-nofloat');
    await fund(agent, 5n * COIN);
    const s0 = await status();
    expect(s0.payments.payee).toMatchObject({ spendableBase: '0', floatLow: true });
    // Warned, not stopped: ready (with the warning), and every service quoted.
    const ready0 = await fetch(`${node.url}/ready`);
    expect({ status: ready0.status, body: await ready0.json() }).toMatchObject({ status: 200, body: { ready: true, warnings: { payee: 'payee_float_low' } } });
    expect(node.lines.some((l) => String(l.msg).startsWith('the payee cannot cover a refund'))).toBe(true);
    expect(await quote('native-block-inspect', '0')).toEqual({ status: 402 });

    // block-inspect (600,000) underpaid by one unit: refunded at once, 599,999 plus a fee from a payee holding 599,999.
    const client = createAgentClient({ nodeUrl: node.url, key: agent });
    const q = await client.quote('native-block-inspect', '0');
    const underpaid = await client.sendPayment({ ...q, amount: q.amount - 1n });
    await waitFor('the refund to be owed and stuck', async () => (await status()).payments.refundsStuck === 1);
    const stuck = await status();
    expect(stuck.payments).toMatchObject({ refused: 1, refunded: 0, payee: { spendableBase: String(q.amount - 1n) } });

    // What the payee could not refund from its 599,999: block-inspect itself and dearer services. The rest still sells.
    const blocked = await fetch(`${node.url}/api/x402/native-block-inspect`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: '0' }) });
    expect({ status: blocked.status, body: await blocked.json() }).toMatchObject({ status: 503, body: { error: { code: 'payee_underfunded', refundsStuck: 1, priceBase: '600000', spendableBase: '599999' } } });
    expect(await quote('native-world-clock', 'UTC')).toEqual({ status: 402 });
    const bazaar = (await getJson<{ resources: { serviceId: string; quoteRefusal: { code: string } | null }[] }>('/api/x402/bazaar')).resources;
    const refusalOf = (id: string) => bazaar.find((r) => r.serviceId === id)!.quoteRefusal;
    expect(refusalOf('native-block-inspect')).toMatchObject({ code: 'payee_underfunded' });
    expect(refusalOf('native-market-summary')).toMatchObject({ code: 'payee_underfunded' });
    expect(refusalOf('native-world-clock')).toBeNull();
    const ready1 = await fetch(`${node.url}/ready`);
    expect({ status: ready1.status, body: await ready1.json() }).toMatchObject({ status: 200, body: { ready: true, warnings: { refunds: 'payee_underfunded' } } });

    // A cheaper sale goes through; what it pays the payee covers the stuck refund, which is mined.
    const sold = await client.call('native-world-clock', 'UTC');
    expect(sold.result).toMatchObject({ timezone: 'UTC' });
    await waitFor('the stuck refund to be mined', async () => {
      const p = (await status()).payments;
      return p.refunded === 1 && p.refundsPending === 0 && p.refundsStuck === 0;
    });
    expect(await quote('native-block-inspect', '0')).toEqual({ status: 402 });
    // The underpaying payer got back exactly what it paid; it is out its invoke's fee only (and the paid call).
    expect(await balanceOf(agent, s0.hrp)).toBe(5n * COIN - underpaid.feeBase - sold.feeBase - sold.quote.amount);
  }, 180_000);
});

describe('a congested mempool', () => {
  test('transfers at 3× the minimum fee rate fill the pool: the owed refund still enters, the node keeps quoting and stays ready', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'native-refund-congested-'));
    dirs.push(dir);
    // A block every 12 s: the pool stays full between blocks; a valid payment left unsettled is refunded 4 s after its block.
    node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--no-stratum', '--block-time', '12', '--mempool-max-mb', '0.06', '--refund-window', '4', '--http-expensive-rate', '100000', '--http-expensive-burst', '100000'], { cwd: dir });
    const agent = testKey('refunds-out-congested');
    await fund(agent, 5n * COIN);

    // A valid payment, never settled: its refund comes once the window passes.
    const client = createAgentClient({ nodeUrl: node.url, key: agent });
    const q = await client.quote('native-world-clock', 'UTC');
    const paid = await client.sendPayment(q);
    const s1 = await status();
    await waitFor('the payment block', async () => (await getJson<{ status: string }>(`/api/v1/tx/${paid.txId}`)).status === 'mined', 30_000);

    // The dev wallet fills the pool with transfers at 3× the minimum fee rate until it refuses one.
    const dev = getDevKeyPair();
    const acc = await getJson<{ pendingNonce: number }>(`/api/v1/account/${encodeAddress(dev.address, s1.hrp)}`);
    const rate = 3n * BigInt(s1.minFeeRate);
    let full = false;
    for (let n = BigInt(acc.pendingNonce); !full; n++) {
      const r = await submit(createTransferTx({ key: dev, chainId: s1.chainId, to: testKey('refunds-out-sink').address, amount: 1n, nonce: n, includeKey: false, feeRate: rate }).bytes);
      if (r.status !== 200) {
        expect(r.code).toBe('mempool_full');
        full = true;
      }
    }
    const height = (await status()).height;
    expect((await status()).payments.refunded).toBe(0);

    // The window passes: the refund is owed while the pool is full of 3× transfers.
    await waitFor('the refund to be owed', async () => (await status()).payments.refused === 1, 30_000);
    const during = await status();
    // Still the same block: the refund met the full pool.
    expect(during.height).toBe(height);
    expect(during.payments.refundsStuck).toBe(0);
    expect(await quote('native-block-inspect', '0')).toEqual({ status: 402 });
    expect(await quote('native-world-clock', 'Asia/Tokyo')).toEqual({ status: 402 });
    const ready = await fetch(`${node.url}/ready`);
    expect(ready.status).toBe(200);

    // It is in the pool, above the 3× transfers, and the next block mines it.
    await waitFor('the refund to be mined', async () => {
      const p = (await status()).payments;
      return p.refunded === 1 && p.refundsPending === 0;
    }, 60_000);
    expect(await balanceOf(agent, s1.hrp)).toBe(5n * COIN - paid.feeBase);
    // The refund mined is the one that bid above the pool's 3× floor.
    const settled = await client.settle(q, paid.txId, { waitSeconds: 1, timeoutMs: 20_000 }).then(
      () => undefined,
      (e: unknown) => e as { code: string; payload: { refundTxId?: string } },
    );
    expect(settled).toMatchObject({ code: 'payment_refunded', payload: { refundTxId: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    const refund = await getJson<{ type: string; status: string; feeBase: string; size: number }>(`/api/v1/tx/${settled!.payload.refundTxId}`);
    expect(refund).toMatchObject({ type: 'refund', status: 'mined' });
    expect(Number(refund.feeBase) / refund.size).toBeGreaterThan(3 * Number(s1.minFeeRate));
  }, 240_000);
});
