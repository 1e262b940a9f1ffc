/**
 * Becoming the signer when the ledger blips (issue 39): a fleet node that took the signer lease
 * right after a PostgreSQL restart can meet a stale connection in the middle of its start. Its
 * start runs again while it is still the signer, so its refunds and payouts follow the tip; a
 * start that failed once used to leave it holding the lease half-started (found by
 * payeeNonces.test.ts seed 310031 under load: a refund owed and never signed in 40 blocks).
 */
import { describe, expect, test } from '@jest/globals';
import { NodeError } from '../../consensus/errors.js';
import { LedgerErrorCode } from '../../x402/ledger/ledger.js';
import { memoryPayeeTxLog, PayeeNonces } from '../../x402/native/payeeNonces.js';
import { beginPayeeSigning } from '../../x402/native/payeeSigner.js';
import { testKey } from '../helpers/keys.js';

const payee = testKey('payee-signer-begin');
const chain = { getAccount: async () => ({ nonce: 0n, balance: 0n }), getTx: async () => undefined } as never;
const mempool = { has: () => false, add: async () => undefined } as never;
const blip = () => new NodeError(LedgerErrorCode.UNAVAILABLE, 'the ledger database cannot be reached: read ECONNRESET');

/** Refunds and payouts that record their calls; payouts' start fails `failures` times. */
function parts(failures: number) {
  const calls: string[] = [];
  let left = failures;
  const refunds = { resume: async () => void calls.push('refunds.resume'), start: async () => void calls.push('refunds.start'), stop: () => void calls.push('refunds.stop'), idle: async () => undefined };
  const payouts = {
    resume: async () => void calls.push('payouts.resume'),
    start: async () => {
      calls.push('payouts.start');
      if (left-- > 0) throw blip();
    },
    stop: () => void calls.push('payouts.stop'),
    idle: async () => undefined,
  };
  return { calls, refunds, payouts };
}

describe('beginPayeeSigning when the ledger blips', () => {
  test('a start that failed for the ledger runs again: refunds and payouts both follow the tip, the gate opens', async () => {
    const nonces = new PayeeNonces(memoryPayeeTxLog(), { state: 'closed' });
    const { calls, refunds, payouts } = parts(1);
    await beginPayeeSigning({ chain, mempool, payee, nonces, refunds, payouts });
    expect(nonces.isOpen()).toBe(true);
    expect(calls.filter((c) => c.endsWith('.start'))).toEqual(['payouts.start', 'payouts.start', 'refunds.start']);
  });

  test('a signer that lost its role meanwhile (gate closed) does not start again', async () => {
    const nonces = new PayeeNonces(memoryPayeeTxLog(), { state: 'closed' });
    const { calls, refunds, payouts } = parts(1);
    const begin = beginPayeeSigning({ chain, mempool, payee, nonces, refunds, payouts });
    await new Promise((r) => setImmediate(r));
    nonces.close();
    await expect(begin).rejects.toMatchObject({ code: LedgerErrorCode.UNAVAILABLE });
    expect(nonces.state()).toBe('closed');
    expect(calls).not.toContain('refunds.start');
  });

  test('other failures are not retried', async () => {
    const nonces = new PayeeNonces(memoryPayeeTxLog(), { state: 'closed' });
    const { refunds, payouts } = parts(0);
    payouts.start = async () => {
      throw new Error('broken');
    };
    await expect(beginPayeeSigning({ chain, mempool, payee, nonces, refunds, payouts })).rejects.toThrow('broken');
  });
});
