/**
 * The agent side against the real node: a devnet node process (`native-node start --dev`, its own
 * data directory, HTTP on port 0, one miner thread) and the real CLI as child processes —
 * `native-node call native-world-clock Europe/Berlin` pays with the dev wallet, waits for the
 * block and prints the time with a receipt — plus the SDK in-process for the settle-side codes.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeAddress, TESTNET_HRP } from '../../consensus/address.js';
import { getDevKeyPair, getDevPayeeKeyPair } from '../../consensus/devnet.js';
import { randomBytes } from 'node:crypto';
import { fromHex, toHex } from '../../consensus/hash.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { createFilePaymentStore } from '../../sdk/pendingPayments.js';
import { createAgentClient, isAgentClientError, AgentErrorCode, requestCommitment } from '../../sdk/client.js';
import { testKey } from '../helpers/keys.js';
import { runCli, startNode, type CliRun, type NodeProc } from '../helpers/nodeProcess.js';

// Block rewards go elsewhere, so the dev wallet's balance moves only by what the calls pay.
const minerAddress = encodeAddress(testKey('x402-it-miner').address, TESTNET_HRP);
let dir: string;
let node: NodeProc | undefined;

/** Runs `native-node <args> --node <url>` as `npm run cli` does; bounded by a timeout. */
function cli(args: string[]): Promise<CliRun> {
  return runCli([...args, '--node', node!.url], { cwd: dir, env: { HOME: join(dir, 'home') } });
}

async function balanceBase(): Promise<bigint> {
  const r = await cli(['wallet', 'balance', '--json']);
  expect(r.code).toBe(0);
  return BigInt(String(r.json!.balanceBase));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-x402-it-'));
  node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--block-time', '1', '--no-p2p', '--no-stratum', '--miner-address', minerAddress], { cwd: dir, env: { HOME: join(dir, 'home') } });
}, 120_000);

afterAll(async () => {
  if (node && node.child.exitCode === null) {
    node.child.kill('SIGTERM');
    const timer = setTimeout(() => node!.child.kill('SIGKILL'), 15_000);
    await node.exited;
    clearTimeout(timer);
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('native-node quote / call on a fresh devnet (dev wallet by default)', () => {
  test('quote prints the price without paying', async () => {
    const [human, json] = await Promise.all([cli(['quote', 'native-world-clock', 'Europe/Berlin']), cli(['quote', 'native-world-clock', 'Europe/Berlin', '--json'])]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/price\s+0\.002 NATIVE \(200000 base units\)/);
    expect(json.json).toMatchObject({ serviceId: 'native-world-clock', price: '0.002', priceBase: '200000', network: 'native-devnet', chainId: 1337, native: { scheme: 'native-x402', asset: 'NATIVE' } });
  });

  test('call native-world-clock Europe/Berlin prints the time with a receipt', async () => {
    const before = await balanceBase();
    const r = await cli(['call', 'native-world-clock', 'Europe/Berlin']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"timezone": "Europe/Berlin"');
    expect(r.stdout).toMatch(/"time": "\d\d:\d\d:\d\d"/);
    expect(r.stdout).toMatch(/receipt\s+native-world-clock paid 0\.002 NATIVE by tnative1/);
    // The payment's salt, what settles it again once settled (call --tx <id> --salt <salt>).
    expect(r.stdout).toMatch(/salt\s+[0-9a-f]{64}/);
    const tx = /tx\s+([0-9a-f]{64}) \(block (\d+)/.exec(r.stdout);
    expect(tx).not.toBeNull();
    expect(r.stderr).toContain('waiting for its block');
    // On chain: a mined agent_invoke for exactly the price; the balance fell by price + fee.
    const shown = await cli(['tx', tx![1], '--json']);
    expect(shown.json).toMatchObject({ txId: tx![1], status: 'mined', type: 'agent_invoke', serviceId: 'native-world-clock', amountBase: '200000', height: Number(tx![2]) });
    const fee = BigInt(String(shown.json!.feeBase));
    expect(before - (await balanceBase())).toBe(200_000n + fee);
  });

  test('call --json carries result, receipt, tx id, salt and fee; --tx with the salt settles the same payment again without paying', async () => {
    const r = await cli(['call', 'native-world-clock', 'Asia/Tokyo', '--json']);
    expect(r.code).toBe(0);
    const j = r.json!;
    expect(j).toMatchObject({ serviceId: 'native-world-clock', price: '0.002', priceBase: '200000', result: { timezone: 'Asia/Tokyo' }, salt: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(j.receipt).toMatchObject({ serviceId: 'native-world-clock', amount: 0.002, amountBase: '200000', txId: j.txId, network: 'native-devnet' });
    const before = await balanceBase();
    const again = await cli(['call', 'native-world-clock', 'Asia/Tokyo', '--tx', String(j.txId), '--salt', String(j.salt), '--json']);
    expect(again.code).toBe(0);
    expect(again.json!.receipt).toEqual(j.receipt);
    expect(again.json!.result).toEqual(j.result);
    expect(await balanceBase()).toBe(before);
    // Settled, the payment's salt is no longer kept: --tx alone cannot prove the payer and says so.
    const noSalt = await cli(['call', 'native-world-clock', 'Asia/Tokyo', '--tx', String(j.txId), '--json']);
    expect(noSalt.code).not.toBe(0);
    expect(noSalt.json).toMatchObject({ error: { code: 'cli_usage' } });
    expect(noSalt.json!.result).toBeUndefined();
    // The same payment for another request is refused.
    const other = await cli(['call', 'native-world-clock', 'Europe/Paris', '--tx', String(j.txId), '--salt', String(j.salt), '--json']);
    expect(other.code).toBe(2);
    expect(other.json).toMatchObject({ error: { code: 'request_mismatch', txId: j.txId } });
  });

  test('--max-price below the quote refuses before paying; errors before a quote keep their codes', async () => {
    const before = await balanceBase();
    const r = await cli(['call', 'native-world-clock', 'UTC', '--max-price', '0.001', '--json']);
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ error: { code: 'price_above_limit', priceBase: '200000', limitBase: '100000' } });
    const human = await cli(['call', 'native-world-clock', 'UTC', '--max-price', '0.001']);
    expect(human.stderr).toContain('error price_above_limit');
    expect(await balanceBase()).toBe(before);
    expect((await cli(['call', 'native-nope', '--json'])).json).toMatchObject({ error: { code: 'unknown_service' } });
    expect((await cli(['call', 'native-world-clock', 'Not/AZone', '--json'])).json).toMatchObject({ error: { code: 'invalid_request' } });
    expect((await cli(['call', '--json'])).json).toMatchObject({ error: { code: 'cli_usage' } });
  });
});

describe('the SDK against the real node', () => {
  test('call, then the settle-side codes: request_mismatch, payment_not_found, payment_already_used', async () => {
    const c = createAgentClient({ nodeUrl: node!.url, key: getDevKeyPair() });
    const ok = await c.call('native-world-clock', 'America/New_York', { timeoutMs: 60_000 });
    expect(ok.result).toMatchObject({ timezone: 'America/New_York' });
    expect(ok.receipt.txId).toBe(ok.txId);

    const code = async (p: Promise<unknown>) => {
      try {
        await p;
        return 'no error';
      } catch (e) {
        return isAgentClientError(e) ? e.code : String(e);
      }
    };
    // Paid for one request, settled with another (the payment commits to the first).
    const q = await c.quote('native-world-clock', 'Europe/Rome');
    const txId = await c.pay(q);
    const forged = { ...q, request: 'Europe/Madrid' };
    expect(await code(c.settle(forged, txId, { timeoutMs: 60_000 }))).toBe('request_mismatch');
    expect(await code(c.settle(q, '00'.repeat(32), { timeoutMs: 10_000, waitSeconds: 1 }))).toBe('payment_not_found');
    // Settled or not, a settle that does not prove the payer is told the same.
    expect(await code(c.settle({ ...ok.quote, request: 'Europe/Oslo' }, ok.txId))).toBe('request_mismatch');
    // Another agent with the txId and the right request, but not the payer's salt, gets neither the result nor a claim.
    const third = createAgentClient({ nodeUrl: node!.url, key: testKey('x402-it-third') });
    const thirdQuote = await third.quote('native-world-clock', 'America/New_York');
    expect(thirdQuote.salt).not.toBe(ok.salt);
    expect(await code(third.settle(thirdQuote, ok.txId, { timeoutMs: 10_000 }))).toBe('request_mismatch');
    expect(await code(c.call('native-world-clock', 'UTC', { maxPriceBase: 1n }))).toBe(AgentErrorCode.PRICE_ABOVE_LIMIT);
    // The right request still settles the Rome payment.
    const rome = await c.settle(q, txId, { timeoutMs: 60_000 });
    expect(rome.result).toMatchObject({ timezone: 'Europe/Rome' });
  });
});

describe('native-node call --tx with a payment the node lost', () => {
  test('the CLI broadcasts the signed payment it kept again (same tx id) and settles it; the kept file goes once settled', async () => {
    // A payment signed and kept by the CLI whose broadcast the node lost: written to the CLI's store, never sent.
    const dev = getDevKeyPair();
    const acc = (await (await fetch(`${node!.url}/api/v1/account/${encodeAddress(dev.address, TESTNET_HRP)}`)).json()) as { pendingNonce: number; publicKeyKnown: boolean };
    // Committed, as the CLI's own payments are, to the node's seller id (from its quote), the request and a salt kept with it.
    const quote = (await (await fetch(`${node!.url}/api/x402/native-world-clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'UTC' }) })).json()) as { accepts: { scheme: string; extra: { sellerId: string } }[] };
    const sellerId = quote.accepts.find((a) => a.scheme === 'native-x402')!.extra.sellerId;
    const salt = randomBytes(32).toString('hex');
    const requestHash = fromHex(requestCommitment({ sellerId, serviceId: 'native-world-clock', request: 'UTC', salt }));
    const built = createAgentInvokeTx({ key: dev, chainId: 1337, serviceId: 'native-world-clock', payTo: getDevPayeeKeyPair().address, amount: 200_000n, nonce: BigInt(acc.pendingNonce), includeKey: !acc.publicKeyKnown, feeRate: 1n, requestHash });
    const store = join(dir, 'home', '.native-node', 'payments', 'native-devnet');
    await createFilePaymentStore(store).put({ txId: built.id, tx: toHex(built.bytes), nonce: String(acc.pendingNonce), serviceId: 'native-world-clock', createdAt: Date.now(), salt, request: 'UTC' });
    const r = await cli(['call', 'native-world-clock', 'UTC', '--tx', built.id, '--json']);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ txId: built.id, salt, result: { timezone: 'UTC' }, receipt: { txId: built.id } });
    expect(readdirSync(store)).toEqual([]);
  }, 90_000);
});
