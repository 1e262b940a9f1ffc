/**
 * Settlement on the USDC rail (x402 `exact` on Base, EIP-3009), in the reference middleware's
 * order and with the same outcomes as the native rail's `settle.ts`:
 *
 *   1. decode the payment header (ajv) and check the authorization locally (viem): payTo, exact
 *      amount, validity window, EIP-712 signature in the quote's USDC domain — 402 otherwise;
 *   2. reserve the authorization `(from, nonce)` with the ledger's atomic claim (LevelDB): one
 *      request ever gets it, concurrently or later;
 *   3. the facilitator's `/verify` — refused: 402 with its reason; unreachable: 502, no answer in
 *      time: 504 (`facilitator_unavailable`), and the service does not run;
 *   4. run the service — a failure is answered 502 and never settled, so nobody is charged;
 *   5. the facilitator's `/settle` — failed: 402 with its reason, unreachable/late: 502/504, and
 *      the result is withheld in both cases;
 *   6. only then the result, the receipt (caller = payer, txId = the Base transaction) and the
 *      `X-PAYMENT-RESPONSE` / `PAYMENT-RESPONSE` headers.
 *
 * A reserved authorization is never released: whatever went wrong, the payer signs a new one
 * (nothing was transferred). Once settled, the signed authorization is public calldata on Base,
 * so a repeat of it proves nothing: the stored answer goes only to a repeat by its proven payer —
 * one that carries the x402 `payment-identifier` the first call sent (a client-chosen id, never
 * on chain; the ledger keeps its sha256), the salt of a bound nonce, or a sign-in as the payer —
 * so a dropped connection costs nothing twice. Any other repeat is 409 `payment_already_used`,
 * without the result. Ledger ids: `usdc:8453:<usdc contract>:<from>:<nonce>`, all lower case.
 *
 * Seller binding: a nonce made by x402/usdc/commitment.ts names the seller (ledger) it was quoted
 * by and commits to the service, the request and a salt only the payer knows; any other seller
 * refuses it (402 `wrong_seller`) before reserving anything, and a wrong or missing salt is 402
 * `commitment_mismatch`. A random nonce (the official clients') is unbound: a facilitator's
 * definitive settlement refusal (`duplicate_settlement`, nonce already used, …) is then final —
 * result withheld, nothing charged by this call — and only transport failures, timeouts and the
 * facilitator's catch-all errors are ambiguous and reconciled from Base (x402/usdc/reconcile.ts,
 * which also checks that the transaction found pays this payee the exact amount).
 *
 * An unbound authorization is safe only with a payTo this seller alone sells under: Base shows
 * the same transfer whichever seller's `/settle` moved it, so a seller whose `/settle` answer was
 * lost cannot tell its own settlement from another seller's, and could neither withhold the result
 * (the payer may have paid it alone) nor deliver it (another seller may have delivered). With
 * `sharedPayTo` (the operator's `--usdc-pay-to-shared`: other sellers with their own ledgers take
 * USDC at this payTo) a new unbound authorization is refused before anything is reserved or
 * charged (402 `authorization_unbound`); a retry of one the ledger already holds gets its answer.
 */
import { checksumAddress } from './evm.js';
import { silentLogger, type Logger } from '../../chain/types.js';
import { ServiceError, type ServiceDefinition } from '../../services/types.js';
import { executeService } from '../../services/execute.js';
import { PaymentErrorCode } from '../core/errors.js';
import { LedgerErrorCode, type PaymentRecord, type SettlementLedger, type UsdcReconcileState } from '../ledger/ledger.js';
import { PendingEnds } from '../ledger/pendingEnds.js';
import { refusal, type SettleOutcome } from '../core/outcome.js';
import type { ServiceRunContext, UsdcRail, UsdcSettleOptions } from '../core/ports.js';
import { usdNumber } from '../core/pricing.js';
import type { UsdcReconciler } from './reconcile.js';
/** Codes of reconciliation (copied from usdcReconcile.ts, which brings viem, to keep this module light). */
const UsdcReconcileCode = { SETTLEMENT_PENDING: 'settlement_pending', EXPIRED_UNSETTLED: 'expired_unsettled' } as const;
import { BASE_USDC } from '../core/quote.js';
import { FacilitatorUnavailableError, type Facilitator, type FacilitatorRequest } from './facilitator.js';
import { VALID_BEFORE_MARGIN_SECONDS, verifyUsdcPaymentLocally } from './verify.js';
import { requestHashOf, type PaymentRequirements } from '../core/wire.js';
import { settlementExtensionsOf, type IssueContext, type ReceiptIssuer, type SignedReceipts } from '../core/receipts.js';
import { caip2Of } from '../core/offers.js';
import { sha256, toHex } from '../../consensus/hash.js';
import { commitmentSaltOf, sellerOfNonce, usdcCommitmentNonce, withoutCommitmentSalt } from './commitment.js';
import {
  checkPaymentPayload,
  decodePaymentHeader,
  isSnakeCaseReason,
  networkOf,
  paymentIdentifierOf,
  toRequirementsV2,
  UsdcErrorCode,
  type UsdcPaymentPayload,
  type UsdcRefusal,
} from './wire.js';

/** The receipt of a settled USDC call (the spec's four fields first). */
export interface UsdcReceipt extends Record<string, unknown> {
  readonly serviceId: string;
  /** The payer's address (checksummed). */
  readonly caller: string;
  /** USD (= USDC) paid. */
  readonly amount: number;
  /** 0x hash of the Base transaction that moved the USDC. */
  readonly txId: string;
  readonly amountAtomic: string;
  readonly asset: 'USDC';
  readonly assetContract: string;
  readonly network: 'base';
  readonly chainId: number;
  readonly payTo: string;
  readonly scheme: 'exact';
  readonly settledAt: number;
}

/** Answers of a USDC settle (x402/core/outcome.ts): paid 200, refused 402/409, failed 502/504. */
export type UsdcOutcome = SettleOutcome;

/** Options of the USDC rail's settlement. */
export interface UsdcSettlementOptions {
  /** EVM address receiving the USDC (checksummed on the way in). */
  readonly payTo: string;
  readonly facilitator: Facilitator;
  readonly logger?: Logger;
  /** Unix ms (injected in tests). */
  readonly now?: () => number;
  /**
   * Reads Base for payments whose `/settle` timed out or failed ambiguously
   * (x402/usdc/reconcile.ts). Without it such payments become `failed` and the result is dropped.
   */
  readonly reconciler?: Pick<UsdcReconciler, 'track' | 'retryAfter'>;
  /** Signs each settled call's receipts (x402/core/receipts.ts), stored with its record. */
  readonly receipts?: ReceiptIssuer;
  /** Other sellers with their own ledgers share this payTo: only authorizations bound to this seller are taken (see module comment). */
  readonly sharedPayTo?: boolean;
}

/** Ledger id of an authorization: EIP-3009 nonces are unique per authorizer and token contract. */
export function authorizationId(from: string, nonce: string): string {
  return `usdc:${BASE_USDC.chainId}:${BASE_USDC.asset}:${from}:${nonce}`.toLowerCase();
}

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/** Codes of the seller binding (402). */
export const UsdcBindingCode = {
  /** The authorization's nonce commits to another seller (a node sharing this USDC payee). */
  WRONG_SELLER: 'wrong_seller',
  /** The nonce is a bound one, but the salt is missing or it does not commit to this service and request. */
  COMMITMENT_MISMATCH: 'commitment_mismatch',
  /** A random nonce at a seller whose payTo other sellers share: it could buy a result from each. */
  UNBOUND: 'authorization_unbound',
} as const;

/**
 * `/settle` failure reasons that do not say whether USDC moved: the facilitator's catch-all and
 * a transfer it could not match (the transaction went through). Any other snake_case reason is a
 * definitive refusal; a reverted transaction is definitive only when its hash is named.
 */
const AMBIGUOUS_SETTLE_REASONS = new Set(['unexpected_settle_error', 'invalid_exact_evm_transfer_event_mismatch', 'settle_exact_svm_transaction_confirmation_timed_out']);
const REVERTED_SETTLE_REASONS = new Set(['invalid_transaction_state', 'invalid_exact_evm_transaction_failed']);

/** Whether a `/settle` answer of `success: false` is a definitive refusal (nothing moved by this settlement). */
export function isDefinitiveSettleFailure(answer: { errorReason?: string; transaction?: string }): boolean {
  const reason = answer.errorReason;
  if (!isSnakeCaseReason(reason) || AMBIGUOUS_SETTLE_REASONS.has(reason)) return false;
  if (REVERTED_SETTLE_REASONS.has(reason)) return TX_HASH.test(answer.transaction ?? '');
  return true;
}

/** Domain tag of an unbound USDC payment's request hash. */
const USDC_REQUEST_TAG = 'native-x402/usdc-request/v1';

/**
 * What the ledger keeps as an unbound USDC payment's `requestHash`: sha256 of a tag, the
 * authorization id and the request — never a plain hash of the request, and never what proves
 * the payer (a stranger with the calldata can compute it; only the proofs of `answerKnown` count).
 */
export function usdcRequestHash(authorization: string, request: string | undefined): string {
  return toHex(sha256(new TextEncoder().encode(`${USDC_REQUEST_TAG}\n${authorization}\n${request ?? ''}`)));
}

/** How a payment relates to this seller: the request hash its record keeps, and whether the payment itself proves its payer (a bound nonce with its salt). */
type Binding = { readonly ok: true; readonly requestHash: string; readonly legacyRequestHash?: string; readonly proven: boolean } | { readonly ok: false; readonly error: UsdcRefusal };

/** A refusal of the USDC rail. */
function refused(status: number, error: UsdcRefusal, payer?: string): UsdcOutcome {
  return refusal(status, { code: error.code, message: error.message }, { rail: 'usdc', ...(payer ? { payer } : {}) });
}

/** Settlement of USDC payments (see module comment). */
export class UsdcSettlement implements UsdcRail {
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly facilitator: Facilitator;
  private readonly reconciler: UsdcSettlementOptions['reconciler'];
  private readonly receipts: ReceiptIssuer | undefined;
  private readonly sharedPayTo: boolean;
  /** Ends the ledger could not take when they came (x402/ledger/pendingEnds.ts). */
  private readonly ends: PendingEnds;
  /** Checksummed payTo. */
  readonly payTo: string;

  constructor(
    private readonly ledger: SettlementLedger,
    /** What services run with; each call gets its own abort signal. */
    private readonly context: ServiceRunContext,
    opts: UsdcSettlementOptions,
  ) {
    this.payTo = checksumAddress(opts.payTo);
    this.facilitator = opts.facilitator;
    this.reconciler = opts.reconciler;
    this.receipts = opts.receipts;
    this.sharedPayTo = opts.sharedPayTo ?? false;
    this.log = opts.logger ?? silentLogger;
    this.now = opts.now ?? Date.now;
    this.ends = new PendingEnds(this.log);
  }

  /**
   * After a restart: USDC payments left `claimed` (the node stopped mid-call) become `failed`,
   * so their authorizations stay used and a repeat gets a clear answer instead of "in progress".
   */
  async recover(): Promise<number> {
    const stale: PaymentRecord[] = [];
    for await (const rec of this.ledger.records()) if (rec.rail === 'usdc' && rec.status === 'claimed') stale.push(rec);
    for (const rec of stale) await this.failInterrupted(rec);
    return stale.length;
  }

  /** Marks one USDC payment left `claimed` by a node that stopped (this one before a restart, or a fleet node gone) `failed`. */
  async failInterrupted(rec: PaymentRecord): Promise<void> {
    await this.ledger.fail(rec.id, { code: 'node_restarted', message: 'the node stopped while this payment was in progress; no result was released' });
    this.log.warn({ id: rec.id, serviceId: rec.serviceId, payer: rec.caller }, 'usdc payment interrupted by a restart: marked failed');
  }

  /**
   * Settles a payment for a call of `def` with `request` (validated into `input`), against `req`:
   * the node's USDC requirements for this call, as quoted. `payment` is the base64 `X-PAYMENT` /
   * `PAYMENT-SIGNATURE` value, or the payload already decoded (MCP's `_meta["x402/payment"]`).
   */
  async settle(def: ServiceDefinition, request: string | undefined, input: unknown, payment: string | object, req: PaymentRequirements, opts: UsdcSettleOptions = {}): Promise<UsdcOutcome> {
    const decoded = typeof payment === 'string' ? decodePaymentHeader(payment) : checkPaymentPayload(payment);
    if (!decoded.ok) return refused(402, { code: decoded.code, message: decoded.message });
    return this.settleDecoded(def, request, input, decoded.payment, req, opts.provenPayer, opts.issue);
  }

  private async settleDecoded(def: ServiceDefinition, request: string | undefined, input: unknown, payment: UsdcPaymentPayload, req: PaymentRequirements, provenPayer?: string, issue?: IssueContext): Promise<UsdcOutcome> {
    const local = await verifyUsdcPaymentLocally(payment, req, Math.floor(this.now() / 1000));
    if (!local.isValid) {
      // An expired authorization the ledger already holds (settled late, or reconciled): once the
      // rest of it checks out (signature, payee, amount), its retry gets the stored answer.
      if (local.code === UsdcErrorCode.VALID_BEFORE) {
        const inWindow = await verifyUsdcPaymentLocally(payment, req, Number(payment.payload.authorization.validBefore) - VALID_BEFORE_MARGIN_SECONDS);
        const known = inWindow.isValid ? await this.ledger.get(authorizationId(payment.payload.authorization.from, payment.payload.authorization.nonce)) : undefined;
        if (known) {
          const binding = this.bindingOf(payment, def, request, req);
          if (!binding.ok) return refused(402, binding.error, local.payer);
          return this.answerKnown(known, def, binding, payment, provenPayer);
        }
      }
      return refused(402, { code: local.code, message: local.message }, local.payer);
    }

    const auth = payment.payload.authorization;
    const payer = checksumAddress(auth.from);
    const id = authorizationId(auth.from, auth.nonce);
    // The seller binding, before anything is reserved: another seller's authorization is never claimed here.
    const binding = this.bindingOf(payment, def, request, req);
    if (!binding.ok) {
      this.log.info({ id, serviceId: def.id, payer, code: binding.error.code }, 'usdc payment refused: bound to another seller or call');
      return refused(402, binding.error, payer);
    }
    if (this.sharedPayTo && !binding.proven) {
      // Another seller may take the same authorization: only a retry of one already held here is answered.
      const known = await this.ledger.get(id);
      if (known) return this.answerKnown(known, def, binding, payment, provenPayer);
      this.log.info({ id, serviceId: def.id, payer }, 'usdc payment refused: unbound authorization at a shared payTo');
      return refused(402, { code: UsdcBindingCode.UNBOUND, message: `other sellers take USDC at this node's payTo, so it takes only an authorization bound to it: sign one whose nonce commits to this quote (extra.sellerId ${this.ledger.sellerId}, scheme extra.commitment; the agent SDK's usdcBinding) and send its salt; nothing was charged` }, payer);
    }
    const accessKey = accessKeyOf(payment);
    const claim = await this.ledger.claim({ id, rail: 'usdc', serviceId: def.id, requestHash: binding.requestHash, caller: payer, amount: BigInt(auth.value).toString(), ...(accessKey ? { accessKey } : {}) }, this.now());
    if (!claim.claimed) return this.answerKnown(claim.record, def, binding, payment, provenPayer);

    const started = this.now();
    // The salt stays between payer and seller: the facilitator needs the authorization only.
    const body = facilitatorRequestOf(withoutCommitmentSalt(payment), req);
    try {
      const verdict = await this.facilitator.verify(body);
      if (!verdict.isValid) {
        const code = isSnakeCaseReason(verdict.invalidReason) ? verdict.invalidReason : UsdcErrorCode.FACILITATOR_REJECTED;
        const error = { code, message: `the facilitator refused the authorization (${code})` };
        await this.ends.write(id, 'failed', () => this.ledger.fail(id, error));
        this.log.info({ id, serviceId: def.id, payer, code }, 'usdc payment refused by the facilitator');
        return refused(402, error, payer);
      }
    } catch (e) {
      if ((e as { code?: unknown }).code === LedgerErrorCode.UNAVAILABLE) throw e; // the refusal's end is kept (PendingEnds)
      return this.unavailable(id, def, payer, e, 'verify', 'the service did not run and nothing was charged');
    }

    let result: unknown;
    try {
      result = await executeService(def, this.context, input);
    } catch (e) {
      const error = e instanceof ServiceError ? { code: e.code, message: e.message } : { code: PaymentErrorCode.SERVICE_FAILED, message: 'the service failed' };
      await this.ends.write(id, 'failed', () => this.ledger.fail(id, error));
      this.log.warn({ id, serviceId: def.id, payer, err: error.message }, 'usdc call failed: not settled, nothing charged');
      return { kind: 'failed', status: 502, rail: 'usdc', body: { paid: false, error: { code: error.code, message: `${error.message}; the payment was not settled, nothing was charged` } } };
    }

    const receiptOf = (txId: string): UsdcReceipt => ({
      serviceId: def.id,
      caller: payer,
      amount: usdNumber(BigInt(auth.value)),
      txId,
      amountAtomic: BigInt(auth.value).toString(),
      asset: 'USDC',
      assetContract: req.asset,
      network: 'base',
      chainId: BASE_USDC.chainId,
      payTo: this.payTo,
      scheme: 'exact',
      settledAt: this.now(),
    });
    const reconciler = this.reconciler;
    const validBefore = Number(auth.validBefore);
    const reconcile: UsdcReconcileState = { authorizer: payer, nonce: auth.nonce.toLowerCase(), validBefore, receipt: receiptOf(''), network: networkOf(payment), ...(issue ? { issue: { baseUrl: issue.baseUrl, resource: issue.resource } } : {}) };
    if (reconciler) {
      // Write-ahead: the result is kept before the facilitator can move the USDC. A node that dies
      // after /settle and before the ledger write then leaves `settle_pending`, which the
      // reconciler settles from Base with this result — not a claim recovered as `failed` with
      // the payer charged and no result (found by test/integration/fleetRandom.test.ts).
      const pending = { code: UsdcReconcileCode.SETTLEMENT_PENDING, message: `the authorization is being settled on Base; should the facilitator's answer be lost, the node checks Base until its validBefore (${validBefore}): retry with the same payment header` };
      try {
        await this.ledger.settlePending(id, result, { ...reconcile, settling: true }, pending);
      } catch (e) {
        // Not settled (nothing charged): the payment fails, once the ledger takes it.
        if ((e as { code?: unknown }).code === LedgerErrorCode.UNAVAILABLE) await this.ends.write(id, 'failed', () => this.ledger.fail(id, { code: LedgerErrorCode.UNAVAILABLE, message: 'the payment ledger could not be reached before the settlement; nothing was charged' })).catch(() => undefined);
        throw e;
      }
    }
    /** An ambiguous settlement: Base decides (reconciler), or without one the result is withheld. */
    const ambiguous = async (e: unknown, why: string): Promise<UsdcOutcome> => {
      if (!reconciler) return this.unavailable(id, def, payer, e, 'settle', 'the result is withheld and this node cannot check Base (no Base RPC URL); sign a new authorization');
      const wait = reconciler.retryAfter(validBefore);
      const timedOut = e instanceof FacilitatorUnavailableError && e.timedOut;
      const error = {
        code: UsdcReconcileCode.SETTLEMENT_PENDING,
        message: `${why}; the node checks Base until the authorization's validBefore (${validBefore}): retry with the same payment header after ${wait} s to get the result and receipt if it was settled, or a final answer (nothing charged) if it was not; the result goes only to its proven payer: the retry must carry this call's payment-identifier or commitment salt, or sign in as the payer (SIGN-IN-WITH-X)`,
      };
      // The result is kept already (written ahead): Base decides now.
      await this.ends.write(id, 'settle_pending', async () => {
        const rec = await this.ledger.reconcileProgress(id, reconcile);
        reconciler.track(id);
        return rec;
      });
      this.log.warn({ id, serviceId: def.id, payer, why, validBefore }, 'usdc settlement ambiguous: result kept, reconciling from Base');
      return { kind: 'failed', status: timedOut ? 504 : 502, rail: 'usdc', body: { paid: false, error, retryAfter: wait } };
    };

    let settled;
    try {
      settled = await this.facilitator.settle(body);
    } catch (e) {
      return ambiguous(e, e instanceof FacilitatorUnavailableError ? e.message : 'the facilitator call failed');
    }
    if (!settled.success) {
      const code = isSnakeCaseReason(settled.errorReason) ? settled.errorReason : UsdcErrorCode.FACILITATOR_REJECTED;
      const definitive = isDefinitiveSettleFailure(settled);
      if (reconciler && !definitive) return ambiguous(undefined, `the facilitator reported the settlement failed (${code})`);
      // A definitive refusal (already used, duplicate, invalid…) is final: this settlement moved
      // nothing, so the result is withheld — the authorization may have paid someone else.
      const error = definitive
        ? { code, message: `the facilitator refused to settle the authorization (${code}): this call charged nothing and its result is withheld; sign a new authorization` }
        : { code, message: `the facilitator could not settle the authorization (${code}); the result is withheld` };
      try {
        // Written ahead as settle_pending with a reconciler: it ends unsettled, the result dropped.
        await this.ends.write(id, reconciler ? 'expired_unsettled' : 'failed', () => (reconciler ? this.ledger.expireUnsettled(id, error) : this.ledger.fail(id, error)));
      } catch (e) {
        // A fleet's reconciler ended it first: its record is the answer (with the proofs it needs).
        const rec = (e as { code?: unknown }).code === LedgerErrorCode.CONFLICT ? await this.ledger.get(id) : undefined;
        if (!rec) throw e;
        return this.answerKnown(rec, def, binding, payment, provenPayer);
      }
      // An unbound authorization already used elsewhere: another seller may share this payTo (then --usdc-pay-to-shared closes the gap a lost /settle answer leaves).
      const hint = definitive && !binding.proven && !this.sharedPayTo ? { hint: 'if another seller takes USDC at this payTo with its own ledger, set --usdc-pay-to-shared' } : {};
      this.log.warn({ id, serviceId: def.id, payer, code, definitive, ...hint }, 'usdc settlement refused by the facilitator: result withheld');
      return refused(402, error, payer);
    }
    if (!TX_HASH.test(settled.transaction)) {
      return ambiguous(new FacilitatorUnavailableError('/settle', false, 'the facilitator reported success without a transaction hash'), 'the facilitator reported success without a transaction hash');
    }

    const receipt = { ...receiptOf(settled.transaction), ...(await this.signedReceipts(def, payer, auth.value, req, settled.transaction, result, issue)) };
    // Charged on Base by now: with the ledger unreachable the result is stored once it is back (a retry with the payment identifier gets it).
    try {
      await this.ends.write(id, 'settled', () => (reconciler ? this.ledger.settleReconciled(id, receipt) : this.ledger.settle(id, result, receipt)));
    } catch (e) {
      // A fleet's reconciler found it settled on Base first: its record is the answer.
      const rec = (e as { code?: unknown }).code === LedgerErrorCode.CONFLICT ? await this.ledger.get(id) : undefined;
      if (rec?.status !== 'settled') throw e;
      return { kind: 'paid', status: 200, rail: 'usdc', paymentId: id, body: { paid: true, result: rec.result, receipt: rec.receipt ?? {} }, response: { success: true, transaction: String(rec.receipt?.txId ?? ''), network: networkOf(payment), payer, ...settlementExtensionsOf(rec.receipt) } };
    }
    this.log.info({ id, serviceId: def.id, payer, tx: settled.transaction, ms: this.now() - started }, 'usdc call settled');
    return { kind: 'paid', status: 200, rail: 'usdc', paymentId: id, body: { paid: true, result, receipt }, response: { success: true, transaction: settled.transaction, network: networkOf(payment), payer, ...settlementExtensionsOf(receipt) } };
  }

  /** The signed receipts of a settled call (none without an issuer or the place it was sold). */
  private async signedReceipts(def: ServiceDefinition, payer: string, value: string, req: PaymentRequirements, txId: string, result: unknown, issue: IssueContext | undefined): Promise<SignedReceipts | Record<string, never>> {
    if (!this.receipts || !issue) return {};
    return this.receipts.sign({ rail: 'usdc', serviceId: def.id, network: caip2Of(req), txId, payer, amount: BigInt(value).toString(), asset: req.asset, result }, issue);
  }

  /** 502/504 for a facilitator that could not be used; the reservation becomes `failed`. */
  private async unavailable(id: string, def: ServiceDefinition, payer: string, e: unknown, step: 'verify' | 'settle', consequence: string): Promise<UsdcOutcome> {
    const timedOut = e instanceof FacilitatorUnavailableError && e.timedOut;
    const detail = e instanceof FacilitatorUnavailableError ? e.message : 'unexpected error talking to the facilitator';
    const error = { code: UsdcErrorCode.FACILITATOR_UNAVAILABLE, message: `${detail}; ${consequence}` };
    await this.ends.write(id, 'failed', () => this.ledger.fail(id, error));
    if (!(e instanceof FacilitatorUnavailableError)) this.log.error({ err: e, id, serviceId: def.id, step }, 'facilitator call crashed');
    else this.log.warn({ id, serviceId: def.id, payer, step, timedOut, err: e.message }, 'facilitator unavailable');
    return { kind: 'failed', status: timedOut ? 504 : 502, rail: 'usdc', body: { paid: false, error } };
  }

  /**
   * The seller binding of a payment (see module comment): a bound nonce must name this ledger's
   * seller id and, with the salt the payment carries, commit to this service and request. A v2
   * payment's `accepted.extra.sellerId` (what @x402/fetch copies from the quote) must name this
   * seller too — not a proof (it is not signed), but it stops an honest client that sends one
   * authorization to the wrong node of two that share a payee.
   */
  private bindingOf(payment: UsdcPaymentPayload, def: ServiceDefinition, request: string | undefined, req: PaymentRequirements): Binding {
    const sellerId = this.ledger.sellerId;
    const nonce = payment.payload.authorization.nonce.toLowerCase();
    const named = sellerOfNonce(nonce) ?? (payment.x402Version === 2 && typeof payment.accepted.extra?.sellerId === 'string' ? payment.accepted.extra.sellerId.toLowerCase() : undefined);
    if (named !== undefined && named !== sellerId) {
      return { ok: false, error: { code: UsdcBindingCode.WRONG_SELLER, message: `this authorization was made for seller ${named}, not for this node's ledger (${sellerId}): send it to the node that quoted it, or sign a new one for this node's quote (extra.sellerId)` } };
    }
    if (sellerOfNonce(nonce) === undefined) {
      const id = authorizationId(payment.payload.authorization.from, nonce);
      return { ok: true, requestHash: usdcRequestHash(id, request), legacyRequestHash: requestHashOf(request), proven: false };
    }
    const salt = commitmentSaltOf(payment);
    if (salt === undefined || usdcCommitmentNonce({ sellerId, serviceId: def.id, request, salt }) !== nonce) {
      return { ok: false, error: { code: UsdcBindingCode.COMMITMENT_MISMATCH, message: `this authorization's nonce commits to a service, request and salt this call does not carry (the salt goes in extensions["request-commitment"].info.salt; scheme ${String(req.extra.commitment ?? 'see extra.commitment')})` } };
    }
    return { ok: true, requestHash: nonce, proven: true };
  }

  /** The answer for an authorization the ledger already holds. */
  private answerKnown(rec: PaymentRecord, def: ServiceDefinition, binding: Binding & { ok: true }, payment: UsdcPaymentPayload, provenPayer?: string): UsdcOutcome {
    const used = (message: string): UsdcOutcome => refused(409, { code: PaymentErrorCode.PAYMENT_ALREADY_USED, message }, rec.caller);
    // Records written before request hashes were domain-separated keep the plain sha256 of the request.
    const sameCall = rec.requestHash === binding.requestHash || (binding.legacyRequestHash !== undefined && rec.requestHash === binding.legacyRequestHash);
    if (rec.serviceId !== def.id || !sameCall) return used('this authorization (from, nonce) was already used for another call; sign a new one');
    switch (rec.status) {
      case 'claimed':
        return refused(409, { code: PaymentErrorCode.SETTLEMENT_IN_PROGRESS, message: 'this authorization is being settled; retry in a moment' }, rec.caller);
      case 'settled': {
        // The authorization is public once settled (calldata on Base), and so is a guessable
        // request: only the first call's payment identifier, the salt of a bound nonce, or a
        // sign-in as the payer (sign-in-with-x) proves the payer — also for a result settled
        // through reconciliation and never delivered. A bare retry gets nothing.
        const key = accessKeyOf(payment);
        const byId = rec.accessKey !== undefined && key === rec.accessKey;
        const bySignIn = provenPayer !== undefined && provenPayer.toLowerCase() === rec.caller.toLowerCase();
        const byCommitment = binding.proven && rec.requestHash === binding.requestHash;
        if (!byId && !bySignIn && !byCommitment) {
          return used('this authorization was already settled; its result goes only to its proven payer: a retry that carries the payment-identifier (x402 extension) the first call sent, the salt of a bound nonce (extensions["request-commitment"]), or signed in as its payer (SIGN-IN-WITH-X); sign a new authorization for a new call');
        }
        const receipt = rec.receipt ?? {};
        return { kind: 'paid', status: 200, rail: 'usdc', paymentId: rec.id, body: { paid: true, result: rec.result, receipt }, response: { success: true, transaction: String(receipt.txId ?? ''), network: networkOf(payment), payer: rec.caller, ...settlementExtensionsOf(receipt) } };
      }
      case 'settle_pending': {
        // Its node's /settle call is under way (written ahead): as for a claim.
        if (rec.reconcile?.settling) return refused(409, { code: PaymentErrorCode.SETTLEMENT_IN_PROGRESS, message: 'this authorization is being settled; retry in a moment' }, rec.caller);
        const validBefore = rec.reconcile?.validBefore ?? 0;
        const wait = this.reconciler?.retryAfter(validBefore) ?? 5;
        return refused(409, { code: UsdcReconcileCode.SETTLEMENT_PENDING, message: `the settlement of this authorization is being checked on Base until its validBefore (${validBefore}); retry with the same payment header after ${wait} s` }, rec.caller);
      }
      case 'expired_unsettled':
        // Ended unsettled after its result was kept: expired unused, refused for good by the facilitator, or used on Base by a transaction that did not pay this node.
        return refused(402, { code: rec.error?.code ?? UsdcReconcileCode.EXPIRED_UNSETTLED, message: rec.error?.message ?? 'the authorization was never used on Base before its validBefore; nothing was charged; sign a new authorization' }, rec.caller);
      default:
        return used(`this authorization was already presented and ended with ${rec.error?.code ?? rec.status}; sign a new one`);
    }
  }
}

/** Hex sha256 of a payment's payment identifier (what the ledger keeps of it), when it carries one. */
function accessKeyOf(payment: UsdcPaymentPayload): string | undefined {
  const id = paymentIdentifierOf(payment);
  return id === undefined ? undefined : toHex(sha256(new TextEncoder().encode(id)));
}

/** The facilitator request of a payment: our requirements in the payment's protocol version. */
export function facilitatorRequestOf(payment: UsdcPaymentPayload, req: PaymentRequirements): FacilitatorRequest {
  return payment.x402Version === 1
    ? { x402Version: 1, paymentPayload: payment, paymentRequirements: req }
    : { x402Version: 2, paymentPayload: payment, paymentRequirements: toRequirementsV2(req) };
}

/** Creates the USDC settlement. */
export function createUsdcSettlement(ledger: SettlementLedger, context: ServiceRunContext, opts: UsdcSettlementOptions): UsdcSettlement {
  return new UsdcSettlement(ledger, context, opts);
}
