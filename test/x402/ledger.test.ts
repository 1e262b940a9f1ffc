/**
 * The settlement ledger on a real LevelDB: one claim per payment, whatever the interleaving of
 * "look up, then claim" callers, including the claim that skips its second read when no other
 * payment was claimed since the caller's lookup.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { openLedger, type SettlementLedger } from '../../x402/ledger.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

afterAll(cleanupTmp);

const rec = (id: string) => ({ id, rail: 'native' as const, serviceId: 'native-world-clock', requestHash: 'ab'.repeat(32), caller: 'tnative1caller', amount: '200000' });

async function withLedger(fn: (l: SettlementLedger) => Promise<void>): Promise<void> {
  const ledger = await openLedger(join(await tmpDir(), 'ledger'));
  try {
    await fn(ledger);
  } finally {
    await ledger.close();
  }
}

describe('settlement ledger', () => {
  test('a lookup that found nothing lets the claim through; the record is then stored', async () => {
    await withLedger(async (l) => {
      const { record, absentToken } = await l.lookup('a1');
      expect(record).toBeUndefined();
      const c = await l.claim(rec('a1'), 1000, absentToken);
      expect(c.claimed).toBe(true);
      expect((await l.get('a1'))?.status).toBe('claimed');
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

  test('records and totals survive a reopen', async () => {
    const dir = join(await tmpDir(), 'ledger');
    const l1 = await openLedger(dir);
    await l1.claim(rec('s1'), 1000);
    await l1.settle('s1', { v: 1 }, { txId: 's1' });
    await l1.close();
    const l2 = await openLedger(dir);
    try {
      expect((await l2.get('s1'))?.status).toBe('settled');
      expect(l2.volume('native-world-clock')).toEqual({ calls: 1, callsUsdc: 0, volumeBase: 200_000n, volumeUsdcAtomic: 0n });
    } finally {
      await l2.close();
    }
  });
});
