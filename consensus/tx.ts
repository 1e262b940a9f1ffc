/**
 * The transaction envelope shared by every transaction type.
 *
 * Wire layout (canonical, see codec.ts):
 *   u8 version ‖ u32 chainId ‖ u8 type ‖ from(20) ‖ varint nonce ‖ varint fee ‖ bytes payload
 *   ‖ u8 hasKey [‖ mldsaPub(2592) ‖ ed25519Pub(32)] ‖ mldsaSig(4627) ‖ ed25519Sig(64)
 * The sighash is a tagged hash of everything before the signatures (chain id included), and
 * both signatures sign it. The tx id is SHA-256d of the full signed bytes.
 */
import { Reader, Writer, decodeAll } from './codec.js';
import { CodecError, CodecErrorCode, TxErrorCode, ValidationError } from './errors.js';
import { sha256d, taggedHash, bytesEqual } from './hash.js';
import {
  ADDRESS_SIZE,
  ED25519_PUBLIC_KEY_SIZE,
  ED25519_SIGNATURE_SIZE,
  MLDSA_PUBLIC_KEY_SIZE,
  MLDSA_SIGNATURE_SIZE,
  addressOfPublicKey,
  signHybrid,
  type HybridKeyPair,
  type HybridPublicKey,
  type HybridSignature,
} from './keys.js';
import type { ChainParams } from './params.js';

/** The only envelope version so far. */
export const TX_VERSION = 1;
/** Hard decoding cap on payloads, whatever the chain parameters say. */
export const MAX_PAYLOAD_DECODE = 1 << 20;
/** Domain tag of the transaction sighash. */
export const SIGHASH_TAG = 'native-node/tx-sighash/v1';

/**
 * Numeric transaction type ids (one byte on the wire). 4–15 are kept for the agent/service
 * registry and moderation types; the economy takes 16–23 (tokens), 32–35 (pools), 40–41
 * (staking) and 48 (bridge records).
 */
export const TxType = {
  transfer: 1,
  agent_invoke: 2,
  refund: 3,
  // 4-15: the provider registry and moderation (consensus/txTypes/agents.ts, moderation.ts, providerPayout.ts)
  agent_register: 4,
  agent_update: 5,
  service_register: 6,
  service_update: 7,
  service_retire: 8,
  moderation: 9,
  provider_payout: 10,
  // 16-48: the economy (consensus/txTypes/token*.ts, pool*.ts, swap.ts, stake.ts, unstake.ts, bridgeRecord.ts)
  token_issue: 16,
  token_mint: 17,
  token_burn: 18,
  token_transfer: 19,
  token_flags: 20,
  token_back: 21,
  stable_mint: 22,
  token_redeem: 23,
  pool_create: 32,
  pool_add: 33,
  pool_remove: 34,
  swap: 35,
  stake: 40,
  unstake: 41,
  bridge_record: 48,
} as const;
export type TxTypeName = keyof typeof TxType;

/** A transaction without its signatures. */
export interface UnsignedTx {
  readonly version: number;
  readonly chainId: number;
  readonly type: number;
  /** 20-byte account id of the sender. */
  readonly from: Uint8Array;
  readonly nonce: bigint;
  /** Total fee in base units. */
  readonly fee: bigint;
  /** Type-specific payload bytes (see the txTypes/ modules). */
  readonly payload: Uint8Array;
  /** Required in an account's first transaction, optional after. */
  readonly publicKey?: HybridPublicKey;
}

/** A signed transaction. */
export interface Tx extends UnsignedTx {
  readonly signature: HybridSignature;
}

function writeUnsigned(w: Writer, tx: UnsignedTx): Writer {
  w.u8(tx.version).u32(tx.chainId).u8(tx.type).raw(tx.from).varint(tx.nonce).varint(tx.fee).bytes(tx.payload);
  if (tx.publicKey) w.u8(1).raw(tx.publicKey.mldsa).raw(tx.publicKey.ed25519);
  else w.u8(0);
  return w;
}

/** Bytes covered by the signatures. */
export function encodeUnsignedTx(tx: UnsignedTx): Uint8Array {
  if (tx.from.length !== ADDRESS_SIZE) throw new CodecError(CodecErrorCode.BAD_VALUE, 'from must be 20 bytes');
  return writeUnsigned(new Writer(tx.payload.length + (tx.publicKey ? 2700 : 64)), tx).finish();
}

/** The 32-byte domain-separated message both keys sign. */
export function txSighash(tx: UnsignedTx): Uint8Array {
  return taggedHash(SIGHASH_TAG, encodeUnsignedTx(tx));
}

/** Canonical signed bytes of a transaction. */
export function encodeTx(tx: Tx): Uint8Array {
  const w = writeUnsigned(new Writer(tx.payload.length + (tx.publicKey ? 7400 : 4800)), tx);
  return w.raw(tx.signature.mldsa).raw(tx.signature.ed25519).finish();
}

/** Reads one transaction from a reader (used inside block decoding). */
export function readTx(r: Reader): Tx {
  const version = r.u8();
  const chainId = r.u32();
  const type = r.u8();
  const from = r.raw(ADDRESS_SIZE).slice();
  const nonce = r.varint();
  const fee = r.varint();
  const payload = r.bytes(MAX_PAYLOAD_DECODE, 'payload').slice();
  const hasKey = r.u8();
  if (hasKey > 1) throw new CodecError(CodecErrorCode.BAD_VALUE, `bad public-key flag ${hasKey}`, r.offset - 1);
  const publicKey = hasKey ? { mldsa: r.raw(MLDSA_PUBLIC_KEY_SIZE).slice(), ed25519: r.raw(ED25519_PUBLIC_KEY_SIZE).slice() } : undefined;
  const signature = { mldsa: r.raw(MLDSA_SIGNATURE_SIZE).slice(), ed25519: r.raw(ED25519_SIGNATURE_SIZE).slice() };
  const tx: Tx = { version, chainId, type, from, nonce, fee, payload, signature };
  return publicKey ? { ...tx, publicKey } : tx;
}

/** Decodes a signed transaction; rejects trailing bytes and malformed fields with a CodecError. */
export function decodeTx(bytes: Uint8Array): Tx {
  return decodeAll(bytes, readTx);
}

/** Transaction id: SHA-256d of the signed bytes. */
export function txId(txOrBytes: Tx | Uint8Array): Uint8Array {
  return sha256d(txOrBytes instanceof Uint8Array ? txOrBytes : encodeTx(txOrBytes));
}

/** Signs an unsigned transaction with a hybrid key pair (sets the sender from the key). */
export function signTx(tx: Omit<UnsignedTx, 'from'> & { from?: Uint8Array }, kp: HybridKeyPair): Tx {
  const unsigned: UnsignedTx = { ...tx, from: kp.address };
  return { ...unsigned, signature: signHybrid(kp, txSighash(unsigned)) };
}

/** Minimum fee of a transaction of `size` signed bytes. */
export function minFee(size: number, params: ChainParams): bigint {
  return BigInt(size) * params.minFeeRate;
}

/**
 * Envelope rules that need no state: version, chain id, size, fee floor, and that any carried
 * public key hashes to the sender. Type-specific payload checks live in the type's module.
 */
export function validateTxEnvelope(tx: Tx, size: number, params: ChainParams): void {
  if (tx.version !== TX_VERSION) throw new ValidationError(TxErrorCode.BAD_VERSION, `unsupported tx version ${tx.version}`);
  if (tx.chainId !== params.chainId) {
    throw new ValidationError(TxErrorCode.WRONG_CHAIN, `tx is for chain ${tx.chainId}, this is chain ${params.chainId}`);
  }
  if (size > params.limits.maxTxBytes) throw new ValidationError(TxErrorCode.TOO_LARGE, `tx is ${size} bytes, limit ${params.limits.maxTxBytes}`);
  if (tx.payload.length > params.limits.maxPayloadBytes) {
    throw new ValidationError(TxErrorCode.TOO_LARGE, `payload is ${tx.payload.length} bytes, limit ${params.limits.maxPayloadBytes}`);
  }
  const floor = minFee(size, params);
  if (tx.fee < floor) {
    throw new ValidationError(TxErrorCode.FEE_TOO_LOW, `fee ${tx.fee} below the minimum ${floor} for ${size} bytes`, { action: 'ignore', payload: { minFee: floor.toString() } });
  }
  if (tx.publicKey && !bytesEqual(addressOfPublicKey(tx.publicKey), tx.from)) {
    throw new ValidationError(TxErrorCode.KEY_MISMATCH, 'public key does not hash to the sender address');
  }
}
