/** native-credit-note: credit note A4 PDF, negative unitPrice allowed. Rendered by services/documents (pdfkit, embedded DejaVu Sans + Noto Sans SC). */
import { defineService } from './define.js';
import { documentHealth, documentPrecheck, documentRun, type DocumentKind } from './documents/document.js';
import { creditNoteSchema } from './documentSchemas.js';

const kind: DocumentKind = { title: 'CREDIT NOTE', numberField: 'creditNoteNumber', numberLabel: 'Credit note no.', grossLabel: 'Total credited', credits: true };

/** native-credit-note. */
export const creditNote = defineService({
  id: 'native-credit-note',
  name: 'Credit Note PDF',
  category: 'reports',
  priceBase: 800_000n,
  description: 'credit note A4 PDF, negative unitPrice allowed',
  tags: ['credit-note', 'refund', 'pdf', 'a4', 'document'],
  requestFormat: 'JSON: {"creditNoteNumber", "buyer": {"name"}, "originalInvoice", "items", "vatRate"}',
  requestRequired: false,
  needsInput: true,
  inputSchema: creditNoteSchema,
  inputIsJson: true,
  precheck: documentPrecheck(kind),
  run: documentRun(kind),
  health: documentHealth,
});
