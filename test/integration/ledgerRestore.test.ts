/**
 * Restores as an operator does them, on real node processes started without any witness flag: a
 * selling node (not mining) follows a mining peer; its data directory is snapshotted, it serves
 * calls and leaves payments unsettled, then
 *   (a) the ledger alone is restored and `chain/` deleted (the chain comes back from the peer),
 *   (b) the whole data directory is restored from the snapshot, its own witness with it: the
 *       default witness outside it (the user's state directory) finds it behind,
 *   (c) the whole data directory is restored onto "another machine" (its outside witness
 *       missing) with `chain/` deleted: the ledger cannot be proven current;
 * and, on a second seller, snapshots taken at seeded random points (before a payment, with a
 * payment paid but not mined yet — the ledger one block before it — and with a payment mined but
 * not settled) are restored in a seeded random order and style. Each time: no payment is served a
 * second time (a settle answers the stored result, or 409 payment_in_ledger_gap), none is
 * refunded after the window, and `ledger gap` lists what was found.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { getDevKeyPair } from '../../consensus/devnet.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { COIN, DEVNET_POW_LIMIT_BITS } from '../../consensus/params.js';
import { createAgentClient, isAgentClientError, type AgentClient } from '../../sdk/client.js';
import { settleCode } from '../helpers/settleCode.js';
import { runCli } from '../helpers/nodeProcess.js';
import { testKey } from '../helpers/keys.js';
import { Rng } from '../helpers/rng.js';
import { createP2PCluster, getJson, isMined, sendTransfer, stopProc, waitUntil, writeSharedGenesis, type P2PCluster, type P2PProc } from '../p2p/helpers/processes.js';

/** A devnet genesis for interval mining at one block a second. */
const PACED = { targetSpacing: 1, genesisBits: DEVNET_POW_LIMIT_BITS, powLimitBits: DEVNET_POW_LIMIT_BITS };

const SERVICE = 'native-world-clock';
const WINDOW_S = 6;
/** The seed of the random restore points (change it to explore; a failure names it). */
const SEED = Number(process.env.LEDGER_RESTORE_SEED ?? 38_002);

let cluster: P2PCluster;
let miner: P2PProc;
const running = new Map<string, P2PProc>();

beforeAll(async () => {
  cluster = createP2PCluster('native-ledger-restore-', ['miner', 'seller', 'seller2']);
  // Interval mining, a block a second (the genesis --block-time 1 needs): calls settle within the short window.
  writeSharedGenesis(['miner', 'seller', 'seller2'].map((n) => join(cluster.dir, n)), PACED);
  miner = await cluster.start('miner', ['--mine', '--block-time', '1']);
}, 120_000);

afterAll(async () => {
  await cluster.stop();
});

/** Starts the seller `name` (no witness flag unless `extra` has one), caught up with the miner before it sells. */
async function startSeller(name: string, extra: string[] = [], windowS = WINDOW_S): Promise<P2PProc> {
  const s = await cluster.start(name, ['--no-mine', '--bootstrap', miner.addr, '--refund-window', String(windowS), ...extra]);
  running.set(name, s);
  // A chain downloaded again arrives block by block.
  await waitUntil(async () => ((await getJson(s.url, '/api/v1/status')).height as number) >= ((await getJson(miner.url, '/api/v1/status')).height as number) - 1, 60_000, "the seller to reach the miner's tip");
  return s;
}

async function stopSeller(name: string): Promise<void> {
  const s = running.get(name)!;
  running.delete(name);
  await stopProc(s);
}

/** Waits until the status lists gaps holding `invokes` payments in all (a chain downloaded again is counted as it arrives). */
async function waitForGap(url: string, invokes: number): Promise<Record<string, unknown>[]> {
  let last: Record<string, unknown>[] = [];
  await waitUntil(
    async () => {
      last = (await getJson(url, '/api/v1/status')).payments.ledgerGaps;
      return last.filter((g) => g.resolution === undefined).reduce((n, g) => n + ((g.invokes as number | undefined) ?? 0), 0) === invokes;
    },
    60_000,
    `${invokes} payments counted in the gaps`,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; the status lists ${JSON.stringify(last)}`);
  });
  return last;
}

function restoreDir(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
}

/** Past the refund window (`waitS`: how long to wait for it), the seller has refunded nothing (none is pending either). */
async function expectNothingRefunded(url: string, waitS = WINDOW_S + 2): Promise<void> {
  await new Promise((r) => setTimeout(r, waitS * 1000));
  const p = (await getJson(url, '/api/v1/status')).payments;
  expect({ refunded: p.refunded, refundsPending: p.refundsPending }).toEqual({ refunded: 0, refundsPending: 0 });
}

describe('a restored ledger, found by its witness, without any flag', () => {
  test('ledger restored with chain/ deleted, the whole data directory restored, and restored onto another machine: nothing served twice, nothing refunded', async () => {
    const key = getDevKeyPair();
    const sellerDir = join(cluster.dir, 'seller');
    // A first run, then the operator's snapshot of the whole data directory (node stopped).
    await startSeller('seller');
    await stopSeller('seller');
    cpSync(sellerDir, join(cluster.dir, 'snapshot'), { recursive: true });
    expect(existsSync(join(sellerDir, 'ledger-witness.json'))).toBe(true);

    // After the snapshot: one call served, one payment left unsettled — a block or two, no more.
    let s = await startSeller('seller');
    let client = createAgentClient({ nodeUrl: s.url, key });
    const served = await client.call(SERVICE, 'Europe/Berlin', { timeoutMs: 60_000 });
    const q = await client.quote(SERVICE, 'Asia/Tokyo');
    const unsettled = await client.pay(q);
    await waitUntil(async () => (await getJson(s.url, `/api/v1/tx/${unsettled}`)).status === 'mined', 60_000, 'the unsettled payment to be mined at the seller');
    await stopSeller('seller');

    // (a) The ledger alone restored, the chain deleted (downloaded again from the miner).
    restoreDir(join(cluster.dir, 'snapshot', 'ledger'), join(sellerDir, 'ledger'));
    rmSync(join(sellerDir, 'chain'), { recursive: true, force: true });
    const listed = await runCli(['ledger', 'gap', '--data-dir', sellerDir, '--dev', '--json'], { cwd: cluster.dir });
    expect(listed.code).toBe(0);
    expect(listed.json).toEqual({ gaps: [expect.objectContaining({ cause: 'ledger_restored' })] });
    s = await startSeller('seller');
    expect(s.lines.some((l) => String(l.msg).includes('behind its witness'))).toBe(false); // found by the command already, recorded once
    await waitForGap(s.url, 2);
    client = createAgentClient({ nodeUrl: s.url, key });
    expect(await settleCode(client, SERVICE, 'Europe/Berlin', served.txId, served.salt)).toBe('payment_in_ledger_gap');
    expect(await settleCode(client, SERVICE, 'Asia/Tokyo', unsettled, q.salt!)).toBe('payment_in_ledger_gap');
    // New calls sell as usual; past the window neither payment is refunded.
    const utc = await client.call(SERVICE, 'UTC', { timeoutMs: 60_000 });
    expect(utc.receipt.serviceId).toBe(SERVICE);
    await expectNothingRefunded(s.url);
    await stopSeller('seller');

    // (b) The whole data directory restored from the snapshot, its own witness with it: the default one outside it is not.
    restoreDir(join(cluster.dir, 'snapshot'), sellerDir);
    s = await startSeller('seller');
    expect(s.lines.some((l) => String(l.msg).includes('behind its witness (restored from a backup?)'))).toBe(true);
    // The snapshot knows none of the three payments made since: the two of before and the one served in (a).
    await waitForGap(s.url, 3);
    client = createAgentClient({ nodeUrl: s.url, key });
    expect(await settleCode(client, SERVICE, 'Europe/Berlin', served.txId, served.salt)).toBe('payment_in_ledger_gap');
    expect(await settleCode(client, SERVICE, 'UTC', utc.txId, utc.salt)).toBe('payment_in_ledger_gap');
    await expectNothingRefunded(s.url);
    await stopSeller('seller');

    // (c) The snapshot restored onto another machine (no outside witness there: a state directory of its own), chain/ deleted.
    restoreDir(join(cluster.dir, 'snapshot'), sellerDir);
    rmSync(join(sellerDir, 'chain'), { recursive: true, force: true });
    const elsewhere = join(cluster.dir, 'other-machine', 'witness.json');
    s = await startSeller('seller', ['--ledger-witness', elsewhere]);
    expect(s.lines.some((l) => String(l.msg).includes('is missing, though this ledger kept one'))).toBe(true);
    const gaps = await waitForGap(s.url, 3);
    expect(gaps).toEqual([expect.objectContaining({ cause: 'ledger_restored', witnessMissing: elsewhere })]);
    client = createAgentClient({ nodeUrl: s.url, key });
    expect(await settleCode(client, SERVICE, 'Europe/Berlin', served.txId, served.salt)).toBe('payment_in_ledger_gap');
    expect(await settleCode(client, SERVICE, 'Asia/Tokyo', unsettled, q.salt!)).toBe('payment_in_ledger_gap');
    expect(await settleCode(client, SERVICE, 'UTC', utc.txId, utc.salt)).toBe('payment_in_ledger_gap');
    await expectNothingRefunded(s.url);
    await stopSeller('seller');
  }, 400_000);
});

/** A served call, as its payer keeps it. */
interface Served {
  readonly request: string;
  readonly txId: string;
  readonly salt: string;
  readonly result: unknown;
  /** Height of its payment. */
  readonly height: number;
}

/** A snapshot of the whole data directory, taken before call `before` was settled. */
interface Snapshot {
  readonly name: string;
  readonly kind: 'before-pay' | 'paid-unmined' | 'mined-unsettled';
  readonly before: number;
  /** The height the seller's ledger had judged up to (its tip when stopped). */
  readonly tip: number;
}

/** `xs` in a random order (Fisher-Yates). */
function shuffled<T>(rng: Rng, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A settle of an earlier payment: the result it answers (the stored one: never run again) or the error code. */
async function settleAgain(client: AgentClient, c: Served): Promise<{ result: unknown } | { code: string }> {
  const q = await client.quote(SERVICE, c.request);
  return client.settle(q, c.txId, { timeoutMs: 20_000, salt: c.salt }).then(
    (r) => ({ result: r.result }),
    (e: unknown) => ({ code: isAgentClientError(e) ? e.code : String(e) }),
  );
}

describe('restores at random points', () => {
  test(`snapshots before, between and just after payments, restored in a random order and style (seed ${SEED}): none served twice, none refunded`, async () => {
    const rng = new Rng(SEED);
    const dir = join(cluster.dir, 'seller2');
    // A payer of its own (the first test's payer keeps its nonces).
    const payer: HybridKeyPair = testKey('ledger-restore-random-payer');
    const fund = await sendTransfer(miner.url, cluster.params, getDevKeyPair(), payer.address, 10n * COIN);
    await waitUntil(() => isMined(miner.url, fund), 30_000, 'the payer to be funded');
    const requests = ['America/New_York', 'Europe/Paris', 'Australia/Sydney', 'Africa/Cairo'];
    // Every kind of point once, in a random order, and one more at random.
    const kinds: Snapshot['kind'][] = shuffled(rng, ['before-pay', 'paid-unmined', 'mined-unsettled']);
    kinds.push(rng.pick(['before-pay', 'paid-unmined', 'mined-unsettled'] as const));

    const calls: Served[] = [];
    const snapshots: Snapshot[] = [];
    // A long window while the calls are made (a snapshot stops the seller between a payment and its settle).
    let s = await startSeller('seller2', [], 120);
    const snapshot = async (kind: Snapshot['kind']) => {
      const tip = (await getJson(s.url, '/api/v1/status')).height as number;
      await stopSeller('seller2');
      const name = `snap-${snapshots.length}`;
      cpSync(dir, join(cluster.dir, name), { recursive: true });
      snapshots.push({ name, kind, before: calls.length, tip });
      s = await startSeller('seller2', [], 120);
    };
    for (const [i, kind] of kinds.entries()) {
      if (kind === 'before-pay') await snapshot(kind);
      let client = createAgentClient({ nodeUrl: s.url, key: payer });
      const q = await client.quote(SERVICE, requests[i]);
      const txId = await client.pay(q);
      if (kind === 'mined-unsettled') await waitUntil(async () => (await getJson(s.url, `/api/v1/tx/${txId}`)).status === 'mined', 30_000, 'the payment to be mined');
      if (kind !== 'before-pay') await snapshot(kind);
      client = createAgentClient({ nodeUrl: s.url, key: payer });
      const r = await client.settle(await client.quote(SERVICE, requests[i]), txId, { timeoutMs: 60_000, salt: q.salt });
      calls.push({ request: requests[i]!, txId, salt: q.salt!, result: r.result, height: (await getJson(s.url, `/api/v1/tx/${txId}`)).height as number });
    }
    await stopSeller('seller2');

    // Three of the snapshots, each restored as one of the ways an operator restores; the window is short now (every payment is past it).
    const styles = ['whole', 'ledger', 'ledger-no-chain', 'whole-no-chain'] as const;
    for (const snap of shuffled(rng, snapshots).slice(0, 3)) {
      const style = rng.pick(styles);
      // Its ledger stopped this many blocks before the block of the call it missed (a paid, unmined payment: one, as a rule).
      const what = `snapshot ${snap.name} (${snap.kind}, ${calls[snap.before]!.height - snap.tip} block(s) before call ${snap.before}'s payment) restored ${style}`;
      if (style.startsWith('whole')) restoreDir(join(cluster.dir, snap.name), dir);
      else restoreDir(join(cluster.dir, snap.name, 'ledger'), join(dir, 'ledger'));
      if (style.endsWith('no-chain')) rmSync(join(dir, 'chain'), { recursive: true, force: true });
      s = await startSeller('seller2');
      const client = createAgentClient({ nodeUrl: s.url, key: payer });
      for (const [i, c] of calls.entries()) {
        const again = await settleAgain(client, c);
        // Settled in the snapshot: the stored result. Not yet: the gap holds it. Never a second run.
        const want = i < snap.before ? { result: c.result } : { code: 'payment_in_ledger_gap' };
        expect({ what, call: i, again }).toEqual({ what, call: i, again: want });
      }
      // Every payment's window ended long ago: a refund would go at the watcher's first checks (a quarter of the window apart).
      await expectNothingRefunded(s.url, 4);
      await stopSeller('seller2');
    }
  }, 400_000);
});
