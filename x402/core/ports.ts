/**
 * The ports of the payment protocol: everything `x402/` needs from the rest of the node, as
 * narrow interfaces declared by the consumer (the chain, the mempool, the service catalog, the
 * price source, the logger) and the two rails as the paid-call core sees them. The node wires
 * the real parts (`node/payments.ts`); tests supply their own.
 *
 * Imports types only, never implementations, so no module of `x402/` reaches another through
 * this file (no import cycles: settle.ts and refunds.ts both depend on it, not on each other).
 */
import type { Chain } from '../../chain/chain.js';
import type { ChainReader, Logger, MempoolReader } from '../../chain/types.js';
import type { ChainParams } from '../../consensus/params.js';
import type { NativeUsdSource, ServiceContext, ServiceDefinition } from '../../services/types.js';
import type { PaymentRecord } from '../ledger/ledger.js';
import type { RefusedOutcome, SettleOutcome } from './outcome.js';
import type { IssueContext } from './receipts.js';
import type { PaymentRequirements } from './wire.js';

export type { Logger, NativeUsdSource, ServiceContext, ServiceDefinition };

/** What settlement and refunds read of the chain: the reader, its tip events and state snapshots. */
export type PaymentChain = ChainReader & Pick<Chain, 'on' | 'off' | 'getStateView'>;

/** What settlement and refunds need of the mempool: the reader and submission (refunds). */
export interface PaymentMempool extends MempoolReader {
  add(bytes: Uint8Array): Promise<{ id: string; status: 'accepted' }>;
}

/** What services run with in a paid call (each call gets its own abort signal). */
export type ServiceRunContext = Omit<ServiceContext, 'signal'>;

/** What the paid-call core needs of the service registry. */
export interface ServiceCatalog {
  get(id: string): ServiceDefinition | undefined;
  validateInput(def: ServiceDefinition, request: string | undefined): { ok: true; input: unknown } | { ok: false; error: { code: string; message: string; details?: unknown } };
  isAvailable(def: ServiceDefinition): boolean;
  /**
   * Whether a payment already made for `def` may still be served: `isAvailable`, or a provider
   * service in its start-up grace (its agent polled before the node restarted and may poll again
   * soon). New quotes and USDC calls follow `isAvailable` alone. Absent: `isAvailable`.
   */
  isHonorable?(def: ServiceDefinition): boolean;
}

/** `catalog.isHonorable(def)`, or `isAvailable` where the catalog has no start-up grace. */
export function isHonorable(catalog: Pick<ServiceCatalog, 'isAvailable' | 'isHonorable'>, def: ServiceDefinition): boolean {
  return catalog.isHonorable ? catalog.isHonorable(def) : catalog.isAvailable(def);
}

/**
 * What the payee holds against the refunds it owes, base units (x402/native/refunds.ts `cover`):
 * the refunds it cannot pay (`stuck`), its balance after what its pending transactions spend, and
 * one refund's fee at the rate a refund bids now. The paid-call core weighs new sales against it.
 */
export interface RefundCover {
  readonly stuck: { readonly count: number; readonly amountBase: bigint };
  readonly spendableBase: bigint;
  readonly refundFeeBase: bigint;
}

/** What native settlement needs of refunds: refund one claimed payment whose service failed. */
export interface Refunder {
  refund(id: string, error: { code: string; message: string }): Promise<PaymentRecord>;
}

/** The chain facts the quotes name. */
export type QuoteChain = Pick<ChainParams, 'network' | 'chainId'>;

/** A native payment as a settle presents it: the invoke's id and the payer's secret its requestHash commits to. */
export interface NativePaymentProof {
  readonly txId: string;
  /** 64 hex characters (x402/core/wire.ts requestCommitment); without it nothing is settled or told. */
  readonly salt?: string;
}

/** The native rail as the core uses it (`NativeSettlement`). */
export interface NativeRail {
  /** This node's payee address (bech32m). */
  readonly payTo: string;
  /** The seller id payments commit to (the ledger's id). */
  readonly sellerId: string;
  /** Confirmations a payment needs before its call runs. */
  readonly requiredConfirmations: number;
  /**
   * Settles the payment `proof` names for a call of `def` with `request` (validated into
   * `input`), waiting up to `waitMs` for its block; `issue` names where the call was sold (its
   * signed receipts, x402/core/receipts.ts). Refusals are outcomes, never throws.
   */
  settle(def: ServiceDefinition, request: string | undefined, input: unknown, proof: NativePaymentProof, waitMs: number, issue?: IssueContext): Promise<SettleOutcome>;
  /**
   * A settle at a service that is unknown or not for sale here: the refusal naming the refund of
   * a payment the node will not honour (or 202 / payment_not_found while it is not mined);
   * undefined when `txId` is no such payment (x402/native/unhonored.ts).
   */
  settleRefused?(txId: string, waitMs: number): Promise<RefusedOutcome | undefined>;
}

/** What a USDC settle may carry besides the payment. */
export interface UsdcSettleOptions {
  /** An address the caller proved to control (x402 sign-in-with-x, x402/usdc/siwx.ts): the payer's gets a stored result again. */
  readonly provenPayer?: string;
  /** Where the call was sold: its signed receipts name it (x402/core/receipts.ts). */
  readonly issue?: IssueContext;
}

/** The USDC rail as the core uses it (`UsdcSettlement`). */
export interface UsdcRail {
  /** The EVM address receiving the USDC (checksummed). */
  readonly payTo: string;
  /**
   * Settles a payment against `req` (this call's USDC option, as quoted): `payment` is the base64
   * header value (`X-PAYMENT` / `PAYMENT-SIGNATURE`) or the payload already decoded (MCP).
   */
  settle(def: ServiceDefinition, request: string | undefined, input: unknown, payment: string | object, req: PaymentRequirements, opts?: UsdcSettleOptions): Promise<SettleOutcome>;
}
