/**
 * The document services' input checks: dates that do not exist and validity dates before the issue date
 * are refused before payment; unit prices print as given so that every printed line adds up
 * (read back with poppler's pdftotext, recomputed here).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OutboundError } from '../../services/outbound/types.js';
import { executeService, ServiceError, type ServiceContext } from '../../services/index.js';
import { callLocal, localContext, LOCAL_NOW_MS, refusal, registry } from './local.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

afterAll(cleanupTmp);

const buyer = { name: 'Buyer Ltd', address: '1 Main St' };
const items = [{ description: 'Consulting', qty: 1, unitPrice: 100 }];

describe('dates', () => {
  test('a paidOn that is not a day of the calendar is a 400 before payment', () => {
    const receipt = (paidOn: string) => JSON.stringify({ receiptNumber: 'R1', buyer: { name: 'B' }, items, payment: { method: 'card', paidOn } });
    expect(refusal('native-receipt-payment', receipt('2031-02-30'))).toMatch(/payment\.paidOn is not a date of the calendar/);
    expect(refusal('native-receipt-payment', receipt('2027-02-29'))).toMatch(/not a date of the calendar/);
    expect(refusal('native-receipt-payment', receipt('2027-04-31'))).toMatch(/not a date of the calendar/);
    expect(refusal('native-receipt-payment', receipt('2028-02-29'))).toBeUndefined();
  });

  test.each(['native-quote-estimate', 'native-invoice-proforma'])('%s: validUntil before the issue date is refused before payment, and never rendered', async (id) => {
    const def = registry.get(id)!;
    const ctx = { ...localContext(), signal: new AbortController().signal } as ServiceContext;
    const numberField = id === 'native-quote-estimate' ? 'quoteNumber' : 'proformaNumber';
    const input = (validUntil: string) => ({ [numberField]: 'Q1', buyer, items, validUntil });
    // LOCAL_NOW_MS is 2027-01-12.
    expect(new Date(LOCAL_NOW_MS).toISOString().slice(0, 10)).toBe('2027-01-12');
    expect(refusal(id, JSON.stringify(input('2027-02-30')))).toMatch(/validUntil is not a date of the calendar/);
    const early = input('2027-01-11');
    expect(refusal(id, JSON.stringify(early))).toBeUndefined(); // the schema cannot know the day: the precheck does
    const e = await def.precheck!(ctx, early).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(OutboundError);
    expect((e as OutboundError).callerFault).toBe(true);
    expect((e as OutboundError).message).toMatch(/validUntil 2027-01-11 is before the issue date 2027-01-12/);
    await expect(executeService(def, localContext(), early)).rejects.toBeInstanceOf(ServiceError);
    await expect(def.precheck!(ctx, input('2027-01-12'))).resolves.toBeUndefined();
  });
});

describe('printed prices add up', () => {
  test('33.335 × 1.5 prints the unit price 33.335 beside 50.00; every line of the PDF recomputes', async () => {
    const lines = [
      { description: 'Widget', qty: 1.5, unitPrice: 33.335 },
      { description: 'Stamps', qty: 7, unitPrice: 0.333 },
      { description: 'Hours', qty: 2.25, unitPrice: 1234.5678 },
      { description: 'Plain', qty: 3, unitPrice: 19.99 },
    ];
    const r = await callLocal<{ pdfBase64: string; totals: { net: string } }>('native-invoice-pdf', JSON.stringify({ invoiceNumber: 'INV-1', buyer, items: lines, vatRate: 0 }));
    const file = join(await tmpDir(), 'prices.pdf');
    writeFileSync(file, Buffer.from(r.pdfBase64, 'base64'));
    const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
    let net = 0;
    for (const l of lines) {
      const row = text.split('\n').find((x) => x.includes(l.description))!;
      const nums = row.replace(/,/g, '').trim().split(/\s+/).slice(-3).map(Number); // qty, unit price, amount as printed
      expect(nums[0]).toBe(l.qty);
      expect(nums[1]).toBe(l.unitPrice);
      // The printed amount is the printed qty × printed unit price, rounded to cents half away from zero.
      const cents = Math.round(Math.round(nums[0]! * nums[1]! * 1e6) / 1e4);
      expect(Math.round(nums[2]! * 100)).toBe(cents);
      net += cents;
    }
    expect(text).toMatch(/\b33\.335\b/);
    expect(text).toMatch(/\b50\.00\b/);
    expect(r.totals.net).toBe((net / 100).toFixed(2));
  });
});
