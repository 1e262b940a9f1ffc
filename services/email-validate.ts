/** native-email-validate: syntax, DNS MX check, disposable-provider detection. Not runnable yet: it needs a DNS resolver provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';

/** native-email-validate. */
export const emailValidate = defineService({
  id: 'native-email-validate',
  name: 'Email Validator',
  category: 'utility',
  priceBase: 200_000n,
  description: 'syntax, DNS MX check, disposable-provider detection',
  tags: ['email', 'validation', 'mx', 'dns', 'disposable'],
  requestFormat: 'email address',
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 320, pattern: '^[^\\s@]{1,64}@[^\\s@]{1,255}$', description: 'Email address.' },
});
