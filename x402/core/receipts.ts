/**
 * Signed receipts of paid calls, made by the rails when a call settles and stored with the
 * settled record's receipt (so a re-settle returns the very same bytes):
 *
 * - `offerReceipt`: the x402 Offer and Receipt extension's receipt (JWS, EdDSA, the offer key of
 *   x402/core/offers.ts), payload `{version: 1, network (CAIP-2), resourceUrl, payer, issuedAt,
 *   transaction}` — the transaction included, for verifiability. The settlement response carries
 *   it under `extensions["offer-receipt"].info.receipt`.
 * - `hybridReceipt`: the payee key's ML-DSA-87 + Ed25519 signatures over the seller id, the
 *   service, the payment (tx, payer, amount, asset, network), the issue time and the sha256 of the
 *   result bytes exactly as returned (x402/core/wire.ts `HybridReceiptPayload`).
 *
 * The hybrid signature is the expensive part (an ML-DSA-87 signature costs about as much as the
 * rest of a paid call), so the calls that settle in the same turn of the event loop share one: the
 * issuer queues their receipts and signs, once the turn's I/O is done (setImmediate), the root of
 * their Merkle tree (receiptBatch.ts); each receipt carries its audit path. A lone receipt is
 * signed on its own (the v1 format), so an idle node's receipts look as they always did.
 */
import { signHybrid } from '../../consensus/keys.js';
import type { HybridSigner } from '../../consensus/fastSign.js';
import type { SellerIdentity } from './offers.js';
import { randomBytes } from 'node:crypto';
import { silentLogger, type Logger } from '../../chain/types.js';
import { toHex } from '../../consensus/hash.js';
import { MAX_RECEIPT_BATCH, RECEIPT_BATCH_SCHEME, RECEIPT_SALT_BYTES, receiptBatchLeaf, receiptBatchMessage, receiptBatchTree } from './receiptBatch.js';
import { HYBRID_RECEIPT_SCHEME, OFFER_RECEIPT, hybridReceiptMessage, resultBytesOf, resultSha256Of, type HybridReceipt, type HybridReceiptPayload } from './wire.js';

/** The JSON schema of the extension's settlement info (spec §6.7/6.8, JWS form). */
export const RECEIPT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    receipt: {
      type: 'object',
      properties: { format: { type: 'string', const: 'jws' }, signature: { type: 'string', description: 'JWS compact serialization containing the receipt payload' } },
      required: ['format', 'signature'],
    },
  },
  required: ['receipt'],
} as const;

/** The extension's signed receipt (JWS form). */
export interface SignedReceipt {
  readonly format: 'jws';
  readonly signature: string;
}

/** Where a paid call was sold: the rails get it from the core with each settle. */
export interface IssueContext {
  /** The node's base URL the call reached (its DID is the did:web of it). */
  readonly baseUrl: string;
  /** The paid resource URL (the quote's `resource`). */
  readonly resource: string;
}

/** One settled call, as the rail knows it. */
export interface ReceiptFacts {
  readonly rail: 'native' | 'usdc';
  readonly serviceId: string;
  /** CAIP-2 network of the payment. */
  readonly network: string;
  readonly txId: string;
  readonly payer: string;
  /** Atomic units of `asset`, decimal string. */
  readonly amount: string;
  readonly asset: string;
  /** The result as the 200 returns it. */
  readonly result: unknown;
}

/**
 * The signed parts a settled call's receipt carries. Either may be missing when its signing
 * failed: a receipt is evidence for the payer, never a condition of the payment's outcome (the
 * result is stored and returned all the same, and the failure is logged and counted).
 */
export interface SignedReceipts {
  readonly offerReceipt?: SignedReceipt;
  readonly hybridReceipt?: HybridReceipt;
}

/** Signs the receipts of settled calls with the seller identity. */
export interface ReceiptIssuer {
  /** The receipts of one settled call; resolves once its batch is signed (the same turn's calls share a signature). Never rejects. */
  sign(facts: ReceiptFacts, at: IssueContext): Promise<SignedReceipts>;
  /** Hybrid signatures made so far, the receipts they covered, and receipts left without one (signing failed). */
  readonly stats: { readonly signatures: number; readonly receipts: number; readonly failures: number };
}

interface Queued {
  /** The receipt as far as it is signed: the JWS part, when that signing worked. */
  readonly signed: SignedReceipts;
  readonly payload: HybridReceiptPayload;
  /** `hybridReceiptMessage(payload)`. */
  readonly message: Uint8Array;
  readonly resolve: (r: SignedReceipts) => void;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64url');

/**
 * Creates the receipt issuer; `now` is unix ms (injected in tests); `sign`: the hybrid signer (the
 * node passes the fast one, consensus/fastSign.ts); `salt`: a leaf's random salt (tests fix it).
 */
export function createReceiptIssuer(
  identity: SellerIdentity,
  now: () => number = Date.now,
  sign: HybridSigner = signHybrid,
  log: Logger = silentLogger,
  salt: () => Uint8Array = () => randomBytes(RECEIPT_SALT_BYTES),
): ReceiptIssuer {
  let queue: Queued[] = [];
  const stats = { signatures: 0, receipts: 0, failures: 0 };
  const signature = (msg: Uint8Array) => {
    const sig = sign(identity.payee, msg);
    stats.signatures++;
    return { mldsa: b64(sig.mldsa), ed25519: b64(sig.ed25519) };
  };
  /** One receipt on its own (v1); without a hybrid receipt when that fails too. */
  const alone = (q: Queued): void => {
    try {
      const hybridReceipt: HybridReceipt = { format: HYBRID_RECEIPT_SCHEME, payload: q.payload, signature: signature(q.message) };
      stats.receipts++;
      q.resolve({ ...q.signed, hybridReceipt });
    } catch (e) {
      stats.failures++;
      log.error({ err: e, txId: q.payload.txId, serviceId: q.payload.serviceId }, 'hybrid receipt not signed: the call is answered without it');
      q.resolve(q.signed);
    }
  };
  const flush = (): void => {
    const batch = queue.slice(0, MAX_RECEIPT_BATCH);
    queue = queue.slice(batch.length);
    if (queue.length > 0) setImmediate(flush);
    if (batch.length === 0) return;
    if (batch.length === 1) return alone(batch[0]);
    let tree: { salts: Uint8Array[]; paths: Uint8Array[][]; signature: HybridReceipt['signature'] };
    try {
      const salts = batch.map(() => salt());
      const { root, paths } = receiptBatchTree(batch.map((q, i) => receiptBatchLeaf(q.message, salts[i])));
      tree = { salts, paths, signature: signature(receiptBatchMessage(root, batch.length)) };
    } catch (e) {
      // The batch could not be signed: each receipt is tried on its own.
      log.warn({ err: e, receipts: batch.length }, 'receipt batch not signed: signing its receipts one by one');
      for (const q of batch) alone(q);
      return;
    }
    stats.receipts += batch.length;
    batch.forEach((q, index) => {
      const proof = { salt: toHex(tree.salts[index]), size: batch.length, index, path: tree.paths[index].map(toHex) };
      q.resolve({ ...q.signed, hybridReceipt: { format: RECEIPT_BATCH_SCHEME, payload: q.payload, signature: tree.signature, batch: proof } });
    });
  };
  return {
    stats,
    sign(f, at) {
      const issuedAt = Math.floor(now() / 1000);
      let offerReceipt: SignedReceipt | undefined;
      try {
        offerReceipt = { format: 'jws', signature: identity.jws({ version: 1, network: f.network, resourceUrl: at.resource, payer: f.payer, issuedAt, transaction: f.txId }, at.baseUrl) };
      } catch (e) {
        stats.failures++;
        log.error({ err: e, txId: f.txId, serviceId: f.serviceId }, 'JWS receipt not signed: the call is answered without it');
      }
      const payload: HybridReceiptPayload = {
        version: 1,
        sellerId: identity.sellerId,
        payee: identity.payeeAddress,
        serviceId: f.serviceId,
        resourceUrl: at.resource,
        rail: f.rail,
        network: f.network,
        txId: f.txId,
        payer: f.payer,
        amount: f.amount,
        asset: f.asset,
        issuedAt,
        resultSha256: resultSha256Of(resultBytesOf(f.result)),
      };
      return new Promise<SignedReceipts>((resolve) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ signed: offerReceipt ? { offerReceipt } : {}, payload, message: hybridReceiptMessage(payload), resolve });
      });
    },
  };
}

/** `{extensions}` of a settlement response for a stored receipt: the extension's signed receipt, when the receipt has one. */
export function settlementExtensionsOf(receipt: Record<string, unknown> | undefined): { extensions?: Record<string, unknown> } {
  const signed = receipt?.offerReceipt as SignedReceipt | undefined;
  if (!signed || signed.format !== 'jws' || typeof signed.signature !== 'string') return {};
  return { extensions: { [OFFER_RECEIPT]: { info: { receipt: signed }, schema: RECEIPT_SCHEMA } } };
}
