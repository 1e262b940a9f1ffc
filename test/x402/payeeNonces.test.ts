/**
 * No payee nonce signed twice across lease moves: three in-process fleet nodes over one real
 * PostgreSQL ledger and one chain, each with its own mempool, signer lease, refunds and payouts.
 * A seeded schedule sells provider calls (USDC rail: a payout by plain transfer; native rail: a
 * provider_payout naming the invoke) and failed calls (native: a refund) at random nodes while the
 * lease moves — handed over, or its holder killed with its mempool (what it signed and never
 * relayed is gone) — PostgreSQL is stopped and started (every lease lost at once, one node takes
 * it again; the calls under way wait for the ledger and end once it is back), and blocks are mined
 * from random mempools with random relays. Traffic does not wait for a new holder to finish taking
 * over: it is what signed payouts with nonces stored refunds held.
 *
 * A killed node's calls under way die with it (as a process's would): a call cut after its claim is
 * refunded by the holder's sweep of claims whose node restarted (as node/payments.ts sweeps them),
 * one cut after its settlement is paid out all the same (the next signer's start, or the restarted
 * node's own, owes what it left out); any other failure of a call fails the test.
 *
 * Every payee transaction any node lets out is seen at its mempool's `add`: a nonce signed with
 * two different payloads (a refund and a payout, two payouts) fails the test. At the end, by what
 * the ledger says each call came to: every claimed native payment not settled is refunded once,
 * every settled provider call paid once (each native call by one payout naming it), and no payee
 * transaction is left unmined.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { Level } from 'level';
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { bytesEqual, fromHex, toHex } from '../../consensus/hash.js';
import { COIN } from '../../consensus/params.js';
import { decodeTx, encodeTx, txId } from '../../consensus/tx.js';
import { decodeInvokeRecord, invokeKey } from '../../consensus/txTypes/agentInvoke.js';
import { payoutKey } from '../../consensus/registryState.js';
import { LedgerErrorCode } from '../../x402/ledger/ledger.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { PgLedger } from '../../x402/ledger/pgLedger.js';
import { PayeeNonces } from '../../x402/native/payeeNonces.js';
import { beginPayeeSigning, endPayeeSigning } from '../../x402/native/payeeSigner.js';
import { PayoutManager } from '../../x402/providers/payouts.js';
import { pgPayeeTxLog } from '../../x402/native/pgPayeeTxLog.js';
import { pgPayoutStore, type PayoutQuery } from '../../x402/providers/pgPayoutStore.js';
import { RefundManager } from '../../x402/native/refunds.js';
import { SIGNER_LEASE_KEY, SignerLease } from '../../x402/fleet/signerLease.js';
import { FLEET_GONE_MS, writeHeartbeat } from '../../x402/fleet/fleet.js';
import { requestCommitment } from '../../x402/core/wire.js';
import { testKey } from '../helpers/keys.js';
import { mineFromPool } from '../helpers/mine.js';
import { usePostgres } from '../helpers/usePostgres.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { CountingVerifier } from '../helpers/verifier.js';

const caller = getDevKeyPair();
const payee = testKey('payee-nonces-payee');
const provider = testKey('payee-nonces-provider');
const miner = testKey('payee-nonces-miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: 10n * COIN }] });
const SERVICE = 'echo-bot-upper';
const PRICE = 1_000_000n;
const SHARE = 950_000n; // PRICE minus the devnet's 5 % node fee
const INVOKES = 12;
/** Native provider calls (each paid out by a provider_payout naming its invoke). */
const PAYOUT_INVOKES = 8;
/** PostgreSQL stops and starts at most this many times per schedule. */
const PG_RESTARTS = 2;
const directory = { payoutAddressOf: (id: string) => (id === SERVICE ? encodeAddress(provider.address, 'tnative') : undefined), priceBaseOf: () => PRICE };
const failure = { code: 'service_failed', message: 'the service failed' };
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

const postgres = usePostgres(120_000);
afterAll(cleanupTmp);

/** A small seeded generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every payee transaction let out, by nonce: the distinct payloads (type and bytes) and the ids. */
class NonceCount {
  readonly byNonce = new Map<bigint, Map<string, Set<string>>>();
  seen(bytes: Uint8Array): void {
    const tx = decodeTx(bytes);
    if (!bytesEqual(tx.from, payee.address)) return;
    const payloads = this.byNonce.get(tx.nonce) ?? new Map<string, Set<string>>();
    this.byNonce.set(tx.nonce, payloads);
    const key = `${tx.type}:${toHex(tx.payload)}`;
    payloads.set(key, (payloads.get(key) ?? new Set()).add(toHex(txId(bytes))));
  }
  /** Nonces signed for two different things. */
  twice(): { nonce: string; payloads: string[] }[] {
    return [...this.byNonce].filter(([, p]) => p.size > 1).map(([n, p]) => ({ nonce: n.toString(), payloads: [...p.keys()].map((k) => k.slice(0, 24)) }));
  }
}

/** One fleet node: its ledger connection, mempool, lease, nonce allocator, refunds and payouts, wired as node/payments.ts wires them. */
interface SimNode {
  readonly id: string;
  readonly ledger: PgLedger;
  readonly pool: Mempool;
  readonly lease: SignerLease;
  readonly nonces: PayeeNonces;
  readonly refunds: RefundManager;
  readonly payouts: PayoutManager;
  /** Whether it signs now (holds the lease and re-sent what is stored). */
  signs(): boolean;
  /** Its signer role's queue (begin and end of signing, in order). */
  queue: Promise<void>;
  /** When it started (its fleet heartbeat's started_at), Unix ms. */
  readonly startedAt: number;
  /** Killed: its calls under way end here. */
  killed: boolean;
  /** Its heartbeat (every 500 ms, as node/payments.ts's fleet heartbeat). */
  readonly beat: NodeJS.Timeout;
}

async function openNode(id: string, url: string, chain: Chain, verifier: CountingVerifier, db: Level<string, string>, count: NonceCount): Promise<SimNode> {
  const ledger = await PgLedger.open(url, { nodeId: id });
  const pool = createMempool(chain, verifier, params);
  pool.start();
  const add = pool.add.bind(pool);
  pool.add = (bytes, opts) => {
    count.seen(bytes);
    return add(bytes, opts);
  };
  const lease = new SignerLease(url, { pollMs: 40, name: id });
  const q: PayoutQuery = (text, values) => ledger.query(text, values);
  const nonces = new PayeeNonces(pgPayeeTxLog(q, { nodeId: id, fence: { leaseKey: SIGNER_LEASE_KEY, sessionName: lease.sessionName() } }), { state: 'closed' });
  const signs = () => lease.isHolder() && nonces.isOpen();
  // As node/payments.ts's FleetRefunds: a node that does not sign records the refund owed.
  class Refunds extends RefundManager {
    override refund(rid: string, error: { code: string; message: string }): ReturnType<RefundManager['refund']> {
      return signs() ? super.refund(rid, error) : ledger.refundPending(rid, error);
    }
  }
  const refunds = new Refunds(chain, pool, ledger, payee, params, { retryMs: 60_000, recoverClaims: false, nonces, logger: quiet });
  const payouts = new PayoutManager(db, chain, pool, ledger, payee, params, directory, { retryMs: 60_000, store: pgPayoutStore(q), nonces, logger: quiet });
  const startedAt = Date.now();
  const heartbeat = () => writeHeartbeat(q, id, { url: undefined, version: 'test', network: params.network, height: chain.tip.height, tip: chain.tip.hashHex, leaseHolder: lease.isHolder() }, startedAt).catch(() => 0);
  await heartbeat();
  const beat = setInterval(() => void heartbeat(), 500);
  const node: SimNode = { id, ledger, pool, lease, nonces, refunds, payouts, signs, queue: Promise.resolve(), startedAt, killed: false, beat };
  lease.on('acquired', () => {
    node.queue = node.queue.then(() => beginPayeeSigning({ chain, mempool: pool, payee, nonces, refunds, payouts })).catch(() => undefined);
  });
  lease.on('lost', () => {
    nonces.close();
    node.queue = node.queue.then(() => endPayeeSigning({ nonces, refunds, payouts })).catch(() => undefined);
  });
  return node;
}

/** The holder's sweep (node/payments.ts): claims of nodes gone or restarted since, refunds other nodes recorded, payouts other nodes owed. */
async function sweep(n: SimNode): Promise<void> {
  if (!n.signs()) return;
  for (const rec of await n.ledger.orphanedClaims(FLEET_GONE_MS)) {
    if (!n.signs()) return;
    if (rec.rail !== 'native') continue;
    try {
      await n.refunds.refund(rec.id, { code: 'node_restarted', message: 'the node serving this call stopped; the payment is refunded' });
    } catch (e) {
      if ((e as { code?: string }).code !== LedgerErrorCode.CONFLICT) throw e;
    }
  }
  const pending = new Set(n.refunds.pendingIds());
  for (const rec of await n.ledger.unsentRefunds()) if (n.signs() && !pending.has(rec.id)) await n.refunds.refund(rec.id, rec.error ?? failure);
  if (n.signs()) await n.payouts.adoptOwed();
}

/**
 * Runs a step of a call (a claim, a settle, a refund, a payout owed) until the ledger answers: while PostgreSQL
 * restarts it is unreachable, and a node keeps the end it has to write until it is back (bounded).
 */
async function whenLedgerBack<T>(at: SimNode, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    if (at.killed) throw new Error(`node ${at.id} was killed`);
    try {
      return await fn();
    } catch (e) {
      if (at.killed || (e as { code?: string }).code !== LedgerErrorCode.UNAVAILABLE || attempt >= 100) throw e;
      await sleep(100);
    }
  }
}

/** Copies `from`'s transactions into `to` (gossip); refusals are the mempool's business. */
async function relay(from: Mempool, to: Mempool): Promise<void> {
  for (const e of from.list(500)) await to.add(encodeTx(e.tx)).catch(() => undefined);
}

async function runFleet(seed: number): Promise<void> {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const url = await postgres.server.createDatabase(`payee_nonces_${seed}`);
  const dir = await tmpDir();
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now: () => params.genesis.time + 1_000_000 });
  const db = new Level<string, string>(join(dir, 'providers'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  const count = new NonceCount();
  const nodes: SimNode[] = [];
  const stopped = new Set<SimNode>();
  const inflight: Promise<unknown>[] = [];
  /** Calls that failed while their node lived: none may. */
  const failures: string[] = [];
  let cut = 0;
  /**
   * Follows a call (which must end unless its node is killed) or a background step (a sweep, a lease taken again),
   * which may also fail while PostgreSQL restarts: the product runs those again on its next interval.
   */
  const track = (at: SimNode, p: Promise<unknown>, kind: 'call' | 'background' = 'call') =>
    inflight.push(
      p.catch((e: unknown) => {
        const code = (e as { code?: string }).code;
        if (at.killed) cut++;
        else if (kind === 'call' || code !== LedgerErrorCode.UNAVAILABLE) failures.push(`${at.id} ${kind}: ${code ?? ''} ${(e as Error).message}`);
      }),
    );
  try {
    for (const id of ['n-a', 'n-b', 'n-c']) nodes.push(await openNode(id, url, chain, verifier, db, count));
    const sellerId = nodes[0]!.ledger.sellerId;
    // The failed calls' payments, mined up front.
    const commitment = requestCommitment({ sellerId, serviceId: SERVICE, request: 'hi', salt: '44'.repeat(32) });
    const [invokes, paid] = [0, INVOKES].map((from, k) =>
      Array.from({ length: k === 0 ? INVOKES : PAYOUT_INVOKES }, (_, i) =>
        createAgentInvokeTx({ key: caller, chainId: params.chainId, serviceId: SERVICE, payTo: payee.address, amount: PRICE, requestHash: fromHex(commitment), nonce: BigInt(from + i), includeKey: from + i === 0 }),
      ),
    ) as [ReturnType<typeof createAgentInvokeTx>[], ReturnType<typeof createAgentInvokeTx>[]];
    for (const i of [...invokes, ...paid]) await nodes[0]!.pool.add(i.bytes);
    await mineFromPool(chain, nodes[0]!.pool, miner.address);
    for (const n of nodes) await n.lease.start();

    let usdcCalls = 0;
    const usdcIds: string[] = [];
    let failed = 0;
    let nativeCalls = 0;
    let pgRestarts = 0;
    const holder = () => nodes.find((n) => n.lease.isHolder());
    /** A provider call served at `at`: claimed, settled, its payout owed (sent at once by a signing node, else by the holder's sweep). */
    const sell = async (at: SimNode, id: string, rail: 'native' | 'usdc', payer: string, amount: string) => {
      await whenLedgerBack(at, () => at.ledger.claim({ id, rail, serviceId: SERVICE, requestHash: commitment, caller: payer, amount }));
      await whenLedgerBack(at, async () => {
        if ((await at.ledger.get(id))?.status !== 'settled') await at.ledger.settle(id, 'HI', { txId: id });
      });
      await whenLedgerBack(at, () => (at.signs() ? at.payouts.owe(id, SERVICE, PRICE, rail) : at.payouts.oweLater(id, SERVICE, PRICE, rail)));
    };
    for (let step = 0; step < 70; step++) {
      const r = random();
      const at = pick(nodes.filter((n) => !stopped.has(n)));
      if (r < 0.2 || (r < 0.3 && nativeCalls >= PAYOUT_INVOKES)) {
        // A USDC provider call served at a random node: its payout owed, sent at once by a signing node.
        const id = `usdc:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a:0x${(seed * 1000 + usdcCalls++).toString(16).padStart(64, '0')}`;
        usdcIds.push(id);
        track(at, sell(at, id, 'usdc', 'payer', '5000'));
      } else if (r < 0.3) {
        // A native provider call served at a random node: a provider_payout naming its invoke.
        const inv = paid[nativeCalls++]!;
        track(at, sell(at, inv.id, 'native', encodeAddress(caller.address, 'tnative'), PRICE.toString()));
      } else if (r < 0.45 && failed < INVOKES) {
        // A native call whose service failed at a random node: refunded (by it when it signs, else by the holder's sweep).
        const inv = invokes[failed++]!;
        track(
          at,
          (async () => {
            await whenLedgerBack(at, () => at.ledger.claim({ id: inv.id, rail: 'native', serviceId: SERVICE, requestHash: commitment, caller: encodeAddress(caller.address, 'tnative'), amount: PRICE.toString() }));
            await whenLedgerBack(at, () => at.refunds.refund(inv.id, failure));
          })(),
        );
      } else if (r < 0.5 && pgRestarts < PG_RESTARTS) {
        // PostgreSQL stops for a moment: every lease is lost at once, the calls under way wait for it.
        pgRestarts++;
        await postgres.server.halt();
        await sleep(100 + random() * 400);
        await postgres.server.resume();
      } else if (r < 0.65) {
        // The lease moves: handed over (stop, back in the race later) or its holder killed with its mempool.
        const h = holder();
        if (h && random() < 0.5) {
          await h.lease.stop();
          stopped.add(h);
          track(
            h,
            sleep(50 + random() * 200).then(async () => {
              stopped.delete(h);
              await h.lease.start();
            }),
            'background',
          );
        } else if (h) {
          // Killed: its calls under way die with it; it starts again under the same node id.
          h.killed = true;
          clearInterval(h.beat);
          h.nonces.close();
          const i = nodes.indexOf(h);
          await h.lease.stop();
          await h.queue;
          h.pool.stop();
          await h.ledger.close();
          const n = (nodes[i] = await openNode(h.id, url, chain, verifier, db, count));
          await n.lease.start();
          await n.queue;
          // As node/payments.ts's start: a node that does not sign records the payouts left out for the holder.
          if (!n.lease.isHolder()) await whenLedgerBack(n, () => n.payouts.recordLeftOut(n.startedAt)).catch((e: unknown) => failures.push(`${n.id} start: ${(e as Error).message}`));
        }
      } else if (r < 0.8) {
        const from = pick(nodes);
        const to = pick(nodes);
        if (from !== to) await relay(from.pool, to.pool);
      } else if (r < 0.9) {
        await mineFromPool(chain, pick(nodes).pool, miner.address);
      } else {
        const h = holder();
        if (h) track(h, sweep(h), 'background');
      }
      await sleep(random() * 25);
    }
    await Promise.all(inflight);
    expect(count.twice()).toEqual([]);

    // Quiet: one holder relays, sweeps and mines until everything owed is mined (bounded).
    const all = () => nodes.filter((n) => !stopped.has(n));
    for (const n of nodes) if (!n.lease.isHolder()) await n.lease.start().catch(() => undefined);
    const t0 = Date.now();
    while (!holder()?.signs() && Date.now() - t0 < 20_000) await sleep(50);
    const h = holder()!;
    expect(h.signs()).toBe(true);
    /**
     * What each call came to by the ledger, and whether the chain agrees: a native payment settled is paid out by the
     * payout naming it and never refunded; one claimed and not settled (its service failed, or its node died mid-call) is
     * refunded once and never paid out; one never claimed (its node died first) neither. Answers the disagreements.
     */
    const verdict = async () => {
      const wrong: string[] = [];
      let settled = 0;
      for (const inv of [...invokes.slice(0, failed), ...paid.slice(0, nativeCalls)]) {
        const status = (await whenLedgerBack(h, () => h.ledger.get(inv.id)))?.status;
        const view = await chain.getStateView([payoutKey(fromHex(inv.id)), invokeKey(fromHex(inv.id))]);
        const rec = view.get(invokeKey(fromHex(inv.id)));
        const got = { paidOut: view.get(payoutKey(fromHex(inv.id))) !== undefined, refunded: rec !== undefined && decodeInvokeRecord(rec).refunded };
        const want = status === 'settled' ? { paidOut: true, refunded: false } : status === undefined ? { paidOut: false, refunded: false } : { paidOut: false, refunded: true };
        if (status === 'settled') settled++;
        if (got.paidOut !== want.paidOut || got.refunded !== want.refunded || (status !== undefined && status !== 'settled' && status !== 'refunded')) wrong.push(`${inv.id.slice(0, 12)}: ledger ${status ?? 'none'}, chain ${JSON.stringify(got)}`);
      }
      for (const id of usdcIds) if ((await whenLedgerBack(h, () => h.ledger.get(id)))?.status === 'settled') settled++;
      const balance = (await chain.getAccount(provider.address)).balance;
      if (balance !== BigInt(settled) * SHARE) wrong.push(`provider balance ${balance}, owed ${BigInt(settled) * SHARE} for ${settled} settled provider calls`);
      return wrong;
    };
    for (let round = 0; round < 40; round++) {
      for (const n of all()) if (n !== h) await relay(n.pool, h.pool);
      await sweep(h);
      await h.refunds.idle();
      await h.payouts.idle();
      await mineFromPool(chain, h.pool, miner.address);
      await h.refunds.idle();
      await h.payouts.idle();
      if ((await verdict()).length === 0 && h.pool.list(500).every((e) => !bytesEqual(e.tx.from, payee.address))) break;
    }
    process.stderr.write(`seed ${seed}: ${usdcCalls} USDC and ${nativeCalls} native provider calls, ${failed} refunds, ${cut} calls cut by kills, ${pgRestarts} PostgreSQL restarts, ${count.byNonce.size} payee nonces, chain height ${chain.tip.height}\n`);
    expect(failures).toEqual([]);
    expect(count.twice()).toEqual([]);
    // Each refund mined once (consensus takes one per invoke), each provider call paid once: a native one by the payout naming its invoke.
    expect(await verdict()).toEqual([]);
    expect(pgRestarts).toBeGreaterThan(0);
    // Nothing stranded: every nonce let out was used on chain, and no payee transaction waits.
    const payeeNonce = (await chain.getAccount(payee.address)).nonce;
    expect([...count.byNonce.keys()].filter((n) => n >= payeeNonce)).toEqual([]);
    for (const n of nodes) expect(n.pool.list(500).filter((e) => bytesEqual(e.tx.from, payee.address))).toEqual([]);
  } finally {
    await Promise.all(inflight);
    for (const n of nodes) {
      clearInterval(n.beat);
      n.nonces.close();
      await n.lease.stop();
      await n.queue;
      n.pool.stop();
      await n.ledger.close();
    }
    await db.close();
    await chain.close();
  }
}

describe('the fleet\'s nonce slots (payee_txs)', () => {
  test('a nonce goes to one purpose, a purpose holds one live nonce, and only the lease holder\'s session claims or replaces', async () => {
    const url = await postgres.server.createDatabase('payee_slots');
    const ledger = await PgLedger.open(url, { nodeId: 'n-a' });
    const q: PayoutQuery = (text, values) => ledger.query(text, values);
    const holder = new SignerLease(url, { name: 'n-a' });
    const other = new SignerLease(url, { name: 'n-b' });
    try {
      await holder.start();
      await other.start();
      expect(holder.isHolder()).toBe(true);
      const mine = pgPayeeTxLog(q, { fence: { leaseKey: SIGNER_LEASE_KEY, sessionName: holder.sessionName() } });
      const theirs = pgPayeeTxLog(q, { fence: { leaseKey: SIGNER_LEASE_KEY, sessionName: other.sessionName() } });
      const slot = (nonce: bigint, purpose: string, txId = 'aa'.repeat(32)) => ({ nonce, purpose, txId, raw: 'ab' });
      const who = toHex(payee.address);
      expect(await theirs.claim(who, slot(0n, 'refund:01'), 0n)).toBe(false);
      expect(await mine.claim(who, slot(0n, 'refund:01'), 0n)).toBe(true);
      expect(await mine.claim(who, slot(0n, 'payout:02'), 0n)).toBe(false);
      expect(await mine.claim(who, slot(1n, 'refund:01'), 0n)).toBe(false);
      expect(await mine.claim(who, slot(1n, 'payout:02'), 0n)).toBe(true);
      // A bump: the same purpose at its nonce; never another purpose's nonce, never from a session without the lease.
      expect(await theirs.replace(who, slot(0n, 'refund:01', 'bb'.repeat(32)))).toBe(false);
      expect(await mine.replace(who, slot(0n, 'payout:02', 'bb'.repeat(32)))).toBe(false);
      expect(await mine.replace(who, slot(0n, 'refund:01', 'bb'.repeat(32)))).toBe(true);
      expect((await mine.live(who, 0n)).map((s) => [s.nonce, s.purpose, s.txId.slice(0, 2)])).toEqual([
        [0n, 'refund:01', 'bb'],
        [1n, 'payout:02', 'aa'],
      ]);
      // Once the chain used nonce 0 and the refund's transaction was lost, it may take a new nonce.
      expect(await mine.claim(who, slot(2n, 'refund:01'), 1n)).toBe(true);
      // The lease moves: the old holder's claims are refused at once, the new holder's accepted.
      await holder.stop();
      const t0 = Date.now();
      while (!other.isHolder() && Date.now() - t0 < 10_000) await sleep(50);
      expect(await mine.claim(who, slot(3n, 'payout:03'), 1n)).toBe(false);
      expect(await theirs.claim(who, slot(3n, 'payout:03'), 1n)).toBe(true);
    } finally {
      await holder.stop();
      await other.stop();
      await ledger.close();
    }
  }, 60_000);
});

describe('payee nonces of a fleet across lease moves', () => {
  test.each([390031, 310031, 7])('seed %i: no (payee, nonce) signed for two transactions; every refund and payout mined once', async (seed) => {
    await runFleet(seed);
  }, 180_000);
});
