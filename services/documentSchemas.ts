/**
 * JSON input schemas of the document services (invoice, pro forma, receipt, credit note, quote),
 * the compliance report and the sanctions scan, from the spec's "JSON inputs" table. Unknown
 * fields are refused so that a misspelt key is a 400 before payment, not a wrong paid document.
 */

/** Longest line list of a document. */
export const MAX_ITEMS = 200;

const DATE = { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$', 'x-date': true, description: 'Date, YYYY-MM-DD (a day that exists).' } as const;
/** A validity date: a day that exists, not before the document's issue date (the day of the call, UTC; checked before payment). */
const VALID_UNTIL = { ...DATE, description: 'Date, YYYY-MM-DD, not before the issue date (today, UTC).' } as const;
const NAME = { type: 'string', minLength: 1, maxLength: 200 } as const;
const ADDRESS = { type: 'string', minLength: 1, maxLength: 500 } as const;
const DOC_NUMBER = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._/#-]*$' } as const;

function buyer(withAddress: boolean): Record<string, unknown> {
  return withAddress
    ? { type: 'object', additionalProperties: false, required: ['name'], properties: { name: NAME, address: ADDRESS } }
    : { type: 'object', additionalProperties: false, required: ['name'], properties: { name: NAME } };
}

/** Line items; `negativePrices` for credit notes. */
function items(negativePrices = false): Record<string, unknown> {
  return {
    type: 'array',
    minItems: 1,
    maxItems: MAX_ITEMS,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['description', 'qty', 'unitPrice'],
      properties: {
        description: { type: 'string', minLength: 1, maxLength: 500 },
        qty: { type: 'number', exclusiveMinimum: 0, maximum: 1e9 },
        unitPrice: negativePrices ? { type: 'number', minimum: -1e12, maximum: 1e12 } : { type: 'number', minimum: 0, maximum: 1e12 },
      },
    },
  };
}

/** VAT rate in percent (20 for 20 %). */
const VAT_RATE = { type: 'number', minimum: 0, maximum: 100, description: 'VAT rate in percent, e.g. 20.' } as const;

/** ISO 4217 currency code; documents default to EUR. */
const CURRENCY = { type: 'string', pattern: '^[A-Z]{3}$', 'x-currency': true, description: 'ISO 4217 code, e.g. EUR (default EUR).' } as const;
const NOTES = { type: 'string', maxLength: 2000 } as const;

/** Every document also takes an optional `currency` (default EUR) and `notes`. */
function doc(numberField: string, properties: Record<string, unknown>): Record<string, unknown> {
  return { type: 'object', additionalProperties: false, required: [numberField, 'buyer', 'items'], properties: { [numberField]: DOC_NUMBER, currency: CURRENCY, notes: NOTES, ...properties } };
}

/** native-invoice-pdf: invoiceNumber; buyer {name, address}; items; vatRate; notes. */
export const invoiceSchema = doc('invoiceNumber', { buyer: buyer(true), items: items(), vatRate: VAT_RATE });
/** native-invoice-proforma: proformaNumber; buyer {name, address}; items; vatRate; validUntil; currency. */
export const proformaSchema = doc('proformaNumber', { buyer: buyer(true), items: items(), vatRate: VAT_RATE, validUntil: VALID_UNTIL });
/** native-receipt-payment: receiptNumber; buyer {name}; items; payment {method, reference, paidOn}; vatRate. */
export const receiptSchema = doc('receiptNumber', {
  buyer: buyer(false),
  items: items(),
  payment: {
    type: 'object',
    additionalProperties: false,
    required: ['method'],
    properties: { method: { type: 'string', minLength: 1, maxLength: 64 }, reference: { type: 'string', maxLength: 128 }, paidOn: { ...DATE, description: 'Date of the payment, YYYY-MM-DD, not after the issue date (today, UTC).' } },
  },
  vatRate: VAT_RATE,
});
/** native-credit-note: creditNoteNumber; buyer {name}; originalInvoice; items (negative unitPrice allowed, the net total below zero: checked before payment); vatRate. */
export const creditNoteSchema = doc('creditNoteNumber', { buyer: buyer(false), originalInvoice: DOC_NUMBER, items: items(true), vatRate: VAT_RATE });
/** native-quote-estimate: quoteNumber; buyer {name, address}; items; vatRate; validUntil. */
export const quoteSchema = doc('quoteNumber', { buyer: buyer(true), items: items(), vatRate: VAT_RATE, validUntil: VALID_UNTIL });

/** native-b2b-compliance-report: txs: array of {id, amount, counterparty, country}. */
export const complianceReportSchema: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  required: ['txs'],
  properties: {
    txs: {
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'amount', 'counterparty', 'country'],
        properties: {
          id: { type: 'string', minLength: 1, maxLength: 128 },
          amount: { type: ['number', 'string'], minimum: 0, maximum: 1e15, pattern: '^\\d{1,15}(\\.\\d{1,18})?$', description: 'Non-negative amount (number or decimal string).' },
          counterparty: { type: 'string', minLength: 1, maxLength: 200 },
          country: { type: 'string', pattern: '^[A-Za-z]{2}$', 'x-country': true, description: 'ISO 3166-1 alpha-2 country code (assigned codes only: XX or ZZ are refused).' },
        },
      },
    },
  },
};

/** native-aml-sanctions-scan: entity (wallet address or company name); lists: array of `OFAC`, `EU`, `UN`. */
export const sanctionsScanSchema: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  required: ['entity'],
  properties: {
    entity: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S', description: 'Wallet address or company name.' },
    lists: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['OFAC', 'EU', 'UN'] }, description: 'Lists to screen against (default: all).' },
    threshold: { type: 'number', minimum: 0.5, maximum: 1, description: 'Minimum name score of a match, 0.5 to 1 (default 0.85).' },
    subject: { enum: ['person-or-organization', 'vessel', 'aircraft'], description: 'What the name names: vessels and aircraft are compared only with a vessel or aircraft query (default: a vessel when the name says so, "MV …", "IMO 1234567"; else a person or organization).' },
  },
};

/** native-x402-validation: a plain URL (basic mode) or {url, mcp, correlation, includeBody}. */
export const x402ValidationSchema: Record<string, unknown> = {
  anyOf: [
    { type: 'string', maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://\\S+$', 'x-url': true },
    {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: { type: 'string', maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://\\S+$', 'x-url': true },
        mcp: { type: 'boolean' },
        correlation: { type: 'boolean' },
        includeBody: { type: 'boolean' },
      },
    },
  ],
};
