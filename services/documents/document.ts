/**
 * The run of the five document services: validated JSON in, `{pdfBase64, bytes, pages, totals}`
 * out. Each kind says its title, number field, gross label and which extra details it shows.
 */
import { computeTotals, formatMinor, type DocumentItem } from './money.js';
import { documentFontsInstalled } from './fonts.js';
import type { DocumentModel } from './render.js';
import { refuseInput } from '../outbound/index.js';
import { ServiceError, type HealthReport, type HealthStatus, type SellerInfo, type ServiceContext } from '../types.js';

/** Currency of documents whose input does not name one. */
export const DEFAULT_CURRENCY = 'EUR';

/** Seller shown when the node config names none (devnet defaults; set `sellerName`, `sellerAddress`, `sellerVatId`). */
export const defaultSellerInfo: SellerInfo = Object.freeze({
  name: 'native-node devnet seller',
  address: 'Devnet operator, address not configured (--seller-address)',
  vatId: 'not configured (--seller-vat-id)',
});

/** The input of a document service, as its schema admits it. */
export interface DocumentInput {
  readonly buyer: { readonly name: string; readonly address?: string };
  readonly items: readonly DocumentItem[];
  readonly vatRate?: number;
  readonly notes?: string;
  readonly validUntil?: string;
  readonly currency?: string;
  readonly payment?: { readonly method: string; readonly reference?: string; readonly paidOn?: string };
  readonly originalInvoice?: string;
  readonly [numberField: string]: unknown;
}

/** What distinguishes one document kind from another. */
export interface DocumentKind {
  readonly title: string;
  readonly numberField: string;
  readonly numberLabel: string;
  readonly grossLabel: string;
  /** A credit note: its net total must be below zero. */
  readonly credits?: boolean;
}

/** Result of a document service. */
export interface DocumentResult {
  readonly pdfBase64: string;
  readonly bytes: number;
  readonly pages: number;
  readonly issueDate: string;
  /** Totals as decimal strings in the currency's major unit (exact), plus minor-unit integers. */
  readonly totals: { net: string; vat: string; gross: string; currency: string; vatRate: number; netMinor: string; vatMinor: string; grossMinor: string; rounding: string };
}

/** Rounding rule, as stated in every result. */
export const ROUNDING = 'line totals rounded to the minor unit (half away from zero); VAT on the net total, rounded once';

/** Builds the model of a document from its input (exported for tests and the benchmark). */
export function documentModel(kind: DocumentKind, input: DocumentInput, issueDate: string, seller: SellerInfo): DocumentModel {
  const currency = input.currency ?? DEFAULT_CURRENCY;
  const vatRate = input.vatRate ?? 0;
  const details: [string, string][] = [];
  if (input.originalInvoice) details.push(['Original invoice', input.originalInvoice]);
  if (input.validUntil) details.push(['Valid until', input.validUntil]);
  if (input.payment) {
    details.push(['Payment method', input.payment.method]);
    if (input.payment.reference) details.push(['Payment reference', input.payment.reference]);
    if (input.payment.paidOn) details.push(['Paid on', input.payment.paidOn]);
  }
  return {
    title: kind.title,
    numberLabel: kind.numberLabel,
    number: String(input[kind.numberField]),
    issueDate,
    seller,
    buyer: input.buyer,
    vatRate,
    totals: computeTotals(input.items, vatRate, currency),
    details,
    notes: input.notes,
    grossLabel: kind.grossLabel,
  };
}

/** Why a document cannot be issued on `issueDate`, with its code, or undefined. */
function documentProblem(kind: DocumentKind, input: DocumentInput, issueDate: string): { code: string; message: string } | undefined {
  if (input.validUntil !== undefined && input.validUntil < issueDate) return { code: 'valid_until_before_issue', message: `validUntil ${input.validUntil} is before the issue date ${issueDate} (today, UTC)` };
  // A receipt acknowledges a payment made: not one dated after the receipt.
  if (input.payment?.paidOn !== undefined && input.payment.paidOn > issueDate) return { code: 'paid_on_after_issue', message: `payment.paidOn ${input.payment.paidOn} is after the issue date ${issueDate} (today, UTC): a receipt acknowledges a payment already made` };
  if (kind.credits) {
    const net = computeTotals(input.items, input.vatRate ?? 0, input.currency ?? DEFAULT_CURRENCY).netMinor;
    if (net >= 0n) return { code: 'credit_note_not_negative', message: `a credit note credits the buyer: its net total must be below zero (give the credited lines negative unitPrice), this one is ${formatMinor(net, 2)}` };
  }
  return undefined;
}

/**
 * The pre-payment check of a document of `kind`: a validity date not before the issue date, a
 * payment date not after it (the issue date is the day of the call, hence here, with the clock,
 * and not in the schema), a credit note that credits. A caller's fault: 400 before any quote.
 */
export function documentPrecheck(kind: DocumentKind): (ctx: ServiceContext, input: unknown) => Promise<void> {
  return async (ctx, input) => {
    const why = documentProblem(kind, input as DocumentInput, new Date(ctx.now()).toISOString().slice(0, 10));
    if (why) throw refuseInput(why.code, why.message);
  };
}

/** The `run` of a document service of `kind`. */
export function documentRun(kind: DocumentKind): (ctx: ServiceContext, input: unknown) => Promise<DocumentResult> {
  return async (ctx, input) => {
    const issueDate = new Date(ctx.now()).toISOString().slice(0, 10);
    // Checked before payment too; a call paid before midnight and run after it lands here (refunded).
    const why = documentProblem(kind, input as DocumentInput, issueDate);
    if (why) throw new ServiceError(why.code, why.message);
    const model = documentModel(kind, input as DocumentInput, issueDate, ctx.seller ?? defaultSellerInfo);
    // pdfkit and fontkit load with the first document, not when the node starts.
    const { renderDocument } = await import('./render.js');
    const { pdf, pages } = await renderDocument(model);
    const t = model.totals;
    return {
      pdfBase64: pdf.toString('base64'),
      bytes: pdf.length,
      pages,
      issueDate,
      totals: {
        net: formatMinor(t.netMinor, t.digits),
        vat: formatMinor(t.vatMinor, t.digits),
        gross: formatMinor(t.grossMinor, t.digits),
        currency: t.currency,
        vatRate: model.vatRate,
        netMinor: t.netMinor.toString(),
        vatMinor: t.vatMinor.toString(),
        grossMinor: t.grossMinor.toString(),
        rounding: ROUNDING,
      },
    };
  };
}

/** Health of the document services: active when the embedded fonts are installed. */
export async function documentHealth(): Promise<HealthStatus | HealthReport> {
  return documentFontsInstalled() ? 'active' : { status: 'down', reason: { code: 'data_not_installed', message: 'the document fonts (vendor/fonts) are not installed' } };
}
