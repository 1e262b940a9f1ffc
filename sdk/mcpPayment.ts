/**
 * Paid MCP tools on the native rail, through the official MCP client (`@modelcontextprotocol/sdk`
 * `Client`, or anything with its `callTool`), following the x402 MCP convention the node's
 * `/api/mcp` serves:
 *
 *   1. `tools/call` without payment → a result with `isError: true` whose `structuredContent` is
 *      the quote (the 402 body: `accepts` with the `native-x402` option);
 *   2. the agent client signs and broadcasts the option's `agent_invoke` (committing to seller,
 *      tool, request and a fresh salt) and waits for its confirmations;
 *   3. `tools/call` again with the same arguments and `_meta["x402/payment"] = {txId, salt}` →
 *      the result, with the receipt in `_meta["x402/payment-response"]`.
 *
 * The request the payment commits to is the tool's `request` argument as the node reads it: a
 * string as it is, a number or boolean as its text, an object or array (JSON-input services) as
 * its `JSON.stringify`. Nothing here imports the MCP SDK: its client is matched structurally.
 */
import { formatAmount } from '../consensus/amount.js';
import { AgentClientError, AgentErrorCode, isAgentClientError } from './errors.js';
import { isObject } from './http.js';
import { parseQuote, type AgentQuote } from './quote.js';
import type { AgentClient, AgentEvent } from './client.js';

/** `_meta` key of the payment a client sends (x402 MCP convention). */
export const MCP_PAYMENT_META = 'x402/payment';
/** `_meta` key of the settlement answer (x402 MCP convention). */
export const MCP_PAYMENT_RESPONSE_META = 'x402/payment-response';

/** A tool result as the MCP client returns it (the fields read here). */
export interface McpToolResult {
  isError?: boolean;
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  [k: string]: unknown;
}

/** What `callPaidTool` uses of an MCP client (`Client` of `@modelcontextprotocol/sdk`). */
export interface McpToolCaller {
  callTool(params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }, resultSchema?: undefined, options?: { timeout?: number }): Promise<unknown>;
}

/** Options of `callPaidTool`. */
export interface PaidToolOptions {
  /** Refuse (`price_above_limit`, before paying) a quote above this many base units. */
  readonly maxPriceBase?: bigint;
  /** Budget of the whole call (quote, payment, confirmations, settle), ms; default 120 000. */
  readonly timeoutMs?: number;
  readonly onEvent?: (e: AgentEvent) => void;
}

/** A paid tool call's outcome. */
export interface PaidToolResult {
  /** The tool result of the paid call (content, structuredContent `{paid, result, receipt}`). */
  readonly result: McpToolResult;
  /** `_meta["x402/payment-response"]`: `success`, `transaction`, `network`, `payer` and the receipt. */
  readonly paymentResponse: Record<string, unknown>;
  /** The agent_invoke that paid, and the salt that proves it (call again with both to fetch the result again); absent for a free tool. */
  readonly txId?: string;
  readonly salt?: string;
  /** The quote that was paid; absent for a free tool. */
  readonly quote?: AgentQuote;
}

/** The request text the node commits a tool call to (see module comment). */
export function toolRequestText(request: unknown): string | undefined {
  if (request === undefined || request === null) return undefined;
  if (typeof request === 'string') return request;
  if (typeof request === 'number' || typeof request === 'boolean') return String(request);
  return JSON.stringify(request);
}

/**
 * Calls a paid tool, paying natively with `agent` (see module comment). A free tool's result (no
 * payment asked) is returned with empty payment fields. Throws `AgentClientError`: the node's
 * refusal code (`errorReason`) for a refused payment, `service_refunded` when the service failed
 * after the payment, `settle_timeout` when the budget ran out (the payment stands: call again
 * with `_meta["x402/payment"] = {txId, salt}` from the error's payload).
 */
export async function callPaidTool(mcp: McpToolCaller, agent: AgentClient, tool: { name: string; arguments?: Record<string, unknown> }, o: PaidToolOptions = {}): Promise<PaidToolResult> {
  const deadline = Date.now() + (o.timeoutMs ?? 120_000);
  const args = tool.arguments ?? {};
  const left = () => Math.max(1_000, deadline - Date.now());
  const first = (await mcp.callTool({ name: tool.name, arguments: args }, undefined, { timeout: left() })) as McpToolResult;
  const required = first.isError && isObject(first.structuredContent) && Array.isArray(first.structuredContent.accepts) ? first.structuredContent : undefined;
  if (!required) {
    if (first.isError) throw toolError(first, tool.name);
    return { result: first, paymentResponse: {} };
  }
  const quote = parseQuote(required, tool.name, toolRequestText(args.request), `${agent.nodeUrl}/api/x402/${encodeURIComponent(tool.name)}`, Date.now());
  o.onEvent?.({ type: 'quoted', quote });
  if (o.maxPriceBase !== undefined && quote.amount > o.maxPriceBase) {
    throw new AgentClientError(AgentErrorCode.PRICE_ABOVE_LIMIT, `${tool.name} costs ${quote.priceNative} NATIVE, above the limit of ${formatAmount(o.maxPriceBase)} NATIVE; nothing was paid`, {
      serviceId: tool.name,
      status: 402,
      priceBase: quote.amount.toString(),
      limitBase: o.maxPriceBase.toString(),
    });
  }
  const payment = await agent.sendPayment(quote);
  o.onEvent?.({ type: 'paid', txId: payment.txId, feeBase: payment.feeBase });
  const ctx = { serviceId: tool.name, txId: payment.txId, salt: payment.salt };
  try {
    await agent.waitForPayment(payment.txId, { confirmations: quote.confirmations, timeoutMs: left() });
  } catch (e) {
    if (isAgentClientError(e)) throw new AgentClientError(e.code, e.message, { ...e.payload, ...ctx });
    throw e;
  }
  const meta = { [MCP_PAYMENT_META]: { txId: payment.txId, salt: payment.salt } };
  for (;;) {
    const r = (await mcp.callTool({ name: tool.name, arguments: args, _meta: meta }, undefined, { timeout: left() })) as McpToolResult;
    const response = isObject(r._meta?.[MCP_PAYMENT_RESPONSE_META]) ? (r._meta![MCP_PAYMENT_RESPONSE_META] as Record<string, unknown>) : {};
    if (!r.isError) return { result: r, paymentResponse: response, txId: payment.txId, salt: payment.salt, quote };
    // Not mined with enough confirmations yet on the node's side: ask again after retryAfter.
    if (response.errorReason === 'payment_pending' && Date.now() < deadline) {
      const retryAfter = typeof response.retryAfter === 'number' ? response.retryAfter : 1;
      o.onEvent?.({ type: 'pending', txId: payment.txId, retryAfter });
      await new Promise((res) => setTimeout(res, Math.min(Math.max(100, retryAfter * 1000), Math.max(0, deadline - Date.now()))));
      continue;
    }
    if (response.errorReason === 'payment_pending') throw new AgentClientError(AgentErrorCode.SETTLE_TIMEOUT, `no settlement of ${payment.txId} within the time budget; the payment stands: call again with the same _meta`, ctx);
    if (typeof response.refundTxId === 'string' || response.refund === 'pending') {
      throw new AgentClientError(AgentErrorCode.SERVICE_REFUNDED, `${tool.name} failed after payment (${String(response.errorReason)}: ${String(response.message)}); ${typeof response.refundTxId === 'string' ? `refunded in ${response.refundTxId}` : 'the refund is owed and not sent yet'}`, {
        ...ctx,
        ...(typeof response.refundTxId === 'string' ? { refundTxId: response.refundTxId } : { refundPending: true }),
      });
    }
    if (typeof response.errorReason === 'string') throw new AgentClientError(response.errorReason, typeof response.message === 'string' ? response.message : response.errorReason, { ...ctx, details: response });
    throw toolError(r, tool.name, ctx);
  }
}

/** The coded error of an `isError` result without a payment-response (input errors, unknown tool). */
function toolError(r: McpToolResult, name: string, ctx: Record<string, string> = {}): AgentClientError {
  const err = isObject(r.structuredContent) && isObject(r.structuredContent.error) ? r.structuredContent.error : undefined;
  const code = typeof err?.code === 'string' ? err.code : AgentErrorCode.UNEXPECTED_RESPONSE;
  const message = typeof err?.message === 'string' ? err.message : `the tool ${name} answered an error`;
  return new AgentClientError(code, message, { serviceId: name, ...ctx });
}
