/**
 * The 402 Quote: what an unpaid call answers. x402 v1 body with the spec's extra `x402: true`
 * and two payment options: the native rail (scheme `native-x402`, asset NATIVE, an
 * `agent_invoke` for exactly `maxAmountRequired` base units) and, when the operator configured
 * it, the USDC rail (scheme `exact` on `base`, EIP-3009, amounts in USDC atomic units).
 */
import { formatAmount } from '../../consensus/amount.js';
import type { ServiceDefinition } from '../../services/types.js';
import { nativeNumber, usdcAtomicOf } from './pricing.js';
import { BROADCAST_PATH, COMMITMENT_SCHEME, USDC_COMMITMENT_SCHEME, type NativeRequirementExtra, type PaymentRequirements, type UsdcRequirementExtra, type QuoteBody } from './wire.js';

import { BASE_USDC } from '../../common/baseUsdc.js';

export { BASE_USDC } from '../../common/baseUsdc.js';
/** Seconds a native quote stays payable. */
export const NATIVE_QUOTE_TIMEOUT_SECONDS = 300;
/** Seconds an EIP-3009 authorization for a USDC quote may take. */
export const USDC_QUOTE_TIMEOUT_SECONDS = 60;
export { BROADCAST_PATH, type PaymentRequirements, type QuoteBody } from './wire.js';

/** What a quote needs besides the service. */
export interface QuoteContext {
  /** Absolute URL of the service endpoint. */
  readonly resource: string;
  readonly network: string;
  readonly chainId: number;
  /** bech32m address paid on the native rail. */
  readonly payTo: string;
  /** The seller (ledger) id payments commit to (x402/core/wire.ts requestCommitment). */
  readonly sellerId: string;
  /** Confirmations a payment needs before its call runs. */
  readonly confirmations: number;
  /** USD per NATIVE in micro-USD. */
  readonly microUsd: bigint;
  /** USDC rail, when configured. */
  readonly usdc?: { readonly payTo: string };
}

/** The native rail's option for a service. */
export function nativeRequirements(def: ServiceDefinition, q: QuoteContext): PaymentRequirements {
  const extra = {
    txType: 'agent_invoke',
    chainId: q.chainId,
    serviceId: def.id,
    priceAman: nativeNumber(def.priceBase),
    priceNative: formatAmount(def.priceBase),
    decimals: 8,
    broadcast: BROADCAST_PATH,
    sellerId: q.sellerId,
    commitment: COMMITMENT_SCHEME,
    confirmations: q.confirmations,
  } satisfies NativeRequirementExtra;
  return {
    scheme: 'native-x402',
    network: q.network,
    maxAmountRequired: def.priceBase.toString(),
    resource: q.resource,
    description: def.description,
    mimeType: 'application/json',
    payTo: q.payTo,
    maxTimeoutSeconds: NATIVE_QUOTE_TIMEOUT_SECONDS,
    asset: 'NATIVE',
    extra,
  };
}

/**
 * The USDC rail's option for a service (x402 v1 `exact` on `base`). `extra` names the seller and
 * the commitment scheme a bound authorization's nonce follows (x402/usdc/commitment.ts); official
 * x402 clients ignore both and pay with a random nonce.
 */
export function usdcRequirements(def: ServiceDefinition, q: QuoteContext & { usdc: { payTo: string } }): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'base',
    maxAmountRequired: usdcAtomicOf(def.priceBase, q.microUsd).toString(),
    resource: q.resource,
    description: def.description,
    mimeType: 'application/json',
    payTo: q.usdc.payTo,
    maxTimeoutSeconds: USDC_QUOTE_TIMEOUT_SECONDS,
    asset: BASE_USDC.asset,
    extra: { name: BASE_USDC.name, version: BASE_USDC.version, sellerId: q.sellerId, commitment: USDC_COMMITMENT_SCHEME } satisfies UsdcRequirementExtra,
  };
}

/** The 402 body for a service. */
export function buildQuote(def: ServiceDefinition, q: QuoteContext): QuoteBody {
  const accepts = [nativeRequirements(def, q)];
  if (q.usdc) accepts.push(usdcRequirements(def, { ...q, usdc: q.usdc }));
  return { x402: true, x402Version: 1, error: 'Payment Required', accepts };
}
