/**
 * Refunds of the native rail. When a paid service fails, the node signs a `refund` with its
 * payee key, submits it to its mempool and records it (`refund_pending`); once the chain shows
 * the invoke refunded, the record becomes `refunded`. Pending refunds are resumed after a
 * restart, and a payment claimed but never finished (a crash mid-execution) is refunded then.
 * Consensus accepts one refund per invoke, so a refund re-sent after a crash or a reorg can
 * never pay twice.
 */
import { bytesEqual, fromHex, toHex } from '../consensus/hash.js';
import type { Block } from '../consensus/block.js';
import { decodeInvokeRecord, invokeKey } from '../consensus/txTypes/agentInvoke.js';
import { refund as refundType } from '../consensus/txTypes/refund.js';
import { TxType } from '../consensus/tx.js';
import { tryDecodeAddress } from '../consensus/address.js';
import type { HybridKeyPair } from '../consensus/keys.js';
import { submitPayeeTx } from './payeeTx.js';
import { TipFollower } from './tipFollower.js';
import type { ChainParams } from '../consensus/params.js';
import { silentLogger, type ChainEntry, type Logger } from '../chain/types.js';
import type { PaymentRecord, SettlementLedger } from './ledger.js';
import type { PaymentChain, PaymentMempool, Refunder } from './ports.js';

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
}

/** Signs, submits and tracks refunds (see module comment). */
export class RefundManager implements Refunder {
  private readonly pending = new Map<string, PaymentRecord>();
  /** Refunds asked for (`refund`) and not yet in `pending`. */
  private readonly requested = new Set<string>();
  private readonly log: Logger;
  private readonly follower: TipFollower;
  /** A refund of ours leaving the best chain (reorganization): pending again until mined again. */
  private readonly onDisconnect = (_entry: ChainEntry, block: Block) => {
    const ours = block.txs.filter((tx) => tx.type === TxType.refund && bytesEqual(tx.from, this.payee.address));
    if (ours.length) void this.follower.serial(() => this.reopen(ours.map((tx) => toHex(refundType.decodePayload(tx.payload).invokeId))));
  };

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
    this.follower = new TipFollower(chain, () => this.check(), opts.retryMs ?? 30_000, this.log, 'refund');
  }

  private readonly recoverClaims: boolean;

  /** Resumes what a previous run left: claimed payments are refunded, pending refunds re-checked. */
  async start(): Promise<void> {
    for await (const rec of this.ledger.records()) {
      if (rec.rail !== 'native') continue;
      if (rec.status === 'claimed' && this.recoverClaims) {
        this.log.warn({ txId: rec.id, serviceId: rec.serviceId }, 'payment claimed before a restart without a result: refunding');
        const next = await this.ledger.refundPending(rec.id, { code: 'node_restarted', message: 'the node stopped while the service ran; the payment is refunded' });
        this.pending.set(rec.id, next);
      } else if (rec.status === 'refund_pending') {
        this.pending.set(rec.id, rec);
      }
    }
    this.chain.on('disconnect', this.onDisconnect);
    await this.follower.start();
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
        const rec = await this.send(await this.ledger.refundPending(id, error));
        this.pending.set(id, rec);
        return rec;
      })
      .finally(() => this.requested.delete(id));
  }

  /**
   * Signs and submits the refund of one invoke; returns the record, naming the refund tx when it
   * entered the mempool. The tx id is written to the ledger before the tx leaves (write-ahead):
   * a crash right after the submission still knows which refund is under way, so the restart
   * waits for that one instead of sending a second one that consensus would refuse.
   */
  private async send(rec: PaymentRecord): Promise<PaymentRecord> {
    const error = rec.error ?? { code: 'service_failed', message: 'refund' };
    const invokeId = fromHex(rec.id);
    const to = tryDecodeAddress(rec.caller, this.params.hrp);
    if (!to) {
      this.log.error({ txId: rec.id, caller: rec.caller }, 'cannot refund: caller address does not decode');
      return rec;
    }
    let written = rec;
    try {
      const id = await submitPayeeTx(this.chain, this.mempool, this.payee, this.params, TxType.refund, refundType.encodePayload({ invokeId, to, amount: BigInt(rec.amount) }), async (txId) => {
        written = await this.ledger.refundPending(rec.id, error, txId);
      });
      this.log.info({ invoke: rec.id, refundTxId: id, amount: rec.amount }, 'refund submitted');
      return written;
    } catch (e) {
      const code = (e as { code?: string }).code;
      const stuck = code === 'tx_insufficient_funds' ? `the payee cannot cover the refund and its fee yet (${(e as Error).message})` : `the refund could not be submitted yet (${code ?? (e as Error).message})`;
      this.log.warn({ invoke: rec.id, amount: rec.amount, err: (e as Error).message }, 'refund could not be submitted yet');
      // Not in any mempool: name no refund (the next check sends a new one).
      return this.ledger.refundPending(rec.id, error, '', stuck);
    }
  }

  /**
   * Refunds owed but not sent (no refund tx in flight: the payee's balance did not cover them, or
   * the mempool refused them), with their total: the node stops quoting while there are any.
   */
  stuck(): { count: number; amountBase: bigint } {
    let count = 0;
    let amountBase = 0n;
    for (const rec of this.pending.values()) {
      if (rec.refundTxId || !rec.refundStuck) continue;
      count++;
      amountBase += BigInt(rec.amount);
    }
    return { count, amountBase };
  }

  /** Refunded records whose refund left the best chain become pending again (`check` re-sends when needed). */
  private async reopen(invokeIds: string[]): Promise<void> {
    for (const id of invokeIds) {
      const rec = await this.ledger.get(id);
      if (rec?.status !== 'refunded') continue;
      this.log.warn({ invoke: id, refundTxId: rec.refundTxId }, 'refund disconnected by a reorganization: pending again');
      this.pending.set(id, await this.ledger.refundPending(id, rec.error ?? { code: 'service_failed', message: 'refund' }, rec.refundTxId));
    }
  }

  /** Marks mined refunds, re-sends lost ones. */
  private async check(): Promise<void> {
    for (const [id, rec] of [...this.pending]) {
      const view = await this.chain.getStateView([invokeKey(fromHex(id))]);
      const raw = view.get(invokeKey(fromHex(id)));
      if (raw && decodeInvokeRecord(raw).refunded) {
        const done = await this.ledger.refunded(id, rec.refundTxId ?? '');
        this.pending.delete(id);
        this.log.info({ invoke: id, refundTxId: done.refundTxId }, 'refund mined');
        continue;
      }
      if (rec.refundTxId && this.mempool.has(rec.refundTxId)) continue;
      if (rec.refundTxId && (await this.chain.getTx(rec.refundTxId))) continue;
      // Never submitted, dropped from the mempool, or disconnected by a reorg: send again.
      this.pending.set(id, await this.send(rec));
    }
  }

  /** Ids of payments whose refund is not mined yet (asked for, being sent, or sent). */
  pendingIds(): string[] {
    return [...new Set([...this.pending.keys(), ...this.requested])];
  }
}
