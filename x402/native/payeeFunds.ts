/**
 * What the payee holds against what its refunds cost.
 *
 * A refund returns exactly what its invoke paid, and its fee is the payee's. The payment brought
 * its amount, so a refund needs only its fee from what the payee held before — unless the payee
 * spent what it was paid (provider payouts, an operator's withdrawal) or holds nothing beside it
 * (a new mainnet payee, whose first refund costs the price plus a fee it does not have).
 *
 * `payeeFunds` reads it: the confirmed balance, minus what the payee's transactions waiting in
 * the mempool spend (their amounts and fees, from the nonce slots that hold their bytes,
 * x402/native/payeeNonces.ts), and the fee of one refund at the minimum fee rate, at the rate a
 * refund bids now and at the cap (`payeeFeeCap`, x402/native/payeeTx.ts).
 *
 * A refund the mempool refused for the payee's balance is stuck only when the payee cannot pay
 * its amount plus a refund's fee at the minimum rate (`insolventFor`): a refund refused for a fee
 * bid that congestion raised waits like any other (congestion is not insolvency). What a stuck
 * refund blocks is the paid-call core's rule (x402/core/paidCall.ts `payeeRefusal`).
 */
import { fromHex, toHex } from '../../consensus/hash.js';
import { decodeTx, encodeUnsignedTx, TX_VERSION, TxType, type Tx } from '../../consensus/tx.js';
import { ED25519_PUBLIC_KEY_SIZE, MLDSA_PUBLIC_KEY_SIZE, type HybridKeyPair } from '../../consensus/keys.js';
import type { ChainParams } from '../../consensus/params.js';
import { refund as refundType } from '../../consensus/txTypes/refund.js';
import { providerPayout } from '../../consensus/txTypes/providerPayout.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import type { PaymentChain, PaymentMempool } from '../core/ports.js';
import { payeeFeeCap, payeeTxFee, signedSizeBound } from './payeeTx.js';
import { defaultPayeeNonces, type PayeeNonces } from './payeeNonces.js';

/** The payee's funds as `payeeFunds` reads them, base units. */
export interface PayeeFunds {
  /** Confirmed balance. */
  readonly balanceBase: bigint;
  /** The balance minus what its transactions in the mempool spend (never below 0). */
  readonly spendableBase: bigint;
  /** One refund's fee at the chain's minimum fee rate. */
  readonly refundFeeMinBase: bigint;
  /** One refund's fee at the rate a refund bids now (above a full pool's floor). */
  readonly refundFeeBase: bigint;
  /** One refund's fee at the cap (`MAX_FEE_RATE_MULTIPLE` times the minimum). */
  readonly refundFeeMaxBase: bigint;
}

/** Upper bound of a refund's signed size, bytes (with the payee's public key when its first transaction publishes it). */
export function refundSizeBound(params: Pick<ChainParams, 'chainId'>, withKey: boolean): number {
  const payload = refundType.encodePayload({ invokeId: new Uint8Array(32), to: new Uint8Array(20), amount: 2n ** 63n });
  const publicKey = { mldsa: new Uint8Array(MLDSA_PUBLIC_KEY_SIZE), ed25519: new Uint8Array(ED25519_PUBLIC_KEY_SIZE) };
  return signedSizeBound(encodeUnsignedTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.refund, from: new Uint8Array(20), nonce: 2n ** 32n, fee: 0n, payload, ...(withKey ? { publicKey } : {}) }));
}

/** What a pending transaction of the payee spends: its fee and the amount it moves. */
export function spendOf(tx: Tx): bigint {
  try {
    if (tx.type === TxType.refund) return tx.fee + refundType.decodePayload(tx.payload).amount;
    if (tx.type === TxType.provider_payout) return tx.fee + providerPayout.decodePayload(tx.payload).amount;
    if (tx.type === TxType.transfer) return tx.fee + transfer.decodePayload(tx.payload).amount;
  } catch {
    // A payload that does not decode spends its fee at most.
  }
  return tx.fee;
}

/** Reads the payee's funds (see module comment). */
export async function payeeFunds(chain: Pick<PaymentChain, 'getAccount'>, mempool: PaymentMempool, payee: HybridKeyPair, params: ChainParams, nonces?: PayeeNonces): Promise<PayeeFunds> {
  const acc = await chain.getAccount(payee.address);
  const log = (nonces ?? defaultPayeeNonces(mempool, payee)).log;
  let pending = 0n;
  for (const slot of await log.live(toHex(payee.address), acc.nonce)) {
    if (!mempool.has(slot.txId)) continue;
    try {
      pending += spendOf(decodeTx(fromHex(slot.raw)));
    } catch {
      // Bytes that do not decode were never admitted: nothing to count.
    }
  }
  const spendable = acc.balance - pending;
  const size = refundSizeBound(params, !acc.publicKey);
  return {
    balanceBase: acc.balance,
    spendableBase: spendable > 0n ? spendable : 0n,
    refundFeeMinBase: BigInt(size) * params.minFeeRate,
    refundFeeBase: payeeTxFee(size, params, { pool: mempool.stats?.() }),
    refundFeeMaxBase: payeeFeeCap(size, params),
  };
}

/** Whether a refund of `amountBase` is beyond the payee: it cannot pay the amount plus a refund's fee at the minimum rate. */
export function insolventFor(funds: Pick<PayeeFunds, 'spendableBase' | 'refundFeeMinBase'>, amountBase: bigint): boolean {
  return funds.spendableBase < amountBase + funds.refundFeeMinBase;
}
