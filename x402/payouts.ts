/**
 * Provider payouts (issue 17): after a provider agent's service settled a native payment (the
 * caller got the result with the receipt), the node pays the agent the price minus the node fee
 * (`params.providers.nodeFeeBps`) with a `provider_payout` transaction naming the invoke.
 *
 * Exactly once, even across restarts and reorgs: consensus accepts one payout per invoke and none
 * for a refunded invoke (consensus/txTypes/providerPayout.ts), so a payout may be re-sent freely.
 * The store (`o:<invoke id>` in the providers database: owed → submitted → paid) remembers what
 * is owed; at start every settled provider payment of the ledger without a payout record is owed
 * again (a crash between the settlement and `owe`), and what is not mined yet is re-checked on
 * every tip and re-sent when its transaction was lost.
 */
import type { Level } from 'level';
import { tryDecodeAddress } from '../consensus/address.js';
import { fromHex } from '../consensus/hash.js';
import type { HybridKeyPair } from '../consensus/keys.js';
import type { ChainParams } from '../consensus/params.js';
import { getPayout, payoutKey } from '../consensus/registryState.js';
import { TxType } from '../consensus/tx.js';
import { providerPayout } from '../consensus/txTypes/providerPayout.js';
import { decodeInvokeRecord, invokeKey } from '../consensus/txTypes/agentInvoke.js';
import { silentLogger, type Logger } from '../chain/types.js';
import type { SettlementLedger } from './ledger.js';
import type { PaidCallCore } from './paidCall.js';
import { submitPayeeTx } from './payeeTx.js';
import { TipFollower } from './tipFollower.js';
import type { PaymentChain, PaymentMempool } from './ports.js';

/** A payout's record (JSON; amounts as base-unit strings). */
export interface PayoutEntry {
  /** The invoke's tx id (hex). */
  readonly invokeId: string;
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
}

/** Where a provider service's payouts go (from the live registry). */
export interface PayoutDirectory {
  /** The payout address of the agent selling `serviceId`, or undefined when it is not a provider service. */
  payoutAddressOf(serviceId: string): string | undefined;
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
    for await (const rec of this.ledger.records()) {
      if (rec.rail === 'native' && rec.status === 'settled' && !known.has(rec.id) && this.directory.payoutAddressOf(rec.serviceId)) {
        await this.owe(rec.id, rec.serviceId, BigInt(rec.amount));
      }
    }
    await this.follower.start();
  }

  stop(): void {
    this.follower.stop();
  }

  /** Waits for queued work. */
  async idle(): Promise<void> {
    await this.follower.idle();
  }

  /**
   * Records that the provider of `serviceId` is owed its share of the settled invoke `invokeId`
   * (hex) of `amount` base units, and sends the payout. Idempotent: an invoke is owed once.
   */
  async owe(invokeId: string, serviceId: string, amount: bigint): Promise<void> {
    const id = invokeId.toLowerCase();
    if (this.open.has(id) || (await this.db.get(`o:${id}`)) !== undefined) return;
    const to = this.directory.payoutAddressOf(serviceId);
    if (!to) return;
    const split = splitPayout(amount, this.params.providers.nodeFeeBps);
    const entry: PayoutEntry = { invokeId: id, serviceId, to, amount: split.provider.toString(), fee: split.fee.toString(), status: 'owed' };
    await this.save(entry);
    this.open.set(id, entry);
    if (split.provider === 0n) {
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
    for (const entry of [...this.open.values()]) {
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
        entry.status = 'paid';
        await this.save(entry);
        this.open.delete(entry.invokeId);
        this.count(entry);
        this.log.info({ invoke: entry.invokeId, payoutTxId: entry.txId }, 'provider payout mined');
        continue;
      }
      if (entry.txId && this.mempool.has(entry.txId)) continue;
      if (entry.txId && (await this.chain.getTx(entry.txId))) continue;
      await this.send(entry);
    }
  }

  private count(e: PayoutEntry): void {
    this.paidByService.set(e.serviceId, (this.paidByService.get(e.serviceId) ?? 0n) + BigInt(e.amount));
  }

  private async save(e: PayoutEntry): Promise<void> {
    await this.db.put(`o:${e.invokeId}`, JSON.stringify(e));
  }
}

/**
 * The paid-call core with provider payouts: a native call of a provider service that ends `paid`
 * owes the provider its share (idempotent, so a repeated settle owes nothing more). Transports
 * use the returned core exactly like the plain one.
 */
export function withProviderPayouts(core: PaidCallCore, payouts: Pick<PayoutManager, 'owe'>, isProviderService: (serviceId: string) => boolean, log: Logger = silentLogger): PaidCallCore {
  return {
    get nativePayTo() {
      return core.nativePayTo;
    },
    get usdcPayTo() {
      return core.usdcPayTo;
    },
    isForSale: (def) => core.isForSale(def),
    async call(c) {
      const o = await core.call(c);
      if (o.kind === 'paid' && o.rail === 'native' && isProviderService(c.serviceId)) {
        const txId = String(o.body.receipt.txId);
        try {
          await payouts.owe(txId, c.serviceId, BigInt(o.quote.accepts.find((a) => a.scheme === 'native-x402')?.maxAmountRequired ?? '0'));
        } catch (e) {
          // Owed again from the ledger at the next start.
          log.error({ txId, serviceId: c.serviceId, err: e }, 'could not record a provider payout');
        }
      }
      return o;
    },
  };
}
