/**
 * x402's `sign-in-with-x` extension (CAIP-122 / EIP-4361 "Sign-In with Ethereum"), as the second
 * way a USDC payer proves, on a retry, that it is the payer: the 402's v2 `PAYMENT-REQUIRED`
 * declares a challenge (`extensions["sign-in-with-x"]`: domain, uri, nonce, issuedAt,
 * expirationTime, the chains accepted), the client signs the EIP-4361 message of it with the
 * payer's key and sends the signed fields as `SIGN-IN-WITH-X` (base64 JSON, the extension's
 * wire form). The node rebuilds the message with viem and checks the EOA signature.
 *
 * Challenges are stateless: the nonce is an HMAC of the resource and the issue time under a key
 * drawn at start, so a node checks its own challenges without storing them; one is good for
 * five minutes (a restart ends them all: the client asks for a fresh 402).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

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
  resources?: string[];
  signature: string;
}

/** Issues and checks this node's sign-in challenges (see module comment). */
export class SiwxChallenges {
  private readonly key: Buffer;

  constructor(key: Buffer = randomBytes(32)) {
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
        statement: 'Sign in as the payer of a USDC payment to receive its result again.',
        resources: [resource],
      },
      supportedChains: [{ chainId: CHAIN, type: 'eip191' }],
      schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: ['domain', 'address', 'uri', 'version', 'chainId', 'nonce', 'issuedAt', 'signature'] },
    };
  }

  /**
   * The address a `SIGN-IN-WITH-X` header proves for `resource` at `nowMs`, or why it proves
   * nothing: one of this node's challenges for this resource, still valid, signed by `address`.
   */
  async verify(header: string, resource: string, nowMs: number): Promise<{ ok: true; address: string } | { ok: false; reason: string }> {
    if (header.length > MAX_HEADER) return { ok: false, reason: 'the SIGN-IN-WITH-X header is too large' };
    let p: SiwxPayload;
    try {
      p = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as SiwxPayload;
    } catch {
      return { ok: false, reason: 'SIGN-IN-WITH-X is not base64 JSON' };
    }
    const str = (v: unknown) => typeof v === 'string';
    if (typeof p !== 'object' || p === null || ![p.domain, p.address, p.uri, p.version, p.chainId, p.nonce, p.issuedAt, p.signature].every(str)) {
      return { ok: false, reason: 'SIGN-IN-WITH-X lacks domain, address, uri, version, chainId, nonce, issuedAt or signature' };
    }
    if (p.chainId !== CHAIN || (p.type !== undefined && p.type !== 'eip191')) return { ok: false, reason: `sign in on ${CHAIN} with an EIP-191 signature` };
    if (p.uri !== resource || p.domain !== new URL(resource).host) return { ok: false, reason: 'the sign-in is for another resource' };
    const expected = Buffer.from(this.nonceOf(resource, p.issuedAt));
    const got = Buffer.from(p.nonce);
    if (expected.length !== got.length || !timingSafeEqual(expected, got)) return { ok: false, reason: 'the sign-in challenge was not issued by this node (or it restarted): ask for a fresh 402' };
    const issued = Date.parse(p.issuedAt);
    if (!(issued <= nowMs + 30_000 && nowMs - issued <= SIWX_CHALLENGE_SECONDS * 1000)) return { ok: false, reason: 'the sign-in challenge expired: ask for a fresh 402' };
    if (!/^0x[0-9a-fA-F]{40}$/.test(p.address) || !/^0x[0-9a-fA-F]+$/.test(p.signature)) return { ok: false, reason: 'SIGN-IN-WITH-X address or signature is not hex' };
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
        ...(p.resources?.length ? { resources: p.resources } : {}),
      });
    } catch (e) {
      return { ok: false, reason: `the sign-in fields do not make an EIP-4361 message (${(e as Error).message})` };
    }
    const valid = await verifyMessage({ address: p.address as `0x${string}`, message, signature: p.signature as `0x${string}` }).catch(() => false);
    return valid ? { ok: true, address: p.address } : { ok: false, reason: 'the sign-in signature does not verify for its address' };
  }
}
