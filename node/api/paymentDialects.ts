/**
 * The 402 dialects besides the spec's JSON body, as header translations around the paid-call
 * core (x402/core/paidCall.ts); the settlement and its replay protection are the core's, whatever
 * the dialect.
 *
 * - **x402 v2**: every 402 carries `PAYMENT-REQUIRED` = base64 JSON of the v2 PaymentRequired,
 *   one entry per option of the quote, networks in CAIP-2 form (`eip155:8453` for Base,
 *   `native:<chainId>` for this chain). Paid retries may send `PAYMENT-SIGNATURE` (read by the
 *   route as well as `X-PAYMENT`); settlements answer `PAYMENT-RESPONSE` too.
 * - **The "Payment" HTTP authentication scheme** (draft-ryan-httpauth-payment-01): every 402
 *   carries one `WWW-Authenticate: Payment` challenge per rail — `id`, `realm`, `method`
 *   (`native` or `x402-exact`), `intent="charge"`, `request` (base64url of the JCS JSON
 *   `{amount, currency, recipient, methodDetails}`), `expires`, `description` — and a retry may
 *   send `Authorization: Payment <base64url JSON {challenge, payload, source?}>`. The challenge
 *   `id` is an HMAC over the other parameters with a key from the settlement ledger
 *   (x402/core/challengeKeys.ts), so the node checks a credential without storing challenges, and so
 *   does every node sharing the ledger; a challenge expires with its quote. Payloads:
 *   `{"txId"}` on the native rail, the x402 PaymentPayload (what `X-PAYMENT` carries, decoded) on
 *   the USDC rail. A paid answer carries `Payment-Receipt` (base64url JSON). See
 *   docs/agents-guide.md.
 * - **Signed offers** (x402 Offer and Receipt extension): the JSON body and `PAYMENT-REQUIRED`
 *   both carry `extensions["offer-receipt"]`, one JWS offer per option shown (x402/core/offers.ts);
 *   the Payment challenges have no extensions field.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PaymentRequirements } from '../../x402/core/quote.js';
import type { PaymentProof } from '../../x402/core/paidCall.js';
import { canonicalJson } from '../../x402/core/wire.js';
import { PAYMENT_IDENTIFIER, paymentIdentifierDeclaration, toRequirementsV2, type PaymentRequiredV2, type PaymentRequirementsV2 } from '../../x402/usdc/wire.js';

/** The draft this implements. */
export const PAYMENT_AUTH_DRAFT = 'draft-ryan-httpauth-payment-01';
/** Payment method identifiers of the two rails (not registered: this node's own names). */
export const PaymentAuthMethod = { NATIVE: 'native', X402_EXACT: 'x402-exact' } as const;
/** Error codes of a malformed or foreign `Authorization: Payment` credential (statuses in x402/core/errors.ts: 400, or 402 with fresh challenges). */
export const PaymentAuthErrorCode = {
  INVALID_CREDENTIAL: 'invalid_payment_credential',
  CHALLENGE_INVALID: 'payment_challenge_invalid',
  CHALLENGE_EXPIRED: 'payment_challenge_expired',
  CHALLENGE_MISMATCH: 'payment_challenge_mismatch',
} as const;
/** Largest credential accepted, characters. */
const MAX_CREDENTIAL_CHARS = 16 * 1024;

/** CAIP-2 network of an option: `eip155:8453` for the USDC rail, `native:<chainId>` for this chain. */
export function caip2NetworkOf(req: PaymentRequirements): string {
  if (req.scheme === 'exact') return toRequirementsV2(req).network;
  return `native:${String(req.extra.chainId)}`;
}

/**
 * Longest request (UTF-8 bytes) the v2 native option names in `extra.request`: the header must
 * stay well inside the 16 KiB HTTP clients and servers accept, and the retry's
 * `PAYMENT-SIGNATURE` echoes the option once more.
 */
export const MAX_ECHOED_REQUEST_BYTES = 2048;

/**
 * `extra.request` of the native option in x402 v2: the request text a payment must commit to
 * (x402/core/wire.ts requestCommitment), which a v2 scheme client is not shown otherwise; null for a
 * call without one. Too long to echo: `requestOmitted: "too_large"` instead.
 */
function requestEcho(request: string | undefined): Record<string, unknown> {
  if (request === undefined) return { request: null };
  return Buffer.byteLength(request, 'utf8') <= MAX_ECHOED_REQUEST_BYTES ? { request } : { requestOmitted: 'too_large' };
}

/** One option in the x402 v2 form (the native one names the request of the call, see `requestEcho`). */
function requirementsV2(req: PaymentRequirements, request: string | undefined): PaymentRequirementsV2 {
  if (req.scheme === 'exact') return toRequirementsV2(req);
  return { scheme: req.scheme, network: caip2NetworkOf(req), amount: req.maxAmountRequired, asset: req.asset, payTo: req.payTo, maxTimeoutSeconds: req.maxTimeoutSeconds, extra: { ...req.extra, ...requestEcho(request) } };
}

/** `{extensions}` when there is any. */
const withExtensions = (e: Record<string, unknown>): { extensions?: Record<string, unknown> } => (Object.keys(e).length > 0 ? { extensions: e } : {});

/** The x402 v2 PaymentRequired of a 402: every option of `accepts` for the call's `request`, with the refusal's code when there is one. */
export function paymentRequiredV2Of(accepts: readonly PaymentRequirements[], error?: string, extensions?: Record<string, unknown>, request?: string): PaymentRequiredV2 {
  const first = accepts[0];
  return {
    x402Version: 2,
    ...(error ? { error } : {}),
    resource: { url: first.resource, description: first.description, mimeType: first.mimeType },
    accepts: accepts.map((a) => requirementsV2(a, request)),
    // A retry that returns a stored USDC result must carry the id the first call sent (x402/usdc/settle.ts); signed offers go with every option.
    ...withExtensions({ ...(accepts.some((a) => a.scheme === 'exact') ? { [PAYMENT_IDENTIFIER]: paymentIdentifierDeclaration() } : {}), ...extensions }),
  };
}

/**
 * The native payment of an x402 payment header (`PAYMENT-SIGNATURE` of v2, `X-PAYMENT` of v1):
 * base64 JSON whose accepted option (v2 `accepted.scheme`, v1 `scheme`) is `native-x402` and
 * whose `payload` is `{txId, salt}` — what the agent package's native scheme sends through
 * `@x402/fetch`. Undefined for any other header (the USDC rail reads it); a native header
 * without a well-formed payload is refused like a malformed `payment` body.
 */
export function nativePaymentOfHeader(header: string): { txId: string; salt?: string } | { malformed: string } | undefined {
  if (header.length > MAX_CREDENTIAL_CHARS) return undefined;
  let p: { x402Version?: unknown; scheme?: unknown; accepted?: { scheme?: unknown }; payload?: { txId?: unknown; salt?: unknown } };
  try {
    p = JSON.parse(Buffer.from(header.trim(), 'base64').toString('utf8')) as typeof p;
  } catch {
    return undefined;
  }
  if (typeof p !== 'object' || p === null) return undefined;
  const scheme = p.x402Version === 2 ? p.accepted?.scheme : p.scheme;
  if (scheme !== 'native-x402') return undefined;
  const payload = p.payload;
  if (typeof payload !== 'object' || payload === null || typeof payload.txId !== 'string' || (payload.salt !== undefined && typeof payload.salt !== 'string')) {
    return { malformed: 'a native-x402 payment header carries the payload {"txId": "<id of your agent_invoke transaction>", "salt": "<the 64-hex secret its requestHash commits to>"}' };
  }
  return { txId: payload.txId, ...(typeof payload.salt === 'string' ? { salt: payload.salt } : {}) };
}

export { canonicalJson };

const b64url = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');
const fromB64url = (s: string): string => Buffer.from(s, 'base64url').toString('utf8');
/** An auth-param value as an HTTP quoted-string. */
const quoted = (s: string): string => `"${s.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\r\n]+/g, ' ')}"`;

/** The parameters of one challenge. */
export interface PaymentChallenge {
  readonly id: string;
  readonly realm: string;
  readonly method: string;
  readonly intent: 'charge';
  readonly request: string;
  readonly expires: string;
  readonly description?: string;
}

/** The decoded `request` of a challenge. */
export interface PaymentChallengeRequest {
  readonly amount: string;
  readonly currency: string;
  readonly recipient: string;
  readonly methodDetails: Record<string, unknown>;
}

/** The Payment scheme of a node: challenges signed with its key (the fleet's, x402/core/challengeKeys.ts), credentials checked against it. */
export class PaymentAuth {
  /** `secret`: the ledger's key; a random one only checks this object's own challenges. */
  constructor(private readonly secret: Uint8Array = randomBytes(32)) {}

  private idOf(c: Omit<PaymentChallenge, 'id' | 'description'>): string {
    return createHmac('sha256', this.secret).update([c.realm, c.method, c.intent, c.request, c.expires].join('\n')).digest('base64url');
  }

  /** The challenge of one option of a quote, valid for its `maxTimeoutSeconds` from `nowMs`. */
  challengeOf(req: PaymentRequirements, realm: string, nowMs: number): PaymentChallenge {
    const native = req.scheme !== 'exact';
    const request: PaymentChallengeRequest = {
      amount: req.maxAmountRequired,
      currency: req.asset,
      recipient: req.payTo,
      methodDetails: { scheme: req.scheme, network: caip2NetworkOf(req), resource: req.resource, ...(native ? { x402Network: req.network } : {}), extra: req.extra },
    };
    const base = {
      realm,
      method: native ? PaymentAuthMethod.NATIVE : PaymentAuthMethod.X402_EXACT,
      intent: 'charge' as const,
      request: b64url(canonicalJson(request)),
      expires: new Date(nowMs + req.maxTimeoutSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    return { id: this.idOf(base), ...base, description: req.description };
  }

  /** The `WWW-Authenticate` values of a 402: one `Payment` challenge per option. */
  challenges(accepts: readonly PaymentRequirements[], realm: string, nowMs: number): string[] {
    return accepts.map((req) => {
      const c = this.challengeOf(req, realm, nowMs);
      const params: [string, string | undefined][] = [['id', c.id], ['realm', c.realm], ['method', c.method], ['intent', c.intent], ['request', c.request], ['expires', c.expires], ['description', c.description]];
      return `Payment ${params.filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => `${k}=${quoted(v!)}`).join(', ')}`;
    });
  }

  /**
   * The payment of an `Authorization: Payment` header for the paid call at `resource`, or the
   * refusal of a malformed, forged, expired or foreign credential (as a `malformed` proof the
   * core answers after its checks before a quote). Undefined when the header is not of this scheme.
   */
  proofOf(authorization: string, resource: string, nowMs: number): PaymentProof | undefined {
    const m = /^Payment\s+([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(authorization);
    if (!/^Payment(\s|$)/i.test(authorization)) return undefined;
    const bad = (code: string, message: string): PaymentProof => ({ malformed: { code, message } });
    if (!m || m[1].length > MAX_CREDENTIAL_CHARS) return bad(PaymentAuthErrorCode.INVALID_CREDENTIAL, `Authorization: Payment takes one base64url token of at most ${MAX_CREDENTIAL_CHARS} characters (${PAYMENT_AUTH_DRAFT})`);
    let cred: { challenge?: Partial<PaymentChallenge>; payload?: unknown };
    try {
      cred = JSON.parse(fromB64url(m[1])) as typeof cred;
    } catch {
      return bad(PaymentAuthErrorCode.INVALID_CREDENTIAL, 'the Payment credential is not base64url of a JSON object');
    }
    const c = cred?.challenge;
    if (typeof cred !== 'object' || cred === null || typeof c !== 'object' || c === null || typeof cred.payload !== 'object' || cred.payload === null) {
      return bad(PaymentAuthErrorCode.INVALID_CREDENTIAL, 'the Payment credential must be {"challenge": {…the challenge as received}, "payload": {…}}');
    }
    const fields = ['id', 'realm', 'method', 'intent', 'request', 'expires'] as const;
    if (fields.some((f) => typeof c[f] !== 'string')) return bad(PaymentAuthErrorCode.INVALID_CREDENTIAL, `the echoed challenge needs ${fields.join(', ')} as strings`);
    const expected = Buffer.from(this.idOf(c as PaymentChallenge), 'utf8');
    const got = Buffer.from(c.id!, 'utf8');
    if (expected.length !== got.length || !timingSafeEqual(expected, got)) return bad(PaymentAuthErrorCode.CHALLENGE_INVALID, 'the challenge was not issued by this node (or the node restarted): pay against a fresh 402');
    if (!(Date.parse(c.expires!) >= nowMs)) return bad(PaymentAuthErrorCode.CHALLENGE_EXPIRED, `the challenge expired at ${c.expires}: request a fresh 402`);
    let request: PaymentChallengeRequest;
    try {
      request = JSON.parse(fromB64url(c.request!)) as PaymentChallengeRequest;
    } catch {
      return bad(PaymentAuthErrorCode.INVALID_CREDENTIAL, 'the challenge request is not base64url JSON');
    }
    if (request.methodDetails?.resource !== resource) return bad(PaymentAuthErrorCode.CHALLENGE_MISMATCH, `the challenge is for ${String(request.methodDetails?.resource)}, not ${resource}`);
    const payload = cred.payload as Record<string, unknown>;
    if (c.method === PaymentAuthMethod.NATIVE) {
      if (typeof payload.txId !== 'string' || (payload.salt !== undefined && typeof payload.salt !== 'string')) {
        return { rail: 'native', malformed: { code: PaymentAuthErrorCode.INVALID_CREDENTIAL, message: 'the native payload is {"txId": "<id of your agent_invoke transaction>", "salt": "<the 64-hex secret its requestHash commits to>"}' } };
      }
      return { rail: 'native', txId: payload.txId, ...(typeof payload.salt === 'string' ? { salt: payload.salt } : {}) };
    }
    if (c.method === PaymentAuthMethod.X402_EXACT) return { rail: 'usdc', payload };
    return bad(PaymentAuthErrorCode.INVALID_CREDENTIAL, `unknown payment method ${c.method}; this node offers ${Object.values(PaymentAuthMethod).join(', ')}`);
  }
}

/** The `Payment-Receipt` value of a settled call (base64url of JCS JSON). */
export function paymentReceiptOf(rail: 'native' | 'usdc', reference: string, nowMs: number): string {
  return b64url(canonicalJson({ status: 'success', method: rail === 'native' ? PaymentAuthMethod.NATIVE : PaymentAuthMethod.X402_EXACT, intent: 'charge', reference, timestamp: new Date(nowMs).toISOString() }));
}
