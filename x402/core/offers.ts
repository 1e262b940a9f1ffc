/**
 * Signed offers (the x402 Offer and Receipt extension, `@x402/extensions/offer-receipt`, JWS
 * form) and the seller's signing identity they rest on.
 *
 * The seller identity: the payee's hybrid key (ML-DSA-87 + Ed25519, the chain's own scheme) and
 * an Ed25519 offer key derived from the payee's seed (HKDF-SHA256, its own salt and info), so
 * every node holding the payee wallet — a fleet's nodes — signs with the one key. The offer key is
 * published at `/.well-known/did.json` (the `did:web` of the node's base URL) as a JsonWebKey2020
 * verification method, `kid` = `<did>#offers-<16 hex of sha256(public key)>`; beside it,
 * `x402Payee` carries the payee's public key and its hybrid signature over the binding (the
 * authorization rule: a JWS whose `kid` the payee bound at that DID speaks for that payee).
 * After a rotation of the payee wallet the operator lists the previous bindings (`--retired-keys`,
 * `readRetiredBindings`): the document keeps their keys in `verificationMethod` and the signed
 * bindings under `x402RetiredPayees`, so receipts signed before still verify; offers and new
 * receipts are signed by the current key only.
 *
 * Offers: one JWS per option of a quote, payload `{version: 1, resourceUrl, scheme, network
 * (CAIP-2), asset, payTo, amount, validUntil}` as the reference builds it, header
 * `{alg: "EdDSA", kid}`, payload JCS. A signature is made once per service × price × option ×
 * validity window (`OFFER_WINDOW_SECONDS`) and served from a cache: a 402 costs no signature.
 */
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { encodeAddress, tryDecodeAddress } from '../../consensus/address.js';
import { bytesEqual, sha256, toHex } from '../../consensus/hash.js';
import { addressOfPublicKey, signHybrid, verifyHybridReference, type HybridKeyPair } from '../../consensus/keys.js';
import { canonicalJson, didWebOf, OFFER_KEY_BINDING_SCHEME, OFFER_RECEIPT, offerKeyBindingMessage, type OfferKeyBinding, type PaymentRequirements } from './wire.js';

/** Seconds of an offer window: offers signed in window k are valid until the end of window k + 1 (5 to 10 minutes ahead, beyond both options' `maxTimeoutSeconds`). */
export const OFFER_WINDOW_SECONDS = 300;
/** Largest number of signed offers kept (services × prices × options × base URLs); past it the cache starts again. */
const MAX_CACHED_OFFERS = 10_000;

const b64url = (b: Uint8Array | string): string => Buffer.from(typeof b === 'string' ? new TextEncoder().encode(b) : b).toString('base64url');

/** The JSON schema the extension's 402 info follows (spec §6.3/6.4, JWS form). */
export const OFFER_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    offers: {
      type: 'array',
      items: {
        type: 'object',
        properties: { format: { type: 'string', const: 'jws' }, acceptIndex: { type: 'integer' }, signature: { type: 'string', description: 'JWS compact serialization containing the offer payload' } },
        required: ['format', 'signature'],
      },
    },
  },
  required: ['offers'],
} as const;

/** One signed offer (JWS form): `acceptIndex` is the unsigned hint into `accepts[]`. */
export interface SignedOffer {
  readonly format: 'jws';
  readonly acceptIndex?: number;
  readonly signature: string;
}

/** The extension's entry of a 402: `extensions["offer-receipt"]`. */
export interface OfferExtension {
  readonly info: { readonly offers: readonly SignedOffer[] };
  readonly schema: typeof OFFER_SCHEMA;
}

/** The payload of an offer (spec §4.2). */
export interface OfferPayload {
  readonly version: 1;
  readonly resourceUrl: string;
  readonly scheme: string;
  readonly network: string;
  readonly asset: string;
  readonly payTo: string;
  readonly amount: string;
  readonly validUntil: number;
}

/** CAIP-2 network of an option: `eip155:<id>` for an x402 v1 EVM name, `native:<chainId>` for this chain, a CAIP-2 id as is. */
export function caip2Of(req: Pick<PaymentRequirements, 'scheme' | 'network' | 'extra'>): string {
  if (req.network.includes(':')) return req.network;
  if (req.scheme === 'native-x402') return `native:${String(req.extra.chainId)}`;
  const evm: Record<string, number> = { base: 8453, 'base-sepolia': 84532, ethereum: 1, sepolia: 11155111 };
  return evm[req.network] !== undefined ? `eip155:${evm[req.network]}` : req.network;
}

/** A payee's signed binding of an offer key, as `x402Payee` of a DID document carries it. */
export interface PayeeBinding {
  readonly scheme: typeof OFFER_KEY_BINDING_SCHEME;
  readonly binding: OfferKeyBinding;
  readonly publicKey: { readonly mldsa: string; readonly ed25519: string };
  readonly signature: { readonly mldsa: string; readonly ed25519: string };
}

/** The DID document a node publishes at `/.well-known/did.json`. */
export interface DidDocument {
  readonly '@context': readonly string[];
  readonly id: string;
  readonly verificationMethod: readonly { readonly id: string; readonly type: 'JsonWebKey2020'; readonly controller: string; readonly publicKeyJwk: OfferKeyBinding['publicKeyJwk'] }[];
  readonly assertionMethod: readonly string[];
  /** The payee's binding of the offer key: its hybrid public key (base64url) and signatures over `offerKeyBindingMessage(binding)`. */
  readonly x402Payee: PayeeBinding;
  /** The bindings of keys retired by a rotation that the operator still vouches for (their keys are in `verificationMethod` too). */
  readonly x402RetiredPayees?: readonly PayeeBinding[];
}

/** What the seller identity is made of. */
export interface SellerIdentityOptions {
  readonly payee: HybridKeyPair;
  /** Bech32 prefix of the chain's addresses. */
  readonly hrp: string;
  readonly chainId: number;
  /** The settlement ledger's id. */
  readonly sellerId: string;
  /** The USDC payee when the rail is on (checksummed), read when a DID document is first built. */
  readonly usdcPayTo?: () => string | undefined;
  /** Bindings of retired keys to keep publishing (`readRetiredBindings`); those of another DID than a document's are left out of it. */
  readonly retired?: readonly PayeeBinding[];
}

/** The seller's signing identity: the payee key, the offer key, their DID documents and JWS signing. */
export interface SellerIdentity {
  readonly payee: HybridKeyPair;
  /** bech32m address of the payee. */
  readonly payeeAddress: string;
  readonly sellerId: string;
  /** CAIP-2 network of the native rail. */
  readonly nativeNetwork: string;
  /** The offer key's `kid` at a base URL. */
  kidOf(baseUrl: string): string;
  /** The DID document of a base URL (its binding signed once per base URL). */
  didDocument(baseUrl: string): DidDocument;
  /** A JWS compact serialization of `payload` (JCS) with `{alg: "EdDSA", kid}` for the base URL. */
  jws(payload: object, baseUrl: string): string;
}

/** HKDF parameters of the offer key (from the payee's 32-byte seed). */
const OFFER_KEY_SALT = new TextEncoder().encode('native-x402/offer-key/v1');
const OFFER_KEY_INFO = new TextEncoder().encode('ed25519');

/** Creates the seller identity of a payee (see module comment). */
export function createSellerIdentity(o: SellerIdentityOptions): SellerIdentity {
  const secret = hkdf(nobleSha256, o.payee.seed, OFFER_KEY_SALT, OFFER_KEY_INFO, 32);
  const publicKey = ed25519.getPublicKey(secret);
  const fragment = `offers-${toHex(sha256(publicKey)).slice(0, 16)}`;
  const payeeAddress = encodeAddress(o.payee.address, o.hrp);
  const nativeNetwork = `native:${o.chainId}`;
  const jwk = { kty: 'OKP', crv: 'Ed25519', x: b64url(publicKey) } as const;
  // Signing goes through node:crypto (OpenSSL, the key imported once): the same deterministic
  // RFC 8032 signature as @noble's, without deriving the key again for every JWS.
  const signingKey = createPrivateKey({ key: { ...jwk, d: b64url(secret) }, format: 'jwk' });
  const kids = new Map<string, string>();
  const documents = new Map<string, DidDocument>();
  const kidOf = (baseUrl: string): string => {
    let kid = kids.get(baseUrl);
    if (!kid) {
      kid = `${didWebOf(baseUrl)}#${fragment}`;
      if (kids.size > 64) kids.clear();
      kids.set(baseUrl, kid);
    }
    return kid;
  };
  return {
    payee: o.payee,
    payeeAddress,
    sellerId: o.sellerId,
    nativeNetwork,
    kidOf,
    didDocument(baseUrl) {
      const cached = documents.get(baseUrl);
      if (cached) return cached;
      const did = didWebOf(baseUrl);
      const kid = kidOf(baseUrl);
      const usdcPayTo = o.usdcPayTo?.();
      const binding: OfferKeyBinding = { version: 1, did, kid, publicKeyJwk: jwk, payee: payeeAddress, sellerId: o.sellerId, network: nativeNetwork, ...(usdcPayTo ? { usdcPayTo } : {}) };
      const sig = signHybrid(o.payee, offerKeyBindingMessage(binding));
      const retired = (o.retired ?? []).filter((r) => r.binding.did === did && r.binding.kid !== kid);
      const doc: DidDocument = {
        '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/jws-2020/v1'],
        id: did,
        // The retired keys resolve (an old receipt's kid), but only the current one asserts.
        verificationMethod: [{ id: kid, type: 'JsonWebKey2020', controller: did, publicKeyJwk: jwk }, ...retired.map((r) => ({ id: r.binding.kid, type: 'JsonWebKey2020' as const, controller: did, publicKeyJwk: r.binding.publicKeyJwk }))],
        assertionMethod: [kid],
        x402Payee: {
          scheme: OFFER_KEY_BINDING_SCHEME,
          binding,
          publicKey: { mldsa: b64url(o.payee.publicKey.mldsa), ed25519: b64url(o.payee.publicKey.ed25519) },
          signature: { mldsa: b64url(sig.mldsa), ed25519: b64url(sig.ed25519) },
        },
        ...(retired.length > 0 ? { x402RetiredPayees: retired } : {}),
      };
      if (documents.size > 16) documents.clear();
      documents.set(baseUrl, doc);
      return doc;
    },
    jws(payload, baseUrl) {
      // The header as the reference writes it (JSON.stringify of {alg, kid}), the payload in JCS.
      const signingInput = `${b64url(JSON.stringify({ alg: 'EdDSA', kid: kidOf(baseUrl) }))}.${b64url(canonicalJson(payload))}`;
      return `${signingInput}.${b64url(cryptoSign(null, Buffer.from(signingInput), signingKey))}`;
    },
  };
}

/**
 * The retired bindings of an operator's `--retired-keys` file: a JSON array whose entries are DID
 * documents this node (or its predecessor) published — their `x402Payee` and their own
 * `x402RetiredPayees` are taken, so the latest saved document carries the whole history — or
 * `x402Payee` objects alone. Each must be a payee's valid signature over its binding (`hrp`: the
 * chain's address prefix); throws naming the first that is not. One entry per `kid`.
 */
export function readRetiredBindings(json: unknown, hrp: string): PayeeBinding[] {
  if (!Array.isArray(json)) throw new Error('the retired keys are a JSON array of saved did.json documents (or their x402Payee objects)');
  const entries = json.flatMap((e: unknown) => {
    const d = e as Partial<DidDocument> | undefined;
    return d && typeof d === 'object' && 'x402Payee' in d ? [d.x402Payee, ...(Array.isArray(d.x402RetiredPayees) ? d.x402RetiredPayees : [])] : [e];
  });
  const byKid = new Map<string, PayeeBinding>();
  entries.forEach((e, i) => {
    const why = retiredBindingProblem(e, hrp);
    if (why) throw new Error(`retired key ${i + 1}: ${why}`);
    const b = e as PayeeBinding;
    byKid.set(b.binding.kid, b);
  });
  return [...byKid.values()];
}

/** Why `e` is not a valid payee binding (undefined when it is). */
function retiredBindingProblem(e: unknown, hrp: string): string | undefined {
  const b = e as PayeeBinding | undefined;
  const fromB64 = (s: unknown) => (typeof s === 'string' ? new Uint8Array(Buffer.from(s, 'base64url')) : new Uint8Array());
  if (!b || typeof b !== 'object' || b.scheme !== OFFER_KEY_BINDING_SCHEME || typeof b.binding !== 'object' || b.binding === null || b.binding.version !== 1) return `not a ${OFFER_KEY_BINDING_SCHEME} binding`;
  if (typeof b.binding.kid !== 'string' || !b.binding.kid.startsWith(`${String(b.binding.did)}#`) || b.binding.publicKeyJwk?.crv !== 'Ed25519') return 'its kid or key is malformed';
  const pub = { mldsa: fromB64(b.publicKey?.mldsa), ed25519: fromB64(b.publicKey?.ed25519) };
  const id = tryDecodeAddress(String(b.binding.payee), hrp);
  if (!id || !bytesEqual(id, addressOfPublicKey(pub))) return `its public key is not that of the payee ${String(b.binding.payee)}`;
  if (!verifyHybridReference(pub, offerKeyBindingMessage(b.binding), { mldsa: fromB64(b.signature?.mldsa), ed25519: fromB64(b.signature?.ed25519) })) return 'the payee\'s signature over the binding does not verify';
  return undefined;
}

/** The offer signer of a node: cached offers for the options of a quote. */
export interface OfferSigner {
  /** The extension's entry for `accepts` (offers in the same order, `acceptIndex` set). */
  extensionFor(accepts: readonly PaymentRequirements[], baseUrl: string): OfferExtension;
  /** Signatures made so far (the cache's misses). */
  readonly signed: number;
}

/** Creates the offer signer over a seller identity; `now` is unix ms (injected in tests). */
export function createOfferSigner(identity: SellerIdentity, now: () => number = Date.now): OfferSigner {
  const cache = new Map<string, string>();
  let window = -1;
  let signed = 0;
  const offerOf = (req: PaymentRequirements, baseUrl: string): string => {
    const w = Math.floor(now() / 1000 / OFFER_WINDOW_SECONDS);
    if (w !== window || cache.size >= MAX_CACHED_OFFERS) {
      cache.clear();
      window = w;
    }
    const payload: OfferPayload = {
      version: 1,
      resourceUrl: req.resource,
      scheme: req.scheme,
      network: caip2Of(req),
      asset: req.asset,
      payTo: req.payTo,
      amount: req.maxAmountRequired,
      validUntil: (w + 2) * OFFER_WINDOW_SECONDS,
    };
    const key = `${baseUrl}\n${payload.resourceUrl}\n${payload.scheme}\n${payload.network}\n${payload.asset}\n${payload.payTo}\n${payload.amount}`;
    let jws = cache.get(key);
    if (!jws) {
      jws = identity.jws(payload, baseUrl);
      signed++;
      cache.set(key, jws);
    }
    return jws;
  };
  return {
    extensionFor: (accepts, baseUrl) => ({ info: { offers: accepts.map((req, i) => ({ format: 'jws', acceptIndex: i, signature: offerOf(req, baseUrl) })) }, schema: OFFER_SCHEMA }),
    get signed() {
      return signed;
    },
  };
}

/** The offers of `quote`'s extension for a narrowed `accepts` (a subset of its options, in order): each kept offer with its new `acceptIndex`. */
export function narrowOfferExtension(extensions: Record<string, unknown> | undefined, all: readonly PaymentRequirements[], accepts: readonly PaymentRequirements[]): Record<string, unknown> | undefined {
  const ext = extensions?.[OFFER_RECEIPT] as OfferExtension | undefined;
  if (!ext || accepts === all) return extensions;
  const offers = accepts.flatMap((a, i) => {
    const at = all.indexOf(a);
    const offer = at >= 0 ? ext.info.offers[at] : undefined;
    return offer ? [{ ...offer, acceptIndex: i }] : [];
  });
  return { ...extensions, [OFFER_RECEIPT]: { ...ext, info: { offers } } };
}
