/**
 * Signing and submitting a transaction of the node's payee key (refunds, provider payouts): the
 * next nonce after what the mempool already holds, the key published by the first transaction,
 * and the minimum fee for the signed size. And sending such a transaction again from its stored
 * bytes (`resubmitPayeeTx`): refunds and payouts write the signed bytes ahead of the submission,
 * and a restart or a fleet's next signer re-sends those very bytes while they can still be mined.
 */
import { decodeTx, encodeTx, encodeUnsignedTx, signTx, txId as computeTxId, TX_VERSION, type UnsignedTx } from '../consensus/tx.js';
import { fromHex, toHex } from '../consensus/hash.js';
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
  return serialPerPayee(payee, submit);
}

/** Runs `fn` after the payee key's queued submissions (see `queues`). */
function serialPerPayee<T>(payee: HybridKeyPair, fn: () => Promise<T>): Promise<T> {
  const run = (queues.get(payee) ?? Promise.resolve()).then(fn);
  queues.set(payee, run.catch(() => undefined));
  return run;
}

/** A payee transaction stored when it was signed: its hex id and, written ahead of its submission, its hex bytes. */
export interface StoredPayeeTx {
  readonly txId?: string;
  /** Absent for records written before the bytes were kept: such a tx can be waited for, not re-sent. */
  readonly raw?: string;
}

/**
 * Where a stored payee transaction is: `mined` (the chain has it), `pending` (in the mempool, or
 * submitted again now: its nonce is unused, so only it may take that nonce — a refusal, e.g. the
 * payee's balance, is logged through `onRefused` and waits for the next check), or `lost`: it can
 * never be mined (its nonce was used by another transaction of the payee, or there is nothing to
 * re-send), so a new one is to be signed.
 */
export type StoredPayeeTxState = 'mined' | 'pending' | 'lost';

/**
 * Finds a stored payee transaction and submits its very bytes again when they were lost (a
 * restart, a new signer of a fleet, dropped from the mempool, a reorganization); see
 * `StoredPayeeTxState`. Runs in the payee's submission queue, so no new transaction takes the
 * nonce between the check and the re-submission.
 *
 * The payee's nonce is read before the transaction is looked up: a block mining it between the
 * two reads then shows it mined, whereas in the other order it would be neither in the chain
 * (read before the block) nor in the mempool (which the block emptied) with its nonce used, and
 * it would be judged lost (a second transaction signed: for a USDC call's transfer, the provider
 * paid twice).
 */
export function resubmitPayeeTx(
  chain: Pick<PaymentChain, 'getAccount' | 'getTx'>,
  mempool: PaymentMempool,
  payee: HybridKeyPair,
  stored: StoredPayeeTx,
  onRefused?: (e: Error) => void,
): Promise<StoredPayeeTxState> {
  return serialPerPayee(payee, async (): Promise<StoredPayeeTxState> => {
    if (!stored.txId) return 'lost';
    const payeeNonce = stored.raw ? (await chain.getAccount(payee.address)).nonce : undefined;
    if (await chain.getTx(stored.txId)) return 'mined';
    if (mempool.has(stored.txId)) return 'pending';
    if (!stored.raw) return 'lost';
    const bytes = fromHex(stored.raw);
    if (payeeNonce! > decodeTx(bytes).nonce) return 'lost';
    await mempool.add(bytes).catch((e: Error) => onRefused?.(e));
    return 'pending';
  });
}
