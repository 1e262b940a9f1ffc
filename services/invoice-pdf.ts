/** native-invoice-pdf: invoice as A4 PDF (base64) with VAT-computed totals. Not runnable yet: the PDF renderer is not there yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { invoiceSchema } from './documentSchemas.js';

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
  inputSchema: invoiceSchema,
  inputIsJson: true,
});
