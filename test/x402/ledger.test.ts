/**
 * The settlement ledger's one test suite, run against both implementations: LevelDB in a
 * temporary directory and PostgreSQL (a throwaway server, test/helpers/postgres.ts; a fresh
 * database per test). One claim per payment whatever the interleaving of "look up, then claim"
 * callers, the transitions and the statuses they may leave, the marks, the totals, reopening.
 * Then what only a shared database has: several nodes on one ledger, migrations, and the
 * database going away and coming back (`ledger_unavailable`, nothing half-written).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import pg from 'pg';
import { Level } from 'level';
import { LevelLedger, openLedger, type PaymentRecord, type SettlementLedger } from '../../x402/ledger/open.js';
import { MIGRATIONS, PgLedger } from '../../x402/ledger/pgLedger.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

let server: TestPostgres | undefined;
let dbs = 0;

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await cleanupTmp();
});

/** Where a fresh ledger lives: a new directory, or a new database on the test server. */
const backends: readonly [string, () => Promise<string>][] = [
  ['leveldb', async () => join(await tmpDir(), 'ledger')],
  ['postgres', async () => server!.createDatabase(`ledger${++dbs}`)],
];

const rec = (id: string, o: Partial<PaymentRecord> = {}) => ({ id, rail: 'native' as const, serviceId: 'native-world-clock', requestHash: 'ab'.repeat(32), caller: 'tnative1caller', amount: '200000', ...o });
const failure = { code: 'service_failed', message: 'the service failed' };

describe.each(backends)('settlement ledger (%s)', (_name, location) => {
  async function withLedger(fn: (l: SettlementLedger) => Promise<void>): Promise<void> {
    const ledger = await openLedger(await location());
    try {
      await fn(ledger);
    } finally {
      await ledger.close();
    }
  }

  test('a lookup that found nothing lets the claim through; the record is then stored', async () => {
    await withLedger(async (l) => {
      const { record, absentToken } = await l.lookup('a1');
      expect(record).toBeUndefined();
      const c = await l.claim(rec('a1'), 1000, absentToken);
      expect(c.claimed).toBe(true);
      expect(await l.get('a1')).toEqual({ ...rec('a1'), status: 'claimed', claimedAt: 1000, updatedAt: 1000 });
    });
  });

  test('hasMany answers, in order, which payments have a record (one read for a block of invokes)', async () => {
    await withLedger(async (l) => {
      expect(await l.hasMany([])).toEqual([]);
      await l.claim(rec('m1'), 1000);
      await l.claim(rec('m3'), 1000);
      expect(await l.hasMany(['m1', 'm2', 'm3', 'm4'])).toEqual([true, false, true, false]);
    });
  });

  test('a stale token: the payment was claimed and settled after the lookup, so the late claim reads again and loses', async () => {
    await withLedger(async (l) => {
      const late = await l.lookup('p1');
      const early = await l.lookup('p1');
      expect((await l.claim(rec('p1'), 1000, early.absentToken)).claimed).toBe(true);
      await l.settle('p1', { ok: 1 }, { txId: 'p1' });
      const c = await l.claim(rec('p1'), 2000, late.absentToken);
      expect(c.claimed).toBe(false);
      expect(c.record.status).toBe('settled');
      expect(c.record.result).toEqual({ ok: 1 });
    });
  });

  test('another payment claimed in between only costs a second read: the claim still succeeds', async () => {
    await withLedger(async (l) => {
      const x = await l.lookup('x');
      expect((await l.claim(rec('y'), 1000)).claimed).toBe(true);
      expect((await l.claim(rec('x'), 1000, x.absentToken)).claimed).toBe(true);
    });
  });

  test('40 callers look up then claim one payment, interleaved at random: exactly one claim', async () => {
    await withLedger(async (l) => {
      for (let round = 0; round < 5; round++) {
        const id = `race${round}`;
        const outcomes = await Promise.all(
          Array.from({ length: 40 }, async (_, i) => {
            const { record, absentToken } = await l.lookup(id);
            if (record) return false;
            for (let k = 0; k < i % 4; k++) await new Promise((r) => setImmediate(r));
            const c = await l.claim(rec(id), 1000, absentToken);
            if (c.claimed && i % 3 === 0) await l.settle(id, null, {});
            return c.claimed;
          }),
        );
        expect(outcomes.filter(Boolean)).toHaveLength(1);
      }
    });
  });

  test('a settle and the watcher\'s refusal race on one payment: exactly one wins and its record is the one stored', async () => {
    await withLedger(async (l) => {
      for (let round = 0; round < 5; round++) {
        const id = `both${round}`;
        const [a, b] = await Promise.all([l.claim(rec(id), 1000), l.claimRefusal(rec(id), { code: 'amount_mismatch', message: 'wrong amount' }, 1000)]);
        expect([a.claimed, b.claimed].filter(Boolean)).toHaveLength(1);
        const winner = a.claimed ? a.record : b.record;
        expect(await l.get(id)).toEqual(winner);
      }
    });
  });

  test('settle stores the result and receipt exactly (key order, null, nested values)', async () => {
    await withLedger(async (l) => {
      await l.claim(rec('r1'), 1000);
      const result = { zeta: 1, alpha: [1, 'two', { y: null, b: true }], big: 12345678901234567890, text: 'é ✓ "q"' };
      const settled = await l.settle('r1', result, { txId: 'r1', height: 7 });
      expect(settled.status).toBe('settled');
      const got = await l.get('r1');
      expect(JSON.stringify(got?.result)).toBe(JSON.stringify(result));
      expect(got?.receipt).toEqual({ txId: 'r1', height: 7 });
      await l.claim(rec('r2'), 1000);
      await l.settle('r2', null, {});
      expect((await l.get('r2'))?.result).toBeNull();
      await l.claim(rec('r3'), 1000);
      await l.settle('r3', undefined, {});
      expect('result' in ((await l.get('r3')) ?? {})).toBe(false);
    });
  });

  test('fields the ledger does not know are kept (records written by newer code round-trip)', async () => {
    await withLedger(async (l) => {
      await l.claim({ ...rec('u1', { rail: 'usdc' }), accessKey: 'cd'.repeat(32) } as Parameters<SettlementLedger['claim']>[0], 1000);
      expect(await l.get('u1')).toMatchObject({ accessKey: 'cd'.repeat(32), rail: 'usdc' });
      await l.settle('u1', 1, {});
      expect(await l.get('u1')).toMatchObject({ accessKey: 'cd'.repeat(32), status: 'settled' });
    });
  });

  test('native refund path: claimed → refund_pending (stuck, then a refund tx written ahead with its bytes) → refunded; a reorg reopens it', async () => {
    await withLedger(async (l) => {
      await l.claim(rec('f1'), 1000);
      const stuck = await l.refundPending('f1', failure, { stuck: 'the payee cannot cover it yet' });
      expect(stuck).toMatchObject({ status: 'refund_pending', error: failure, refundStuck: 'the payee cannot cover it yet' });
      expect(stuck.refundTxId).toBeUndefined();
      // The signed refund's id and bytes, written before it is submitted (a signer that takes over sends these bytes again).
      const bytes = '0a1b'.repeat(2000);
      const sent = await l.refundPending('f1', failure, { txId: 'ee'.repeat(32), tx: bytes });
      expect(sent).toMatchObject({ refundTxId: 'ee'.repeat(32), refundTx: bytes });
      expect(sent.refundStuck).toBeUndefined();
      expect(await l.get('f1')).toEqual(sent);
      const same = await l.refundPending('f1', failure);
      expect(same).toMatchObject({ refundTxId: 'ee'.repeat(32), refundTx: bytes });
      // A new refund replaces both; a refusal by the mempool forgets both.
      expect(await l.refundPending('f1', failure, { txId: 'dd'.repeat(32), tx: 'cafe' })).toMatchObject({ refundTxId: 'dd'.repeat(32), refundTx: 'cafe' });
      const refused = await l.refundPending('f1', failure, { stuck: 'refused' });
      expect(refused.refundTxId).toBeUndefined();
      expect(refused.refundTx).toBeUndefined();
      await l.refundPending('f1', failure, { txId: 'ee'.repeat(32), tx: bytes });
      // Mined: the bytes are no longer kept.
      const done = await l.refunded('f1', 'ee'.repeat(32));
      expect(done).toMatchObject({ status: 'refunded', refundTxId: 'ee'.repeat(32) });
      expect(done.refundTx).toBeUndefined();
      expect(await l.get('f1')).toEqual(done);
      const reopened = await l.refundPending('f1', failure, { txId: 'ee'.repeat(32), tx: bytes });
      expect(reopened).toMatchObject({ status: 'refund_pending', refundTx: bytes });
      expect(await l.get('f1')).toEqual(reopened);
    });
  });

  test('USDC paths: failed; settle_pending → progress → settled with the stored result; settle_pending → expired_unsettled drops the result', async () => {
    await withLedger(async (l) => {
      const usdc = (id: string) => rec(id, { rail: 'usdc', caller: '0xabc', amount: '1000' });
      await l.claim(usdc('u1'), 1000);
      expect(await l.fail('u1', failure)).toMatchObject({ status: 'failed', error: failure });
      const state = { authorizer: '0xabc', nonce: '0x' + '11'.repeat(32), validBefore: 2000, receipt: { serviceId: 'x' }, network: 'base' };
      await l.claim(usdc('u2'), 1000);
      await l.settlePending('u2', { out: 1 }, state, { code: 'facilitator_timeout', message: 't' });
      const progressed = await l.reconcileProgress('u2', { ...state, fromBlock: '0x10', checks: 2 });
      expect(progressed).toMatchObject({ status: 'settle_pending', result: { out: 1 }, reconcile: { fromBlock: '0x10', checks: 2 } });
      const done = await l.settleReconciled('u2', { txId: '0xfeed' });
      expect(done).toMatchObject({ status: 'settled', result: { out: 1 }, receipt: { txId: '0xfeed' } });
      expect(done.error).toBeUndefined();
      await l.claim(usdc('u3'), 1000);
      await l.settlePending('u3', { out: 2 }, state, { code: 'facilitator_timeout', message: 't' });
      const expired = await l.expireUnsettled('u3', { code: 'authorization_expired', message: 'unused' });
      expect(expired.status).toBe('expired_unsettled');
      expect(expired.result).toBeUndefined();
      expect((await l.get('u3'))?.result).toBeUndefined();
      await l.refreshTotals();
      expect(l.volume('native-world-clock')).toEqual({ calls: 0, callsUsdc: 1, volumeBase: 0n, volumeUsdcAtomic: 1000n });
    });
  });

  test('a transition from a status it may not leave is refused ledger_conflict and writes nothing', async () => {
    await withLedger(async (l) => {
      await expect(l.settle('nobody', 1, {})).rejects.toMatchObject({ code: 'ledger_conflict' });
      await l.claim(rec('c1'), 1000);
      await l.refundPending('c1', failure);
      const before = await l.get('c1');
      // The claim was ended by the refund: a late result must not turn it into a settled call.
      await expect(l.settle('c1', { late: true }, {})).rejects.toMatchObject({ code: 'ledger_conflict', payload: { status: 'refund_pending' } });
      await expect(l.fail('c1', failure)).rejects.toMatchObject({ code: 'ledger_conflict' });
      await expect(l.settleReconciled('c1', {})).rejects.toMatchObject({ code: 'ledger_conflict' });
      expect(await l.get('c1')).toEqual(before);
      await l.claim(rec('c2'), 1000);
      await expect(l.refunded('c2', 'aa')).rejects.toMatchObject({ code: 'ledger_conflict' });
      await l.settle('c2', 1, {});
      await expect(l.settle('c2', 2, {})).rejects.toMatchObject({ code: 'ledger_conflict' });
      expect((await l.get('c2'))?.result).toBe(1);
    });
  });

  test('marks: absent, written, overwritten; the seller mark is the ledger\'s seller id', async () => {
    await withLedger(async (l) => {
      expect(l.sellerId).toMatch(/^[0-9a-f]{16}$/);
      expect(await l.getMark<{ sellerId: string }>('seller')).toMatchObject({ sellerId: l.sellerId });
      expect(await l.getMark('payments')).toBeUndefined();
      await l.putMark('payments', { height: 5, scanned: 2 });
      await l.putMark('payments', { height: 6, scanned: 3 });
      expect(await l.getMark('payments')).toEqual({ height: 6, scanned: 3 });
      await l.putMark('gaps', []);
      expect(await l.getMark('gaps')).toEqual([]);
    });
  });

  test('records lists every record once, by id, past a page of results', async () => {
    await withLedger(async (l) => {
      const ids = Array.from({ length: 620 }, (_, i) => `id${String(i).padStart(4, '0')}`);
      for (let i = 0; i < ids.length; i += 20) await Promise.all(ids.slice(i, i + 20).map((id) => l.claim(rec(id), 1000)));
      const seen: string[] = [];
      for await (const r of l.records()) seen.push(r.id);
      expect(seen).toEqual([...ids].sort());
    });
  });

  test('counts and volumes: per status, refused, settled per service and rail', async () => {
    await withLedger(async (l) => {
      await l.claim(rec('s1'), 1000);
      await l.settle('s1', 1, {});
      await l.claim(rec('s2', { amount: '300000' }), 1000);
      await l.settle('s2', 1, {});
      await l.claim(rec('s3', { serviceId: 'native-other' }), 1000);
      await l.claimRefusal(rec('s4'), { code: 'amount_mismatch', message: 'm' }, 1000);
      await l.refunded('s4', 'ab');
      await l.refreshTotals();
      expect(l.counts()).toEqual({ claimed: 1, settled: 2, refund_pending: 0, refunded: 1, failed: 0, settle_pending: 0, expired_unsettled: 0, refused: 1 });
      expect(l.volume('native-world-clock')).toEqual({ calls: 2, callsUsdc: 0, volumeBase: 500_000n, volumeUsdcAtomic: 0n });
      expect(l.volume('native-other')).toEqual({ calls: 0, callsUsdc: 0, volumeBase: 0n, volumeUsdcAtomic: 0n });
    });
  });

  test('records, totals and the seller id survive a reopen', async () => {
    const where = await location();
    const l1 = await openLedger(where);
    await l1.claim(rec('s1'), 1000);
    await l1.settle('s1', { v: 1 }, { txId: 's1' });
    const seller = l1.sellerId;
    await l1.close();
    const l2 = await openLedger(where);
    try {
      expect(l2.sellerId).toBe(seller);
      expect((await l2.get('s1'))?.status).toBe('settled');
      expect(l2.volume('native-world-clock')).toEqual({ calls: 1, callsUsdc: 0, volumeBase: 200_000n, volumeUsdcAtomic: 0n });
      expect(l2.available()).toBe(true);
    } finally {
      await l2.close();
    }
  });
});

/** A settled call's receipt as the node stores it, its hybrid receipt in the batch format (x402/core/receipts.ts). */
const batchReceipt = (txId: string, index: number, signature: { mldsa: string; ed25519: string }) => ({
  txId,
  height: 3,
  offerReceipt: { format: 'jws', signature: 'eyJhbGciOiJFZERTQSJ9.e30.sig' },
  hybridReceipt: {
    format: 'native-x402/hybrid-receipt-batch/v1',
    payload: { version: 1, txId, serviceId: 'native-world-clock' },
    signature,
    batch: { salt: 'cd'.repeat(32), size: 2, index, path: ['ef'.repeat(32)] },
  },
});

describe('settlement ledger in LevelDB: receipts signed in a batch', () => {
  test('the batch signature is stored once, every record reads it back whole (after a reopen too); a lone receipt keeps its own; a missing one is ledger_corrupt', async () => {
    const where = join(await tmpDir(), 'ledger');
    const sig = { mldsa: 'a1'.repeat(4627), ed25519: 'b2'.repeat(64) };
    const lone = { mldsa: 'c3'.repeat(4627), ed25519: 'd4'.repeat(64) };
    const l1 = await openLedger(where);
    const receipts = [batchReceipt('t1', 0, sig), batchReceipt('t2', 1, sig)];
    const loneReceipt = { ...batchReceipt('t3', 0, lone), hybridReceipt: { format: 'native-x402/hybrid-receipt/v1', payload: { version: 1 }, signature: lone } };
    for (const [i, id] of ['t1', 't2', 't3'].entries()) {
      await l1.claim(rec(id), 1000);
      await l1.settle(id, { n: i }, i < 2 ? receipts[i]! : loneReceipt);
    }
    expect((await l1.get('t1'))?.receipt).toEqual(receipts[0]);
    await l1.close();
    // On disk: one signature key, and the batched records without the 9 kB signature.
    const db = new Level<string, string>(where, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    const sigKeys: string[] = [];
    for await (const k of db.keys({ gte: 'r:', lt: 'r;' })) sigKeys.push(k);
    expect(sigKeys).toHaveLength(1);
    for (const id of ['t1', 't2']) expect((await db.get(`p:${id}`))!.length).toBeLessThan(1_500);
    expect((await db.get('p:t3'))!.length).toBeGreaterThan(9_000);
    await db.close();

    const l2 = await openLedger(where);
    expect((await l2.get('t2'))?.receipt).toEqual(receipts[1]);
    expect((await l2.get('t3'))?.receipt).toEqual(loneReceipt);
    const all = new Map<string, unknown>();
    for await (const r of l2.records()) all.set(r.id, r.receipt);
    expect(all).toEqual(new Map([['t1', receipts[0]], ['t2', receipts[1]], ['t3', loneReceipt]]));
    await l2.close();

    const db2 = new Level<string, string>(where, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db2.del(sigKeys[0]!);
    await db2.close();
    const l3 = await openLedger(where).catch((e: unknown) => e);
    expect((l3 as { code?: string }).code).toBe('ledger_corrupt');
  });
});

describe('settlement ledger in PostgreSQL: a fleet', () => {
  test('three nodes open one new database at once: one migration, one seller id, and 3 × 20 racing claims give one claim per payment', async () => {
    const url = await server!.createDatabase('fleet1');
    const nodes = await Promise.all([0, 1, 2].map((i) => openLedger(url, { nodeId: `node${i}` })));
    try {
      expect(new Set(nodes.map((n) => n.sellerId)).size).toBe(1);
      for (let round = 0; round < 10; round++) {
        const id = `fleet${round}`;
        const outcomes = await Promise.all(
          nodes.flatMap((n, i) =>
            Array.from({ length: 20 }, async (_, k) => {
              const c = (i + k) % 5 === 0 ? await n.claimRefusal(rec(id), { code: 'settle_window_expired', message: 'late' }) : await n.claim(rec(id));
              return c.claimed;
            }),
          ),
        );
        expect(outcomes.filter(Boolean)).toHaveLength(1);
      }
      // Another node's settle is visible at once; its totals once refreshed.
      await nodes[0]!.claim(rec('x1'));
      await nodes[0]!.settle('x1', { r: 1 }, {});
      expect((await nodes[2]!.get('x1'))?.result).toEqual({ r: 1 });
      await expect(nodes[1]!.settle('x1', { r: 2 }, {})).rejects.toMatchObject({ code: 'ledger_conflict' });
      await nodes[2]!.refreshTotals();
      expect(nodes[2]!.volume('native-world-clock').calls).toBeGreaterThanOrEqual(1);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      const versions = await c.query('SELECT version FROM ledger_schema ORDER BY version');
      const claimers = await c.query(`SELECT claimed_by FROM payments WHERE id = 'x1'`);
      await c.end();
      expect(versions.rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(claimers.rows[0].claimed_by).toBe('node0');
    } finally {
      await Promise.all(nodes.map((n) => n.close()));
    }
  });

  test('a database migrated by a newer node is refused (ledger_schema_newer), not written', async () => {
    const url = await server!.createDatabase('newer');
    (await openLedger(url)).close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`INSERT INTO ledger_schema (version, description) VALUES (999, 'from the future')`);
    await c.end();
    await expect(openLedger(url)).rejects.toMatchObject({ code: 'ledger_schema_newer' });
  });

  test('unreachable at start: ledger_unavailable', async () => {
    await expect(openLedger('postgres://postgres@127.0.0.1:1/none')).rejects.toMatchObject({ code: 'ledger_unavailable' });
  });

  test('PostgreSQL goes away: every operation fails ledger_unavailable, available() turns false, nothing half-written; back within seconds once it returns', async () => {
    const url = await server!.createDatabase('outage');
    const l = (await openLedger(url)) as PgLedger;
    try {
      await l.claim(rec('o1'), 1000);
      await l.claim(rec('o2'), 1000);
      await l.settle('o2', { done: true }, { txId: 'o2' });
      await l.refreshTotals();
      await server!.halt();
      await expect(l.settle('o1', { lost: true }, {})).rejects.toMatchObject({ code: 'ledger_unavailable' });
      expect(l.available()).toBe(false);
      await expect(l.claim(rec('o3'), 1000)).rejects.toMatchObject({ code: 'ledger_unavailable' });
      await expect(l.lookup('o2')).rejects.toMatchObject({ code: 'ledger_unavailable' });
      await expect(l.putMark('payments', { height: 1 })).rejects.toMatchObject({ code: 'ledger_unavailable' });
      // Totals keep their last values while the database is away.
      expect(l.volume('native-world-clock').calls).toBe(1);
      await server!.resume();
      const deadline = Date.now() + 10_000;
      while (!l.available() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(l.available()).toBe(true);
      // The claim stays a claim (its result was never stored), the settled call kept its result, nothing else was written.
      expect((await l.get('o1'))?.status).toBe('claimed');
      expect((await l.get('o1'))?.result).toBeUndefined();
      expect((await l.get('o2'))?.result).toEqual({ done: true });
      expect(await l.get('o3')).toBeUndefined();
      expect(await l.getMark('payments')).toBeUndefined();
      expect((await l.claim(rec('o3'), 1000)).claimed).toBe(true);
    } finally {
      await l.close();
    }
  }, 60_000);
});

describe('settlement ledger in LevelDB: writes and reads of one turn go together', () => {
  test('200 claims and settles asked at once: each counted once in the sequence, all there after a reopen; reads asked at once answer each its own', async () => {
    const where = join(await tmpDir(), 'ledger');
    const l1 = await LevelLedger.open(where);
    const seq0 = l1.sequence() ?? 0;
    const ids = Array.from({ length: 200 }, (_, i) => `g${i}`);
    const claims = await Promise.all(ids.map((id) => l1.claim(rec(id), 1000)));
    expect(claims.every((c) => c.claimed)).toBe(true);
    await Promise.all(ids.map((id, i) => l1.settle(id, { n: i }, { txId: id })));
    expect(l1.sequence()).toBe(seq0 + 400);
    const read = await Promise.all([...ids, 'absent'].map((id) => l1.get(id)));
    expect(read.map((r) => (r?.result as { n?: number } | undefined)?.n)).toEqual([...ids.map((_, i) => i), undefined]);
    // Asked (no read needed: the lookup's token), not awaited, then closed: what was asked is written first.
    const { absentToken } = await l1.lookup('late');
    const last = l1.claim(rec('late'), 1000, absentToken);
    await l1.close();
    expect((await last).claimed).toBe(true);
    const l2 = await LevelLedger.open(where);
    try {
      expect(l2.sequence()).toBe(seq0 + 401);
      expect(l2.counts().settled).toBe(200);
      expect((await l2.get('late'))?.status).toBe('claimed');
      expect((await l2.get('g199'))?.result).toEqual({ n: 199 });
    } finally {
      await l2.close();
    }
  });

  test('a batch the database refuses fails every write of its turn, and none is counted', async () => {
    const where = join(await tmpDir(), 'ledger');
    const l = await LevelLedger.open(where);
    await l.claim(rec('ok'), 1000);
    const db = (l as unknown as { db: Level<string, string> }).db;
    const batch = db.batch.bind(db);
    (db as { batch: unknown }).batch = () => Promise.reject(new Error('disk full'));
    const outcomes = await Promise.allSettled(['f1', 'f2', 'f3'].map((id) => l.claim(rec(id), 1000)));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    (db as { batch: unknown }).batch = batch;
    try {
      for (const id of ['f1', 'f2', 'f3']) expect(await l.get(id)).toBeUndefined();
      expect(l.counts().claimed).toBe(1);
      expect((await l.claim(rec('f1'), 1000)).claimed).toBe(true);
    } finally {
      await l.close();
    }
  });
});
