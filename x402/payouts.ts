/**
 * Provider payouts (issue 17): after a provider agent's service settled a payment (the caller got
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
 *
 * The store (`o:<payment id>` in the providers database: owed → submitted → paid) remembers what
 * is owed; at start every settled provider payment of the ledger without a payout record is owed
 * again (a crash between the settlement and `owe`), and what is not mined yet is re-checked on
 * every tip and re-sent when its transaction was lost.
 */
import type { Level } from 'level';
import { tryDecodeAddress } from '../consensus/address.js';
import { fromHex, toHex } from '../consensus/hash.js';
import type { HybridKeyPair } from '../consensus/keys.js';
import type { ChainParams } from '../consensus/params.js';
import { getPayout, payoutKey } from '../consensus/registryState.js';
import { decodeTx, TxType } from '../consensus/tx.js';
import { providerPayout } from '../consensus/txTypes/providerPayout.js';
import { transfer } from '../consensus/txTypes/transfer.js';
import { decodeInvokeRecord, invokeKey } from '../consensus/txTypes/agentInvoke.js';
import { silentLogger, type Logger } from '../chain/types.js';
import type { PaymentRecord, SettlementLedger } from './ledger.js';
import { decorateCall, type PaidCallCore } from './paidCall.js';
import { submitPayeeTx } from './payeeTx.js';
import { TipFollower } from './tipFollower.js';
import type { PaymentChain, PaymentMempool } from './ports.js';

/** A payout's record (JSON; amounts as base-unit strings). */
export interface PayoutEntry {
  /** The payment's ledger id: the invoke's tx id (hex), or the USDC authorization's id (`rail: 'usdc'`). */
  readonly invokeId: string;
  /** `usdc`: paid by a plain transfer (no invoke to name); absent: a `provider_payout` of the invoke. */
  readonly rail?: 'usdc';
  readonly serviceId: string;
  /** The agent's payout address. */
  readonly to: string;
  /** Price minus the node fee, base units. */
  readonly amount: string;
  /** The node's fee, base units. */
  readonly fee: string;
  /** `cancelled`: the invoke was refunded (the call was not delivered after all): nothing is owed. */
  status: 'owed' | 'submitted' | 'paid' | 'cancelled';
  txId?: string;
  /** USDC rail: hex bytes of the signed transfer, stored before it was submitted (re-sent as is while its nonce is unused). */
  raw?: string;
}

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
}

/** Owes, sends and tracks provider payouts (see module comment). */
export class PayoutManager {
  private readonly open = new Map<string, PayoutEntry>();
  /** Payments being owed right now (between the store read and the first write): a racing `owe` of the same one returns. */
  private readonly owing = new Set<string>();
  private readonly paidByService = new Map<string, bigint>();
  private readonly log: Logger;
  private readonly follower: TipFollower;

  constructor(
    private readonly db: Level<string, string>,
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
  }

  /** Loads open payouts, owes what a crash left out, and starts following the tip. */
  async start(): Promise<void> {
    const known = new Set<string>();
    for await (const [, v] of this.db.iterator({ gte: 'o:', lt: 'o;' })) {
      const e = JSON.parse(v) as PayoutEntry;
      known.add(e.invokeId);
      if (e.status === 'paid') this.count(e);
      else if (e.status !== 'cancelled') this.open.set(e.invokeId, e);
    }
    for await (const rec of this.ledger.records()) if (!known.has(rec.id)) await this.oweSettled(rec);
    await this.follower.start();
  }

  /**
   * Owes the provider its share of a settled payment known only from the ledger: one a crash left
   * without a payout record, or a USDC payment the reconciler found settled on Base after the call.
   */
  async oweSettled(rec: PaymentRecord): Promise<void> {
    if (rec.status !== 'settled' || !this.directory.payoutAddressOf(rec.serviceId)) return;
    if (rec.rail === 'native') return this.owe(rec.id, rec.serviceId, BigInt(rec.amount));
    // The USDC record holds the USDC amount; the payout is a share of the NATIVE price (the current one: the call's was not kept).
    const price = this.directory.priceBaseOf?.(rec.serviceId);
    if (price !== undefined) await this.owe(rec.id, rec.serviceId, price, 'usdc');
  }

  stop(): void {
    this.follower.stop();
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
    let entry: PayoutEntry;
    try {
      if ((await this.db.get(`o:${id}`)) !== undefined) return;
      const to = this.directory.payoutAddressOf(serviceId);
      if (!to) return;
      const split = splitPayout(amount, this.params.providers.nodeFeeBps);
      entry = { invokeId: id, ...(rail === 'usdc' ? { rail } : {}), serviceId, to, amount: split.provider.toString(), fee: split.fee.toString(), status: 'owed' };
      await this.save(entry);
      this.open.set(id, entry);
    } finally {
      this.owing.delete(id);
    }
    if (entry.amount === '0') {
      // A price the fee takes whole: nothing to send.
      entry.status = 'paid';
      await this.save(entry);
      this.open.delete(id);
      return;
    }
    await this.follower.serial(() => this.send(entry));
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
      if (entry.rail === 'usdc') {
        // Write-ahead: the record names this very transfer before it can reach the network.
        const payload = transfer.encodePayload({ to, amount: BigInt(entry.amount) });
        await submitPayeeTx(this.chain, this.mempool, this.payee, this.params, TxType.transfer, payload, async (id, bytes) => {
          entry.txId = id;
          entry.raw = toHex(bytes);
          entry.status = 'submitted';
          await this.save(entry);
        });
        this.log.info({ payment: entry.invokeId, payoutTxId: entry.txId, amount: entry.amount, to: entry.to }, 'provider payout (usdc call) submitted');
        return;
      }
      const payload = providerPayout.encodePayload({ invokeId: fromHex(entry.invokeId), to, amount: BigInt(entry.amount) });
      entry.txId = await submitPayeeTx(this.chain, this.mempool, this.payee, this.params, TxType.provider_payout, payload);
      entry.status = 'submitted';
      await this.save(entry);
      this.log.info({ invoke: entry.invokeId, payoutTxId: entry.txId, amount: entry.amount, to: entry.to }, 'provider payout submitted');
    } catch (e) {
      this.log.warn({ invoke: entry.invokeId, err: (e as Error).message }, 'provider payout could not be submitted yet');
    }
  }

  /** Marks mined payouts, re-sends lost ones. */
  private async check(): Promise<void> {
    // Stored transfers go back first: a new one signed before them would take the nonce they hold.
    const resign: PayoutEntry[] = [];
    for (const entry of [...this.open.values()]) if (entry.rail === 'usdc' && (await this.checkTransfer(entry))) resign.push(entry);
    for (const entry of resign) await this.send(entry);
    for (const entry of [...this.open.values()]) {
      if (entry.rail === 'usdc') continue;
      const invoke = fromHex(entry.invokeId);
      const view = await this.chain.getStateView([payoutKey(invoke), invokeKey(invoke)]);
      if (!getPayout(view, invoke) && (() => { const raw = view.get(invokeKey(invoke)); return raw ? decodeInvokeRecord(raw).refunded : false; })()) {
        entry.status = 'cancelled';
        await this.save(entry);
        this.open.delete(entry.invokeId);
        this.log.warn({ invoke: entry.invokeId }, 'provider payout cancelled: the invoke was refunded');
        continue;
      }
      if (getPayout(view, invoke)) {
        await this.markPaid(entry);
        continue;
      }
      if (entry.txId && this.mempool.has(entry.txId)) continue;
      if (entry.txId && (await this.chain.getTx(entry.txId))) continue;
      await this.send(entry);
    }
  }

  /**
   * A USDC call's payout: mined → paid; lost with its nonce unused → the same bytes again. Returns
   * true when a new transfer is to be signed: none yet, or its nonce was used by another tx.
   *
   * The payee's nonce is read before the transfer is looked up: a block mining the transfer
   * between the two reads then shows it mined, whereas in the other order it would be neither in
   * the chain (read before the block) nor in the mempool (which the block emptied) with its nonce
   * used, and a second transfer would be signed: the provider paid twice.
   */
  private async checkTransfer(entry: PayoutEntry): Promise<boolean> {
    const payeeNonce = entry.raw ? (await this.chain.getAccount(this.payee.address)).nonce : undefined;
    if (entry.txId && (await this.chain.getTx(entry.txId))) {
      await this.markPaid(entry);
      return false;
    }
    if (entry.txId && this.mempool.has(entry.txId)) return false;
    if (entry.raw) {
      const bytes = fromHex(entry.raw);
      if (payeeNonce! <= decodeTx(bytes).nonce) {
        // Its nonce is still free: only this transfer may take it (a new one could be mined beside it).
        await this.mempool.add(bytes).catch((e: Error) => this.log.warn({ payment: entry.invokeId, payoutTxId: entry.txId, err: e.message }, 'provider payout (usdc call) not accepted yet'));
        return false;
      }
      this.log.warn({ payment: entry.invokeId, lostTxId: entry.txId }, 'provider payout (usdc call) lost (its nonce was used by another tx): signing a new one');
    }
    return true;
  }

  private async markPaid(entry: PayoutEntry): Promise<void> {
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
    await this.db.put(`o:${e.invokeId}`, JSON.stringify(e));
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
