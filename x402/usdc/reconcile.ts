/**
 * Reconciliation of USDC payments whose facilitator `/settle` timed out or failed ambiguously
 * (ledger status `settle_pending`, the service's result stored). The truth is on Base: the USDC
 * contract's EIP-3009 `authorizationState(authorizer, nonce)` says whether the authorization was
 * used, and its `AuthorizationUsed(authorizer, nonce)` log (emitted with the Transfer) carries the
 * transaction hash.
 *
 * Each pending payment is checked with backoff (`initialDelayMs`, doubling up to `maxDelayMs`):
 *   used, log found, and the transaction is this settlement's — the Transfer the contract emitted
 *     with that AuthorizationUsed moves exactly the record's amount from the authorizer to this
 *     payee, and a bound nonce (x402/usdc/commitment.ts) names this ledger's seller
 *                                          → `settled`, receipt.txId = the log's transaction,
 *                                            and the receipts signed as a direct settle signs them
 *                                            (`receipts`: over the stored result, for the base
 *                                            URL and resource the call was sold at);
 *   used by a transaction that is not this settlement's (another authorization with the same
 *     nonce, paying someone else or another amount) → `expired_unsettled` with code
 *     `authorization_used_elsewhere`: the nonce can never pay this node any more, the result is
 *     dropped;
 *   unused in a block whose timestamp is ≥ validBefore → `expired_unsettled` (the contract refuses
 *     the authorization in every later block: nothing can be charged any more);
 *   otherwise (unused yet, RPC down, log not indexed yet) → checked again.
 * State lives in the ledger (LevelDB): `start()` resumes every `settle_pending` record after a
 * restart. The on-chain reads are behind `AuthorizationChain` (viem over the outbound client in
 * the node, `createBaseAuthorizationChain`).
 */
import { parseAbi, parseAbiItem, type Address, type Hex } from 'viem';
import { silentLogger, type Logger } from '../../chain/types.js';
import type { OutboundClient } from '../../services/outbound/types.js';
import { createClient } from '../../services/providers/evm.js';
import { LedgerErrorCode, type PaymentRecord, type SettlementLedger, type UsdcReconcileState } from '../ledger/ledger.js';
import { BASE_USDC } from '../core/quote.js';
import { sellerOfNonce } from './commitment.js';
import type { ReceiptIssuer, SignedReceipts } from '../core/receipts.js';

/** Error codes of reconciliation (stored in the ledger, answered to a retry). */
export const UsdcReconcileCode = {
  SETTLEMENT_PENDING: 'settlement_pending',
  EXPIRED_UNSETTLED: 'expired_unsettled',
  /** The authorization's nonce was used on Base by a transaction that did not pay this node the amount. */
  AUTHORIZATION_USED_ELSEWHERE: 'authorization_used_elsewhere',
} as const;

/** What Base says about one authorization. */
export interface AuthorizationReading {
  /** authorizationState(authorizer, nonce) at `blockNumber`. */
  readonly used: boolean;
  readonly blockNumber: bigint;
  /** Timestamp (unix s) of `blockNumber`. */
  readonly blockTimestamp: number;
}

/** A USDC Transfer as its log carries it (addresses 0x hex, value decimal atomic units). */
export interface UsdcTransfer {
  readonly from: string;
  readonly to: string;
  readonly value: string;
}

/** The transaction that used an authorization, and the Transfer the contract emitted with it. */
export interface AuthorizationUse {
  readonly txHash: string;
  /** The first Transfer of the token after the AuthorizationUsed log in that transaction (FiatTokenV2 emits it right after); absent when there is none. */
  readonly transfer?: UsdcTransfer;
}

/** The on-chain reads of the reconciler (a port: the node uses viem over its outbound client). */
export interface AuthorizationChain {
  read(authorizer: string, nonce: string): Promise<AuthorizationReading>;
  /** The transaction that emitted AuthorizationUsed(authorizer, nonce) in [fromBlock, latest], with its Transfer, if any. */
  usedIn(authorizer: string, nonce: string, fromBlock: bigint): Promise<AuthorizationUse | undefined>;
}

/** topic0 of ERC-20 `Transfer(address indexed from, address indexed to, uint256 value)`. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** A receipt log as JSON-RPC gives it (the fields used here). */
interface ReceiptLog {
  readonly address: string;
  readonly topics: readonly string[];
  readonly data: string;
  readonly logIndex: number | bigint | null;
}

/** The Transfer of `asset` that follows the log at `logIndex` in a receipt's logs (see AuthorizationUse.transfer). */
export function transferAfter(logs: readonly ReceiptLog[], asset: string, logIndex: number | bigint): UsdcTransfer | undefined {
  const sorted = [...logs].sort((a, b) => Number(a.logIndex ?? 0) - Number(b.logIndex ?? 0));
  for (const l of sorted) {
    if (Number(l.logIndex ?? -1) <= Number(logIndex)) continue;
    if (l.address.toLowerCase() !== asset.toLowerCase() || l.topics[0]?.toLowerCase() !== TRANSFER_TOPIC || l.topics.length < 3) continue;
    return { from: `0x${l.topics[1]!.slice(-40)}`, to: `0x${l.topics[2]!.slice(-40)}`, value: BigInt(l.data === '0x' ? 0 : l.data).toString() };
  }
  return undefined;
}

const usdcAbi = parseAbi(['function authorizationState(address authorizer, bytes32 nonce) view returns (bool)']);
/** FiatTokenV2's event, emitted by transferWithAuthorization / receiveWithAuthorization. */
export const AUTHORIZATION_USED_EVENT = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

/** The reads over Base's JSON-RPC at `rpcUrl` through the node's outbound client. */
export function createBaseAuthorizationChain(rpcUrl: string, outbound: OutboundClient, asset: Address = BASE_USDC.asset as Address, timeoutMs = 10_000): AuthorizationChain {
  const client = () => createClient('base RPC', rpcUrl, outbound, AbortSignal.timeout(timeoutMs));
  return {
    async read(authorizer, nonce) {
      const c = await client();
      const block = await c.getBlock({ blockTag: 'latest' });
      const used = await c.readContract({ address: asset, abi: usdcAbi, functionName: 'authorizationState', args: [authorizer as Address, nonce as Hex], blockNumber: block.number });
      return { used, blockNumber: block.number, blockTimestamp: Number(block.timestamp) };
    },
    async usedIn(authorizer, nonce, fromBlock) {
      const c = await client();
      const logs = await c.getLogs({ address: asset, event: AUTHORIZATION_USED_EVENT, args: { authorizer: authorizer as Address, nonce: nonce as Hex }, fromBlock, toBlock: 'latest' });
      const used = logs.find((l) => !l.removed && l.transactionHash && l.logIndex !== null);
      if (!used?.transactionHash || used.logIndex === null) return undefined;
      const receipt = await c.getTransactionReceipt({ hash: used.transactionHash });
      const transfer = transferAfter(receipt.logs, asset, used.logIndex);
      return { txHash: used.transactionHash, ...(transfer ? { transfer } : {}) };
    },
  };
}

/** Options of the reconciler. */
export interface UsdcReconcilerOptions {
  readonly logger?: Logger;
  /** First pause before a check, ms (default 2000). */
  readonly initialDelayMs?: number;
  /** Longest pause between checks, ms (default 30000). */
  readonly maxDelayMs?: number;
  /** Blocks searched before the block of the first check (default 1000: ~33 min of Base). */
  readonly lookbackBlocks?: bigint;
  /** Called with the record of a payment found settled on Base (a provider's call then owes its payout). */
  readonly onSettled?: (rec: PaymentRecord) => Promise<void>;
  /** Unix ms (injected in tests). */
  readonly now?: () => number;
  /** Signs the receipts of a payment found settled (x402/core/receipts.ts), as the settle that lost its answer would have. */
  readonly receipts?: Pick<ReceiptIssuer, 'sign'>;
}

/** Seconds a caller should wait before retrying a pending payment (what the answers say). */
export function retryAfterSeconds(validBefore: number, nowMs: number, maxDelayMs: number): number {
  const untilExpiry = validBefore - Math.floor(nowMs / 1000) + 2;
  return Math.max(1, Math.min(Math.ceil(maxDelayMs / 1000), untilExpiry));
}

/** The reconciler (see module comment). */
export class UsdcReconciler {
  private readonly log: Logger;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Payments whose check runs now. */
  private readonly checking = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  private readonly lookback: bigint;
  private readonly now: () => number;
  private readonly onSettled: UsdcReconcilerOptions['onSettled'];
  private readonly receipts: UsdcReconcilerOptions['receipts'];

  constructor(
    private readonly ledger: SettlementLedger,
    private readonly chain: AuthorizationChain,
    opts: UsdcReconcilerOptions = {},
  ) {
    this.log = opts.logger ?? silentLogger;
    this.initialDelayMs = opts.initialDelayMs ?? 2000;
    this.maxDelayMs = opts.maxDelayMs ?? 30_000;
    this.lookback = opts.lookbackBlocks ?? 1000n;
    this.now = opts.now ?? Date.now;
    this.onSettled = opts.onSettled;
    this.receipts = opts.receipts;
  }

  /** Seconds to tell a caller to wait before retrying `validBefore`'s payment. */
  retryAfter(validBefore: number): number {
    return retryAfterSeconds(validBefore, this.now(), this.maxDelayMs);
  }

  /** Resumes every `settle_pending` USDC payment of the ledger (after a restart). */
  async start(): Promise<number> {
    // Startable again after `stop()` (a fleet node that takes the signer lease back).
    this.stopped = false;
    const pending: PaymentRecord[] = [];
    for await (const rec of this.ledger.records()) if (rec.rail === 'usdc' && rec.status === 'settle_pending' && rec.reconcile) pending.push(rec);
    for (const rec of pending) this.track(rec.id, 0);
    if (pending.length) this.log.info({ count: pending.length }, 'resuming reconciliation of usdc payments from Base');
    return pending.length;
  }

  /** Starts checking a payment just recorded `settle_pending`. */
  track(id: string, attempt = 0): void {
    // Already waiting or being checked (a fleet's holder asks again for records it finds pending).
    if (this.checking.has(id)) return;
    this.schedule(id, attempt);
  }

  private schedule(id: string, attempt: number): void {
    if (this.stopped || this.timers.has(id)) return;
    const delay = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** Math.min(attempt, 20));
    const timer = setTimeout(() => {
      this.timers.delete(id);
      this.checking.add(id);
      // A record ended meanwhile by its own node (a fleet's holder reconciles what another node wrote ahead): nothing more to do.
      const run = this.check(id, attempt).catch((e: unknown) => {
        if ((e as { code?: unknown }).code !== LedgerErrorCode.CONFLICT) this.log.error({ id, err: e instanceof Error ? e.message : String(e) }, 'reconciling a usdc payment failed');
      }).finally(() => {
        this.running.delete(run);
        this.checking.delete(id);
      });
      this.running.add(run);
    }, delay);
    timer.unref?.();
    this.timers.set(id, timer);
  }

  /** Payments being reconciled now. */
  get pendingCount(): number {
    return this.timers.size;
  }

  /** Stops scheduling and waits for checks in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }

  /**
   * Why the transaction that used a payment's authorization is not this payment's settlement, or
   * undefined when it is: its Transfer moves exactly the record's amount from the authorizer to
   * this payee, and a bound nonce names this ledger's seller (a record of another seller's
   * authorization is never written here; checked again so that no settled result rests on it).
   */
  private notThisSettlement(rec: PaymentRecord, state: UsdcReconcileState, use: AuthorizationUse): string | undefined {
    const payTo = String(state.receipt.payTo ?? '').toLowerCase();
    const t = use.transfer;
    if (!t) return 'no Transfer of the token follows its AuthorizationUsed log';
    if (t.from.toLowerCase() !== state.authorizer.toLowerCase()) return `its Transfer is from ${t.from}, not from the authorizer ${state.authorizer}`;
    if (t.to.toLowerCase() !== payTo) return `its Transfer pays ${t.to}, not this node's payTo ${payTo}`;
    if (BigInt(t.value) !== BigInt(rec.amount)) return `its Transfer moves ${t.value}, not the price ${rec.amount}`;
    const seller = sellerOfNonce(state.nonce);
    if (seller !== undefined && (seller !== this.ledger.sellerId || rec.requestHash !== state.nonce.toLowerCase())) return `the nonce commits to seller ${seller}, not to this ledger's record`;
    return undefined;
  }

  /**
   * The signed receipts of a payment found settled: what x402/usdc/settle.ts signs for a settle
   * that answers, over the result stored ahead. None without an issuer, or for a record written
   * before the place of sale was kept with it (`issue`).
   */
  private async signedReceipts(rec: PaymentRecord, state: UsdcReconcileState, txId: string): Promise<SignedReceipts | Record<string, never>> {
    if (!this.receipts || !state.issue) return {};
    const chainId = Number(state.receipt.chainId ?? BASE_USDC.chainId);
    const asset = String(state.receipt.assetContract ?? BASE_USDC.asset);
    return this.receipts.sign({ rail: 'usdc', serviceId: rec.serviceId, network: `eip155:${chainId}`, txId, payer: rec.caller, amount: rec.amount, asset, result: rec.result }, state.issue);
  }

  /** One check of one payment; schedules the next unless it reached a final state. */
  private async check(id: string, attempt: number): Promise<void> {
    const rec = await this.ledger.get(id);
    if (!rec || rec.status !== 'settle_pending' || !rec.reconcile) return;
    // A record written ahead of a /settle call whose node is gone (`settling`) is an ambiguous one like any other now.
    let state: UsdcReconcileState = { ...rec.reconcile, settling: undefined, checks: (rec.reconcile.checks ?? 0) + 1 };
    try {
      const reading = await this.chain.read(state.authorizer, state.nonce);
      if (state.fromBlock === undefined) {
        const from = reading.blockNumber > this.lookback ? reading.blockNumber - this.lookback : 0n;
        state = { ...state, fromBlock: from.toString() };
      }
      if (reading.used) {
        const use = await this.chain.usedIn(state.authorizer, state.nonce, BigInt(state.fromBlock!));
        if (use) {
          if (this.stopped) return;
          const tx = use.txHash;
          const foreign = this.notThisSettlement(rec, state, use);
          if (foreign) {
            // The nonce is used for good: this authorization can never pay this node now.
            await this.ledger.expireUnsettled(id, {
              code: UsdcReconcileCode.AUTHORIZATION_USED_ELSEWHERE,
              message: `the authorization's nonce was used on Base by transaction ${tx}, which is not this payment's settlement (${foreign}); this node was not paid and releases no result`,
            });
            this.log.warn({ id, serviceId: rec.serviceId, payer: rec.caller, tx, why: foreign }, 'usdc authorization used on Base by a transaction that did not pay this node: result dropped');
            return;
          }
          const receipt = { ...state.receipt, txId: tx, settledAt: this.now(), reconciled: true, ...(await this.signedReceipts(rec, state, tx)) };
          const settled = await this.ledger.settleReconciled(id, receipt);
          await this.onSettled?.(settled).catch((e: unknown) => this.log.error({ id, err: e }, 'could not record what the reconciled payment owes (owed again at the next start)'));
          this.log.info({ id, serviceId: rec.serviceId, payer: rec.caller, tx, checks: state.checks }, 'usdc payment reconciled from Base: settled');
          return;
        }
        this.log.warn({ id, authorizer: state.authorizer, nonce: state.nonce }, 'authorization used on Base but its AuthorizationUsed log was not found yet');
      } else if (reading.blockTimestamp >= state.validBefore) {
        if (this.stopped) return;
        await this.ledger.expireUnsettled(id, {
          code: UsdcReconcileCode.EXPIRED_UNSETTLED,
          message: `the authorization was never used on Base before its validBefore (${state.validBefore}, checked at block ${reading.blockNumber}); nothing was charged and no result is released; sign a new authorization`,
        });
        this.log.info({ id, serviceId: rec.serviceId, payer: rec.caller, block: reading.blockNumber.toString() }, 'usdc payment never settled before validBefore: expired_unsettled');
        return;
      }
    } catch (e) {
      this.log.warn({ id, err: e instanceof Error ? e.message : String(e) }, 'reading Base for a pending usdc payment failed; will retry');
    }
    if (this.stopped) return;
    await this.ledger.reconcileProgress(id, state);
    this.schedule(id, attempt + 1);
  }
}

/** Creates the reconciler. */
export function createUsdcReconciler(ledger: SettlementLedger, chain: AuthorizationChain, opts: UsdcReconcilerOptions = {}): UsdcReconciler {
  return new UsdcReconciler(ledger, chain, opts);
}
