/**
 * The five document services end to end: VAT totals worked out by hand, the PDF read back with
 * poppler's pdftotext / pdfinfo / pdftoppm (Debian poppler-utils, installed by .ci/run), non-Latin
 * text, a 60-line invoice over several pages with page numbers, deterministic bytes, and bad
 * inputs refused before payment with the field named.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { computeTotals, formatMinor } from '../../services/documents/money.js';
import { callLocal, localContext, refusal, registry } from './local.js';
import { precheckRefusal } from '../../x402/core/paidCall.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

afterAll(cleanupTmp);

interface DocResult {
  pdfBase64: string;
  bytes: number;
  pages: number;
  issueDate: string;
  totals: { net: string; vat: string; gross: string; currency: string; vatRate: number; grossMinor: string };
}

/** The PDF's text (pdftotext -layout) and its page count (pdfinfo). */
async function readPdf(r: DocResult): Promise<{ text: string; pages: number; file: string }> {
  const file = join(await tmpDir(), `doc-${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(file, Buffer.from(r.pdfBase64, 'base64'));
  const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
  const info = execFileSync('pdfinfo', [file], { encoding: 'utf8' });
  return { text, pages: Number(/^Pages:\s+(\d+)/m.exec(info)![1]), file };
}

const buyer = { name: 'Müller Handels GmbH', address: 'Οδός Ερμού 12, Αθήνα, Ελλάδα\n北京市朝阳区' };

describe('document arithmetic', () => {
  test('line totals rounded per line half away from zero, VAT once on the net', () => {
    // 3 × 19.99 = 59.97; 1.5 × 120 = 180.00; 7 × 0.333 = 2.331 → 2.33; net 242.30; VAT 19 % = 46.037 → 46.04; gross 288.34.
    const t = computeTotals([{ description: 'a', qty: 3, unitPrice: 19.99 }, { description: 'b', qty: 1.5, unitPrice: 120 }, { description: 'c', qty: 7, unitPrice: 0.333 }], 19, 'EUR');
    expect(t.lines.map((l) => l.totalMinor)).toEqual([5997n, 18000n, 233n]);
    expect([t.netMinor, t.vatMinor, t.grossMinor]).toEqual([24230n, 4604n, 28834n]);
    // 0.005 rounds up to 0.01 (half away from zero), -0.005 to -0.01; JPY has no minor unit.
    expect(computeTotals([{ description: 'x', qty: 1, unitPrice: 0.005 }], 0, 'EUR').netMinor).toBe(1n);
    expect(computeTotals([{ description: 'x', qty: 1, unitPrice: -0.005 }], 0, 'EUR').netMinor).toBe(-1n);
    const jpy = computeTotals([{ description: 'x', qty: 3, unitPrice: 1000.5 }], 10, 'JPY');
    expect([jpy.digits, jpy.netMinor, jpy.vatMinor, jpy.grossMinor]).toEqual([0, 3002n, 300n, 3302n]);
    expect(formatMinor(-5n, 2)).toBe('-0.05');
  });
});

describe('native-invoice-pdf', () => {
  const items = [
    { description: 'Beratung Müller — Ελληνικά — 北京 office', qty: 3, unitPrice: 19.99 },
    { description: 'Hosting, one month', qty: 1.5, unitPrice: 120 },
    { description: 'Stamps', qty: 7, unitPrice: 0.333 },
  ];
  const request = JSON.stringify({ invoiceNumber: 'INV-2027-001', buyer, items, vatRate: 19, notes: 'Payable within 14 days. 谢谢!' });

  test('totals by hand, in the result and printed in the PDF, with non-Latin text and page numbers', async () => {
    const r = await callLocal<DocResult>('native-invoice-pdf', request);
    expect(r.totals).toMatchObject({ net: '242.30', vat: '46.04', gross: '288.34', currency: 'EUR', vatRate: 19, grossMinor: '28834' });
    expect(r.pages).toBe(1);
    expect(r.bytes).toBe(Buffer.from(r.pdfBase64, 'base64').length);
    expect(r.issueDate).toBe('2027-01-12');
    const pdf = await readPdf(r);
    expect(pdf.pages).toBe(1);
    for (const s of ['INVOICE', 'INV-2027-001', '2027-01-12', 'Müller Handels GmbH', 'Ελλάδα', '北京', '59.97', '180.00', '2.33', '242.30', 'VAT 19%', '46.04', '288.34', 'Total due (EUR)', 'native-node devnet seller', 'Page 1 of 1', '谢谢']) {
      expect(pdf.text).toContain(s);
    }
  });

  test('the seller block comes from the node config', async () => {
    const r = await callLocal<DocResult>('native-invoice-pdf', request, { seller: { name: 'Ακμή Trading Ltd', address: '1 Quay Street, Dublin', vatId: 'IE1234567T' } });
    const { text } = await readPdf(r);
    expect(text).toContain('Ακμή Trading Ltd');
    expect(text).toContain('VAT ID: IE1234567T');
  });

  test('the same input and date give the same bytes; another date does not', async () => {
    const a = await callLocal<DocResult>('native-invoice-pdf', request);
    const b = await callLocal<DocResult>('native-invoice-pdf', request);
    expect(b.pdfBase64).toBe(a.pdfBase64);
    const c = await callLocal<DocResult>('native-invoice-pdf', request, { now: () => Date.UTC(2027, 1, 1) });
    expect(c.pdfBase64).not.toBe(a.pdfBase64);
  });

  test('a 60-line invoice breaks across pages, repeats the table header and numbers every page', async () => {
    const many = Array.from({ length: 60 }, (_, i) => ({ description: `Service line ${i + 1}`, qty: 1, unitPrice: 10 }));
    const r = await callLocal<DocResult>('native-invoice-pdf', JSON.stringify({ invoiceNumber: 'INV-60', buyer, items: many, vatRate: 20 }));
    expect(r.totals).toMatchObject({ net: '600.00', vat: '120.00', gross: '720.00' });
    const pdf = await readPdf(r);
    expect(pdf.pages).toBeGreaterThan(1);
    expect(r.pages).toBe(pdf.pages);
    expect(pdf.text).toContain('Service line 60');
    expect(pdf.text).toContain(`Page ${pdf.pages} of ${pdf.pages}`);
    expect(pdf.text.match(/Description/g)!.length).toBe(pdf.pages);
    // pdftoppm renders every page (a damaged PDF fails here).
    const dir = await tmpDir();
    execFileSync('pdftoppm', ['-r', '20', '-png', pdf.file, join(dir, 'page')]);
    expect(readdirSync(dir).filter((f) => f.startsWith('page') && f.endsWith('.png'))).toHaveLength(pdf.pages);
  });

  test.each([
    ['items[0].qty is required', { invoiceNumber: 'I1', buyer, items: [{ description: 'x', unitPrice: 1 }] }],
    ['items[0].unitPrice must be >= 0', { invoiceNumber: 'I1', buyer, items: [{ description: 'x', qty: 1, unitPrice: -1 }] }],
    ['buyer is required', { invoiceNumber: 'I1', items: [{ description: 'x', qty: 1, unitPrice: 1 }] }],
    ['vatRate must be <= 100', { invoiceNumber: 'I1', buyer, items: [{ description: 'x', qty: 1, unitPrice: 1 }], vatRate: 120 }],
    ['currency does not have the expected format', { invoiceNumber: 'I1', buyer, items: [{ description: 'x', qty: 1, unitPrice: 1 }], currency: 'euro' }],
    ['discount is not an accepted field', { invoiceNumber: 'I1', buyer, items: [{ description: 'x', qty: 1, unitPrice: 1 }], discount: 5 }],
  ])('bad input refused before payment: %s', (message, body) => {
    expect(refusal('native-invoice-pdf', JSON.stringify(body))).toContain(message);
  });
});

describe('the other documents', () => {
  test('pro forma in JPY with its validity date', async () => {
    const r = await callLocal<DocResult>('native-invoice-proforma', JSON.stringify({ proformaNumber: 'PF-7', buyer, items: [{ description: '東京 consulting・サービス', qty: 3, unitPrice: 1000.5 }], vatRate: 10, validUntil: '2027-02-28', currency: 'JPY' }));
    expect(r.totals).toMatchObject({ net: '3002', vat: '300', gross: '3302', currency: 'JPY' });
    const { text } = await readPdf(r);
    // The prolonged sound mark and the middle dot are of the Common script, in the Katakana block: drawn with the CJK font too.
    for (const s of ['PRO FORMA INVOICE', 'PF-7', 'Valid until: 2027-02-28', '3,302', 'Total (JPY)', '東京 consulting・サービス']) expect(text).toContain(s);
  });

  test('receipt with its payment details', async () => {
    const r = await callLocal<DocResult>('native-receipt-payment', JSON.stringify({ receiptNumber: 'RC-9', buyer: { name: 'Ana Pérez' }, items: [{ description: 'Ticket', qty: 2, unitPrice: 12.5 }], payment: { method: 'card', reference: 'ch_123', paidOn: '2027-01-10' }, vatRate: 7 }));
    // 25.00 net, VAT 7 % = 1.75, gross 26.75.
    expect(r.totals).toMatchObject({ net: '25.00', vat: '1.75', gross: '26.75' });
    const { text } = await readPdf(r);
    for (const s of ['PAYMENT RECEIPT', 'Payment method: card', 'Payment reference: ch_123', 'Paid on: 2027-01-10', 'Amount paid (EUR)', '26.75']) expect(text).toContain(s);
  });

  test('credit note with negative prices and the original invoice', async () => {
    const r = await callLocal<DocResult>('native-credit-note', JSON.stringify({ creditNoteNumber: 'CN-3', buyer: { name: 'Acme' }, originalInvoice: 'INV-2027-001', items: [{ description: 'Refund', qty: 2, unitPrice: -50.125 }, { description: 'Rounding', qty: 1, unitPrice: -0.005 }], vatRate: 20 }));
    // -100.25 + -0.01 = -100.26; VAT 20 % = -20.052 → -20.05; gross -120.31.
    expect(r.totals).toMatchObject({ net: '-100.26', vat: '-20.05', gross: '-120.31' });
    const { text } = await readPdf(r);
    for (const s of ['CREDIT NOTE', 'Original invoice: INV-2027-001', '-100.26', '-120.31', 'Total credited (EUR)']) expect(text).toContain(s);
    expect(refusal('native-credit-note', JSON.stringify({ creditNoteNumber: 'CN-3', buyer: { name: 'Acme' }, items: [{ description: 'x', qty: 0, unitPrice: -1 }] }))).toContain('items[0].qty must be > 0');
  });

  test('quote with its validity date', async () => {
    const r = await callLocal<DocResult>('native-quote-estimate', JSON.stringify({ quoteNumber: 'Q-1', buyer, items: [{ description: 'Build', qty: 10, unitPrice: 85 }], vatRate: 21, validUntil: '2027-03-31' }));
    expect(r.totals).toMatchObject({ net: '850.00', vat: '178.50', gross: '1028.50' });
    const { text } = await readPdf(r);
    for (const s of ['QUOTE / ESTIMATE', 'Valid until: 2027-03-31', '1,028.50']) expect(text).toContain(s);
    expect(refusal('native-quote-estimate', JSON.stringify({ quoteNumber: 'Q-1', buyer, items: [{ description: 'x', qty: 1, unitPrice: 1 }], validUntil: '2027-13-01' }))).toContain('validUntil does not have the expected format');
  });
});

describe('what a document must be, checked before payment', () => {
  const pre = (id: string, input: Record<string, unknown>) => precheckRefusal(registry.get(id)!, input, localContext() as never);

  test('currency: an ISO 4217 code, not any three letters', () => {
    const invoice = (currency: string) => JSON.stringify({ invoiceNumber: 'INV-1', buyer, items: [{ description: 'x', qty: 1, unitPrice: 1 }], currency });
    // The reference: ISO 4217 active codes (three decimals for KWD, none for JPY, CLF a fund code) and letters it does not assign.
    for (const code of ['EUR', 'USD', 'JPY', 'GBP', 'CHF', 'KWD', 'CLF', 'XOF', 'XAU']) expect({ code, why: refusal('native-invoice-pdf', invoice(code)) }).toEqual({ code, why: undefined });
    for (const code of ['ABC', 'EUU', 'XTS', 'XXX']) expect(refusal('native-invoice-pdf', invoice(code))).toContain('currency is not an ISO 4217 currency code');
    for (const id of ['native-invoice-proforma', 'native-quote-estimate', 'native-receipt-payment', 'native-credit-note']) {
      const schema = registry.get(id)!.inputSchema as { properties: { currency: Record<string, unknown> } };
      expect(schema.properties.currency['x-currency']).toBe(true);
    }
  });

  test('a receipt\'s payment date is not after its issue date (today, 2027-01-12 on the tests\' clock)', async () => {
    const receipt = (paidOn: string) => ({ receiptNumber: 'RC-1', buyer: { name: 'Ana' }, items: [{ description: 'x', qty: 1, unitPrice: 5 }], payment: { method: 'card', paidOn } });
    expect(await pre('native-receipt-payment', receipt('2030-06-01'))).toMatchObject({ code: 'invalid_request', reason: 'paid_on_after_issue', message: expect.stringContaining('after the issue date 2027-01-12') });
    expect(await pre('native-receipt-payment', receipt('2027-01-13'))).toMatchObject({ reason: 'paid_on_after_issue' });
    expect(await pre('native-receipt-payment', receipt('2027-01-12'))).toBeUndefined();
    await expect(callLocal('native-receipt-payment', JSON.stringify(receipt('2030-06-01')))).rejects.toMatchObject({ code: 'paid_on_after_issue' });
  });

  test('a credit note credits: a net total of zero or more is refused', async () => {
    const note = (prices: number[]) => ({ creditNoteNumber: 'CN-1', buyer: { name: 'Acme' }, items: prices.map((unitPrice, i) => ({ description: `l${i}`, qty: 1, unitPrice })) });
    expect(await pre('native-credit-note', note([50, 20]))).toMatchObject({ code: 'invalid_request', reason: 'credit_note_not_negative' });
    expect(await pre('native-credit-note', note([10, -10]))).toMatchObject({ reason: 'credit_note_not_negative' });
    expect(await pre('native-credit-note', note([-50, 5]))).toBeUndefined();
    await expect(callLocal('native-credit-note', JSON.stringify(note([50])))).rejects.toMatchObject({ code: 'credit_note_not_negative' });
  });
});
