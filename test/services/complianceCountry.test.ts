/** native-b2b-compliance-report: a country code that is not an assigned ISO 3166-1 code is a 400 before payment ("XX" was rated low risk). */
import { describe, expect, test } from '@jest/globals';
import { callLocal, refusal } from './local.js';

const report = (country: string) => JSON.stringify({ txs: [{ id: 't1', amount: 100, counterparty: 'Acme Ltd', country }] });

describe('native-b2b-compliance-report countries', () => {
  test.each(['XX', 'ZZ', 'EU', 'UK', 'QQ', 'xx'])('%s is refused before payment', (c) => {
    expect(refusal('native-b2b-compliance-report', report(c))).toMatch(/txs\[0\]\.country is not an assigned ISO 3166-1 alpha-2 country code/);
  });

  test.each(['DE', 'gb', 'US', 'IR', 'XK'])('%s is accepted', (c) => {
    expect(refusal('native-b2b-compliance-report', report(c))).toBeUndefined();
  });

  test('an accepted report still rates a high-risk country', async () => {
    const r = await callLocal('native-b2b-compliance-report', report('IR'));
    expect(JSON.stringify(r)).toMatch(/IR/);
  });
});
