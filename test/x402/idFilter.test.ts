/** The LevelDB ledger's filter of payment ids: never a false negative, through its growth; few false positives. */
import { describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { PaymentIdFilter } from '../../x402/ledger/idFilter.js';

const txId = (prefix: string, i: number) => createHash('sha256').update(`${prefix}${i}`).digest('hex');

describe('payment id filter', () => {
  test('300,000 ids added (five segments): every one found; about 0.1 % of 100,000 others taken for present', () => {
    const f = new PaymentIdFilter();
    const n = 300_000;
    for (let i = 0; i < n; i++) f.add(txId('in', i));
    for (let i = 0; i < n; i++) if (!f.mightHave(txId('in', i))) throw new Error(`id ${i} lost`);
    // USDC payment ids and other shapes too.
    f.add('usdc:0xabc:0x01');
    expect(f.mightHave('usdc:0xabc:0x01')).toBe(true);
    let fp = 0;
    for (let i = 0; i < 100_000; i++) if (f.mightHave(txId('out', i))) fp++;
    expect(fp).toBeLessThan(1_000); // under 1 %: five segments at ≤ 0.1 % each when full
    expect(new PaymentIdFilter().mightHave(txId('in', 0))).toBe(false);
  });
});
