/** native-credit-note: credit note A4 PDF, negative unitPrice allowed. Not runnable yet: the PDF renderer is not there yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { creditNoteSchema } from './documentSchemas.js';

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
  inputSchema: creditNoteSchema,
  inputIsJson: true,
});
