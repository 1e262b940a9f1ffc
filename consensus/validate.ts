/**
 * Validation rules: transactions (stateless), headers in context, block bodies, and the
 * hybrid-signature checks of a block's transactions.
 */
import { BlockErrorCode, TxErrorCode, ValidationError } from './errors.js';
import { bytesEqual, toHex } from './hash.js';
import { blockHash, encodeCoinbase, coinbaseId, merkleRoot, HEADER_SIZE, COINBASE_VERSION, type Block, type BlockHeader } from './block.js';
import { checkProofOfWork } from './pow.js';
import { getNextAsertBits } from './asert.js';
import { txId as computeTxId, encodeTx, txSighash, validateTxEnvelope, type Tx } from './tx.js';
import { getTxType } from './txTypes/index.js';
import { decodeAccount, accountKey, type StateView } from './state.js';
import type { HybridPublicKey, HybridSignature } from './keys.js';
import type { ChainParams } from './params.js';

/** Stateless rules of a transaction: envelope, known type, well-formed payload. `size` is its signed byte length. */
export function validateTx(tx: Tx, size: number, params: ChainParams): void {
  validateTxEnvelope(tx, size, params);
  const mod = getTxType(tx.type);
  let payload: unknown;
  try {
    payload = mod.decodePayload(tx.payload);
  } catch (e) {
    throw new ValidationError(TxErrorCode.BAD_PAYLOAD, `malformed ${mod.name} payload: ${(e as Error).message}`);
  }
  mod.validatePayload(payload, tx, params);
}

/** Median of the given block times (Bitcoin's rule: the middle of the sorted list). */
export function medianTime(times: readonly number[]): number {
  if (times.length === 0) return 0;
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Compact bits required of the block after `prev` (ASERT anchored at genesis). */
export function nextBits(prevHeight: number, prevTime: number, params: ChainParams): number {
  return getNextAsertBits({ height: 0, bits: params.genesis.bits, parentTime: params.genesis.time }, prevHeight, prevTime, {
    targetSpacing: params.targetSpacing,
    halfLife: params.asertHalfLife,
    powLimit: params.powLimit,
  });
}

/** What a header is checked against: its parent and the local clock. */
export interface HeaderContext {
  readonly prevHash: Uint8Array;
  readonly prevHeight: number;
  readonly prevTime: number;
  /** Median time of the last `medianTimeSpan` blocks up to the parent. */
  readonly medianTimePast: number;
  /** Local clock, Unix seconds. */
  readonly now: number;
}

/** Header rules: version, parent link, ASERT bits, proof of work, timestamp window. Returns the block hash. */
export function validateHeader(h: BlockHeader, ctx: HeaderContext, params: ChainParams): Uint8Array {
  if (h.version < 1) throw new ValidationError(BlockErrorCode.BAD_VERSION, `header version ${h.version}`);
  if (!bytesEqual(h.prevHash, ctx.prevHash)) throw new ValidationError(BlockErrorCode.BAD_PREV, `prevHash ${toHex(h.prevHash)} is not the parent`);
  const bits = nextBits(ctx.prevHeight, ctx.prevTime, params);
  if (h.bits !== bits) {
    throw new ValidationError(BlockErrorCode.BAD_BITS, `bits 0x${h.bits.toString(16)}, expected 0x${bits.toString(16)}`);
  }
  const hash = blockHash(h);
  if (!checkProofOfWork(hash, h.bits, params.powLimit)) throw new ValidationError(BlockErrorCode.HIGH_HASH, 'hash above target');
  if (h.time <= ctx.medianTimePast) {
    throw new ValidationError(BlockErrorCode.TIME_TOO_OLD, `time ${h.time} not after median time past ${ctx.medianTimePast}`);
  }
  if (h.time > ctx.now + params.maxFutureBlockTime) {
    // It may become acceptable later: do not punish the sender.
    throw new ValidationError(BlockErrorCode.TIME_TOO_NEW, `time ${h.time} more than ${params.maxFutureBlockTime}s ahead of ${ctx.now}`, {
      action: 'ignore',
    });
  }
  return hash;
}

/** Result of checking a block body: ids and sizes of its transactions. */
export interface BodyCheck {
  readonly txIds: Uint8Array[];
  readonly txSizes: number[];
  readonly size: number;
}

/**
 * Body rules that need no state: coinbase record (version, chain id, height), size and count
 * limits, no duplicate transactions, merkle root over `[coinbaseId, txIds…]`, and every
 * transaction's stateless rules. `txBytes` (from decoding) avoids re-encoding; `txIds`, the ids
 * of exactly those bytes computed by the caller (`txId` of each), avoids hashing them again;
 * `idsCommitted` says those ids were already found distinct and under the header's merkle root
 * (a peer's block checked by p2p/verdict.ts on the same bytes), so the tree is not hashed twice.
 */
export function validateBlockBody(block: Block, height: number, params: ChainParams, txBytes?: readonly Uint8Array[], txIds?: readonly Uint8Array[], idsCommitted = false): BodyCheck {
  const cb = block.coinbase;
  if (cb.version !== COINBASE_VERSION) throw new ValidationError(BlockErrorCode.BAD_COINBASE, `coinbase version ${cb.version}`);
  if (cb.chainId !== params.chainId) throw new ValidationError(BlockErrorCode.BAD_COINBASE, `coinbase chain id ${cb.chainId}`);
  if (cb.height !== height) throw new ValidationError(BlockErrorCode.BAD_COINBASE, `coinbase height ${cb.height}, expected ${height}`);
  if (block.txs.length > params.limits.maxBlockTxs) {
    throw new ValidationError(BlockErrorCode.TOO_MANY_TXS, `${block.txs.length} transactions, limit ${params.limits.maxBlockTxs}`);
  }
  const raw = txBytes ?? block.txs.map(encodeTx);
  const cbBytes = encodeCoinbase(cb);
  let size = HEADER_SIZE + cbBytes.length + 1;
  if (txIds && txIds.length !== raw.length) throw new RangeError('txIds must match txBytes');
  // Distinct ids under the header's merkle root: checked here, or already on these same bytes.
  const committed = idsCommitted && txIds !== undefined;
  const ids: Uint8Array[] = [];
  const txSizes: number[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < raw.length; i++) {
    size += raw[i].length + 3;
    const id = txIds?.[i] ?? computeTxId(raw[i]);
    if (!committed) {
      const hex = toHex(id);
      if (seen.has(hex)) throw new ValidationError(BlockErrorCode.DUPLICATE_TX, `transaction ${hex} appears twice`);
      seen.add(hex);
    }
    ids.push(id);
    txSizes.push(raw[i].length);
  }
  if (size > params.limits.maxBlockBytes) throw new ValidationError(BlockErrorCode.TOO_LARGE, `block is ${size} bytes, limit ${params.limits.maxBlockBytes}`);
  if (!committed && !bytesEqual(merkleRoot([coinbaseId(cbBytes), ...ids]), block.header.merkleRoot)) throw new ValidationError(BlockErrorCode.BAD_MERKLE_ROOT, 'merkle root does not match the transactions');
  block.txs.forEach((tx, i) => {
    try {
      validateTx(tx, txSizes[i], params);
    } catch (e) {
      if (e instanceof ValidationError) throw new ValidationError(BlockErrorCode.BAD_TX, `tx ${i}: ${e.message}`, { payload: { index: i, txCode: e.code } });
      throw e;
    }
  });
  return { txIds: ids, txSizes, size };
}

/** One signature check: the key, the sighash and the two signatures of a transaction. */
export interface SignatureJob {
  /** Hex tx id, so verifiers can cache. */
  readonly id: string;
  readonly pub: HybridPublicKey;
  readonly msg: Uint8Array;
  readonly sig: HybridSignature;
}

/**
 * Builds the signature checks of a block's (or a single) transactions. The key comes from the
 * transaction itself, from another transaction of the same batch that publishes it, or from the
 * account state; a transaction whose key is nowhere fails with `tx_missing_keys`. `sighashes`:
 * the transactions' `txSighash`, when the caller computed them already.
 */
export function signatureJobs(txs: readonly Tx[], txIds: readonly Uint8Array[], view: StateView, sighashes?: readonly Uint8Array[]): SignatureJob[] {
  const published = new Map<string, HybridPublicKey>();
  for (const tx of txs) if (tx.publicKey) published.set(toHex(tx.from), tx.publicKey);
  return txs.map((tx, i) => {
    let pub = tx.publicKey ?? published.get(toHex(tx.from));
    if (!pub) {
      const raw = view.get(accountKey(tx.from));
      pub = raw ? decodeAccount(raw).publicKey : undefined;
    }
    if (!pub) throw new ValidationError(TxErrorCode.MISSING_KEYS, `tx ${i}: sender has no published public key`);
    return { id: toHex(txIds[i]), pub, msg: sighashes?.[i] ?? txSighash(tx), sig: tx.signature };
  });
}

/** Synchronous check of signature jobs with a verifier (tests, tools); the node uses the worker pool. */
export function verifySignatureJobs(jobs: readonly SignatureJob[], verifier: { verify(pub: HybridPublicKey, msg: Uint8Array, sig: HybridSignature): boolean }): void {
  jobs.forEach((j, i) => {
    if (!verifier.verify(j.pub, j.msg, j.sig)) throw new ValidationError(TxErrorCode.BAD_SIGNATURE, `tx ${i} (${j.id}): signature does not verify`);
  });
}
