/**
 * Signing and submitting a transaction of the node's payee key (refunds, provider payouts): the
 * next nonce after what the mempool already holds, the key published by the first transaction,
 * and the minimum fee for the signed size.
 */
import { encodeTx, encodeUnsignedTx, signTx, txId as computeTxId, TX_VERSION, type UnsignedTx } from '../consensus/tx.js';
import { toHex } from '../consensus/hash.js';
import { TxErrorCode } from '../consensus/errors.js';
import { ED25519_SIGNATURE_SIZE, MLDSA_SIGNATURE_SIZE, type HybridKeyPair } from '../consensus/keys.js';
import type { ChainParams } from '../consensus/params.js';
import type { PaymentChain, PaymentMempool } from './ports.js';

/** Submissions per payee key run one at a time, so refunds and payouts never pick the same nonce. */
const queues = new WeakMap<HybridKeyPair, Promise<unknown>>();

/** Attempts at a nonce when a block connects between the account read and the submission. */
const NONCE_ATTEMPTS = 3;

/**
 * Signs `payload` of `type` with the payee key and submits it to the mempool; resolves to the tx id
 * (throws when the mempool refuses it). `beforeSubmit`, when given, runs with the signed tx's id and
 * bytes before the tx leaves (write-ahead: a refund records which tx is under way, so a crash right
 * after the submission does not make the restart send a second one; a payout by plain transfer
 * keeps the bytes, to send that very tx again).
 */
export function submitPayeeTx(
  chain: Pick<PaymentChain, 'getAccount'>,
  mempool: PaymentMempool,
  payee: HybridKeyPair,
  params: ChainParams,
  type: number,
  payload: Uint8Array,
  beforeSubmit?: (id: string, bytes: Uint8Array) => Promise<unknown>,
): Promise<string> {
  const submitOnce = async (): Promise<string> => {
    const acc = await chain.getAccount(payee.address);
    const nonce = mempool.pendingNonce(payee.address, acc.nonce);
    const base: Omit<UnsignedTx, 'fee'> = {
      version: TX_VERSION,
      chainId: params.chainId,
      type,
      from: payee.address,
      nonce,
      payload,
      ...(acc.publicKey ? {} : { publicKey: payee.publicKey }),
    };
    // Signatures have fixed sizes; a fee varint is at most 9 bytes longer than fee 0's: an upper bound of the signed size.
    const size = encodeUnsignedTx({ ...base, fee: 0n }).length + 9 + MLDSA_SIGNATURE_SIZE + ED25519_SIGNATURE_SIZE;
    const tx = signTx({ ...base, fee: BigInt(size) * params.minFeeRate }, payee);
    const bytes = encodeTx(tx);
    const id = toHex(computeTxId(bytes));
    await beforeSubmit?.(id, bytes);
    await mempool.add(bytes);
    return id;
  };
  // Again with a fresh account read when the mempool answers that the nonce was just used: a block
  // that connects while the account is read can mine the payee's previous tx, so the (older)
  // account nonce and the (newer) mempool disagree for a moment. Other refusals are final.
  const submit = async (): Promise<string> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await submitOnce();
      } catch (e) {
        if (attempt >= NONCE_ATTEMPTS || (e as { code?: string }).code !== TxErrorCode.BAD_NONCE) throw e;
      }
    }
  };
  const run = (queues.get(payee) ?? Promise.resolve()).then(submit);
  queues.set(payee, run.catch(() => undefined));
  return run;
}
