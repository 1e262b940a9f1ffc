/**
 * The payment watcher: every `agent_invoke` mined to a watched payee ends exactly once, either
 * executed through a settle or refunded on-chain. It follows connected blocks and refunds at once
 * an invoke the node can never execute (see `UnhonoredReason`); a valid one is awaited for the
 * refund window and refunded when no settle claimed it by then.
 *
 *   connect(block) → for each invoke paying a watched payee without a ledger record:
 *       amount ≠ price, service unknown (or retired), service unavailable here → refuse now
 *       otherwise                                                             → await the window
 *   every checkMs  → awaited invokes past their deadline, still mined, still without a record → refuse
 *                    (and those awaited only thanks to a provider's start-up grace, once it ended
 *                    without the agent polling: `PayableCatalog.isHonorable`)
 *   settle         → `refuseIfUnhonored` first: the same judgement, so a settle of such a payment
 *                    answers `payment_refunded` with the refund tx id instead of the mismatch
 *
 * "Refuse" is `SettlementLedger.claimRefusal` (the settle's claim and this one are one atomic
 * step: a payment executes XOR is refunded) followed by the payee's `RefundManager.refund`.
 * Consensus accepts one refund per invoke, and the refund manager re-sends a refund lost to a
 * crash or a reorg, so the end is idempotent across restarts and reorganizations.
 *
 * The window runs from the invoke's block time, or from when this process first saw the block
 * when that is earlier (a block's time may run up to 30 s ahead of the clock).
 *
 * Restarts: the ledger keeps a mark, the lowest height that may still hold an awaited invoke (or
 * the next height to scan) and the next height to scan; `start()` rescans from a few blocks below
 * it to the tip. Every step is idempotent (a ledger record ends the matter), so scanning a block
 * twice is harmless.
 *
 * Seller: a payment commits to the seller (ledger) that quoted it, in clear in the first bytes of
 * its requestHash (x402/core/wire.ts). An invoke to a watched payee without a commitment can never be
 * settled (nobody can prove to be its payer) and is refused at once (`missing_commitment`); one
 * committed to another seller is another ledger's to judge (another node sharing this payee) and
 * is left alone — except those mined before this ledger first ran with commitments (`legacy`),
 * which no other ledger can honour either: they are awaited and refunded as before.
 *
 * Served, then lost: a settled payment whose block a reorganization deeper than the node's
 * `--confirmations` disconnected, and that neither came back in the new branch nor waits in the
 * mempool once the new branch is past its height (a conflicting transaction took its nonce), was
 * served for nothing. Nothing can take the result back: it is logged, counted and listed
 * (`servedLost`, kept in the ledger) so the operator sees what deep reorganizations cost. Those
 * awaiting the verdict are kept in the ledger too (`unminedServed`): the next block gives it after a restart.
 *
 * The ledger's gap: a ledger behind what the node did (a restored backup, found behind its
 * witness: x402/ledger/witness.ts, `recordLedgerRestore`), or a new ledger on a chain already holding
 * invokes to the payee, may have served, or refunded, what it no longer remembers. The watcher
 * never judges such a stretch by itself: from the restored ledger's mark to the witness's tip,
 * the invokes without a record are counted, and the ones it holds as `claimed` are held too;
 * none is refunded nor served (a settle answers `payment_in_ledger_gap`) until the operator
 * chooses with `native-node ledger gap --refund` (refund them at the next start; a fleet's
 * PostgreSQL ledger, where the command may run beside the nodes: at once, by the signer lease's
 * holder, `adoptGaps`) or `--forget` (they stay unserved and unrefunded). Blocks of the stretch that arrive later (a chain
 * downloaded again from peers) are counted as they connect; blocks above the witness's tip were
 * judged by no ledger and are judged as usual. There is no tolerance: a ledger one write behind
 * its witness is a restored one.
 */
import { encodeAddress } from '../../consensus/address.js';
import type { Block } from '../../consensus/block.js';
import { bytesEqual, toHex } from '../../consensus/hash.js';
import type { ChainParams } from '../../consensus/params.js';
import { encodeTx, txId as computeTxId, TxType, type Tx } from '../../consensus/tx.js';
import { agentInvoke, type AgentInvokePayload } from '../../consensus/txTypes/agentInvoke.js';
import { silentLogger, type ChainEntry, type ChainReader, type Logger, type StoredTx } from '../../chain/types.js';
import type { ServiceDefinition } from '../../services/types.js';
import type { PaymentRecord, SettlementLedger } from '../ledger/ledger.js';
import { sellerOfCommitment } from '../core/wire.js';
import { isHonorable, type ServiceCatalog } from '../core/ports.js';
import { gapKey, GAPS_MARK, readGaps, WATCHER_MARK, type LedgerGap, type Mark } from '../ledger/restore.js';
import { refundGap, type GapChain, type GapRefundParts } from './gapRefunds.js';

export { GAP_DECISIONS_MARK, GAPS_MARK, gapKey, readGaps, recordLedgerRestore, WATCHER_MARK, type LedgerGap } from '../ledger/restore.js';

/** Why a payment is refunded without a call (the `reason` of a `payment_refunded` answer). */
export const UnhonoredReason = {
  /** The invoke does not pay exactly the service's price (above or below). */
  AMOUNT_MISMATCH: 'amount_mismatch',
  /** No such service here (never existed, or retired from the catalog). */
  UNKNOWN_SERVICE: 'unknown_service',
  /** The service cannot run on this node (no implementation, suspended). */
  SERVICE_UNAVAILABLE: 'service_unavailable',
  /** A valid payment that no settle claimed within the refund window. */
  WINDOW_EXPIRED: 'settle_window_expired',
  /** The invoke carries no request commitment: nobody can prove to be its payer, so it can never be settled. */
  MISSING_COMMITMENT: 'missing_commitment',
  /** In a stretch of chain the ledger had not judged; the operator chose to refund (`native-node ledger gap --refund`). */
  LEDGER_GAP: 'ledger_gap_refund',
} as const;
export type UnhonoredReason = (typeof UnhonoredReason)[keyof typeof UnhonoredReason];

/** Options of the watcher. */
export interface UnhonoredOptions {
  /** How long a valid payment waits for its settle before it is refunded, ms. */
  readonly windowMs?: number;
  /** How often awaited payments are checked against their deadline, ms (default: a quarter of the window, 100 ms to 30 s). */
  readonly checkMs?: number;
  readonly logger?: Logger;
  /** Unix ms (injected in tests). */
  readonly now?: () => number;
}

/** Defaults of UnhonoredOptions. */
export const defaultUnhonoredOptions = { windowMs: 3_600_000 } as const;

/** Blocks below the mark rescanned at start (a reorganization the mark did not see). */
const RESCAN_MARGIN = 6;
/**
 * How far a ledger of an older version (no write count, no witness yet) may trail the chain's
 * tip at its first start with a witness before the stretch is a gap (the last use of a height
 * rule: from then on the witness decides, with no tolerance).
 */
export const LEGACY_GAP_TOLERANCE_BLOCKS = 12;
/** Name of the mark holding the first height judged with seller commitments. */
const COMMITMENTS_MARK = 'commitments';

/** Name of the mark listing payments served then lost to a deep reorganization (see module comment). */
export const SERVED_LOST_MARK = 'servedLost';
/** How many of them the mark lists (the total is counted apart). */
const SERVED_LOST_KEPT = 100;
/** Name of the mark of settled payments whose block was disconnected, not judged yet (id → height): a restart keeps watching them. */
export const UNMINED_SERVED_MARK = 'unminedServed';

/** A payment served, then lost to a reorganization deeper than the confirmations it waited for. */
export interface ServedLost {
  readonly id: string;
  readonly serviceId: string;
  readonly caller: string;
  /** Base units. */
  readonly amount: string;
  /** Height it was mined at before the reorganization. */
  readonly height: number;
  /** Unix ms when it was found lost. */
  readonly lostAt: number;
}

/** What the watcher reads of the catalog: a service by id and whether it can run here (or still be served: `isHonorable`). */
export type PayableCatalog = Pick<ServiceCatalog, 'get' | 'isAvailable' | 'isHonorable'>;

/** A payee whose payments are watched, with what signs its refunds (the node's payee today; provider payees later). */
export interface WatchedPayee {
  readonly address: Uint8Array;
  readonly refunds: { refund(id: string, error: { code: string; message: string }): Promise<PaymentRecord> };
}

/** What the watcher reads of the chain: the reader, its block events and (for a gap's refunds: x402/native/gapRefunds.ts) the consensus state. */
export interface WatchedChain extends ChainReader, Pick<GapChain, 'getStateView'> {
  /** `txIds`: the block's transaction ids, as the chain computed them when it connected the block. */
  on(event: 'connect' | 'disconnect', fn: (entry: ChainEntry, block: Block, txIds?: readonly Uint8Array[]) => void): unknown;
  off(event: 'connect' | 'disconnect', fn: (entry: ChainEntry, block: Block, txIds?: readonly Uint8Array[]) => void): unknown;
}

/** An invoke waiting for its settle. */
interface Awaited {
  readonly height: number;
  /** Unix ms after which it is refunded. */
  readonly deadline: number;
  /** Awaited only thanks to a start-up grace: refused as soon as its service can no longer serve it. */
  readonly graced?: boolean;
}

/** The payment watcher (see module comment). */
export class UnhonoredPayments {
  private readonly log: Logger;
  private readonly now: () => number;
  readonly windowMs: number;
  private readonly checkMs: number;
  private readonly awaited = new Map<string, Awaited>();
  /** Refusals whose refund is being signed: a settle that lost the claim to one waits for its refund tx id. */
  private readonly refusing = new Map<string, Promise<PaymentRecord>>();
  /** Next height to scan (every lower block was processed). */
  private scanned = 0;
  private mark = -1;
  private savedScanned = -1;
  /** Stretches the ledger never judged (see module comment). */
  private gaps: LedgerGap[] = [];
  /** First height judged with seller commitments (see module comment). */
  private commitmentsSince = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Started and not stopped since: it judges blocks and carries out the operator's decisions on gaps. */
  private following = false;
  private readonly onConnect = (entry: ChainEntry, block: Block, txIds?: readonly Uint8Array[]) => void this.serial(() => this.processBlock(entry, block, txIds));
  private readonly onDisconnect = (entry: ChainEntry, block: Block, txIds?: readonly Uint8Array[]) => void this.serial(() => this.forgetBlock(entry, block, txIds));
  /** Settled payments whose block was disconnected, not mined again yet (id → height they were mined at). */
  private readonly unminedServed = new Map<string, number>();
  /** Payments served then lost: the ones kept, and how many in all. */
  private servedLost: { total: number; recent: ServedLost[] } = { total: 0, recent: [] };
  /**
   * The chain's tip when the watcher was made (with the ledger, before the node's peers could
   * move the chain on): what the ledger's marks are compared with at start.
   */
  private readonly tipAtOpen: number;

  constructor(
    private readonly modules: {
      readonly chain: WatchedChain;
      readonly ledger: SettlementLedger;
      readonly catalog: PayableCatalog;
      readonly payees: readonly WatchedPayee[];
      readonly params: ChainParams;
      /** Whether a transaction waits in the mempool (a settled payment disconnected by a reorganization may be mined again). */
      readonly mempool?: { has(id: string): boolean };
      /**
       * No witness decides whether this ledger was restored (a PostgreSQL ledger, or a LevelDB one
       * of an older version at its first start): a ledger far behind the tip is then taken for a
       * restored one (`LEGACY_GAP_TOLERANCE_BLOCKS`).
       */
      readonly legacyLedger?: boolean;
    },
    opts: UnhonoredOptions = {},
  ) {
    this.log = opts.logger ?? silentLogger;
    this.now = opts.now ?? Date.now;
    this.windowMs = Math.max(0, opts.windowMs ?? defaultUnhonoredOptions.windowMs);
    this.checkMs = opts.checkMs ?? Math.min(30_000, Math.max(100, Math.floor(this.windowMs / 4)));
    this.tipAtOpen = modules.chain.tip.height;
  }

  /**
   * Finds any gap the ledger has not judged (see module comment), rescans from the stored mark to
   * the tip, then follows the chain and checks deadlines.
   */
  async start(): Promise<void> {
    // Startable again after `stop()`: a fleet node that loses the signer lease and takes it back runs the watcher anew.
    this.stopped = false;
    const { chain, ledger } = this.modules;
    const tip = this.tipAtOpen;
    const stored = await ledger.getMark<Mark>(WATCHER_MARK);
    await this.load();
    const since = await ledger.getMark<{ height: number }>(COMMITMENTS_MARK);
    this.commitmentsSince = since?.height ?? tip + 1;
    if (!since) await ledger.putMark(COMMITMENTS_MARK, { height: this.commitmentsSince });
    let start = Math.max(1, (stored?.height ?? 1) - RESCAN_MARGIN);
    const judged = stored ? (stored.scanned ?? stored.height) : 1;
    // A restored ledger's stretch (found by its witness) is counted in the blocks present now; the rest as they connect.
    let counted = false;
    for (const [i, g] of this.gaps.entries()) {
      if (g.cause !== 'ledger_restored' || g.resolution !== undefined || (g.countedTo ?? 0) >= g.to) continue;
      this.gaps[i] = await this.countMore(g);
      counted = true;
    }
    if (counted) await ledger.putMark(GAPS_MARK, this.gaps);
    // A ledger without a write count of its own (PostgreSQL) is judged behind by its watcher's mark,
    // unless its witness already found this restore: an open gap from the mark to within the
    // tolerance of the tip covers the stretch (a second one, of another cause, listed the same
    // payments twice when more than the tolerance was mined after the backup). A gap that stops
    // short of the tip (an older restore, or another fleet node's later blocks) covers nothing more.
    const witnessed = stored !== undefined && this.gaps.some((g) => g.cause === 'ledger_restored' && g.resolution === undefined && g.from <= Math.max(1, stored.height) && g.to >= tip - LEGACY_GAP_TOLERANCE_BLOCKS);
    const legacyBehind = this.modules.legacyLedger === true && !witnessed && tip - judged > LEGACY_GAP_TOLERANCE_BLOCKS;
    if (legacyBehind || (!stored && tip > 0)) {
      // Restored from a backup, or new on a chain that already holds blocks: never judged here.
      const from = stored ? Math.max(1, stored.height) : 1;
      const gap = await this.countGap({ from, to: tip, foundAt: this.now(), cause: stored ? 'ledger_behind_chain' : 'new_ledger_on_old_chain' });
      if (gap.invokes! > 0) {
        this.gaps.push(gap);
        await ledger.putMark(GAPS_MARK, this.gaps);
        this.log.warn(
          { from: gap.from, to: gap.to, invokes: gap.invokes, amountBase: gap.amountBase, cause: gap.cause },
          `the payment ledger has no record of heights ${gap.from}-${gap.to} (${gap.cause === 'ledger_behind_chain' ? 'restored from a backup?' : 'a new ledger on a chain with payments to this payee'}): ${gap.invokes} payment(s) there are neither served nor refunded until you choose: run \`npx native-node ledger gap --refund\` or \`--forget\` (with the node stopped, unless its ledger is a fleet's PostgreSQL)`,
        );
      }
      start = tip + 1;
    }
    await this.resolveGaps();
    chain.on('connect', this.onConnect);
    chain.on('disconnect', this.onDisconnect);
    this.scanned = start;
    await this.serial(() => this.scan());
    // The mark is written at the first start too, even with nothing to scan (a fresh chain): a
    // ledger backed up right after it then says which heights it judged, and restored later is
    // found behind the chain (`ledger_behind_chain`), not taken for a new one.
    await this.serial(() => this.saveMark());
    this.timer = setInterval(() => void this.serial(() => this.expire()), this.checkMs);
    this.timer.unref();
    this.following = true;
  }

  /** Stops following the chain (queued work still finishes: see `idle`). */
  stop(): void {
    this.stopped = true;
    this.following = false;
    this.modules.chain.off('connect', this.onConnect);
    this.modules.chain.off('disconnect', this.onDisconnect);
    if (this.timer) clearInterval(this.timer);
  }

  /** Waits for queued work. */
  async idle(): Promise<void> {
    await this.queue;
  }

  /** Valid payments mined and waiting for their settle (within the window). */
  get awaitingCount(): number {
    return this.awaited.size;
  }

  /** The stretches of chain the ledger never judged, with the operator's choice once made. */
  gapList(): readonly LedgerGap[] {
    return this.gaps;
  }

  /** Whether `height` lies in a stretch the ledger never judged and the operator has not had refunded. */
  inGap(height: number): boolean {
    // A gap found by a missing witness also holds every block timed before the start that found it (LedgerGap.before).
    const timed = (g: LedgerGap) => g.before !== undefined && height >= g.from && (this.modules.chain.getEntryByHeight(height)?.header.time ?? Infinity) * 1000 < g.before;
    return this.gaps.some((g) => (height >= g.from && height <= g.to) || timed(g));
  }

  /** Whether payment `id` is a claim a restored ledger holds from before its restore (neither refunded nor served until the operator decides). */
  holdsClaim(id: string): boolean {
    return this.gaps.some((g) => g.claimed?.includes(id));
  }

  /** Loads the gaps recorded in the ledger (before `start`: the refunds' resume must know the claims they hold). */
  async load(): Promise<void> {
    this.gaps = await readGaps(this.modules.ledger);
    this.servedLost = (await this.modules.ledger.getMark<{ total: number; recent: ServedLost[] }>(SERVED_LOST_MARK)) ?? { total: 0, recent: [] };
    for (const [id, height] of Object.entries((await this.modules.ledger.getMark<Record<string, number>>(UNMINED_SERVED_MARK)) ?? {})) this.unminedServed.set(id, height);
  }

  /**
   * Takes in gaps another fleet node recorded and the operator's decisions made since (`readGaps`):
   * own copies keep their counts; a refund is carried out at once when the watcher runs (the lease
   * holder), else at its next start. Returns how many gaps were new or newly decided.
   */
  async adoptGaps(): Promise<number> {
    const stored = await readGaps(this.modules.ledger);
    return this.serial(async () => {
      const known = new Map(this.gaps.map((g, i) => [gapKey(g), i]));
      const added = stored.filter((g) => !known.has(gapKey(g)));
      const decided = stored.filter((g) => {
        const i = known.get(gapKey(g));
        return g.resolution !== undefined && i !== undefined && this.gaps[i]!.resolution === undefined;
      });
      if (added.length === 0 && decided.length === 0) return 0;
      for (const g of decided) {
        const i = known.get(gapKey(g))!;
        this.gaps[i] = { ...this.gaps[i]!, resolution: g.resolution };
      }
      this.gaps = [...this.gaps, ...added];
      // Counted here too (the node that recorded them may not run the watcher).
      for (const [i, g] of this.gaps.entries()) if (added.includes(g) && g.cause === 'ledger_restored' && g.resolution === undefined) this.gaps[i] = await this.countMore(g);
      if (added.length) this.log.warn({ gaps: added.map((g) => ({ from: g.from, to: g.to, cause: g.cause })) }, 'ledger gap recorded by another node of the fleet: its payments are neither served nor refunded here either');
      if (decided.length) this.log.warn({ gaps: decided.map((g) => ({ from: g.from, to: g.to, resolution: g.resolution })) }, 'ledger gap decided by the operator (native-node ledger gap)');
      if (this.following && !this.stopped) await this.resolveGaps();
      return added.length + decided.length;
    });
  }

  /** Payments served then lost to a reorganization deeper than their confirmations: how many, and the latest ones. */
  servedLostList(): { readonly total: number; readonly recent: readonly ServedLost[] } {
    return this.servedLost;
  }

  /** Counts the blocks of `g` present above what was counted (a chain downloaded again arrives block by block). */
  private async countMore(g: LedgerGap): Promise<LedgerGap> {
    const from = Math.max(g.from, (g.countedTo ?? 0) + 1);
    const to = Math.min(g.to, this.modules.chain.tip.height);
    if (from > to) return { ...g, invokes: g.invokes ?? g.claimed?.length ?? 0, amountBase: g.amountBase ?? '0' };
    const more = await this.countGap({ from, to, foundAt: g.foundAt, cause: g.cause });
    const counted = g.countedTo ? (g.invokes ?? 0) : (g.claimed?.length ?? 0);
    return { ...g, invokes: counted + more.invokes!, amountBase: (BigInt(g.countedTo ? (g.amountBase ?? '0') : '0') + BigInt(more.amountBase!)).toString(), countedTo: to };
  }

  /** Counts the invokes to a watched payee without a ledger record in `g`'s heights. */
  private async countGap(g: Omit<LedgerGap, 'invokes' | 'amountBase'>): Promise<LedgerGap> {
    let invokes = 0;
    let amount = 0n;
    await this.forEachUnrecorded(g, async (_id, _tx, p) => {
      invokes++;
      amount += p.amount;
    });
    return { ...g, invokes, amountBase: amount.toString() };
  }

  /**
   * Calls `fn` for every invoke of `g` without a ledger record, in its heights of the best chain:
   * this ledger's invokes (see `judged`) in a ledger restored from a backup (same seller id);
   * every invoke to a watched payee under a new ledger, whose predecessor's seller id is lost.
   */
  private async forEachUnrecorded(g: Pick<LedgerGap, 'from' | 'to' | 'cause'>, fn: (id: string, tx: Tx, p: AgentInvokePayload, height: number) => Promise<void>): Promise<void> {
    const { chain, ledger } = this.modules;
    for (let h = g.from; h <= g.to && h <= chain.tip.height; h++) {
      const entry = chain.getEntryByHeight(h);
      const block = entry && (await chain.getBlock(entry.hashHex));
      if (!block) continue;
      const found = block.txs.flatMap((tx) => {
        const p = this.watchedInvoke(tx);
        return p && (g.cause === 'new_ledger_on_old_chain' || this.judged(p, h, true)) ? [{ id: toHex(computeTxId(encodeTx(tx))), tx, p }] : [];
      });
      const known = await ledger.hasMany(found.map((f) => f.id));
      for (const [i, f] of found.entries()) if (!known[i]) await fn(f.id, f.tx, f.p, h);
    }
  }

  /** Carries out the operator's choices: a gap to refund is refunded and dropped but for what stays (x402/native/gapRefunds.ts); a forgotten one stays. */
  private async resolveGaps(): Promise<void> {
    const toRefund = this.gaps.filter((g) => g.resolution === 'refund');
    if (toRefund.length === 0) return;
    const { chain, ledger, params, payees } = this.modules;
    const refuse: GapRefundParts['refuse'] = (id, tx, p, error) => this.refuse(id, tx.from, p, { reason: UnhonoredReason.LEDGER_GAP, message: error.message });
    const parts: GapRefundParts = { chain, ledger, params, log: this.log, now: this.now, refunder: payees[0]?.refunds, forEachUnrecorded: (g, fn) => this.forEachUnrecorded(g, fn), refuse };
    const kept: LedgerGap[] = [];
    for (const g of toRefund) {
      const left = await refundGap(parts, g, UnhonoredReason.LEDGER_GAP);
      if (left) kept.push(left);
    }
    this.gaps = [...this.gaps.filter((g) => g.resolution !== 'refund'), ...kept];
    await ledger.putMark(GAPS_MARK, this.gaps);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch((e) => this.log.error({ err: e }, 'payment watcher failed'));
    return run;
  }

  /** Processes every main-chain block from `scanned` to the tip. */
  private async scan(): Promise<void> {
    const { chain } = this.modules;
    while (!this.stopped && this.scanned <= chain.tip.height) {
      const entry = chain.getEntryByHeight(this.scanned);
      const block = entry && (await chain.getBlock(entry.hashHex));
      if (!entry || !block) break; // moved under us by a reorganization: its events follow
      await this.processBlock(entry, block);
    }
  }

  /** Judges every invoke of a connected block that pays a watched payee. */
  private async processBlock(entry: ChainEntry, block: Block, txIds?: readonly Uint8Array[]): Promise<void> {
    if (this.stopped) return;
    const open = this.gaps.findIndex((g) => g.before !== undefined && g.resolution === undefined && entry.height > g.to && entry.header.time * 1000 < g.before);
    if (open >= 0) this.gaps[open] = { ...this.gaps[open]!, to: entry.height }; // counted and kept just below
    const i = this.gaps.findIndex((g) => g.cause === 'ledger_restored' && g.resolution === undefined && entry.height > (g.countedTo ?? 0) && entry.height <= g.to);
    if (i >= 0) {
      this.gaps[i] = await this.countMore(this.gaps[i]!);
      await this.modules.ledger.putMark(GAPS_MARK, this.gaps);
    }
    const seenAt = this.now();
    const watched: { id: string; tx: Tx; invoke: AgentInvokePayload }[] = [];
    block.txs.forEach((tx, i) => {
      const invoke = this.watchedInvoke(tx);
      if (invoke && this.judged(invoke, entry.height)) watched.push({ id: toHex(txIds?.[i] ?? computeTxId(encodeTx(tx))), tx, invoke });
    });
    // One ledger read for the block's invokes: most were settled (or are being settled) already.
    const known = await this.modules.ledger.hasMany(watched.map((w) => w.id));
    for (const [i, { id, tx, invoke }] of watched.entries()) {
      if (known[i]) continue;
      const reason = this.intrinsicReason(invoke);
      if (reason) {
        await this.refuse(id, tx.from, invoke, reason);
        continue;
      }
      this.awaited.set(id, { height: entry.height, deadline: Math.min(entry.header.time * 1000, seenAt) + this.windowMs, ...(this.graced(invoke) ? { graced: true } : {}) });
    }
    this.scanned = Math.max(this.scanned, entry.height + 1);
    await this.saveMark();
    if (this.unminedServed.size > 0) await this.checkUnminedServed();
  }

  /**
   * Settled payments disconnected by a reorganization: mined again → forgotten; not mined again
   * once the new branch is past their height, nor waiting in the mempool → served then lost.
   */
  private async checkUnminedServed(): Promise<void> {
    const tip = this.modules.chain.tip.height;
    let minedAgain = false;
    for (const [id, height] of [...this.unminedServed]) {
      if (await this.modules.chain.getTx(id)) {
        this.unminedServed.delete(id);
        minedAgain = true;
        continue;
      }
      if (tip <= height || this.modules.mempool?.has(id)) continue;
      this.unminedServed.delete(id);
      await this.saveUnminedServed(); // before the verdict is kept: a crash in between loses a count, never counts twice
      const rec = await this.modules.ledger.get(id);
      if (rec?.status !== 'settled') continue;
      const lost: ServedLost = { id, serviceId: rec.serviceId, caller: rec.caller, amount: rec.amount, height, lostAt: this.now() };
      this.servedLost = { total: this.servedLost.total + 1, recent: [...this.servedLost.recent, lost].slice(-SERVED_LOST_KEPT) };
      await this.modules.ledger.putMark(SERVED_LOST_MARK, this.servedLost);
      this.log.error(
        { txId: id, serviceId: rec.serviceId, caller: rec.caller, amount: rec.amount, height },
        `payment ${id} was served, then a reorganization deeper than its confirmations took it out of the chain and a conflicting transaction replaced it: the call was delivered unpaid (raise --confirmations if this repeats)`,
      );
    }
    if (minedAgain) await this.saveUnminedServed();
  }

  private readonly saveUnminedServed = () => this.modules.ledger.putMark(UNMINED_SERVED_MARK, Object.fromEntries(this.unminedServed));

  /** A disconnected block's invokes are no longer mined: forget them (they are judged again if mined again). */
  private async forgetBlock(entry: ChainEntry, block?: Block, txIds?: readonly Uint8Array[]): Promise<void> {
    for (const [id, a] of this.awaited) if (a.height >= entry.height) this.awaited.delete(id);
    // Settled payments of the block: served on the strength of a block that is gone; watched until mined again or lost.
    const ids = (block?.txs ?? []).flatMap((tx, i) => (this.watchedInvoke(tx) ? [toHex(txIds?.[i] ?? computeTxId(encodeTx(tx)))] : []));
    const watching = this.unminedServed.size;
    for (const id of ids) if ((await this.modules.ledger.get(id))?.status === 'settled') this.unminedServed.set(id, entry.height);
    if (this.unminedServed.size !== watching) await this.saveUnminedServed();
    this.scanned = Math.min(this.scanned, entry.height);
    await this.saveMark();
  }

  /** Refunds awaited payments whose window passed without a settle. */
  private async expire(): Promise<void> {
    if (this.stopped) return;
    const now = this.now();
    const awaited = [...this.awaited];
    const settled = await this.modules.ledger.hasMany(awaited.map(([id]) => id));
    for (const [i, [id, a]] of awaited.entries()) {
      if (settled[i]) {
        this.awaited.delete(id);
        continue;
      }
      // A payment awaited thanks to a provider's start-up grace is judged again: the grace ended without the agent polling → refused now.
      const why = a.graced && a.deadline > now ? await this.intrinsicReasonOf(id) : undefined;
      if (a.deadline > now && !why) continue;
      const stored = await this.modules.chain.getTx(id);
      const invoke = stored && this.watchedInvoke(stored.tx);
      if (!stored || !invoke) {
        this.awaited.delete(id); // no longer mined: judged again if it is mined again
        continue;
      }
      // Awaited until the claim hands it to the refunds (refuseNow): never counted in neither.
      await this.refuse(id, stored.tx.from, invoke, why ?? { reason: UnhonoredReason.WINDOW_EXPIRED, message: `payment ${id} was not settled within ${Math.round(this.windowMs / 1000)} s of its block` });
    }
    await this.saveMark();
  }

  /** The mark: the lowest height holding an awaited payment, else the next height to scan; and the next height to scan. */
  private async saveMark(): Promise<void> {
    let height = this.scanned;
    for (const a of this.awaited.values()) height = Math.min(height, a.height);
    if (height === this.mark && this.scanned === this.savedScanned) return;
    this.mark = height;
    this.savedScanned = this.scanned;
    await this.modules.ledger.putMark(WATCHER_MARK, { height, scanned: this.scanned } satisfies Mark);
  }

  /**
   * Whether this ledger judges a watched invoke mined at `height`: not in a gap it never judged,
   * and committed to this seller (or to none, or mined before commitments: see module comment).
   */
  private judged(p: AgentInvokePayload, height: number, evenInGap = false): boolean {
    if (!evenInGap && this.inGap(height)) return false;
    if (!p.requestHash || height < this.commitmentsSince) return true;
    return sellerOfCommitment(p.requestHash) === this.modules.ledger.sellerId;
  }

  /** The invoke's payload when `tx` is an agent_invoke paying a watched payee. */
  private watchedInvoke(tx: Tx): AgentInvokePayload | undefined {
    if (tx.type !== TxType.agent_invoke) return undefined;
    let p: AgentInvokePayload;
    try {
      p = agentInvoke.decodePayload(tx.payload);
    } catch {
      return undefined; // consensus decoded it when the block connected; cannot happen
    }
    return this.modules.payees.some((w) => bytesEqual(w.address, p.payTo)) ? p : undefined;
  }

  /** Whether `p` names a service that is not available but honoured for now (a provider's start-up grace). */
  private graced(p: AgentInvokePayload): boolean {
    const def = this.modules.catalog.get(p.serviceId);
    return def !== undefined && !this.modules.catalog.isAvailable(def);
  }

  /** `intrinsicReason` of a mined payment by id (undefined when it is no longer mined). */
  private async intrinsicReasonOf(id: string): Promise<{ reason: UnhonoredReason; message: string } | undefined> {
    const stored = await this.modules.chain.getTx(id);
    const invoke = stored && this.watchedInvoke(stored.tx);
    return invoke ? this.intrinsicReason(invoke) : undefined;
  }

  /** Why the node can never execute this invoke, whoever settles it and whenever. */
  private intrinsicReason(p: AgentInvokePayload): { reason: UnhonoredReason; message: string } | undefined {
    if (!p.requestHash) return { reason: UnhonoredReason.MISSING_COMMITMENT, message: 'the payment carries no request commitment (requestHash), so no settle can prove its payer; pay again as the quote describes (extra.commitment)' };
    const def = this.modules.catalog.get(p.serviceId);
    if (!def) return { reason: UnhonoredReason.UNKNOWN_SERVICE, message: `no service ${p.serviceId} on this node` };
    const honorable = isHonorable(this.modules.catalog, def);
    if (!honorable) return { reason: UnhonoredReason.SERVICE_UNAVAILABLE, message: `${p.serviceId} cannot run on this node` };
    if (p.amount !== def.priceBase) return { reason: UnhonoredReason.AMOUNT_MISMATCH, message: `payment is ${p.amount} base units, the price of ${p.serviceId} is ${def.priceBase}` };
    return undefined;
  }

  /**
   * Refuses a payment: the atomic claim, then the refund. One refusal per payment at a time in
   * this process: a second caller (the watcher and a settle racing) gets the first one's record,
   * with its refund tx id once signed.
   */
  private refuse(id: string, sender: Uint8Array, p: AgentInvokePayload, why: { reason: UnhonoredReason; message: string }): Promise<PaymentRecord> {
    const running = this.refusing.get(id);
    if (running) return running;
    const run = this.refuseNow(id, sender, p, why).finally(() => this.refusing.delete(id));
    this.refusing.set(id, run);
    return run;
  }

  private async refuseNow(id: string, sender: Uint8Array, p: AgentInvokePayload, why: { reason: UnhonoredReason; message: string }): Promise<PaymentRecord> {
    const payee = this.modules.payees.find((w) => bytesEqual(w.address, p.payTo))!;
    const error = { code: why.reason, message: why.message };
    const claim = await this.modules.ledger.claimRefusal(
      { id, rail: 'native', serviceId: p.serviceId, requestHash: p.requestHash ? toHex(p.requestHash) : '', caller: encodeAddress(sender, this.modules.params.hrp), amount: p.amount.toString() },
      error,
      this.now(),
    );
    if (!claim.claimed) return claim.record;
    this.awaited.delete(id);
    this.log.warn({ txId: id, serviceId: p.serviceId, reason: why.reason, amount: p.amount.toString() }, 'payment will not be honoured: refunding');
    return payee.refunds.refund(id, error);
  }

  /** A refused record with its refund tx id: waits for the refund being signed right now, if any. */
  async withRefund(rec: PaymentRecord): Promise<PaymentRecord> {
    return (rec.refused && !rec.refundTxId && (await this.refusing.get(rec.id)?.catch(() => undefined))) || rec;
  }

  /**
   * For a settle: when the mined `stored` pays a watched payee and the node will not honour it
   * (an intrinsic reason, or its window passed), refuses it now (or finds it refused) and
   * returns its record; undefined when the payment may be settled.
   */
  async refuseIfUnhonored(stored: StoredTx): Promise<PaymentRecord | undefined> {
    const invoke = this.watchedInvoke(stored.tx);
    if (!invoke || !this.judged(invoke, stored.height)) return undefined;
    let why = this.intrinsicReason(invoke);
    if (!why) {
      const entry = this.modules.chain.getEntryByHash(stored.blockHash);
      const deadline = Math.min(this.awaited.get(stored.id)?.deadline ?? Infinity, entry ? entry.header.time * 1000 + this.windowMs : Infinity);
      if (this.now() < deadline) return undefined;
      why = { reason: UnhonoredReason.WINDOW_EXPIRED, message: `payment ${stored.id} was not settled within ${Math.round(this.windowMs / 1000)} s of its block` };
    }
    return this.refuse(stored.id, stored.tx.from, invoke, why);
  }
}

/** Creates the watcher (call `start()` once the refund managers started). */
export function createUnhonoredPayments(modules: ConstructorParameters<typeof UnhonoredPayments>[0], opts?: UnhonoredOptions): UnhonoredPayments {
  return new UnhonoredPayments(modules, opts);
}
