/**
 * Carrying out the operator's `native-node ledger gap --refund` (the payment watcher,
 * x402/native/unhonored.ts): every payment of the gap the ledger has no end for is refunded, once —
 * unless the chain shows that the lost ledger ended it already:
 *
 *   refunded    recorded as refunded, naming that refund (found in the blocks after the payment):
 *               a second refund is refused by consensus, and signing one anyway takes a payee
 *               nonce no transaction can ever use, which stalls every later refund and payout;
 *   paid out    the provider was paid for it on chain: served for good, and consensus takes no
 *               refund of it. It stays in the gap, which is kept as forgotten for it alone (a
 *               settle answers `payment_in_ledger_gap`); the rest of the gap is dropped as refunded.
 *
 * The claims the restored ledger held are judged the same way.
 */
import { encodeAddress } from '../../consensus/address.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import type { ChainParams } from '../../consensus/params.js';
import { payoutKey } from '../../consensus/registryState.js';
import { txId, TxType, type Tx } from '../../consensus/tx.js';
import { decodeInvokeRecord, invokeKey, type AgentInvokePayload } from '../../consensus/txTypes/agentInvoke.js';
import { refund as refundType } from '../../consensus/txTypes/refund.js';
import type { ChainReader, Logger } from '../../chain/types.js';
import type { SettlementLedger } from '../ledger/ledger.js';
import type { LedgerGap } from '../ledger/restore.js';

/** How many blocks after a payment its refund is looked for, to name it in the record ('' when not found within them). */
const REFUND_SEARCH_BLOCKS = 5_000;

/** The chain's reads: blocks, and the invoke's consensus state. */
export type GapChain = ChainReader & { getStateView(keys: readonly string[]): Promise<{ get(key: string): Uint8Array | undefined }> };

/** How the chain ended payment `id` without this ledger: refunded, or paid out to its provider; undefined when it did not. */
export async function chainEnd(chain: GapChain, id: string): Promise<'refunded' | 'paid_out' | undefined> {
  const invoke = fromHex(id);
  const view = await chain.getStateView([invokeKey(invoke), payoutKey(invoke)]);
  if (view.get(payoutKey(invoke))) return 'paid_out';
  const raw = view.get(invokeKey(invoke));
  return raw && decodeInvokeRecord(raw).refunded ? 'refunded' : undefined;
}

/** The id of the refund of `id` in the best chain above `height` (bounded search), '' when not found. */
async function refundTxOf(chain: GapChain, id: string, height: number): Promise<string> {
  for (let h = height + 1; h <= Math.min(chain.tip.height, height + REFUND_SEARCH_BLOCKS); h++) {
    const entry = chain.getEntryByHeight(h);
    const block = entry && (await chain.getBlock(entry.hashHex));
    const found = block?.txs.find((tx) => tx.type === TxType.refund && toHex(refundType.decodePayload(tx.payload).invokeId) === id);
    if (found) return toHex(txId(found));
  }
  return '';
}

/** What refunding a gap needs of the watcher. */
export interface GapRefundParts {
  readonly chain: GapChain;
  readonly ledger: SettlementLedger;
  readonly params: Pick<ChainParams, 'hrp'>;
  readonly log: Logger;
  readonly now: () => number;
  /** Refunds a held claim (the payee's refunds). */
  readonly refunder?: { refund(id: string, error: { code: string; message: string }): Promise<unknown> };
  /** Calls `fn` for every invoke of the gap without a ledger record, with its height. */
  forEachUnrecorded(g: LedgerGap, fn: (id: string, tx: Tx, p: AgentInvokePayload, height: number) => Promise<void>): Promise<void>;
  /** Claims the refusal of an unrecorded payment and refunds it. */
  refuse(id: string, tx: Tx, p: AgentInvokePayload, error: { code: string; message: string }): Promise<unknown>;
}

/** Refunds the payments of gap `g` (see module comment); answers what stays of it (forgotten: the payments paid out on chain), if anything. */
export async function refundGap(parts: GapRefundParts, g: LedgerGap, code: string): Promise<LedgerGap | undefined> {
  const { chain, ledger } = parts;
  const message = (id: string) => `payment ${id} was mined at height ${g.from}-${g.to}, a stretch the node's ledger had no record of; the operator chose to refund such payments`;
  let refunded = 0;
  let endedBefore = 0;
  const paidOut: { id: string; amount: bigint }[] = [];
  await parts.forEachUnrecorded(g, async (id, tx, p, height) => {
    const end = await chainEnd(chain, id);
    if (end === 'paid_out') {
      paidOut.push({ id, amount: p.amount });
      return;
    }
    if (end === 'refunded') {
      const record = { id, rail: 'native' as const, serviceId: p.serviceId, requestHash: p.requestHash ? toHex(p.requestHash) : '', caller: encodeAddress(tx.from, parts.params.hrp), amount: p.amount.toString() };
      const claim = await ledger.claimRefusal(record, { code, message: message(id) }, parts.now());
      if (claim.claimed) await ledger.refunded(id, await refundTxOf(chain, id, height));
      endedBefore++;
      return;
    }
    refunded++;
    await parts.refuse(id, tx, p, { code, message: message(id) });
  });
  // Claims the restored ledger held: refunded the same way (still claimed: nothing ended them since).
  const heldPaidOut: string[] = [];
  for (const id of g.claimed ?? []) {
    const rec = await ledger.get(id);
    if (rec?.status !== 'claimed' || !parts.refunder) continue;
    const end = await chainEnd(chain, id);
    if (end === 'paid_out') {
      heldPaidOut.push(id);
      paidOut.push({ id, amount: BigInt(rec.amount) });
      continue;
    }
    if (end === 'refunded') {
      await ledger.refundPending(id, { code, message: message(id) });
      await ledger.refunded(id, await refundTxOf(chain, id, (await chain.getTx(id))?.height ?? g.from));
      endedBefore++;
      continue;
    }
    refunded++;
    await parts.refunder.refund(id, { code, message: message(id) });
  }
  parts.log.warn({ from: g.from, to: g.to, refunded, refundedBefore: endedBefore, paidOut: paidOut.length }, 'ledger gap: payments refunded as the operator chose');
  if (paidOut.length === 0) return undefined;
  parts.log.warn(
    { from: g.from, to: g.to, payments: paidOut.map((p) => p.id) },
    `ledger gap: ${paidOut.length} payment(s) of heights ${g.from}-${g.to} were paid out to their provider on chain by the lost ledger (served): they cannot be refunded and stay in the gap, forgotten`,
  );
  return { ...g, resolution: 'forget', invokes: paidOut.length, amountBase: paidOut.reduce((s, p) => s + p.amount, 0n).toString(), claimed: heldPaidOut, countedTo: g.to };
}
