/**
 * Batches of hybrid receipts: one ML-DSA-87 + Ed25519 signature over the root of a Merkle tree of
 * the receipts settled together, each receipt carrying its audit path — the signed-tree-head idea of
 * Certificate Transparency, with the tree and its audit paths exactly as RFC 9162 §2.1 defines them
 * (largest power of two to the left; the verification algorithm of §2.1.3.2).
 *
 * - A leaf is `taggedHash(RECEIPT_BATCH_SCHEME + "/leaf", salt ‖ hybridReceiptMessage(payload))`,
 *   `salt` 32 random bytes given to that receipt only: the audit path shows a receipt's holder
 *   its neighbours' leaves, and unsalted they would let the holder confirm a guess of another
 *   payer's payment and result.
 * - An inner node is `taggedHash(RECEIPT_BATCH_SCHEME + "/node", left ‖ right)`: leaves, inner
 *   nodes and the signed message each have a domain of their own.
 * - The payee signs `taggedHash(RECEIPT_BATCH_SCHEME, uint32be(size) ‖ root)`. RFC 9162 paths do
 *   not fix the tree's size (a path can lead to the same root under another size and index), so
 *   the size is part of what is signed.
 *
 * A batch of one is not a batch: its receipt is a plain `native-x402/hybrid-receipt/v1`, signed
 * over its own message. Pure: the node builds trees, agents verify paths offline.
 */
import { concatBytes, fromHex, isHex, taggedHash } from '../../consensus/hash.js';

/** Format of a batched hybrid receipt (and the domain tag of its signed message). */
export const RECEIPT_BATCH_SCHEME = 'native-x402/hybrid-receipt-batch/v1';
const NODE_TAG = `${RECEIPT_BATCH_SCHEME}/node`;
const LEAF_TAG = `${RECEIPT_BATCH_SCHEME}/leaf`;
/** Bytes of a leaf's salt. */
export const RECEIPT_SALT_BYTES = 32;
/** Most receipts one signature covers (audit paths of at most 12 hashes). */
export const MAX_RECEIPT_BATCH = 4096;

/** Where one receipt sits in its batch: its leaf's salt (hex), the tree's size, its index, and its audit path (hex, leaf level first). */
export interface ReceiptBatchProof {
  readonly salt: string;
  readonly size: number;
  readonly index: number;
  readonly path: readonly string[];
}

/** The leaf of a receipt whose message (`hybridReceiptMessage(payload)`) is `message`. */
export function receiptBatchLeaf(message: Uint8Array, salt: Uint8Array): Uint8Array {
  return taggedHash(LEAF_TAG, concatBytes(salt, message));
}

const nodeHash = (left: Uint8Array, right: Uint8Array): Uint8Array => taggedHash(NODE_TAG, concatBytes(left, right));

/** Largest power of two strictly below `n` (n ≥ 2). */
const splitOf = (n: number): number => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};

/** The tree of `leaves` (receiptBatchLeaf): its root and each leaf's audit path (RFC 9162 PATH(m, D[n])). */
export function receiptBatchTree(leaves: readonly Uint8Array[]): { root: Uint8Array; paths: Uint8Array[][] } {
  if (leaves.length === 0 || leaves.length > MAX_RECEIPT_BATCH) throw new RangeError(`a receipt batch holds 1 to ${MAX_RECEIPT_BATCH} receipts, not ${leaves.length}`);
  const paths: Uint8Array[][] = leaves.map(() => []);
  // MTH(D[lo:hi]); the deeper siblings are pushed first, so each path runs from the leaf up.
  const mth = (lo: number, hi: number): Uint8Array => {
    if (hi - lo === 1) return leaves[lo];
    const mid = lo + splitOf(hi - lo);
    const left = mth(lo, mid);
    const right = mth(mid, hi);
    for (let i = lo; i < mid; i++) paths[i].push(right);
    for (let i = mid; i < hi; i++) paths[i].push(left);
    return nodeHash(left, right);
  };
  return { root: mth(0, leaves.length), paths };
}

/** The 32 bytes the payee signs for a batch of `size` receipts with this root. */
export function receiptBatchMessage(root: Uint8Array, size: number): Uint8Array {
  const msg = new Uint8Array(36);
  new DataView(msg.buffer).setUint32(0, size);
  msg.set(root, 4);
  return taggedHash(RECEIPT_BATCH_SCHEME, msg);
}

/** The root an audit path leads to from `leaf` (RFC 9162 §2.1.3.2), or undefined when the proof is malformed. */
export function receiptBatchRootOf(leaf: Uint8Array, proof: Omit<ReceiptBatchProof, 'salt'>): Uint8Array | undefined {
  const { size, index, path } = proof;
  if (!Number.isSafeInteger(size) || !Number.isSafeInteger(index) || size < 2 || size > MAX_RECEIPT_BATCH || index < 0 || index >= size || !Array.isArray(path)) return undefined;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const hex of path) {
    if (!isHex(hex, 32) || hex !== hex.toLowerCase() || sn === 0) return undefined;
    const p = fromHex(hex);
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
}

/** The message a batched receipt's signatures cover (its leaf from `message` and the proof's salt, up the path), or undefined when the proof is malformed. */
export function receiptBatchSignedMessage(message: Uint8Array, proof: ReceiptBatchProof): Uint8Array | undefined {
  if (!isHex(proof.salt, RECEIPT_SALT_BYTES) || proof.salt !== proof.salt.toLowerCase()) return undefined;
  const root = receiptBatchRootOf(receiptBatchLeaf(message, fromHex(proof.salt)), proof);
  return root && receiptBatchMessage(root, proof.size);
}
