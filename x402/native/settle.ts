/**
 * Settlement on the native rail, every check from local state (no RPC hop): the payment is an
 * `agent_invoke` mined with the configured confirmations, for this service, paid to this node's
 * payee, for exactly the quoted price, committing to this seller, this service, this request and
 * the salt the payer reveals in the settle (x402/core/wire.ts requestCommitment), and not used before.
 * One atomic claim per payment; the service runs once; its result is stored and returned again
 * to a repeated settle that proves the payer the same way (request and salt); a failure after
 * payment is refunded on-chain. Nobody without the salt can claim a payment or read its result,
 * nor tell a settled payment from an unsettled one: a settle that does not prove the payer gets
 * the same answer either way (`invalid_payment` without a salt, `request_mismatch` with another).
 */
import { formatAmount } from '../../consensus/amount.js';
import { encodeAddress } from '../../consensus/address.js';
import { isNodeError, NodeError } from '../../consensus/errors.js';
import { bytesEqual, isHex, toHex } from '../../consensus/hash.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import type { ChainParams } from '../../consensus/params.js';
import { agentInvoke, type AgentInvokePayload } from '../../consensus/txTypes/agentInvoke.js';
import { TxType } from '../../consensus/tx.js';
import { silentLogger, type Logger, type StoredTx } from '../../chain/types.js';
import { ServiceError, type ServiceDefinition } from '../../services/types.js';
import { executeService } from '../../services/execute.js';
import { PAYMENT_HTTP_STATUS, PaymentErrorCode } from '../core/errors.js';
import { LedgerErrorCode, type PaymentRecord, type SettlementLedger } from '../ledger/ledger.js';
import { PendingEnds } from '../ledger/pendingEnds.js';
import type { RefundedBody } from '../core/wire.js';
import { refusal, type PendingOutcome, type RefusedOutcome, type SettleOutcome } from '../core/outcome.js';
import type { NativePaymentProof, NativeRail, PaymentChain, PaymentMempool, Refunder, ServiceRunContext } from '../core/ports.js';
import { nativeNumber } from '../core/pricing.js';
import { requestCommitment, sellerOfCommitment, SALT_BYTES } from '../core/wire.js';
import { settlementExtensionsOf, type IssueContext, type ReceiptIssuer } from '../core/receipts.js';
import type { UnhonoredPayments } from './unhonored.js';

/** Settles woken per turn of the event loop when a block arrives (see `wakeTipWaiters`). */
const TIP_WAKE_CHUNK = 64;

/** Calls `wakers` in order, `chunk` of them now and each next chunk on a later turn of the event loop (`defer`, default setImmediate). */
export function wakeInChunks(wakers: readonly (() => void)[], chunk: number, defer: (next: () => void) => void = setImmediate): void {
  const wake = (from: number): void => {
    for (const w of wakers.slice(from, from + chunk)) w();
    if (from + chunk < wakers.length) defer(() => wake(from + chunk));
  };
  wake(0);
}

/** Options of the native rail's settlement. */
export interface NativeSettlementOptions {
  /** Confirmations an invoke needs (1 = mined). */
  confirmations?: number;
  logger?: Logger;
  /** Unix ms (injected in tests). */
  now?: () => number;
  /** The payment watcher: a payment the node will not honour is refunded, not executed (x402/native/unhonored.ts). */
  unhonored?: Pick<UnhonoredPayments, 'refuseIfUnhonored' | 'withRefund' | 'inGap' | 'holdsClaim'>;
  /** Signs each settled call's receipts (x402/core/receipts.ts), stored with its record. */
  receipts?: ReceiptIssuer;
}

/** Settlement of native payments (see module comment). */
export class NativeSettlement implements NativeRail {
  private readonly log: Logger;
  private readonly confirmations: number;
  private readonly now: () => number;
  private readonly unhonored: NativeSettlementOptions['unhonored'];
  private readonly receipts: ReceiptIssuer | undefined;
  /** Results and refunds the ledger could not take when they came (x402/ledger/pendingEnds.ts). */
  private readonly ends: PendingEnds;

  constructor(
    private readonly chain: PaymentChain,
    private readonly mempool: PaymentMempool,
    private readonly ledger: SettlementLedger,
    private readonly refunds: Refunder,
    private readonly payee: HybridKeyPair,
    private readonly params: ChainParams,
    /** What services run with; each call gets its own abort signal. */
    private readonly context: ServiceRunContext,
    opts: NativeSettlementOptions = {},
  ) {
    this.log = opts.logger ?? silentLogger;
    this.confirmations = Math.max(1, opts.confirmations ?? 1);
    this.now = opts.now ?? Date.now;
    this.unhonored = opts.unhonored;
    this.receipts = opts.receipts;
    this.ends = new PendingEnds(this.log);
    this.payTo = encodeAddress(payee.address, params.hrp);
  }

  /** This node's payee address on the native rail (encoded once: every quote and receipt names it). */
  readonly payTo: string;

  /** The seller id payments commit to: the ledger's. */
  get sellerId(): string {
    return this.ledger.sellerId;
  }

  /** Confirmations a payment needs. */
  get requiredConfirmations(): number {
    return this.confirmations;
  }

  /** The commitment `request` and `salt` make for `def` at this seller; undefined without a well-formed salt. */
  private commitmentOf(def: ServiceDefinition, request: string | undefined, salt: string | undefined): string | undefined {
    return isHex(salt, SALT_BYTES) ? requestCommitment({ sellerId: this.sellerId, serviceId: def.id, request, salt }) : undefined;
  }

  /**
   * Settles `txId` for a call of `def` with `request` (already validated into `input`), waiting
   * up to `waitMs` for the payment to be mined. A payment that does not prove a purchase of this
   * call is a `refused` outcome with its PaymentErrorCode and status (never a throw).
   */
  async settle(def: ServiceDefinition, request: string | undefined, input: unknown, proof: NativePaymentProof, waitMs: number, issue?: IssueContext): Promise<SettleOutcome> {
    try {
      return await this.settleOrThrow(def, request, input, proof, waitMs, issue);
    } catch (e) {
      const status = isNodeError(e) ? PAYMENT_HTTP_STATUS[e.code] : undefined;
      if (!isNodeError(e) || status === undefined) throw e;
      return refusal(status, { ...e.payload, code: e.code, message: e.message }, { rail: 'native', txId: proof.txId });
    }
  }

  /** `settle`, with the refusals thrown as NodeErrors (each check reads as one line). */
  private async settleOrThrow(def: ServiceDefinition, request: string | undefined, input: unknown, proof: NativePaymentProof, waitMs: number, issue: IssueContext | undefined): Promise<SettleOutcome> {
    const { txId, salt } = proof;
    if (!isHex(txId, 32)) throw new NodeError(PaymentErrorCode.INVALID_PAYMENT, 'payment.txId must be the 64-hex-character id of an agent_invoke transaction');
    if (salt !== undefined && !isHex(salt, SALT_BYTES)) throw new NodeError(PaymentErrorCode.INVALID_PAYMENT, `payment.salt must be the ${SALT_BYTES * 2}-hex-character secret the payment's requestHash commits to`);
    const id = txId.toLowerCase();
    const reqHash = this.commitmentOf(def, request, salt);

    // The ledger and the chain are read side by side: most settles are first settles. A payment
    // in the mempool is not in the chain (a block's connect takes what it mined out of it).
    const firstRead = this.mempool.has(id) ? Promise.resolve(undefined) : this.chain.getTx(id);
    firstRead.catch(() => undefined); // awaited below unless the ledger answers first
    const { record: known, absentToken } = await this.ledger.lookup(id);
    if (known) return this.answerKnown(await this.withRefund(known), def, reqHash);

    const stored = await this.waitForPayment(id, waitMs, firstRead);
    if (!stored) {
      if (this.mempool.has(id) || (await this.chain.getTx(id))) return this.pendingOutcome(id);
      throw new NodeError(PaymentErrorCode.PAYMENT_NOT_FOUND, `no transaction ${id} in the chain or the mempool of this node`);
    }
    // A payment the node will never honour (or whose window passed) is refunded, not checked against this call.
    const refused = await this.unhonored?.refuseIfUnhonored(stored);
    if (refused) return this.answerKnown(refused, def, reqHash);
    const invoke = this.checkInvoke(stored, def, reqHash);
    // Mined in a stretch of chain this ledger never judged (a restored backup, a new ledger): it
    // may have been served already; the operator decides (`native-node ledger gap`).
    if (this.unhonored?.inGap(stored.height)) throw new NodeError(PaymentErrorCode.PAYMENT_IN_LEDGER_GAP, `payment ${id} was mined at height ${stored.height}, in a stretch of chain this node's ledger has no record of; it may have been served already, so it is neither served nor refunded until the operator decides`);
    const caller = encodeAddress(stored.tx.from, this.params.hrp);

    const claim = await this.ledger.claim({ id, rail: 'native', serviceId: def.id, requestHash: toHex(invoke.requestHash!), caller, amount: invoke.amount.toString() }, this.now(), absentToken);
    if (!claim.claimed) return this.answerKnown(await this.withRefund(claim.record), def, reqHash);

    const started = this.now();
    try {
      const result = await executeService(def, this.context, input);
      const facts = { rail: 'native', serviceId: def.id, network: `native:${this.params.chainId}`, txId: id, payer: caller, amount: invoke.amount.toString(), asset: 'NATIVE', result } as const;
      const receipt = {
        serviceId: def.id,
        caller,
        amount: nativeNumber(invoke.amount),
        amountBase: invoke.amount.toString(),
        amountNative: formatAmount(invoke.amount),
        txId: id,
        blockHash: stored.blockHash,
        height: stored.height,
        network: this.params.network,
        payTo: this.payTo,
        settledAt: this.now(),
        ...(this.receipts && issue ? await this.receipts.sign(facts, issue) : {}),
      };
      // The ledger unreachable: the result is stored once it is back (the payer's retry gets it), not refunded.
      await this.ends.write(id, 'settled', () => this.ledger.settle(id, result, receipt));
      this.log.info({ txId: id, serviceId: def.id, caller, ms: this.now() - started }, 'paid call settled');
      return { kind: 'paid', status: 200, rail: 'native', body: { paid: true, result, receipt }, response: { success: true, transaction: id, network: this.params.network, payer: caller, ...settlementExtensionsOf(receipt) } };
    } catch (e) {
      if ((e as { code?: unknown }).code === LedgerErrorCode.UNAVAILABLE) throw e;
      const error = e instanceof ServiceError ? { code: e.code, message: e.message } : { code: PaymentErrorCode.SERVICE_FAILED, message: 'the service failed' };
      this.log.warn({ txId: id, serviceId: def.id, err: error.message }, 'paid call failed: refunding');
      const rec = await this.ends.write(id, 'refund', () => this.refunds.refund(id, error));
      return { kind: 'failed', status: 502, rail: 'native', txId: id, body: refundBody(rec, error) };
    }
  }

  /** The answer for a payment the ledger already knows. */
  private answerKnown(rec: PaymentRecord, def: ServiceDefinition, reqHash: string | undefined): SettleOutcome {
    if (rec.refused) throw refusedError(rec);
    // A settle that does not prove the payer (no salt, another request or salt) is answered as a
    // payment nobody settled is (checkInvoke, in its order): only the payer learns whether it was.
    if (rec.serviceId !== def.id) throw new NodeError(PaymentErrorCode.WRONG_SERVICE, `payment is for ${rec.serviceId}, not ${def.id}`);
    if (reqHash === undefined) throw saltRequired();
    if (rec.requestHash !== reqHash) throw requestMismatch();
    switch (rec.status) {
      case 'claimed':
        // A claim a restored ledger holds from before its restore: the lost ledger may have served or refunded it.
        if (this.unhonored?.holdsClaim(rec.id)) throw new NodeError(PaymentErrorCode.PAYMENT_IN_LEDGER_GAP, `payment ${rec.id} was claimed in a ledger restored from a backup since; it may have been served already, so it is neither served nor refunded until the operator decides`);
        throw new NodeError(PaymentErrorCode.SETTLEMENT_IN_PROGRESS, `payment ${rec.id} is being settled; retry in a moment`);
      case 'settled': {
        const receipt = rec.receipt ?? {};
        const network = typeof receipt.network === 'string' ? receipt.network : this.params.network;
        return { kind: 'paid', status: 200, rail: 'native', body: { paid: true, result: rec.result, receipt }, response: { success: true, transaction: rec.id, network, payer: rec.caller, ...settlementExtensionsOf(receipt) } };
      }
      case 'refund_pending':
      case 'refunded':
        return { kind: 'failed', status: 502, rail: 'native', txId: rec.id, body: refundBody(rec, rec.error ?? { code: PaymentErrorCode.SERVICE_FAILED, message: 'the service failed' }) };
      case 'failed': // USDC records only (their ids never look like a tx id)
      case 'settle_pending':
      case 'expired_unsettled':
        throw new NodeError(PaymentErrorCode.PAYMENT_ALREADY_USED, `payment ${rec.id} was already used`);
    }
  }

  /**
   * A settle at a service that is unknown or unavailable here: such a payment can only end in a
   * refund. Answers `payment_refunded` (409) when `txId` names a payment the node refused
   * (refusing it now once it is mined, waiting up to `waitMs` for its block), 202
   * `payment_pending` while it is not mined yet, `payment_not_found` when the node has never seen
   * it (the payer broadcasts it again), and undefined for a payment the node would honour at its
   * own service (the core then answers unknown_service / service_unavailable).
   */
  async settleRefused(txId: string, waitMs: number): Promise<RefusedOutcome | undefined> {
    if (!isHex(txId, 32) || !this.unhonored) return undefined;
    const id = txId.toLowerCase();
    const answer = (e: NodeError) => refusal(PAYMENT_HTTP_STATUS[e.code] ?? 400, { ...e.payload, code: e.code, message: e.message }, { rail: 'native', txId: id });
    const known = await this.ledger.get(id);
    if (known?.refused) return answer(refusedError(await this.withRefund(known)));
    if (known) return undefined;
    const stored = await this.waitForPayment(id, waitMs);
    if (!stored) {
      if (this.mempool.has(id) || (await this.chain.getTx(id))) return refusal(202, { ...this.pendingOutcome(id).body.error, txId: id, retryAfter: this.params.targetSpacing }, { rail: 'native', txId: id });
      return answer(new NodeError(PaymentErrorCode.PAYMENT_NOT_FOUND, `no transaction ${id} in the chain or the mempool of this node`));
    }
    const rec = await this.unhonored.refuseIfUnhonored(stored);
    return rec?.refused ? answer(refusedError(rec)) : undefined;
  }

  /** A refused record with its refund tx id, once the refund being signed right now is (see UnhonoredPayments.withRefund). */
  private withRefund(rec: PaymentRecord): Promise<PaymentRecord> {
    return this.unhonored ? this.unhonored.withRefund(rec) : Promise.resolve(rec);
  }

  /** 202: the payment is not mined with enough confirmations yet. */
  private pendingOutcome(id: string): PendingOutcome {
    return {
      kind: 'pending',
      status: 202,
      rail: 'native',
      body: { paid: false, status: 'payment_pending', txId: id, retryAfter: this.params.targetSpacing, error: { code: PaymentErrorCode.PAYMENT_PENDING, message: `payment ${id} is not mined with ${this.confirmations} confirmation(s) yet; settle again` } },
    };
  }

  /**
   * The mined transaction once it has enough confirmations, or undefined when the wait ran out:
   * up to `waitMs` for a payment this node knows (mempool or too few confirmations), and at most
   * 2 s for one it has never seen (it may still be travelling from another node). `firstRead`:
   * a `getTx` already under way, used as the first look.
   */
  private async waitForPayment(id: string, waitMs: number, firstRead?: Promise<StoredTx | undefined>): Promise<StoredTx | undefined> {
    const start = this.now();
    const deadline = start + Math.max(0, waitMs);
    const unknownDeadline = start + Math.min(Math.max(0, waitMs), 2000);
    let read = firstRead;
    for (;;) {
      const stored = await (read ?? this.chain.getTx(id));
      read = undefined;
      if (stored && this.chain.tip.height - stored.height + 1 >= this.confirmations) return stored;
      const pending = !stored && this.mempool.has(id);
      const limit = stored || pending ? deadline : unknownDeadline;
      if (limit - this.now() <= 0) return undefined;
      if (!pending) {
        await this.nextTipOr(Math.min(250, limit - this.now()));
        continue;
      }
      // In the mempool only a new block can mine it, and the block's 'connect' takes it out of
      // the mempool before the 'tip': wait for tips, reading the chain only once it left.
      do await this.nextTipOr(deadline - this.now());
      while (this.mempool.has(id) && deadline - this.now() > 0);
    }
  }

  /**
   * Resolves at the next tip or after `ms`. All waiting settles share one 'tip' listener: with
   * thousands of calls waiting for their block, a listener each would make every tip and every
   * wake-up walk thousands of listeners.
   */
  private nextTipOr(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.tipWaiters.delete(done);
        if (this.tipWaiters.size === 0) this.chain.off('tip', this.wakeTipWaiters);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      if (this.tipWaiters.size === 0) this.chain.on('tip', this.wakeTipWaiters);
      this.tipWaiters.add(done);
    });
  }

  private readonly tipWaiters = new Set<() => void>();
  /**
   * Wakes the waiting settles oldest first, TIP_WAKE_CHUNK at a time with a turn of the event
   * loop between chunks: a block of 1,500 payments woke 1,500 settles at once, whose reads and
   * writes then interleaved, so even the calls that had waited longest answered only when nearly
   * all were done (the p99 from submit to result was one block interval + ~250 ms at 1,500
   * payments per block). Oldest first, the longest waits end first.
   */
  private readonly wakeTipWaiters = (): void => wakeInChunks([...this.tipWaiters], TIP_WAKE_CHUNK);

  /** Every check of a mined payment against the call. */
  private checkInvoke(stored: StoredTx, def: ServiceDefinition, reqHash: string | undefined): AgentInvokePayload {
    if (stored.tx.type !== TxType.agent_invoke) throw new NodeError(PaymentErrorCode.PAYMENT_NOT_INVOKE, `transaction ${stored.id} is not an agent_invoke`);
    const p = agentInvoke.decodePayload(stored.tx.payload);
    if (p.serviceId !== def.id) throw new NodeError(PaymentErrorCode.WRONG_SERVICE, `payment is for ${p.serviceId}, not ${def.id}`);
    if (!bytesEqual(p.payTo, this.payee.address)) throw new NodeError(PaymentErrorCode.WRONG_PAYEE, `payment goes to ${encodeAddress(p.payTo, this.params.hrp)}, not this node's payee ${this.payTo}`);
    // Prices are fixed per service: the quote of any moment within maxTimeoutSeconds is the current price.
    if (p.amount !== def.priceBase) throw new NodeError(PaymentErrorCode.AMOUNT_MISMATCH, `payment is ${p.amount} base units, the price is ${def.priceBase}`);
    // (An invoke without a commitment to this payee is refused by the watcher before this point.)
    if (p.requestHash && sellerOfCommitment(p.requestHash) !== this.sellerId) {
      throw new NodeError(PaymentErrorCode.WRONG_SELLER, `payment was quoted by seller ${sellerOfCommitment(p.requestHash)}, not by this node's ledger (${this.sellerId}); settle it where it was quoted`);
    }
    if (reqHash === undefined) throw saltRequired();
    if (!p.requestHash || toHex(p.requestHash) !== reqHash) throw requestMismatch();
    return p;
  }
}

/** 402: the payment commits to another request or salt (whether it was settled is not told). */
function requestMismatch(): NodeError {
  return new NodeError(PaymentErrorCode.REQUEST_MISMATCH, 'payment commits to another request or salt (its requestHash differs from the commitment of this request and payment.salt)');
}

/** 400: a settle that does not reveal the payer's salt proves nothing. */
function saltRequired(): NodeError {
  return new NodeError(PaymentErrorCode.INVALID_PAYMENT, `payment.salt is required: the ${SALT_BYTES * 2}-hex-character secret the payment's requestHash commits to (see the quote's extra.commitment)`);
}

/**
 * The 502 body of a payment whose run failed: refunded in a named transaction, or — when the
 * refund could not be sent (the payee cannot cover it now) — `refunded: false, refund: "pending"`
 * with the reason; the node sends it as soon as it can.
 */
export function refundBody(rec: PaymentRecord, error: { code: string; message: string }): RefundedBody {
  if (rec.refundTxId) return { paid: true, refunded: true, refundTxId: rec.refundTxId, error };
  return { paid: true, refunded: false, refund: 'pending', reason: rec.refundStuck ?? 'the refund is being prepared', refundTxId: null, error };
}

/** The `payment_refunded` answer of a refused payment: why, and the refund transaction. */
function refusedError(rec: PaymentRecord): NodeError {
  const reason = rec.error?.code ?? 'refused';
  return new NodeError(PaymentErrorCode.PAYMENT_REFUNDED, `payment ${rec.id} was refunded without a call (${reason}: ${rec.error?.message ?? ''}); pay again for a new call`, {
    txId: rec.id,
    refundTxId: rec.refundTxId ?? null,
    reason,
  });
}
