/**
 * Ends of claims the ledger could not take (x402/ledger/pendingEnds.ts): found by
 * test/integration/fleetRandom.test.ts, where a call claimed just before PostgreSQL restarted
 * stayed `claimed` on a node that lived on (no result, no refund, a USDC payment charged).
 * An end refused with `ledger_unavailable` is rethrown and written again once the ledger answers;
 * a newer end of the same payment replaces it; one ended meanwhile by someone else
 * (`ledger_conflict`) is dropped; other failures pass through untouched.
 */
import { describe, expect, test } from '@jest/globals';
import { NodeError } from '../../consensus/errors.js';
import { LedgerErrorCode } from '../../x402/ledger/ledger.js';
import { PendingEnds } from '../../x402/ledger/pendingEnds.js';

const unavailable = () => new NodeError(LedgerErrorCode.UNAVAILABLE, 'down');

describe('PendingEnds', () => {
  test('an end the ledger refuses as unavailable is rethrown, kept, and written once it is back', async () => {
    let up = false;
    const written: string[] = [];
    const ends = new PendingEnds(undefined, 60_000);
    const write = (what: string) => async () => {
      if (!up) throw unavailable();
      written.push(what);
      return what;
    };
    await expect(ends.write('p1', 'settled', write('p1 settled'))).rejects.toMatchObject({ code: LedgerErrorCode.UNAVAILABLE });
    await expect(ends.write('p2', 'refund', write('p2 refund'))).rejects.toMatchObject({ code: LedgerErrorCode.UNAVAILABLE });
    // A newer end of p2 replaces the first.
    await expect(ends.write('p2', 'failed', write('p2 failed'))).rejects.toMatchObject({ code: LedgerErrorCode.UNAVAILABLE });
    expect(ends.size).toBe(2);
    await ends.flush();
    expect(ends.size).toBe(2);
    up = true;
    await ends.flush();
    expect(written).toEqual(['p1 settled', 'p2 failed']);
    expect(ends.size).toBe(0);
    expect(await ends.write('p3', 'settled', write('p3 settled'))).toBe('p3 settled');
  });

  test('an end refused as a conflict (ended meanwhile) is dropped; other errors are not kept', async () => {
    const ends = new PendingEnds(undefined, 60_000);
    let fail: () => Error = unavailable;
    await expect(ends.write('p1', 'settled', async () => Promise.reject(fail()))).rejects.toMatchObject({ code: LedgerErrorCode.UNAVAILABLE });
    fail = () => new NodeError(LedgerErrorCode.CONFLICT, 'refunded by the fleet meanwhile');
    await ends.flush();
    expect(ends.size).toBe(0);
    await expect(ends.write('p2', 'settled', async () => Promise.reject(new Error('a bug')))).rejects.toThrow('a bug');
    expect(ends.size).toBe(0);
  });
});
