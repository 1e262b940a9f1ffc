/**
 * The online half of checking a receipt: is its native payment on chain, and did it pay the
 * payee that signed the receipt? Asks a node of the chain — best one you run yourself, not the
 * seller's — `GET /api/v1/tx/:txId` and compares the mined `agent_invoke` with the hybrid
 * receipt: payer (`from`), payee (`payTo`), amount (base units), service and chain.
 *
 * With it, a receipt verified offline against a DID document (sdk/receipts.ts) is tied to a real
 * payment: the key that signed is the one that was paid. A USDC payment is on Base, not on this
 * chain: it is not checked here.
 */
import type { HybridReceiptPayload } from '../x402/core/wire.js';
import type { VerifyFailure } from './receipts.js';

/** A native payment found on chain as the receipt states it. */
export interface PaymentOnChain {
  readonly ok: true;
  readonly txId: string;
  readonly height: number;
  readonly blockHash: string;
  readonly confirmations: number;
}

/** Options of `checkNativePayment`. */
export interface PaymentCheckOptions {
  /** Fewest confirmations accepted (default 1: mined). */
  readonly minConfirmations?: number;
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

const fail = (reason: string, message: string): VerifyFailure => ({ ok: false, reason, message });

/**
 * Checks, at the node `nodeUrl`, that the hybrid receipt's native payment is mined and is what
 * the receipt says: an `agent_invoke` of `txId` from `payer` to `payee` of `amount` base units
 * for `serviceId`, on the receipt's chain (`native:<chainId>`).
 */
export async function checkNativePayment(nodeUrl: string, receipt: HybridReceiptPayload, o: PaymentCheckOptions = {}): Promise<PaymentOnChain | VerifyFailure> {
  if (receipt.rail !== 'native' || !receipt.network.startsWith('native:')) return fail('not_native', `the payment is on ${receipt.network}, not on this chain: check it there`);
  const url = `${nodeUrl.replace(/\/+$/, '')}/api/v1/tx/${encodeURIComponent(receipt.txId)}`;
  let res: Response;
  let tx: Record<string, unknown>;
  try {
    res = await (o.fetch ?? fetch)(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(o.timeoutMs ?? 10_000) });
    tx = (await res.json()) as Record<string, unknown>;
  } catch (e) {
    return fail('node_unreachable', `cannot read ${url}: ${(e as Error).message}`);
  }
  if (res.status === 404) return fail('payment_not_found', `the node ${nodeUrl} knows no transaction ${receipt.txId}`);
  if (!res.ok || typeof tx !== 'object' || tx === null) return fail('node_bad_response', `${url} answered ${res.status}`);
  if (tx.status !== 'mined') return fail('payment_not_mined', `transaction ${receipt.txId} is ${String(tx.status)}, not mined`);
  const confirmations = Number(tx.confirmations);
  const min = o.minConfirmations ?? 1;
  if (!(confirmations >= min)) return fail('payment_not_mined', `transaction ${receipt.txId} has ${confirmations} confirmations, fewer than ${min}`);
  const differs: string[] = [];
  if (tx.type !== 'agent_invoke') differs.push(`it is a ${String(tx.type)}, not an agent_invoke`);
  if (`native:${String(tx.chainId)}` !== receipt.network) differs.push(`it is on chain ${String(tx.chainId)}, the receipt says ${receipt.network}`);
  if (tx.from !== receipt.payer) differs.push(`it is from ${String(tx.from)}, the receipt says payer ${receipt.payer}`);
  if (tx.payTo !== receipt.payee) differs.push(`it pays ${String(tx.payTo)}, not the payee ${receipt.payee} that signed the receipt`);
  if (String(tx.amountBase) !== receipt.amount) differs.push(`it pays ${String(tx.amountBase)} base units, the receipt says ${receipt.amount}`);
  if (tx.serviceId !== receipt.serviceId) differs.push(`it pays for ${String(tx.serviceId)}, the receipt says ${receipt.serviceId}`);
  if (differs.length > 0) return fail('payment_mismatch', `transaction ${receipt.txId} is not the payment the receipt states: ${differs.join('; ')}`);
  return { ok: true, txId: receipt.txId, height: Number(tx.height), blockHash: String(tx.blockHash), confirmations };
}
