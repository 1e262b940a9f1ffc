/**
 * Reading the node's answers on the agent side: a 402 body into a checked `AgentQuote` (the
 * `native-x402` option, with a fresh secret salt and the commitment the payment will carry to
 * the request about to be sent, x402/core/wire.ts), and a 200 settlement into the result and a
 * checked receipt. Wire shapes come from `x402/core/wire.ts`, the server's own.
 */
import { formatAmount, parseAmount, parseBaseUnits } from '../consensus/amount.js';
import { AgentClientError, AgentErrorCode } from './errors.js';
import { isObject } from './http.js';
import { randomBytes } from 'node:crypto';
import { COMMITMENT_SCHEME, SALT_BYTES, SELLER_ID_BYTES, requestCommitment, type NativePaymentRequirement } from '../x402/core/wire.js';
import { commitmentExtension, USDC_COMMITMENT_SCHEME, usdcCommitmentNonce } from '../x402/usdc/commitment.js';

/** A parsed quote: the native requirement plus what paying it needs, checked and typed. */
export interface AgentQuote {
  readonly serviceId: string;
  /** The request the quote (and the payment's requestHash) is bound to; undefined when none. */
  readonly request: string | undefined;
  /** Exact price, base units. */
  readonly amount: bigint;
  /** Exact price, NATIVE decimal string. */
  readonly priceNative: string;
  /** Price, NATIVE number (display only). */
  readonly priceAman: number;
  readonly payTo: string;
  readonly network: string;
  readonly chainId: number;
  /** The seller (settlement ledger) that quoted: the payment commits to it. */
  readonly sellerId: string;
  /** The payer's secret (64 hex): revealed only in the settle; keep it to settle again. */
  readonly salt: string;
  /** The payment's requestHash: the commitment to seller, service, request and salt. */
  readonly requestHash: string;
  /** Confirmations the node wants before it runs the call. */
  readonly confirmations: number;
  /** Until when (Unix ms, local clock) the quoted price is guaranteed. */
  readonly validUntil: number;
  /** Where the quote came from and where the settle goes. */
  readonly endpoint: string;
  /** The node's native option as received. */
  readonly requirement: NativePaymentRequirement;
  /**
   * The USDC option when the node offers one (this client does not pay it; `usdcBinding` gives
   * an EIP-3009 signer the nonce that binds an authorization to this seller). `sellerId` and
   * `commitment` are present when the node names them.
   */
  readonly usdc?: { readonly maxAmountRequired: string; readonly payTo: string; readonly network: string; readonly asset?: string; readonly sellerId?: string; readonly commitment?: string };
}

/** The receipt of a settled call (spec fields, plus block data when the node adds it). */
export interface AgentReceipt {
  readonly serviceId: string;
  /** Address of the payer. */
  readonly caller: string;
  /** NATIVE amount (number, as in the spec). */
  readonly amount: number;
  readonly txId: string;
  /** Exact amount, base units. */
  readonly amountBase?: string;
  readonly blockHash?: string;
  readonly height?: number;
  readonly network?: string;
  /** The x402 Offer and Receipt extension's signed receipt (JWS), when the node signs receipts (sdk/receipts.ts verifies it). */
  readonly offerReceipt?: { readonly format: string; readonly signature: string };
  /** The payee's hybrid (ML-DSA-87 + Ed25519) receipt over the payment and the result bytes (sdk/receipts.ts verifies it). */
  readonly hybridReceipt?: Record<string, unknown>;
}

/** `bad_quote`: the 402 of `serviceId` cannot be paid as it is. */
export function badQuote(why: string, serviceId: string): AgentClientError {
  return new AgentClientError(AgentErrorCode.BAD_QUOTE, `the 402 quote of ${serviceId} is not usable: ${why}`, { serviceId, status: 402 });
}

/**
 * Parses a 402 body into a quote: finds the `native-x402` option, checks its fields and that it
 * is for `serviceId` (never pays a quote for something else), and commits to `request` with
 * `salt` (default: 32 fresh random bytes).
 */
export function parseQuote(body: unknown, serviceId: string, request: string | undefined, endpoint: string, now: number, salt: string = randomBytes(SALT_BYTES).toString('hex')): AgentQuote {
  if (!isObject(body) || !Array.isArray(body.accepts)) throw badQuote('no accepts[] array', serviceId);
  if (body.x402Version !== undefined && body.x402Version !== 1) throw badQuote(`x402Version ${String(body.x402Version)} is not 1`, serviceId);
  const options = body.accepts.filter(isObject);
  const native = options.find((o) => o.scheme === 'native-x402');
  if (!native) {
    throw new AgentClientError(AgentErrorCode.NO_NATIVE_OPTION, `the quote of ${serviceId} offers no native-x402 option (schemes: ${options.map((o) => String(o.scheme)).join(', ') || 'none'})`, { serviceId, status: 402 });
  }
  const extra = native.extra;
  if (!isObject(extra)) throw badQuote('the native option has no extra object', serviceId);
  if (native.asset !== 'NATIVE') throw badQuote(`asset ${String(native.asset)} is not NATIVE`, serviceId);
  if (extra.txType !== 'agent_invoke') throw badQuote(`txType ${String(extra.txType)} is not agent_invoke`, serviceId);
  if (extra.serviceId !== serviceId) throw badQuote(`it is for service ${String(extra.serviceId)}`, serviceId);
  if (typeof native.maxAmountRequired !== 'string' || !/^\d{1,20}$/.test(native.maxAmountRequired)) throw badQuote('maxAmountRequired is not a base-unit integer string', serviceId);
  const amount = parseBaseUnits(native.maxAmountRequired, 'maxAmountRequired');
  if (amount <= 0n) throw badQuote('the price is zero', serviceId);
  if (typeof native.payTo !== 'string' || native.payTo.length === 0) throw badQuote('payTo is missing', serviceId);
  if (typeof native.network !== 'string' || native.network.length === 0) throw badQuote('network is missing', serviceId);
  if (!Number.isInteger(extra.chainId) || (extra.chainId as number) < 0) throw badQuote('extra.chainId is not an integer', serviceId);
  const priceNative = typeof extra.priceNative === 'string' ? extra.priceNative : undefined;
  if (priceNative !== undefined && parseAmount(priceNative, 'priceNative') !== amount) throw badQuote(`priceNative ${priceNative} disagrees with maxAmountRequired ${native.maxAmountRequired}`, serviceId);
  if (extra.commitment !== COMMITMENT_SCHEME) throw badQuote(`extra.commitment ${String(extra.commitment)} is not ${COMMITMENT_SCHEME}, the only commitment this client makes`, serviceId);
  const sellerId = typeof extra.sellerId === 'string' && new RegExp(`^[0-9a-f]{${SELLER_ID_BYTES * 2}}$`).test(extra.sellerId) ? extra.sellerId : undefined;
  if (!sellerId) throw badQuote(`extra.sellerId is not ${SELLER_ID_BYTES * 2} lowercase hex characters`, serviceId);
  const confirmations = Number.isInteger(extra.confirmations) && (extra.confirmations as number) >= 1 ? (extra.confirmations as number) : 1;
  const maxTimeoutSeconds = Number.isInteger(native.maxTimeoutSeconds) && (native.maxTimeoutSeconds as number) > 0 ? (native.maxTimeoutSeconds as number) : 60;
  const usdcRaw = options.find((o) => o.scheme === 'exact' && o.network === 'base');
  const usdc =
    usdcRaw && typeof usdcRaw.maxAmountRequired === 'string' && typeof usdcRaw.payTo === 'string'
      ? {
          maxAmountRequired: usdcRaw.maxAmountRequired,
          payTo: usdcRaw.payTo,
          network: 'base',
          ...(typeof usdcRaw.asset === 'string' ? { asset: usdcRaw.asset } : {}),
          ...usdcSellerOf(usdcRaw.extra),
        }
      : undefined;
  const requirement = native as unknown as NativePaymentRequirement;
  return {
    serviceId,
    request,
    amount,
    priceNative: priceNative ?? formatAmount(amount),
    priceAman: typeof extra.priceAman === 'number' ? extra.priceAman : Number(formatAmount(amount)),
    payTo: native.payTo,
    network: native.network,
    chainId: extra.chainId as number,
    sellerId,
    salt,
    requestHash: requestCommitment({ sellerId, serviceId, request, salt }),
    confirmations,
    validUntil: now + maxTimeoutSeconds * 1000,
    endpoint,
    requirement,
    ...(usdc ? { usdc } : {}),
  };
}

/** Parses a 200 settlement body into result and receipt, checked against the payment. */
export function parseSettlement(json: unknown, quote: AgentQuote, txId: string): { result: unknown; receipt: AgentReceipt } {
  const bad = (why: string) => new AgentClientError(AgentErrorCode.BAD_RECEIPT, `the settlement of ${txId} is not usable: ${why}`, { status: 200, txId, serviceId: quote.serviceId });
  if (!isObject(json) || json.paid !== true) throw bad('paid is not true');
  const r = json.receipt;
  if (!isObject(r)) throw bad('no receipt');
  if (r.txId !== txId) throw bad(`the receipt is for tx ${String(r.txId)}`);
  if (r.serviceId !== quote.serviceId) throw bad(`the receipt is for service ${String(r.serviceId)}`);
  if (typeof r.caller !== 'string') throw bad('receipt.caller is missing');
  if (typeof r.amount !== 'number') throw bad('receipt.amount is not a number');
  const receipt: AgentReceipt = {
    serviceId: r.serviceId,
    caller: r.caller,
    amount: r.amount,
    txId,
    ...(typeof r.amountBase === 'string' ? { amountBase: r.amountBase } : {}),
    ...(typeof r.blockHash === 'string' ? { blockHash: r.blockHash } : {}),
    ...(typeof r.height === 'number' ? { height: r.height } : {}),
    ...(typeof r.network === 'string' ? { network: r.network } : {}),
    ...(isObject(r.offerReceipt) && typeof r.offerReceipt.format === 'string' && typeof r.offerReceipt.signature === 'string' ? { offerReceipt: { format: r.offerReceipt.format, signature: r.offerReceipt.signature } } : {}),
    ...(isObject(r.hybridReceipt) ? { hybridReceipt: r.hybridReceipt } : {}),
  };
  return { result: json.result, receipt };
}

/**
 * A quote from one native payment option as an x402 client hands it over: an x402 v1
 * requirement (`maxAmountRequired`) or a v2 one (`amount`, network `native:<chainId>`), for the
 * request the payment must commit to. Checked as `parseQuote` checks a 402 body's native option.
 */
export function quoteFromRequirement(requirement: Record<string, unknown>, o: { readonly request: string | undefined; readonly endpoint: string; readonly now: number; readonly salt?: string }): AgentQuote {
  const extra = isObject(requirement.extra) ? requirement.extra : {};
  const serviceId = typeof extra.serviceId === 'string' ? extra.serviceId : '';
  const maxAmountRequired = requirement.maxAmountRequired ?? requirement.amount;
  return parseQuote({ x402Version: 1, accepts: [{ ...requirement, maxAmountRequired }] }, serviceId, o.request, o.endpoint, o.now, o.salt);
}

/** The seller fields of a USDC option's `extra`, when well-formed. */
function usdcSellerOf(extra: unknown): { sellerId?: string; commitment?: string } {
  if (!isObject(extra)) return {};
  const sellerId = typeof extra.sellerId === 'string' && new RegExp(`^[0-9a-f]{${SELLER_ID_BYTES * 2}}$`).test(extra.sellerId) ? extra.sellerId : undefined;
  return sellerId && extra.commitment === USDC_COMMITMENT_SCHEME ? { sellerId, commitment: USDC_COMMITMENT_SCHEME } : {};
}

/**
 * What binds a USDC (EIP-3009) authorization to this quote's seller, service and request: the
 * `nonce` to sign, and the payment payload `extensions` entry that carries the secret salt
 * (x402/usdc/commitment.ts). Another node sharing the payee then refuses the authorization
 * (`wrong_seller`), and a retry with the same payload proves its payer, though the authorization
 * is public on Base once settled. Undefined when the node's USDC option names no seller.
 */
export function usdcBinding(quote: AgentQuote, salt: string = randomBytes(SALT_BYTES).toString('hex')): { nonce: string; salt: string; extensions: Record<string, unknown> } | undefined {
  const sellerId = quote.usdc?.sellerId;
  if (!sellerId) return undefined;
  return { nonce: usdcCommitmentNonce({ sellerId, serviceId: quote.serviceId, request: quote.request, salt }), salt, extensions: commitmentExtension(salt) };
}
