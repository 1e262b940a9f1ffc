/**
 * Provider payouts: after a provider agent's service settled a payment (the caller got
 * the result with the receipt), the node pays the agent the price minus the node fee
 * (`params.providers.nodeFeeBps`) in NATIVE.
 *
 * Native-rail calls: a `provider_payout` transaction naming the invoke. Exactly once, even across
 * restarts and reorgs: consensus accepts one payout per invoke and none for a refunded invoke
 * (consensus/txTypes/providerPayout.ts), so such a payout may be re-sent freely.
 *
 * USDC-rail calls have no invoke on this chain (the caller paid USDC on Base): the provider gets
 * the same NATIVE share of the service's NATIVE price, by a plain `transfer` from the payee.
 * Consensus cannot tell a second transfer from the first, so exactly-once is kept here: the signed
 * transfer's bytes are stored before it leaves (write-ahead) and only those bytes are sent again
 * while their nonce is unused; a new transfer is signed only once the payee's nonce has moved
 * past the stored one and the stored transfer is not on the chain (it never can be then).
 * A store restored from a backup (the ledger holds a gap, x402/ledger/restore.ts) may have
 * forgotten a transfer signed after the backup: before signing one then, the provider's account
 * history is read from the height the payout was owed at (`owedHeight`; the claim's time for older
 * records), and a payee → provider transfer of exactly its amount that no payout record names is
 * taken as this payout's (marked paid, nothing signed: the provider is owed a count of such
 * transfers, whichever payment each was signed for); one waiting in the mempool, or a chain
 * without account history, holds the payout (logged, re-checked on every tip), never signing a
 * second. Without a gap nothing of this runs.
 *
 * Native payouts are stored before they leave too (write-ahead): a signer that takes over re-sends
 * the very payout the previous one signed while its nonce is unused, instead of signing a second.
 * Nonces come from the payee's one allocator, shared with refunds (x402/native/payeeNonces.ts): a
 * payment's payout holds one nonce until the chain uses it, and no other transaction takes it.
 * The manager keeps one in-memory record per payout: a reload (`resume`, `adoptOwed`) adds only
 * payouts it does not know, and a send reads the store first.
 *
 * The store (`PayoutStore`, x402/providers/payoutStore.ts: owed → submitted → paid) remembers what
 * is owed: one node keeps it in its providers database (`o:<payment id>`,
 * x402/providers/levelPayoutStore.ts); a fleet on a PostgreSQL ledger shares it in the
 * ledger's database (`provider_payouts`, x402/providers/pgPayoutStore.ts), so the node that served a call
 * owes it (`oweLater`) whether or not it holds the signer lease, and whichever node holds the lease
 * sends it (`adoptOwed`) — before, each node kept its own store: a provider call another node
 * served was owed only at the next lease change, and a USDC call's payout was paid again by each
 * new holder. At start every settled provider payment of the ledger without a payout record is
 * owed again (a crash between the settlement and `owe`), and what is not mined yet is re-checked
 * on every tip and re-sent when its transaction was lost.
 */
import type { Level } from 'level';
import { tryDecodeAddress } from '../../consensus/address.js';
import { bytesEqual, fromHex, toHex } from '../../consensus/hash.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import type { ChainParams } from '../../consensus/params.js';
import { TxType } from '../../consensus/tx.js';
import { providerPayout } from '../../consensus/txTypes/providerPayout.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { NATIVE } from '../../consensus/ledger.js';
import { silentLogger, type Logger } from '../../chain/types.js';
import type { PaymentRecord, SettlementLedger } from '../ledger/ledger.js';
import { readGaps } from '../ledger/restore.js';
import { decorateCall, type PaidCallCore } from '../core/paidCall.js';
import { resubmitPayeeTx, submitPayeeTx } from '../native/payeeTx.js';
import { chainEnd } from '../native/gapRefunds.js';
import type { PayeeNonces } from '../native/payeeNonces.js';
import { TipFollower } from '../native/tipFollower.js';
import type { PaymentChain, PaymentMempool } from '../core/ports.js';
import { levelPayoutStore } from './levelPayoutStore.js';
import type { PayoutEntry, PayoutStore } from './payoutStore.js';

/** Where a provider service's payouts go (from the live registry). */
export interface PayoutDirectory {
  /** The payout address of the agent selling `serviceId`, or undefined when it is not a provider service. */
  payoutAddressOf(serviceId: string): string | undefined;
  /** The service's NATIVE price, base units: a USDC payment found settled at start without a payout record is owed its share of it. */
  priceBaseOf?(serviceId: string): bigint | undefined;
}

/** The provider's share of `amount` after the node fee in basis points (the fee rounds down). */
export function splitPayout(amount: bigint, feeBps: number): { provider: bigint; fee: bigint } {
  const fee = (amount * BigInt(feeBps)) / 10_000n;
  return { provider: amount - fee, fee };
}

/** Options of the payout manager. */
export interface PayoutOptions {
  /** How often unmined payouts are re-checked and re-sent, ms. */
  readonly retryMs?: number;
  readonly logger?: Logger;
  /** Where the records live (default: the providers database given to the constructor); a fleet passes the shared one. */
  readonly store?: PayoutStore;
  /** The payee's nonce allocator, shared with refunds (default: an in-memory one per mempool and payee key). */
  readonly nonces?: PayeeNonces;
}

/** How long a ledger found without gaps is taken as such before the marks are read again, ms (a found gap is kept: a restore stays a fact). */
const GAPS_RECHECK_MS = 2_000;
/** Blocks below a USDC payout's `owedHeight` still searched for its transfer (a fleet node owing it on a chain a little ahead). */
const OWED_HEIGHT_MARGIN = 10;
/** Seconds before a USDC payment's claim still searched for its payout's transfer when its record has no `owedHeight` (block times may run early). */
const CLAIM_TIME_MARGIN_S = 7_200;
/** Rows per page of the provider's account history read after a restore. */
const HISTORY_PAGE = 500;
/** Transaction ids of payout records this manager wrote or read, kept to spare a whole-store read after a restore (the oldest dropped first). */
const KNOWN_TX_IDS = 10_000;

/** The purpose of a payment's payout in the payee's nonce allocator (x402/native/payeeNonces.ts). */
export const payoutPurpose = (paymentId: string): string => `payout:${paymentId.toLowerCase()}`;

/** Owes, sends and tracks provider payouts (see module comment). */
export class PayoutManager {
  private readonly open = new Map<string, PayoutEntry>();
  /** Payments being owed right now (between the store read and the first write): a racing `owe` of the same one returns. */
  private readonly owing = new Set<string>();
  private readonly paidByService = new Map<string, bigint>();
  private readonly log: Logger;
  private readonly follower: TipFollower;
  private readonly store: PayoutStore;

  constructor(
    db: Level<string, string>,
    private readonly chain: PaymentChain,
    private readonly mempool: PaymentMempool,
    private readonly ledger: SettlementLedger,
    private readonly payee: HybridKeyPair,
    private readonly params: ChainParams,
    private readonly directory: PayoutDirectory,
    opts: PayoutOptions = {},
  ) {
    this.log = opts.logger ?? silentLogger;
    this.follower = new TipFollower(chain, () => this.check(), opts.retryMs ?? 30_000, this.log, 'payout');
    this.store = opts.store ?? levelPayoutStore(db);
    this.nonces = opts.nonces;
  }

  private readonly nonces: PayeeNonces | undefined;
  /** The ledger holds a gap (restored from a backup, or new on an old chain): kept once found. */
  private restored = false;
  /** When the ledger's gaps were last read without finding one, Unix ms. */
  private gapsReadAt = 0;
  /** USDC payouts held after a restore (logged once each). */
  private readonly held = new Set<string>();
  /** Ids of transactions a payout record named since `resume()` (see `KNOWN_TX_IDS`). */
  private readonly knownTx = new Set<string>();
  /** `resume()` ran since the last `stop()`: `start()` does not load again. */
  private resumed = false;

  /**
   * Loads the open payouts (a fleet's new signer: those every node owed) and sends the stored
   * transactions among them again, signing nothing: a fleet's new signer calls it before it signs
   * anything new. Payouts already known (one being owed right now, say) keep their one in-memory
   * record: a reload never makes a second record of a payout, whose send would sign a second transaction.
   */
  async resume(): Promise<void> {
    this.paidByService.clear();
    for (const [serviceId, amount] of await this.store.paidTotals()) this.paidByService.set(serviceId, amount);
    await this.follower.serial(async () => {
      this.adopt(await this.store.open());
      await this.check({ sign: false });
    });
    this.resumed = true;
  }

  /**
   * Resumes (unless `resume()` just did), owes what a crash left out, and starts following the
   * tip (its first check re-sends stored payouts before signing new ones).
   */
  async start(): Promise<void> {
    if (!this.resumed) await this.resume();
    for await (const rec of this.ledger.records()) if (!this.open.has(rec.id)) await this.oweSettled(rec);
    await this.follower.start();
  }

  /** Open payouts read from the store that this manager does not know yet (see `resume`); answers how many. */
  private adopt(entries: readonly PayoutEntry[]): number {
    let n = 0;
    for (const e of entries) {
      if (this.open.has(e.invokeId) || this.owing.has(e.invokeId)) continue;
      if (e.txId) this.know(e.txId);
      this.open.set(e.invokeId, e);
      n++;
    }
    return n;
  }

  /** A fleet's signer: takes over the payouts other nodes owed since (and sends them). */
  async adoptOwed(): Promise<void> {
    // In the queue: a read racing a check that marks a payout paid would bring it back open.
    await this.follower.serial(async () => {
      if (this.adopt(await this.store.open())) await this.check();
    });
  }

  /**
   * Owes the provider its share of a settled payment known only from the ledger: one a crash left
   * without a payout record, or a USDC payment the reconciler found settled on Base after the call.
   */
  async oweSettled(rec: PaymentRecord): Promise<void> {
    const owed = this.owedFor(rec);
    if (owed) await this.owe(rec.id, rec.serviceId, owed.amount, owed.rail);
  }

  /** The NATIVE amount a settled provider payment owes its provider a share of, and its rail; undefined for any other record. */
  private owedFor(rec: PaymentRecord): { amount: bigint; rail: 'native' | 'usdc' } | undefined {
    if (rec.status !== 'settled' || !this.directory.payoutAddressOf(rec.serviceId)) return undefined;
    if (rec.rail === 'native') return { amount: BigInt(rec.amount), rail: 'native' };
    // The USDC record holds the USDC amount; the payout is a share of the NATIVE price (the current one: the call's was not kept).
    const price = this.directory.priceBaseOf?.(rec.serviceId);
    return price === undefined ? undefined : { amount: price, rail: 'usdc' };
  }

  /**
   * A fleet node that does not sign, at its start: records the payouts owed for provider payments
   * settled before `before` (Unix ms) that have none — a node that died between a settlement and
   * its `oweLater` — for the lease holder to send (`adoptOwed`). The holder's own start does the
   * same and sends them (`start`); without this a non-signer's gap waited for the lease to move.
   * Idempotent: a payout already recorded is left as it is. Answers how many were recorded now.
   */
  async recordLeftOut(before: number): Promise<number> {
    let n = 0;
    for await (const rec of this.ledger.records()) {
      const owed = rec.updatedAt < before ? this.owedFor(rec) : undefined;
      if (owed && (await this.record(rec.id.toLowerCase(), rec.serviceId, owed.amount, owed.rail))) {
        this.log.warn({ payment: rec.id, serviceId: rec.serviceId }, 'provider payout owed for a payment settled without one (its node stopped in between)');
        n++;
      }
    }
    return n;
  }

  /** Stops following the tip; what is open is read from the store again at the next `resume()` (another signer may have sent it meanwhile). */
  stop(): void {
    this.follower.stop();
    this.open.clear();
    this.knownTx.clear();
    this.resumed = false;
  }

  /** Waits for queued work. */
  async idle(): Promise<void> {
    await this.follower.idle();
  }

  /**
   * Records that the provider of `serviceId` is owed its share of `amount` NATIVE base units for
   * the settled payment `paymentId` (the invoke's hex tx id, or the USDC authorization's ledger id
   * with `rail` 'usdc'), and sends the payout. Idempotent: a payment is owed once.
   */
  async owe(paymentId: string, serviceId: string, amount: bigint, rail: 'native' | 'usdc' = 'native'): Promise<void> {
    const id = paymentId.toLowerCase();
    if (this.open.has(id) || this.owing.has(id)) return;
    this.owing.add(id);
    let entry: PayoutEntry | undefined;
    try {
      entry = await this.record(id, serviceId, amount, rail);
      if (entry?.status === 'owed') this.open.set(id, entry);
    } finally {
      this.owing.delete(id);
    }
    // Sent by a check meanwhile (it found the payout without a transaction): nothing more to do.
    // Checked against the chain first, as a check does: a native payout already mined (owed again by a ledger restored
    // from a backup) is marked paid, never signed a second time (consensus refuses it, and its nonce would hold the payee's back).
    if (entry?.status === 'owed') await this.follower.serial(async () => (entry.status === 'owed' && !entry.txId && (await this.checkStored(entry)) ? this.send(entry) : undefined));
  }

  /**
   * Records the payout owed for a call this node served without sending it: a fleet node without
   * the signer lease; the holder sends it (`adoptOwed`). Idempotent, like `owe`.
   */
  async oweLater(paymentId: string, serviceId: string, amount: bigint, rail: 'native' | 'usdc' = 'native'): Promise<void> {
    await this.record(paymentId.toLowerCase(), serviceId, amount, rail);
  }

  /** Writes the payment's payout record unless it has one; answers it when written now. */
  private async record(id: string, serviceId: string, amount: bigint, rail: 'native' | 'usdc'): Promise<PayoutEntry | undefined> {
    const to = this.directory.payoutAddressOf(serviceId);
    if (!to) return undefined;
    const split = splitPayout(amount, this.params.providers.nodeFeeBps);
    // A price the fee takes whole: nothing to send.
    const entry: PayoutEntry = {
      invokeId: id,
      ...(rail === 'usdc' ? { rail } : {}),
      serviceId,
      to,
      amount: split.provider.toString(),
      fee: split.fee.toString(),
      status: split.provider === 0n ? 'paid' : 'owed',
      ...(rail === 'usdc' ? { owedHeight: this.chain.tip.height } : {}),
    };
    return (await this.store.create(entry)) ? entry : undefined;
  }

  /** Base units paid out (mined) to the provider of a service since this database began. */
  paidOut(serviceId: string): bigint {
    return this.paidByService.get(serviceId) ?? 0n;
  }

  /** Invoke ids whose payout is not mined yet. */
  pendingIds(): string[] {
    return [...this.open.keys()];
  }

  private async send(entry: PayoutEntry): Promise<void> {
    const to = tryDecodeAddress(entry.to, this.params.hrp);
    if (!to) {
      this.log.error({ invoke: entry.invokeId, to: entry.to }, 'cannot pay out: address does not decode');
      return;
    }
    try {
      // The store is the payout's truth: written since this record was read (another signer, a
      // previous attempt), its transaction is re-sent and checked (`check`), not signed again.
      const stored = await this.store.get(entry.invokeId);
      if (stored && (stored.status === 'paid' || stored.status === 'cancelled' || (stored.txId !== undefined && stored.txId !== entry.txId))) {
        Object.assign(entry, stored);
        if (stored.status !== 'owed' && stored.status !== 'submitted') this.open.delete(entry.invokeId);
        return;
      }
      // Write-ahead: the record names this very transaction, and keeps its bytes, before it can reach the network.
      const writeAhead = async (id: string, bytes: Uint8Array) => {
        entry.txId = id;
        entry.raw = toHex(bytes);
        entry.status = 'submitted';
        await this.save(entry);
        this.know(id);
      };
      if (entry.rail === 'usdc') {
        // After a restore the store may have forgotten a transfer already made: found on the chain, it is this payout's.
        if (await this.restoredLedger()) {
          const found = await this.unrecordedTransfer(entry, to);
          if (found !== undefined && found.txId !== undefined) {
            entry.txId = found.txId;
            delete entry.raw;
            this.held.delete(entry.invokeId);
            this.log.warn({ payment: entry.invokeId, payoutTxId: found.txId, to: entry.to, amount: entry.amount }, 'provider payout (usdc call) found on the chain though the restored ledger did not record it: marked paid, not signed again');
            await this.markPaid(entry);
            return;
          }
          if (found !== undefined) {
            if (!this.held.has(entry.invokeId)) this.log.warn({ payment: entry.invokeId, to: entry.to, amount: entry.amount, reason: found.hold }, 'provider payout (usdc call) held after a ledger restore: it may have been paid already; check the payee\'s transfers to this provider');
            this.held.add(entry.invokeId);
            return;
          }
          this.held.delete(entry.invokeId);
        }
        const payload = transfer.encodePayload({ to, amount: BigInt(entry.amount) });
        await submitPayeeTx(this.chain, this.mempool, this.payee, this.params, TxType.transfer, payload, writeAhead, { purpose: payoutPurpose(entry.invokeId), nonces: this.nonces });
        this.log.info({ payment: entry.invokeId, payoutTxId: entry.txId, amount: entry.amount, to: entry.to }, 'provider payout (usdc call) submitted');
        return;
      }
      const payload = providerPayout.encodePayload({ invokeId: fromHex(entry.invokeId), to, amount: BigInt(entry.amount) });
      await submitPayeeTx(this.chain, this.mempool, this.payee, this.params, TxType.provider_payout, payload, writeAhead, { purpose: payoutPurpose(entry.invokeId), nonces: this.nonces });
      this.log.info({ invoke: entry.invokeId, payoutTxId: entry.txId, amount: entry.amount, to: entry.to }, 'provider payout submitted');
    } catch (e) {
      this.log.warn({ invoke: entry.invokeId, err: (e as Error).message }, 'provider payout could not be submitted yet');
    }
  }

  /** Marks mined payouts, re-sends lost ones; then (unless `sign` is false) signs those without a transaction that can still be mined. */
  private async check({ sign = true }: { sign?: boolean } = {}): Promise<void> {
    // Stored transactions go back first: a new one signed before them would take the nonce they hold.
    const resign: PayoutEntry[] = [];
    for (const entry of [...this.open.values()]) if (await this.checkStored(entry)) resign.push(entry);
    if (!sign) return;
    for (const entry of resign) await this.send(entry);
  }

  /**
   * One open payout: mined → paid (a native one: the chain names a payout of its invoke; cancelled
   * once the invoke was refunded instead); lost with its nonce unused → the same bytes again
   * (`resubmitPayeeTx`, shared with refunds). Returns true when a new transaction is to be signed:
   * none yet, or its nonce was used by another tx (it can never be mined then).
   */
  private async checkStored(entry: PayoutEntry): Promise<boolean> {
    if (entry.rail !== 'usdc') {
      const end = await chainEnd(this.chain, entry.invokeId);
      if (end === 'paid_out') {
        await this.markPaid(entry);
        return false;
      }
      if (end === 'refunded') {
        entry.status = 'cancelled';
        await this.save(entry);
        this.open.delete(entry.invokeId);
        this.log.warn({ invoke: entry.invokeId }, 'provider payout cancelled: the invoke was refunded');
        return false;
      }
    }
    const state = await resubmitPayeeTx(this.chain, this.mempool, this.payee, entry, (e) => this.log.warn({ payment: entry.invokeId, payoutTxId: entry.txId, err: e.message }, 'provider payout not accepted yet'), {
      purpose: payoutPurpose(entry.invokeId),
      nonces: this.nonces,
    });
    // A native payout mined is marked paid by the chain's payout record (the next check reads it).
    if (state === 'mined' && entry.rail === 'usdc') await this.markPaid(entry);
    if (state !== 'lost') return false;
    if (entry.raw) this.log.warn({ payment: entry.invokeId, lostTxId: entry.txId }, 'provider payout lost (its nonce was used by another tx): signing a new one');
    return true;
  }

  /** Whether the ledger holds a gap (x402/ledger/restore.ts): restored from a backup, the payout store may be behind the chain. */
  private async restoredLedger(): Promise<boolean> {
    if (this.restored) return true;
    if (Date.now() - this.gapsReadAt < GAPS_RECHECK_MS) return false;
    this.restored = (await readGaps(this.ledger)).length > 0;
    this.gapsReadAt = Date.now();
    return this.restored;
  }

  /**
   * A USDC payout about to be signed on a restored ledger: a payee → provider transfer of exactly
   * its amount, mined at or after the height it was owed at (its claim's time for records without
   * one), that no payout record names, was signed by the lost ledger's payouts: answers its id (the
   * payout is paid). `hold` when that cannot be told (no account history on this chain, no
   * start for the search, or such a transfer waiting in the mempool); undefined: none, sign.
   */
  private async unrecordedTransfer(entry: PayoutEntry, to: Uint8Array): Promise<{ txId?: string; hold?: string } | undefined> {
    const economy = this.chain.economy;
    if (!economy) return { hold: 'no account history on this chain' };
    let fromHeight: number | undefined;
    let fromTime: number | undefined;
    if (entry.owedHeight !== undefined) fromHeight = Math.max(0, entry.owedHeight - OWED_HEIGHT_MARGIN);
    else {
      const rec = await this.ledger.get(entry.invokeId);
      if (!rec) return { hold: 'no ledger record to date the payment' };
      fromTime = Math.floor(rec.claimedAt / 1000) - CLAIM_TIME_MARGIN_S;
    }
    const payeeHex = toHex(this.payee.address);
    const mined: string[] = [];
    let before: string | undefined;
    scan: for (;;) {
      const rows = await economy.history(to, { before, limit: HISTORY_PAGE });
      for (const r of rows) {
        if ((fromHeight !== undefined && Number(r.height) < fromHeight) || (fromTime !== undefined && Number(r.time) < fromTime)) break scan;
        if (r.kind === 'transfer_in' && r.asset === NATIVE && r.counterparty === payeeHex && r.amount === entry.amount) mined.push(String(r.tx));
      }
      if (rows.length < HISTORY_PAGE) break;
      before = String(rows[rows.length - 1]!.cursor);
    }
    const amount = BigInt(entry.amount);
    const pending: string[] = [];
    for (const e of this.mempool.list()) {
      if (e.tx.type !== TxType.transfer || !bytesEqual(e.tx.from, this.payee.address)) continue;
      const p = transfer.decodePayload(e.tx.payload);
      if (p.amount === amount && bytesEqual(p.to, to)) pending.push(e.id);
    }
    // The store is read only for transactions this manager has not seen named (a whole-store read).
    const unknown = [...mined, ...pending].filter((id) => !this.knownTx.has(id));
    if (unknown.length === 0) return undefined;
    const named = await this.store.namedTxIds(unknown);
    for (const id of named) this.know(id);
    // Oldest first: one transfer per payout, whichever payment it was signed for (the provider is owed a count of them).
    const free = mined.reverse().find((id) => !this.knownTx.has(id));
    if (free !== undefined) return { txId: free };
    if (pending.some((id) => !this.knownTx.has(id))) return { hold: 'a transfer no payout record names is waiting in the mempool' };
    return undefined;
  }

  private know(txId: string): void {
    this.knownTx.delete(txId);
    this.knownTx.add(txId);
    if (this.knownTx.size > KNOWN_TX_IDS) this.knownTx.delete(this.knownTx.keys().next().value!);
  }

  private async markPaid(entry: PayoutEntry): Promise<void> {
    if (entry.txId) this.know(entry.txId);
    entry.status = 'paid';
    await this.save(entry);
    this.open.delete(entry.invokeId);
    this.count(entry);
    this.log.info({ payment: entry.invokeId, payoutTxId: entry.txId }, 'provider payout mined');
  }

  private count(e: PayoutEntry): void {
    this.paidByService.set(e.serviceId, (this.paidByService.get(e.serviceId) ?? 0n) + BigInt(e.amount));
  }

  private async save(e: PayoutEntry): Promise<void> {
    await this.store.put(e);
  }
}

/**
 * The paid-call core with provider payouts: a call of a provider service that ends `paid`, on
 * either rail, owes the provider its share of the quoted NATIVE price (idempotent per payment, so
 * a repeated settle owes nothing more). Transports use the returned core exactly like the plain one.
 */
export function withProviderPayouts(core: PaidCallCore, payouts: Pick<PayoutManager, 'owe'>, isProviderService: (serviceId: string) => boolean, log: Logger = silentLogger): PaidCallCore {
  return decorateCall(core, async (c) => {
    const o = await core.call(c);
    if (o.kind === 'paid' && isProviderService(c.serviceId)) {
      const paymentId = o.paymentId ?? String(o.body.receipt.txId);
      try {
        await payouts.owe(paymentId, c.serviceId, BigInt(o.quote.accepts.find((a) => a.scheme === 'native-x402')?.maxAmountRequired ?? '0'), o.rail);
      } catch (e) {
        // Owed again from the ledger at the next start.
        log.error({ paymentId, serviceId: c.serviceId, err: e }, 'could not record a provider payout');
      }
    }
    return o;
  });
}
