/** native-invoice-proforma: pro forma invoice A4 PDF. Rendered by services/documents (pdfkit, embedded DejaVu Sans + Noto Sans SC). */
import { defineService } from './define.js';
import { documentHealth, documentPrecheck, documentRun, type DocumentKind } from './documents/document.js';
import { proformaSchema } from './documentSchemas.js';

const kind: DocumentKind = { title: 'PRO FORMA INVOICE', numberField: 'proformaNumber', numberLabel: 'Pro forma no.', grossLabel: 'Total' };

/** native-invoice-proforma. */
export const invoiceProforma = defineService({
  id: 'native-invoice-proforma',
  name: 'Pro Forma Invoice PDF',
  category: 'reports',
  priceBase: 800_000n,
  description: 'pro forma invoice A4 PDF',
  tags: ['proforma', 'invoice', 'pdf', 'a4', 'document'],
  requestFormat: 'JSON: {"proformaNumber", "buyer": {"name", "address"}, "items", "vatRate", "validUntil", "currency"}',
  requestRequired: false,
  needsInput: true,
  inputSchema: proformaSchema,
  inputIsJson: true,
  precheck: documentPrecheck(kind),
  run: documentRun(kind),
  health: documentHealth,
});
