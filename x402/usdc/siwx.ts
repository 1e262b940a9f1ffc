/**
 * x402's `sign-in-with-x` extension (CAIP-122 / EIP-4361 "Sign-In with Ethereum"), as the second
 * way a USDC payer proves, on a retry, that it is the payer: the 402's v2 `PAYMENT-REQUIRED`
 * declares a challenge (`extensions["sign-in-with-x"]`: domain, uri, nonce, issuedAt,
 * expirationTime, the chains accepted), the client signs the EIP-4361 message of it with the
 * payer's key and sends the signed fields as `SIGN-IN-WITH-X` (base64 JSON, the extension's
 * wire form). The node rebuilds the message with viem and checks the EOA signature.
 *
 * A sign-in proves the payer of one payment, not of all its payments: its message's
 * `requestId` (EIP-4361 "Request ID") must be the nonce of the EIP-3009 authorization sent
 * with it, so a captured sign-in opens that payment's result and no other.
 *
 * Challenges are stateless: the nonce is an HMAC of the resource and the issue time under a key
 * from the settlement ledger (x402/core/challengeKeys.ts: the same at every node sharing it, and
 * across restarts), so a node checks the fleet's challenges without storing them; one is good
 * for five minutes.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Why a sign-in proves nothing (stable codes; the paid call then answers as if there were none). */
export const SiwxRefusal = {
  MALFORMED: 'siwx_malformed',
  WRONG_RESOURCE: 'siwx_wrong_resource',
  NOT_ISSUED_HERE: 'siwx_not_issued_here',
  EXPIRED: 'siwx_expired',
  /** Its requestId is not the nonce of the payment it came with. */
  OTHER_PAYMENT: 'siwx_other_payment',
  BAD_SIGNATURE: 'siwx_bad_signature',
} as const;

/** Name of the extension, in `extensions` and (upper case) as the header. */
export const SIGN_IN_WITH_X = 'sign-in-with-x';
/** Base, the only chain whose payers sign in here (the USDC rail's). */
const CHAIN = 'eip155:8453';
/** How long a challenge may be used, seconds. */
export const SIWX_CHALLENGE_SECONDS = 300;
/** Largest header accepted, characters. */
const MAX_HEADER = 8 * 1024;

/** The fields a signed `SIGN-IN-WITH-X` carries (the extension's SIWxPayload, EVM form). */
interface SiwxPayload {
  domain: string;
  address: string;
  statement?: string;
  uri: string;
  version: string;
  chainId: string;
  type?: string;
  nonce: string;
  issuedAt: string;
  expirationTime?: string;
  requestId?: string;
  resources?: string[];
  signature: string;
}

/** The payment a sign-in must name: the EIP-3009 authorization's nonce (0x, 32 bytes). */
export interface SiwxPayment {
  readonly nonce: string;
}

/** Issues and checks this node's sign-in challenges (see module comment). */
export class SiwxChallenges {
  private readonly key: Uint8Array;

  /** `key`: the fleet's (x402/core/challengeKeys.ts); a random one only checks this object's own challenges. */
  constructor(key: Uint8Array = randomBytes(32)) {
    this.key = key;
  }

  private nonceOf(uri: string, issuedAt: string): string {
    return createHmac('sha256', this.key).update(`${uri}\n${issuedAt}`).digest('hex').slice(0, 32);
  }

  /** The 402's declaration of the extension for `resource` (an absolute URL), issued at `nowMs`. */
  declaration(resource: string, nowMs: number): Record<string, unknown> {
    const issuedAt = new Date(nowMs).toISOString();
    return {
      info: {
        domain: new URL(resource).host,
        uri: resource,
        version: '1',
        nonce: this.nonceOf(resource, issuedAt),
        issuedAt,
        expirationTime: new Date(nowMs + SIWX_CHALLENGE_SECONDS * 1000).toISOString(),
        statement: 'Sign in as the payer of one USDC payment to receive its result again; requestId: the nonce of its authorization.',
        resources: [resource],
      },
      supportedChains: [{ chainId: CHAIN, type: 'eip191' }],
      schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: ['domain', 'address', 'uri', 'version', 'chainId', 'nonce', 'issuedAt', 'signature'] },
    };
  }

  /**
   * The address a `SIGN-IN-WITH-X` header proves for `payment` at `resource` at `nowMs`, or why it
   * proves nothing: one of this fleet's challenges for this resource, still valid, naming this
   * payment's authorization nonce as its requestId, signed by `address`.
   */
  async verify(header: string, resource: string, nowMs: number, payment: SiwxPayment): Promise<{ ok: true; address: string } | { ok: false; code: string; reason: string }> {
    const no = (code: string, reason: string) => ({ ok: false as const, code, reason });
    if (header.length > MAX_HEADER) return no(SiwxRefusal.MALFORMED, 'the SIGN-IN-WITH-X header is too large');
    let p: SiwxPayload;
    try {
      p = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as SiwxPayload;
    } catch {
      return no(SiwxRefusal.MALFORMED, 'SIGN-IN-WITH-X is not base64 JSON');
    }
    const str = (v: unknown) => typeof v === 'string';
    if (typeof p !== 'object' || p === null || ![p.domain, p.address, p.uri, p.version, p.chainId, p.nonce, p.issuedAt, p.signature].every(str)) {
      return no(SiwxRefusal.MALFORMED, 'SIGN-IN-WITH-X lacks domain, address, uri, version, chainId, nonce, issuedAt or signature');
    }
    if (p.chainId !== CHAIN || (p.type !== undefined && p.type !== 'eip191')) return no(SiwxRefusal.MALFORMED, `sign in on ${CHAIN} with an EIP-191 signature`);
    if (p.uri !== resource || p.domain !== new URL(resource).host) return no(SiwxRefusal.WRONG_RESOURCE, 'the sign-in is for another resource');
    const expected = Buffer.from(this.nonceOf(resource, p.issuedAt));
    const got = Buffer.from(p.nonce);
    if (expected.length !== got.length || !timingSafeEqual(expected, got)) return no(SiwxRefusal.NOT_ISSUED_HERE, 'the sign-in challenge was not issued by this node or its fleet: ask for a fresh 402');
    const issued = Date.parse(p.issuedAt);
    if (!(issued <= nowMs + 30_000 && nowMs - issued <= SIWX_CHALLENGE_SECONDS * 1000)) return no(SiwxRefusal.EXPIRED, 'the sign-in challenge expired: ask for a fresh 402');
    if (typeof p.requestId !== 'string' || p.requestId.toLowerCase() !== payment.nonce.toLowerCase()) {
      return no(SiwxRefusal.OTHER_PAYMENT, "the sign-in's requestId must be the nonce of the authorization it comes with: a sign-in proves the payer of one payment");
    }
    if (!/^0x[0-9a-fA-F]{40}$/.test(p.address) || !/^0x[0-9a-fA-F]+$/.test(p.signature)) return no(SiwxRefusal.MALFORMED, 'SIGN-IN-WITH-X address or signature is not hex');
    // viem (~600 modules) is imported with the first sign-in, not when the node starts.
    const [{ verifyMessage }, { createSiweMessage }] = await Promise.all([import('viem'), import('viem/siwe')]);
    let message: string;
    try {
      message = createSiweMessage({
        domain: p.domain,
        address: p.address as `0x${string}`,
        ...(p.statement ? { statement: p.statement } : {}),
        uri: p.uri,
        version: '1',
        chainId: 8453,
        nonce: p.nonce,
        issuedAt: new Date(p.issuedAt),
        ...(p.expirationTime ? { expirationTime: new Date(p.expirationTime) } : {}),
        requestId: p.requestId,
        ...(p.resources?.length ? { resources: p.resources } : {}),
      });
    } catch (e) {
      return no(SiwxRefusal.MALFORMED, `the sign-in fields do not make an EIP-4361 message (${(e as Error).message})`);
    }
    const valid = await verifyMessage({ address: p.address as `0x${string}`, message, signature: p.signature as `0x${string}` }).catch(() => false);
    return valid ? { ok: true, address: p.address } : no(SiwxRefusal.BAD_SIGNATURE, 'the sign-in signature does not verify for its address');
  }
}
