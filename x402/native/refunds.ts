/**
 * Refunds of the native rail. When a paid service fails, the node signs a `refund` with its
 * payee key, records it (`refund_pending`, the tx id and its signed bytes, before it leaves) and
 * submits it to its mempool; once the chain shows the invoke refunded, the record becomes
 * `refunded`. Pending refunds are resumed after a restart (a fleet: by the next holder of the
 * signer lease), and a payment claimed but never finished (a crash mid-execution) is refunded then.
 *
 * A refund is signed once: a refund lost (a crash before it reached another node, dropped from
 * the mempool, disconnected by a reorganization) goes again as the stored bytes, the same tx id,
 * as provider payouts do (`resubmitPayeeTx`, x402/native/payeeTx.ts). A new refund is signed only when
 * the stored one can never be mined: its nonce was taken by another transaction of the payee.
 * Consensus accepts one refund per invoke anyway, so even then it can never pay twice. The nonce
 * comes from the payee's one allocator (x402/native/payeeNonces.ts), shared with provider payouts: an
 * invoke's refund holds one nonce until the chain uses it, and no other transaction takes it.
 *
 * A refund gets out through congestion: it bids a fee rate that enters the mempool (above a full
 * pool's floor, x402/native/payeeTx.ts), and one that waits (refused under a risen floor, evicted, or not
 * mined after `BUMP_AFTER_BLOCKS` blocks) is bumped: a replacement with the same nonce and a higher
 * fee rate, written ahead like the first, so a restart re-sends the latest bytes. The replaced one
 * may still be mined instead: the invoke is refunded either way, and the record names the one mined.
 * Bumps stop at the payee's fee cap (`payeeFeeCap`, x402/native/payeeTx.ts): under congestion
 * above it the refund waits for room.
 *
 * A refund whose last attempt the mempool refused for the payee's balance, and whose amount plus
 * a refund's fee at the minimum rate the payee cannot pay (x402/native/payeeFunds.ts), is "stuck"
 * (`stuck()`): the payee is insolvent for it, and the node does not sell what it could not refund
 * from what the payee holds (`cover()`, x402/core/paidCall.ts `payeeRefusal`) until it is funded
 * or earns it. A refund waiting for room in the mempool, or refused for a fee bid that congestion
 * raised, is not: congestion is not insolvency.
 */
import { bytesEqual, fromHex, toHex } from '../../consensus/hash.js';
import type { Block } from '../../consensus/block.js';
import { decodeInvokeRecord, invokeKey } from '../../consensus/txTypes/agentInvoke.js';
import { refund as refundType } from '../../consensus/txTypes/refund.js';
import { decodeTx, encodeTx, txId as computeTxId, TxType, type Tx } from '../../consensus/tx.js';
import { tryDecodeAddress } from '../../consensus/address.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { payeeFeeCap, resubmitPayeeTx, submitPayeeTx, type PayeeTxReplacement } from './payeeTx.js';
import { insolventFor, payeeFunds, type PayeeFunds } from './payeeFunds.js';
import type { PayeeNonces } from './payeeNonces.js';
import { chainEnd } from './gapRefunds.js';
import { TxErrorCode } from '../../consensus/errors.js';
import { TipFollower } from './tipFollower.js';
import type { ChainParams } from '../../consensus/params.js';
import { silentLogger, type ChainEntry, type Logger } from '../../chain/types.js';
import type { PaymentRecord, SettlementLedger } from '../ledger/ledger.js';
import type { PaymentChain, PaymentMempool, Refunder, RefundCover } from '../core/ports.js';

/** Options of the refund manager. */
export interface RefundOptions {
  /** How often pending refunds are re-checked and re-sent when lost, ms. */
  retryMs?: number;
  logger?: Logger;
  /**
   * Whether `start()` refunds every `claimed` native payment as interrupted (default true: a
   * single node's claims at its start are all from before it). A fleet passes false: other live
   * nodes' claims are calls in flight; the lease holder refunds only the claims of nodes gone
   * (`PgLedger.orphanedClaims`, node/payments.ts).
   */
  recoverClaims?: boolean;
  /** Claims a restored ledger holds from before its restore (x402/native/unhonored.ts): never refunded at start, the operator decides. */
  holdsClaim?: (id: string) => boolean;
  /** The payee's nonce allocator, shared with payouts (default: an in-memory one per mempool and payee key). */
  nonces?: PayeeNonces;
}

/** The purpose of an invoke's refund in the payee's nonce allocator (x402/native/payeeNonces.ts). */
export const refundPurpose = (invokeId: string): string => `refund:${invokeId.toLowerCase()}`;

/** Blocks a refund may wait in the mempool before it is bumped (replaced with a higher fee rate). */
export const BUMP_AFTER_BLOCKS = 3;

/** Mempool refusals that mean the fee rate did not enter (a full pool's floor, a replacement not above the pending one): bump. */
const UNDERPRICED: ReadonlySet<string> = new Set(['mempool_full', 'mempool_replacement_underpriced']);

/** The stored refund's transaction, or undefined when its bytes do not decode. */
function storedTx(raw: string): Tx | undefined {
  try {
    return decodeTx(fromHex(raw));
  } catch {
    return undefined;
  }
}

/** Signs, submits and tracks refunds (see module comment). */
export class RefundManager implements Refunder {
  private readonly pending = new Map<string, PaymentRecord>();
  /** Refunds whose last submission the mempool refused for the payee's balance (`stuck()`). */
  private readonly unfunded = new Set<string>();
  /** Height at which each refund's current transaction was submitted (bumped after `BUMP_AFTER_BLOCKS`). */
  private readonly sentAt = new Map<string, number>();
  /** Ids of transactions a bump replaced, per invoke: one of them may be the one mined. */
  private readonly replaced = new Map<string, string[]>();
  /** Refunds asked for (`refund`) and not yet in `pending`. */
  private readonly requested = new Set<string>();
  private readonly log: Logger;
  private readonly follower: TipFollower;
  /** A refund of ours leaving the best chain (reorganization): pending again until mined again, with the block's bytes to re-send. */
  private readonly onDisconnect = (_entry: ChainEntry, block: Block) => {
    const ours = block.txs.filter((tx) => tx.type === TxType.refund && bytesEqual(tx.from, this.payee.address));
    if (ours.length) void this.follower.serial(() => this.reopen(ours.map((tx) => ({ invokeId: toHex(refundType.decodePayload(tx.payload).invokeId), bytes: encodeTx(tx) }))));
  };
  /** `resume()` ran since the last `start()`: the next start does not scan the ledger again. */
  private resumed = false;
  /** The payee's funds at the last check. */
  private funds: PayeeFunds | undefined;
  /** Refunds waiting at the fee cap (logged once each). */
  private readonly capped = new Set<string>();

  constructor(
    private readonly chain: PaymentChain,
    private readonly mempool: PaymentMempool,
    private readonly ledger: SettlementLedger,
    private readonly payee: HybridKeyPair,
    private readonly params: ChainParams,
    opts: RefundOptions = {},
  ) {
    this.log = opts.logger ?? silentLogger;
    this.recoverClaims = opts.recoverClaims ?? true;
    this.holdsClaim = opts.holdsClaim ?? (() => false);
    this.nonces = opts.nonces;
    this.follower = new TipFollower(chain, () => this.check(), opts.retryMs ?? 30_000, this.log, 'refund');
  }

  private readonly recoverClaims: boolean;
  private readonly holdsClaim: (id: string) => boolean;
  private readonly nonces: PayeeNonces | undefined;

  /**
   * Loads what a previous run (a fleet: the previous signer) left — claimed payments become
   * pending refunds, pending refunds are re-checked — and submits the stored refund transactions
   * again, signing nothing. `start()` does it when it was not called before; a fleet's new signer
   * calls it before its payouts start, so no new payout takes a nonce a stored refund holds.
   */
  async resume(): Promise<void> {
    for await (const rec of this.ledger.records()) {
      if (rec.rail !== 'native') continue;
      if (rec.status === 'claimed' && this.recoverClaims && !this.holdsClaim(rec.id)) {
        this.log.warn({ txId: rec.id, serviceId: rec.serviceId }, 'payment claimed before a restart without a result: refunding');
        const next = await this.ledger.refundPending(rec.id, { code: 'node_restarted', message: 'the node stopped while the service ran; the payment is refunded' });
        this.pending.set(rec.id, next);
      } else if (rec.status === 'refund_pending') {
        this.pending.set(rec.id, rec);
        // Stuck when the last run stopped: counted until the next attempt says otherwise.
        if (!rec.refundTxId && rec.refundStuck) this.unfunded.add(rec.id);
      }
    }
    await this.follower.serial(() => this.check({ sign: false }));
    this.resumed = true;
  }

  /** Resumes (unless `resume()` just did), then follows the tip: the first check signs what is owed and not sent. */
  async start(): Promise<void> {
    if (!this.resumed) await this.resume();
    this.resumed = false;
    this.chain.on('disconnect', this.onDisconnect);
    await this.follower.start();
    const f = this.funds;
    if (f && f.spendableBase < f.refundFeeMaxBase) {
      this.log.warn(
        { payee: toHex(this.payee.address), spendableBase: f.spendableBase.toString(), refundFeeBase: f.refundFeeBase.toString(), refundFeeMaxBase: f.refundFeeMaxBase.toString() },
        "the payee cannot cover a refund: a refund returns the whole price and its fee is the payee's; fund the payee (until then a refund owed and not paid stops the sales it could not refund)",
      );
    }
  }

  stop(): void {
    this.chain.off('disconnect', this.onDisconnect);
    this.follower.stop();
  }

  /** Waits for queued refund work. */
  async idle(): Promise<void> {
    await this.follower.idle();
  }

  /** Refunds a claimed payment whose service failed; returns the refund tx id (when it could be submitted). */
  refund(id: string, error: { code: string; message: string }): Promise<PaymentRecord> {
    // Pending from the call on: waiting for its turn and while it is signed and submitted too.
    this.requested.add(id);
    return this.follower
      .serial(async () => {
        const rec = await this.ledger.refundPending(id, error);
        // A refund already signed for it (a restart, a refusal refunded again) goes as stored.
        const sent = rec.refundTxId && (await this.resubmit(rec)) !== 'lost' ? rec : await this.send(rec);
        this.pending.set(id, sent);
        await this.readFunds();
        return sent;
      })
      .finally(() => this.requested.delete(id));
  }

  /**
   * Signs and submits the refund of one invoke; returns the record, naming the refund tx when it
   * entered the mempool. The tx id and bytes are written to the ledger before the tx leaves
   * (write-ahead): a crash right after the signature still knows which refund is under way, so the
   * restart (a fleet: the next signer) sends that very tx again instead of signing a second one.
   */
  private async send(rec: PaymentRecord): Promise<PaymentRecord> {
    // The chain ended it already (a ledger restored from a backup forgets the refunds and payouts it sent): a refund
    // consensus refuses is never signed, its nonce slot would hold every later payee transaction back. `check` ends it.
    const ended = await chainEnd(this.chain, rec.id);
    if (ended) {
      if (ended === 'paid_out') this.log.error({ invoke: rec.id }, 'refund not signed: the invoke was paid out to its provider on chain (served by a ledger since restored from a backup)');
      return rec;
    }
    const error = rec.error ?? { code: 'service_failed', message: 'refund' };
    const invokeId = fromHex(rec.id);
    const to = tryDecodeAddress(rec.caller, this.params.hrp);
    if (!to) {
      this.log.error({ txId: rec.id, caller: rec.caller }, 'cannot refund: caller address does not decode');
      return rec;
    }
    let written = rec;
    try {
      const id = await submitPayeeTx(this.chain, this.mempool, this.payee, this.params, TxType.refund, refundType.encodePayload({ invokeId, to, amount: BigInt(rec.amount) }), async (txId, bytes) => {
        written = await this.ledger.refundPending(rec.id, error, { txId, tx: toHex(bytes) });
      }, { purpose: refundPurpose(rec.id), nonces: this.nonces });
      this.unfunded.delete(rec.id);
      this.sentAt.set(rec.id, this.chain.tip.height);
      this.log.info({ invoke: rec.id, refundTxId: id, amount: rec.amount }, 'refund submitted');
      return written;
    } catch (e) {
      const code = (e as { code?: string }).code;
      const funds = code === TxErrorCode.INSUFFICIENT_FUNDS;
      if (funds) this.unfunded.add(rec.id);
      else this.unfunded.delete(rec.id);
      const stuck = funds ? `the payee cannot cover the refund and its fee yet (${(e as Error).message})` : `the refund could not be submitted yet (${code ?? (e as Error).message})`;
      this.log.warn({ invoke: rec.id, amount: rec.amount, code, err: (e as Error).message }, 'refund could not be submitted yet');
      // Refused by the mempool, so in none: name no refund (the next check signs a new one).
      return this.ledger.refundPending(rec.id, error, { stuck });
    }
  }

  /**
   * Refunds owed that the payee cannot pay (the mempool refused their last submission for its
   * balance, and the payee cannot pay the amount plus a refund's fee at the minimum rate), with
   * their total: the payee is insolvent for them. A refund waiting for room in a congested
   * mempool is not counted.
   */
  stuck(): { count: number; amountBase: bigint } {
    let count = 0;
    let amountBase = 0n;
    for (const rec of this.pending.values()) {
      if (!this.unfunded.has(rec.id)) continue;
      if (this.funds && !insolventFor(this.funds, BigInt(rec.amount))) continue;
      count++;
      amountBase += BigInt(rec.amount);
    }
    return { count, amountBase };
  }

  /** The payee's funds at the last check (x402/native/payeeFunds.ts); undefined before the first. */
  payeeFunds(): PayeeFunds | undefined {
    return this.funds;
  }

  /** What the paid-call core weighs a new sale against (x402/core/paidCall.ts `payeeRefusal`): the stuck refunds and what the payee holds. */
  cover(): RefundCover {
    return { stuck: this.stuck(), spendableBase: this.funds?.spendableBase ?? 0n, refundFeeBase: this.funds?.refundFeeBase ?? 0n };
  }

  /** Reads the payee's funds again (after every check and refund); a failed read keeps the last one. */
  private async readFunds(): Promise<void> {
    try {
      this.funds = await payeeFunds(this.chain, this.mempool, this.payee, this.params, this.nonces);
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, "could not read the payee's funds");
    }
  }

  /** Whether the stored refund of `rec` already bids within 10 % of the fee cap: a bump could not outbid it. */
  private atFeeCap(rec: PaymentRecord, stored: Tx): boolean {
    return stored.fee * 11n >= payeeFeeCap(rec.refundTx!.length / 2 + 9, this.params) * 10n;
  }

  /** Refunded records whose refund left the best chain become pending again, naming the disconnected tx and its bytes (`check` re-sends them when needed). */
  private async reopen(refunds: { invokeId: string; bytes: Uint8Array }[]): Promise<void> {
    for (const { invokeId: id, bytes } of refunds) {
      const rec = await this.ledger.get(id);
      if (rec?.status !== 'refunded') continue;
      const txId = toHex(computeTxId(bytes));
      this.log.warn({ invoke: id, refundTxId: txId }, 'refund disconnected by a reorganization: pending again');
      this.pending.set(id, await this.ledger.refundPending(id, rec.error ?? { code: 'service_failed', message: 'refund' }, { txId, tx: toHex(bytes) }));
    }
  }

  /**
   * The stored refund of `rec` (see `resubmitPayeeTx`): found, sent again as the same bytes, or
   * lost. A re-send the mempool refuses is noted: for the payee's balance (`stuck()`), or under
   * the pool's floor (`refusedUnderpriced`, bumped by `check`).
   */
  private async resubmit(rec: PaymentRecord) {
    this.refusedUnderpriced.delete(rec.id);
    const state = await resubmitPayeeTx(this.chain, this.mempool, this.payee, { txId: rec.refundTxId, raw: rec.refundTx }, (e) => {
      const code = (e as { code?: string }).code;
      if (code === TxErrorCode.INSUFFICIENT_FUNDS) this.unfunded.add(rec.id);
      if (code && UNDERPRICED.has(code)) this.refusedUnderpriced.add(rec.id);
      this.log.warn({ invoke: rec.id, refundTxId: rec.refundTxId, code, err: e.message }, 'stored refund not accepted yet');
    }, { purpose: refundPurpose(rec.id), nonces: this.nonces });
    if (state === 'pending' && this.mempool.has(rec.refundTxId ?? '')) this.unfunded.delete(rec.id);
    return state;
  }

  /** Refunds whose stored transaction the mempool just refused under its floor. */
  private readonly refusedUnderpriced = new Set<string>();

  /**
   * Replaces the stored refund of `rec` by one with the same nonce and a higher fee rate (bump and
   * replace), written ahead the same way: from then on the ledger names the replacement and a
   * restart re-sends its bytes. The replaced one may still be mined instead; `check` then finds
   * the invoke refunded and records the one mined. `stored`: the stored refund as `check` decoded
   * it (undefined when its bytes do not decode: nothing to replace).
   */
  private async bump(rec: PaymentRecord, stored: Tx | undefined): Promise<PaymentRecord> {
    const error = rec.error ?? { code: 'service_failed', message: 'refund' };
    if (!stored) return rec;
    const bytesLength = rec.refundTx!.length / 2;
    const replace: PayeeTxReplacement = { nonce: stored.nonce, feeRate: Number(stored.fee) / bytesLength };
    let written = rec;
    try {
      const id = await submitPayeeTx(
        this.chain,
        this.mempool,
        this.payee,
        this.params,
        TxType.refund,
        stored.payload,
        async (txId, bytes) => {
          this.replaced.set(rec.id, [...(this.replaced.get(rec.id) ?? []), rec.refundTxId!]);
          written = await this.ledger.refundPending(rec.id, error, { txId, tx: toHex(bytes) });
        },
        { replace, purpose: refundPurpose(rec.id), nonces: this.nonces },
      );
      this.unfunded.delete(rec.id);
      this.sentAt.set(rec.id, this.chain.tip.height);
      this.log.info({ invoke: rec.id, refundTxId: id, replacedTxId: rec.refundTxId, nonce: stored.nonce.toString() }, 'refund bumped: replaced with a higher fee rate');
    } catch (e) {
      const code = (e as { code?: string }).code;
      // A higher fee the payee cannot pay while the stored refund waits in the pool, paid for: not insolvency.
      if (code === TxErrorCode.INSUFFICIENT_FUNDS && !this.mempool.has(rec.refundTxId ?? '')) this.unfunded.add(rec.id);
      this.log.warn({ invoke: rec.id, refundTxId: written.refundTxId, code, err: (e as Error).message }, 'refund could not be bumped yet');
    }
    return written;
  }

  /** The id of the refund transaction of `rec` that the chain holds: its stored one, or one a bump replaced. */
  private async minedRefundId(rec: PaymentRecord): Promise<string> {
    const stored = rec.refundTxId ?? '';
    const earlier = this.replaced.get(rec.id) ?? [];
    if (earlier.length === 0 || (stored && (await this.chain.getTx(stored)))) return stored;
    for (const id of earlier) if (await this.chain.getTx(id)) return id;
    return stored;
  }

  /**
   * Marks mined refunds; re-sends the stored transactions of lost ones, then (unless `sign` is
   * false) signs the refunds that have none that can still be mined. Stored transactions go back
   * first: a new one signed before them could take the nonce they hold.
   */
  private async check({ sign = true }: { sign?: boolean } = {}): Promise<void> {
    const resign: string[] = [];
    for (const [id, rec] of [...this.pending]) {
      const view = await this.chain.getStateView([invokeKey(fromHex(id))]);
      const raw = view.get(invokeKey(fromHex(id)));
      if (raw && decodeInvokeRecord(raw).refunded) {
        const done = await this.ledger.refunded(id, await this.minedRefundId(rec));
        this.forget(id);
        this.log.info({ invoke: id, refundTxId: done.refundTxId }, 'refund mined');
        continue;
      }
      const state = await this.resubmit(rec);
      if (state === 'pending') {
        // Waiting: refused under the pool's floor, or in the pool for BUMP_AFTER_BLOCKS blocks: bump it.
        const since = this.sentAt.get(id);
        if (since === undefined) this.sentAt.set(id, this.chain.tip.height);
        const waited = since !== undefined && this.chain.tip.height - since >= BUMP_AFTER_BLOCKS;
        if (sign && rec.refundTx && (this.refusedUnderpriced.has(id) || waited)) {
          const stored = storedTx(rec.refundTx);
          if (!stored || !this.atFeeCap(rec, stored)) this.pending.set(id, await this.bump(rec, stored));
          else if (!this.capped.has(id)) {
            this.capped.add(id);
            this.log.warn({ invoke: id, refundTxId: rec.refundTxId, feeBase: stored.fee.toString() }, 'refund at the fee cap: it waits for room in the mempool');
          }
        }
        continue;
      }
      if (state !== 'lost') continue;
      if (rec.refundTx) this.log.warn({ invoke: id, lostTxId: rec.refundTxId }, 'refund lost (its nonce was used by another tx): signing a new one');
      resign.push(id);
    }
    if (sign) {
      // Never sent (owed by another node of the fleet, refused by the mempool), or lost for good: sign one.
      for (const id of resign) {
        const rec = this.pending.get(id);
        if (rec) this.pending.set(id, await this.send(rec));
      }
    }
    await this.readFunds();
  }

  /** Drops what is kept about a refund once mined. */
  private forget(id: string): void {
    this.pending.delete(id);
    this.unfunded.delete(id);
    this.sentAt.delete(id);
    this.replaced.delete(id);
    this.refusedUnderpriced.delete(id);
    this.capped.delete(id);
  }

  /** Ids of payments whose refund is not mined yet (asked for, being sent, or sent). */
  pendingIds(): string[] {
    return [...new Set([...this.pending.keys(), ...this.requested])];
  }
}
