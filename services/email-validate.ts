/** native-email-validate: syntax (RFC 5321/5322, IDN), disposable-provider detection from a shipped list, DNS MX check with null MX and A/AAAA fallback (services/identity/email.ts). */
import { defineService } from './define.js';
import { validateEmail } from './identity/email.js';

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
  needsInput: true,
  inputSchema: { type: 'string', maxLength: 320, pattern: '^[^\\s@]{1,64}@[^\\s@]{1,255}$', description: 'Email address.' },
  run: async (_ctx, input) => validateEmail(input as string),
  // The syntax and disposable checks always work; a DNS outage makes single answers `mx: "unknown"`, not the service down.
  health: async () => 'active',
});
