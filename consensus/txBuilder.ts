/**
 * Building signed transactions on the client side (CLI, tests, later the agent SDK): the
 * envelope, the fee floor for the exact signed size, and the signatures.
 */
import { ED25519_SIGNATURE_SIZE, MLDSA_SIGNATURE_SIZE, type HybridKeyPair } from './keys.js';
import { encodeTx, encodeUnsignedTx, signTx, txId, TxType, TX_VERSION, type Tx, type UnsignedTx } from './tx.js';
import { transfer } from './txTypes/transfer.js';
import { agentInvoke } from './txTypes/agentInvoke.js';
import { toHex } from './hash.js';

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
  return signEnvelope(o, TxType.transfer, transfer.encodePayload({ to: o.to, amount: o.amount }));
}

/** Inputs of `createAgentInvokeTx`: the envelope fields of a transfer, and the invoke's payload. */
export interface AgentInvokeTxOptions extends Omit<TransferTxOptions, 'to'> {
  /** `native-…` id of the service paid for. */
  readonly serviceId: string;
  /** 20-byte account id of the provider (the quote's `payTo`). */
  readonly payTo: Uint8Array;
  /** sha256 of the request string, binding the payment to that request (omit when there is no request). */
  readonly requestHash?: Uint8Array;
}

/** Builds and signs an `agent_invoke` paying `amount` (the exact quoted price) to `payTo` for `serviceId`. */
export function createAgentInvokeTx(o: AgentInvokeTxOptions): BuiltTx {
  const payload = agentInvoke.encodePayload({
    serviceId: o.serviceId,
    payTo: o.payTo,
    amount: o.amount,
    ...(o.requestHash ? { requestHash: o.requestHash } : {}),
  });
  return signEnvelope(o, TxType.agent_invoke, payload);
}

/** The envelope fields every builder takes. */
export type EnvelopeOptions = Pick<TransferTxOptions, 'key' | 'chainId' | 'nonce' | 'includeKey' | 'fee' | 'feeRate'>;

/** The envelope shared by the builders: nonce, optional key, the fee for the exact signed size, both signatures. */
export function signEnvelope(o: EnvelopeOptions, type: number, payload: Uint8Array): BuiltTx {
  const base = {
    version: TX_VERSION,
    chainId: o.chainId,
    type,
    from: o.key.address,
    nonce: o.nonce,
    payload,
    ...(o.includeKey ? { publicKey: o.key.publicKey } : {}),
  };
  const fee = o.fee ?? feeForRate(base, o.feeRate ?? 1n);
  const tx = signTx({ ...base, fee }, o.key);
  const bytes = encodeTx(tx);
  return { tx, bytes, id: toHex(txId(bytes)) };
}
