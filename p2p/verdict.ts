/**
 * What a peer deserves for data that failed: the single mapping from coded errors
 * (`ValidationError.action` / `banScore`, `CodecError`, mempool and chain codes) to gossip
 * results and misbehaviour points, plus the integrity check of block bytes received from a peer.
 */
import { HEADER_SIZE, coinbaseId, merkleRoot } from '../consensus/block.js';
import { Reader } from '../consensus/codec.js';
import { BlockErrorCode, CodecError, NodeError, TxErrorCode, ValidationError, isNodeError, type PeerAction } from '../consensus/errors.js';
import { bytesEqual, sha256d, toHex } from '../consensus/hash.js';
import { txId } from '../consensus/tx.js';
import { noteIdsCommitted, type PreparedBlock } from '../chain/blockQueue.js';
import { MempoolErrorCode } from '../chain/mempool.js';
import { Offence } from './scoring.js';

/** Outcome of validating relayed data: deliver and forward, drop quietly, or drop and penalise. */
export type GossipResult = 'accept' | 'ignore' | 'reject';

/** A failure's consequences for the peer that sent the data. */
export interface Verdict {
  readonly result: Exclude<GossipResult, 'accept'>;
  /** Misbehaviour points (0 for `ignore`). */
  readonly banScore: number;
  readonly code: string;
}

/**
 * Transaction rules whose outcome depends on the receiver's tip and mempool, not on the data:
 * an honest peer on another tip (or with another mempool) relays such a transaction in good
 * faith, so it is dropped without penalty whatever the error's own `action` says.
 */
const STATEFUL_TX_CODES: ReadonlySet<string> = new Set([TxErrorCode.BAD_NONCE, TxErrorCode.INSUFFICIENT_FUNDS, TxErrorCode.MISSING_KEYS, TxErrorCode.AMOUNT_OVERFLOW]);

/** Maps any error thrown while validating relayed data (a `tx` or a `block`) to a verdict. The one switch of the p2p layer. */
export function verdictOf(kind: 'tx' | 'block', e: unknown): Verdict {
  if (e instanceof CodecError) return byAction(e.action, 100, e.code);
  if (e instanceof ValidationError) {
    if (kind === 'tx' && STATEFUL_TX_CODES.has(e.code)) return { result: 'ignore', banScore: 0, code: e.code };
    return byAction(e.action, e.banScore, e.code);
  }
  // A transaction that can never be mined as things stand costs the relaying peer as an invalid one does (points per offence).
  if (kind === 'tx' && isNodeError(e, MempoolErrorCode.UNPAYABLE)) return { result: 'reject', banScore: Offence.UNPAYABLE, code: e.code };
  // Any other coded error is policy or a local condition (mempool_duplicate, mempool_full, mempool_queue_full,
  // mempool_nonce_too_far, mempool_replacement_underpriced, chain_closed, verifier failures):
  // not the peer's fault. Uncoded errors are our own bugs.
  return { result: 'ignore', banScore: 0, code: e instanceof NodeError ? e.code : 'internal_error' };
}

function byAction(action: PeerAction, banScore: number, code: string): Verdict {
  return action === 'reject' ? { result: 'reject', banScore, code } : { result: 'ignore', banScore: 0, code };
}

/**
 * Checks that block bytes from a peer are the block their header commits to: well-framed, no
 * duplicate transaction, and a merkle root over `[coinbaseId, txIds…]` equal to the header's.
 * Run before `chain.addBlock`, which remembers failing block hashes as invalid: a peer that
 * altered the body of a valid block (CVE-2012-2459-style mutations included) must not be able
 * to make us reject the genuine block later. Throws CodecError / ValidationError (reject).
 * `prepared`: these bytes decoded by `prepareBlock`; its ids are used, and once the check passes
 * it is noted (`noteIdsCommitted`) so the chain does not compute the same merkle root again.
 */
export function checkBlockIntegrity(bytes: Uint8Array, prepared?: PreparedBlock): { hash: Uint8Array; prevHash: Uint8Array; txIds: Uint8Array[] } {
  if (prepared && prepared.bytes !== bytes) throw new RangeError('prepared block of other bytes');
  const knownTxIds = prepared?.txIds;
  const r = new Reader(bytes);
  const header = r.raw(HEADER_SIZE);
  const cb = r.bytes(256, 'coinbase');
  const n = r.varnum(1_000_000, 'tx count');
  if (knownTxIds && knownTxIds.length !== n) throw new RangeError('knownTxIds do not match the block');
  const leaves: Uint8Array[] = [coinbaseId(cb)];
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const raw = r.bytes(1 << 30, 'tx');
    const id = knownTxIds?.[i] ?? txId(raw);
    const hex = toHex(id);
    if (seen.has(hex)) throw new ValidationError(BlockErrorCode.DUPLICATE_TX, `transaction ${hex} appears twice`);
    seen.add(hex);
    leaves.push(id);
  }
  r.end();
  if (!bytesEqual(merkleRoot(leaves), header.subarray(36, 68))) throw new ValidationError(BlockErrorCode.BAD_MERKLE_ROOT, 'merkle root does not match the transactions');
  if (prepared) noteIdsCommitted(prepared);
  return { hash: blockHashOfHeaderBytes(header), prevHash: header.slice(4, 36), txIds: leaves.slice(1) };
}

/** SHA-256d of the 80 header bytes (the block hash) without decoding them. */
export function blockHashOfHeaderBytes(header: Uint8Array): Uint8Array {
  return sha256d(header.subarray(0, HEADER_SIZE));
}
