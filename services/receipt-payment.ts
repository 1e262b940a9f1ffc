/** native-receipt-payment: payment receipt A4 PDF. Rendered by services/documents (pdfkit, embedded DejaVu Sans + Noto Sans SC). */
import { defineService } from './define.js';
import { documentHealth, documentPrecheck, documentRun, type DocumentKind } from './documents/document.js';
import { receiptSchema } from './documentSchemas.js';

const kind: DocumentKind = { title: 'PAYMENT RECEIPT', numberField: 'receiptNumber', numberLabel: 'Receipt no.', grossLabel: 'Amount paid' };

/** native-receipt-payment. */
export const receiptPayment = defineService({
  id: 'native-receipt-payment',
  name: 'Payment Receipt PDF',
  category: 'reports',
  priceBase: 600_000n,
  description: 'payment receipt A4 PDF',
  tags: ['receipt', 'payment', 'pdf', 'a4', 'document'],
  requestFormat: 'JSON: {"receiptNumber", "buyer": {"name"}, "items", "payment": {"method", "reference", "paidOn"}, "vatRate"}',
  requestRequired: false,
  needsInput: true,
  inputSchema: receiptSchema,
  inputIsJson: true,
  precheck: documentPrecheck(kind),
  run: documentRun(kind),
  health: documentHealth,
});
