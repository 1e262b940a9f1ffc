/**
 * The core's kept quotes (x402/core/quoteMemo.ts): the same object while nothing a quote is built
 * from changes, a new one whenever any of it does. A field added to QuoteContext must be listed in
 * FULL below (the type requires it) and is then checked here: the memo must compare it too.
 */
import { describe, expect, test } from '@jest/globals';
import { createQuoteMemo } from '../../x402/core/quoteMemo.js';
import type { QuoteContext } from '../../x402/core/quote.js';
import type { ServiceDefinition } from '../../services/types.js';
import { stubService } from '../helpers/stubService.js';

const FULL: Required<QuoteContext> = {
  resource: 'http://127.0.0.1:8402/api/x402/native-echo',
  network: 'native-devnet',
  chainId: 1337,
  payTo: 'tnative1payee',
  sellerId: '0123456789abcdef',
  confirmations: 1,
  microUsd: 2_000n,
  usdc: { payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' },
};

/** Another value of each field. */
const CHANGED: { readonly [K in keyof QuoteContext]-?: QuoteContext[K] } = {
  resource: 'https://node.example/api/x402/native-echo',
  network: 'native-mainnet',
  chainId: 1,
  payTo: 'tnative1other',
  sellerId: 'fedcba9876543210',
  confirmations: 3,
  microUsd: 4_000n,
  usdc: { payTo: '0x000000000000000000000000000000000000dEaD' },
};

describe('the quote memo', () => {
  test('the same quote object while nothing changes; a new one for a change of any context field, the price or the description', () => {
    const memo = createQuoteMemo();
    const def: ServiceDefinition = stubService('native-echo', async () => ({}), 100_000n);
    const base = 'http://127.0.0.1:8402';
    const first = memo.quoteOf(def, FULL, base);
    expect(memo.quoteOf(def, { ...FULL, usdc: { ...FULL.usdc } }, base)).toBe(first);
    for (const k of Object.keys(CHANGED) as (keyof QuoteContext)[]) {
      const changed = memo.quoteOf(def, { ...FULL, [k]: CHANGED[k] }, base);
      expect({ field: k, same: changed === first }).toEqual({ field: k, same: false });
      expect(memo.quoteOf(def, FULL, base)).not.toBe(changed);
    }
    const { usdc: _none, ...withoutUsdc } = FULL;
    expect(memo.quoteOf(def, withoutUsdc, base).accepts.length).toBe(1);
    const again = memo.quoteOf(def, FULL, base);
    expect(memo.quoteOf({ ...def, priceBase: 200_000n }, FULL, base)).not.toBe(again);
    const dear = memo.quoteOf({ ...def, priceBase: 200_000n }, FULL, base);
    expect(memo.quoteOf({ ...def, priceBase: 200_000n, description: 'another' }, FULL, base)).not.toBe(dear);
  });
});
