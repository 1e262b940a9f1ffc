/**
 * The native rail as a scheme of the official x402 v2 clients (`@x402/fetch`, `@x402/axios`,
 * `@x402/core`'s `x402Client`): a `SchemeNetworkClient` for the `native-x402` option, which the
 * node's 402 carries in its `PAYMENT-REQUIRED` header with network `native:<chainId>`.
 *
 *   const client = new x402Client();
 *   registerNativeScheme(client, { agent, maxPriceBase: 1_000_000n });   // beside registerExactEvmScheme
 *   const paidFetch = wrapFetchWithPayment(fetch, client);
 *
 * `createPaymentPayload` signs the `agent_invoke` of the option (exact amount to `payTo`, the
 * requestHash committing to seller, service, request and a fresh salt: x402/core/wire.ts), broadcasts
 * it through the agent client (kept in its pending-payment store until mined), waits until it has
 * the confirmations the option asks for, and returns `{txId, salt}` as the payload; the wrapper
 * retries the request with it in `PAYMENT-SIGNATURE`, which the node settles as it settles
 * `payment: {txId, salt}` in the body.
 *
 * The commitment covers the request, which a scheme is not shown: the node's v2 option names it
 * in `extra.request` (null without one). A node whose option lacks it (an older node, or a request
 * too large to echo in a header, `extra.requestOmitted`) is refused with `request_unknown` before
 * anything is paid; `createAgentClient().call` pays those.
 *
 * Nothing here imports @x402/*: the interface is matched structurally, so the package carries
 * no dependency on the client it plugs into.
 */
import { formatAmount } from '../consensus/amount.js';
import { AgentClientError, AgentErrorCode } from './errors.js';
import { isObject } from './http.js';
import { quoteFromRequirement } from './quote.js';
import type { AgentClient, AgentEvent } from './client.js';

/** The scheme name of the native rail's option. */
export const NATIVE_SCHEME = 'native-x402';
/** The CAIP-2 pattern of this chain's networks in x402 v2 (`native:<chainId>`). */
export const NATIVE_NETWORK_PATTERN = 'native:*';
/** The asset name of the native option. */
export const NATIVE_ASSET = 'NATIVE';
/** Code of a 402 whose native option does not say which request the payment must commit to. */
export const REQUEST_UNKNOWN = 'request_unknown';

/** An x402 v2 payment requirement (the fields this scheme reads; `@x402/core`'s `PaymentRequirements`). */
export interface X402Requirement {
  scheme: string;
  network: string;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
}

/** The result of `createPaymentPayload` (`@x402/core`'s `PaymentPayloadResult`). */
export interface X402PayloadResult {
  x402Version: number;
  payload: Record<string, unknown>;
  scheme?: string;
  network?: string;
}

/** The scheme client interface of x402 v2 (`@x402/core`'s `SchemeNetworkClient`), matched structurally. */
export interface NativeSchemeClient {
  readonly scheme: typeof NATIVE_SCHEME;
  createPaymentPayload(x402Version: number, requirements: X402Requirement, context?: { extensions?: Record<string, unknown>; maxAmountPerPayment?: string }): Promise<X402PayloadResult>;
}

/** Options of `createNativeScheme`. */
export interface NativeSchemeOptions {
  /** The agent client that pays (created with a `key`): its node is where the invoke is broadcast and watched. */
  readonly agent: AgentClient;
  /** Refuse (`price_above_limit`, before paying) an option above this many base units. */
  readonly maxPriceBase?: bigint;
  /** Budget of one payment: signing, broadcast and the wait for its confirmations, ms; default 120 000. */
  readonly timeoutMs?: number;
  readonly onEvent?: (e: AgentEvent) => void;
  /** Clock (Unix ms), injectable for tests. */
  readonly now?: () => number;
}

/** The native rail's x402 v2 scheme client (see module comment). */
export function createNativeScheme(o: NativeSchemeOptions): NativeSchemeClient {
  const now = o.now ?? Date.now;
  return {
    scheme: NATIVE_SCHEME,
    async createPaymentPayload(x402Version, requirements, context) {
      const extra = isObject(requirements.extra) ? requirements.extra : {};
      const serviceId = typeof extra.serviceId === 'string' ? extra.serviceId : '';
      if (!('request' in extra) || (extra.request !== null && typeof extra.request !== 'string')) {
        throw new AgentClientError(
          REQUEST_UNKNOWN,
          `the 402 of ${serviceId || 'this resource'} does not name the request the payment must commit to (extra.request${typeof extra.requestOmitted === 'string' ? `: ${extra.requestOmitted}` : ''}); pay it with createAgentClient().call`,
          { serviceId, status: 402 },
        );
      }
      const request = typeof extra.request === 'string' ? extra.request : undefined;
      const quote = quoteFromRequirement(requirements as unknown as Record<string, unknown>, { request, endpoint: `${o.agent.nodeUrl}/api/x402/${encodeURIComponent(serviceId)}`, now: now() });
      const cap = [o.maxPriceBase, context?.maxAmountPerPayment !== undefined && /^\d+$/.test(context.maxAmountPerPayment) ? BigInt(context.maxAmountPerPayment) : undefined].filter((v): v is bigint => v !== undefined);
      const limit = cap.length ? cap.reduce((a, b) => (a < b ? a : b)) : undefined;
      if (limit !== undefined && quote.amount > limit) {
        throw new AgentClientError(AgentErrorCode.PRICE_ABOVE_LIMIT, `${serviceId} costs ${quote.priceNative} NATIVE, above the limit of ${formatAmount(limit)} NATIVE; nothing was paid`, {
          serviceId,
          status: 402,
          priceBase: quote.amount.toString(),
          limitBase: limit.toString(),
        });
      }
      o.onEvent?.({ type: 'quoted', quote });
      const started = now();
      const payment = await o.agent.sendPayment(quote);
      o.onEvent?.({ type: 'paid', txId: payment.txId, feeBase: payment.feeBase });
      await o.agent.waitForPayment(payment.txId, { confirmations: quote.confirmations, timeoutMs: Math.max(1, (o.timeoutMs ?? 120_000) - (now() - started)) });
      const payload = { txId: payment.txId, salt: payment.salt };
      // x402 v1 payloads name their scheme and network themselves; v2 ones are wrapped by the client.
      return x402Version === 1 ? { x402Version, scheme: NATIVE_SCHEME, network: requirements.network, payload } : { x402Version, payload };
    },
  };
}

/** The spend-control entry that lets an x402 client pay the native option up to `maxPriceBase` base units (NATIVE is not one of its USD default assets). */
export function nativeAllowedAsset(maxPriceBase?: bigint): { network: string; asset: string; maxAmountPerPayment?: string } {
  return { network: NATIVE_NETWORK_PATTERN, asset: NATIVE_ASSET, ...(maxPriceBase !== undefined ? { maxAmountPerPayment: maxPriceBase.toString() } : {}) };
}

/** What `registerNativeScheme` uses of an `x402Client`. */
export interface X402ClientLike {
  register(network: string, client: NativeSchemeClient): unknown;
  setSpendControls?(controls: unknown): unknown;
}

/**
 * Registers the native scheme on an `x402Client` for every `native:<chainId>` network, and adds
 * NATIVE (capped at `maxPriceBase`) to the client's spend controls, which by default allow only
 * USD assets and would drop the native option silently. Controls set to `false` stay off; the
 * USD cap of the other rails is kept. Returns the client.
 */
export function registerNativeScheme<C extends X402ClientLike>(client: C, o: NativeSchemeOptions): C {
  client.register(NATIVE_NETWORK_PATTERN, createNativeScheme(o));
  // The client keeps its controls in a field with no getter: read it to extend, not replace, them.
  const current = (client as unknown as { spendControls?: unknown }).spendControls;
  if (current !== false && typeof client.setSpendControls === 'function') {
    const controls = isObject(current) ? current : {};
    const allowed = controls.allowedAssets;
    if (allowed !== true) {
      const others = Array.isArray(allowed) ? allowed.filter((a) => !(isObject(a) && a.asset === NATIVE_ASSET && a.network === NATIVE_NETWORK_PATTERN)) : [];
      client.setSpendControls({ ...controls, allowedAssets: [...others, nativeAllowedAsset(o.maxPriceBase)] });
    }
  }
  return client;
}

/**
 * An x402 client policy that puts the options of one rail first (the default selector takes the
 * first option left): `client.registerPolicy(preferRail('native'))`. The other rail stays as the
 * fallback; filter with your own policy to forbid it.
 */
export function preferRail(rail: 'native' | 'usdc'): <R extends { scheme: string }>(x402Version: number, requirements: R[]) => R[] {
  const isNative = (r: { scheme: string }) => r.scheme === NATIVE_SCHEME;
  return (_v, reqs) => [...reqs].sort((a, b) => Number(rail === 'native' ? isNative(b) : isNative(a)) - Number(rail === 'native' ? isNative(a) : isNative(b)));
}
