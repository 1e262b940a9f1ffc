/** native-quote-estimate: quote/estimate A4 PDF with validity date. Rendered by services/documents (pdfkit, embedded DejaVu Sans + Noto Sans SC). */
import { defineService } from './define.js';
import { documentHealth, documentPrecheck, documentRun, type DocumentKind } from './documents/document.js';
import { quoteSchema } from './documentSchemas.js';

const kind: DocumentKind = { title: 'QUOTE / ESTIMATE', numberField: 'quoteNumber', numberLabel: 'Quote no.', grossLabel: 'Total quoted' };

/** native-quote-estimate. */
export const quoteEstimate = defineService({
  id: 'native-quote-estimate',
  name: 'Quote Estimate PDF',
  category: 'reports',
  priceBase: 600_000n,
  description: 'quote/estimate A4 PDF with validity date',
  tags: ['quote', 'estimate', 'pdf', 'a4', 'document'],
  requestFormat: 'JSON: {"quoteNumber", "buyer": {"name", "address"}, "items", "vatRate", "validUntil"}',
  requestRequired: false,
  needsInput: true,
  inputSchema: quoteSchema,
  inputIsJson: true,
  precheck: documentPrecheck(kind),
  run: documentRun(kind),
  health: documentHealth,
});
