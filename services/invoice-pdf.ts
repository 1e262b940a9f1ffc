/** native-invoice-pdf: invoice as A4 PDF (base64) with VAT-computed totals. Rendered by services/documents (pdfkit, embedded DejaVu Sans + Noto Sans SC). */
import { defineService } from './define.js';
import { documentHealth, documentPrecheck, documentRun, type DocumentKind } from './documents/document.js';
import { invoiceSchema } from './documentSchemas.js';

const kind: DocumentKind = { title: 'INVOICE', numberField: 'invoiceNumber', numberLabel: 'Invoice no.', grossLabel: 'Total due' };

/** native-invoice-pdf. */
export const invoicePdf = defineService({
  id: 'native-invoice-pdf',
  name: 'Invoice PDF',
  category: 'reports',
  priceBase: 800_000n,
  description: 'invoice as A4 PDF (base64) with VAT-computed totals',
  tags: ['invoice', 'pdf', 'a4', 'vat', 'document', 'billing'],
  requestFormat: 'JSON: {"invoiceNumber", "buyer": {"name", "address"}, "items": [{"description", "qty", "unitPrice"}], "vatRate", "notes"}',
  requestRequired: false,
  needsInput: true,
  inputSchema: invoiceSchema,
  inputIsJson: true,
  precheck: documentPrecheck(kind),
  run: documentRun(kind),
  health: documentHealth,
});
