/**
 * Building signed transactions on the client side (CLI, tests, later the agent SDK): the
 * envelope, the fee floor for the exact signed size, and the signatures.
 */
import { ED25519_SIGNATURE_SIZE, MLDSA_SIGNATURE_SIZE, type HybridKeyPair } from '../consensus/keys.js';
import { encodeTx, encodeUnsignedTx, signTx, txId, TxType, TX_VERSION, type Tx, type UnsignedTx } from '../consensus/tx.js';
import { transfer } from '../consensus/txTypes/transfer.js';
import { toHex } from '../consensus/hash.js';

/** A signed transaction with its bytes and id. */
export interface BuiltTx {
  readonly tx: Tx;
  readonly bytes: Uint8Array;
  /** Hex tx id. */
  readonly id: string;
}

/** Signed size of an unsigned transaction once both signatures are appended. */
export function signedSize(tx: UnsignedTx): number {
  return encodeUnsignedTx(tx).length + MLDSA_SIGNATURE_SIZE + ED25519_SIGNATURE_SIZE;
}

/**
 * Smallest fee with `fee ≥ signedSize × feeRate`. The fee is a varint inside the signed bytes,
 * so raising it can grow the size: iterate until it covers its own size (two rounds at most).
 */
export function feeForRate(tx: Omit<UnsignedTx, 'fee'>, feeRate: bigint): bigint {
  let fee = 0n;
  for (;;) {
    const need = BigInt(signedSize({ ...tx, fee })) * feeRate;
    if (need <= fee) return fee;
    fee = need;
  }
}

/** Inputs of `createTransferTx`. */
export interface TransferTxOptions {
  readonly key: HybridKeyPair;
  readonly chainId: number;
  /** 20-byte recipient account id. */
  readonly to: Uint8Array;
  /** Base units, > 0. */
  readonly amount: bigint;
  readonly nonce: bigint;
  /** Carry the public key (required while the account has none on chain). */
  readonly includeKey: boolean;
  /** Explicit total fee in base units; otherwise `size × feeRate`. */
  readonly fee?: bigint;
  /** Base units per signed byte when `fee` is not given. */
  readonly feeRate?: bigint;
}

/** Builds and signs a transfer. */
export function createTransferTx(o: TransferTxOptions): BuiltTx {
  const base = {
    version: TX_VERSION,
    chainId: o.chainId,
    type: TxType.transfer,
    from: o.key.address,
    nonce: o.nonce,
    payload: transfer.encodePayload({ to: o.to, amount: o.amount }),
    ...(o.includeKey ? { publicKey: o.key.publicKey } : {}),
  };
  const fee = o.fee ?? feeForRate(base, o.feeRate ?? 1n);
  const tx = signTx({ ...base, fee }, o.key);
  const bytes = encodeTx(tx);
  return { tx, bytes, id: toHex(txId(bytes)) };
}
