/** native-email-validate: syntax (RFC 5321/5322, IDN), disposable-provider detection from a shipped list, DNS MX check with null MX and A/AAAA fallback (services/identity/email.ts). */
import { defineService } from './define.js';
import { checkResolver, validateEmail } from './identity/email.js';
import { ServiceError, type ServiceContext } from './types.js';

/**
 * The check, or the failure of a DNS that did not answer: "could not check" is no answer the
 * caller pays for (docs/decisions.md, upstream failures after payment: refunded).
 */
async function run(_ctx: ServiceContext, input: unknown) {
  const r = await validateEmail(input as string);
  if (r.mx.status === 'unknown') throw new ServiceError('dns_unavailable', `could not check ${r.asciiDomain ?? r.domain}: ${r.mx.reason}`);
  return r;
}

/** Refuses before payment (503) while the resolver cannot find example.com: no answer of it could be trusted. */
async function precheck(): Promise<void> {
  const r = await checkResolver();
  if (!r.ok) throw new ServiceError('dns_unavailable', `cannot check mail domains now: ${r.reason}`);
}

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
  precheck,
  run,
  // One state with the pre-payment check: while the resolver cannot find example.com the service shows down, and is refused before any quote.
  health: async () => {
    const r = await checkResolver();
    return r.ok ? 'active' : { status: 'down' as const, reason: { code: 'dns_unavailable', message: `cannot check mail domains now: ${r.reason}` } };
  },
});
