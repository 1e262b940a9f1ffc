/**
 * The paid-call commands of the command line: `native-node quote <serviceId> [request]` and
 * `native-node call <serviceId> [request]` (pay on the native rail through the agent SDK, with
 * progress lines on stderr and the receipt on stdout).
 */
import { dirname, join } from 'node:path';
import { NodeError, isNodeError } from '../consensus/errors.js';
import { isHex } from '../consensus/hash.js';
import { parseAmount, formatAmount } from '../consensus/amount.js';
import { ClientErrorCode } from '../node/client.js';
import { startWaitLine, type WaitLine } from './waitLine.js';
import { nearest } from './commandDocs.js';
import { createAgentClient, isAgentClientError, type AgentCallResult, type AgentEvent, type AgentQuote } from '../sdk/client.js';
import { createFilePaymentStore } from '../sdk/pendingPayments.js';
import { defaultWalletPath } from '../node/wallet.js';
import { CliErrorCode, parse, nodeStatus, timeoutOption, unlockWallet, walletRef, type Ctx, type Options, type Values } from './cliKit.js';

export function parseCallArgs(args: string[], extra: Options): { values: Values; positionals: string[] } {
  return parse(args, extra, { min: 1, max: 2, usage: '<serviceId> [request] (quote a request that has spaces)' });
}

/** Human lines of a quote. */
function quoteLines(q: AgentQuote): string[] {
  const lines = [
    `service  ${q.serviceId}`,
    `price    ${q.priceNative} NATIVE (${q.amount} base units)`,
    `pay to   ${q.payTo}`,
    `network  ${q.network} (chain id ${q.chainId})`,
    `valid    ${q.requirement.maxTimeoutSeconds} s`,
  ];
  lines.push(`seller   ${q.sellerId} (${q.confirmations} confirmation(s))`);
  if (q.usdc) lines.push(`usdc     ${formatUsdc(q.usdc.maxAmountRequired)} USDC on base to ${q.usdc.payTo}`);
  return lines;
}

/** USDC atomic units (6 decimals) as a decimal string. */
function formatUsdc(atomic: string): string {
  if (!/^\d+$/.test(atomic)) return atomic;
  const v = atomic.padStart(7, '0');
  const frac = v.slice(-6).replace(/0+$/, '');
  return `${v.slice(0, -6)}${frac ? `.${frac}` : ''}`;
}

function quoteJson(q: AgentQuote): Record<string, unknown> {
  return {
    serviceId: q.serviceId,
    request: q.request ?? null,
    price: q.priceNative,
    priceBase: q.amount.toString(),
    payTo: q.payTo,
    network: q.network,
    chainId: q.chainId,
    sellerId: q.sellerId,
    confirmations: q.confirmations,
    maxTimeoutSeconds: q.requirement.maxTimeoutSeconds,
    resource: q.requirement.resource,
    native: q.requirement,
    usdc: q.usdc ?? null,
  };
}

/** `e` with "did you mean" when the node has no such service and one of its ids is near. */
async function withServiceSuggestion(ctx: Ctx, e: unknown, serviceId: string): Promise<unknown> {
  if (!isNodeError(e, 'unknown_service')) return e;
  const ids = await ctx.client
    .request<{ resources: { serviceId: string }[] }>('GET', '/api/x402/bazaar?limit=100')
    .then((r) => r.resources.map((s) => s.serviceId), () => [] as string[]);
  // People drop the native- prefix too: "world-clock" is native-world-clock.
  const near = nearest(serviceId, ids) ?? ids.find((id) => id === `native-${serviceId}`);
  return near ? new NodeError('unknown_service', `no service ${serviceId} on this node (did you mean ${near}?); ${ctx.client.baseUrl}/marketplace lists them`, { serviceId, suggestion: near }) : e;
}

export async function quoteCommand(ctx: Ctx, serviceId: string, request: string | undefined): Promise<number> {
  const q = await createAgentClient({ nodeUrl: ctx.client.baseUrl })
    .quote(serviceId, request)
    .catch(async (e: unknown) => Promise.reject(await withServiceSuggestion(ctx, e, serviceId)));
  ctx.out.print(quoteLines(q).join('\n'), quoteJson(q));
  return 0;
}

/** Prints the result of a service: strings as they are, anything else as indented JSON. */
function formatResult(result: unknown): string {
  return typeof result === 'string' ? result : JSON.stringify(result, null, 2);
}

export async function callCommand(ctx: Ctx, values: Values, serviceId: string, request: string | undefined): Promise<number> {
  const status = await nodeStatus(ctx);
  const maxPriceBase = typeof values['max-price'] === 'string' ? parseAmount(values['max-price'], '--max-price') : undefined;
  const timeoutMs = timeoutOption(values) * 1000;
  const payTx = typeof values.tx === 'string' ? values.tx.toLowerCase() : undefined;
  if (payTx !== undefined && !isHex(payTx, 32)) throw new NodeError(CliErrorCode.INVALID_TX_ID, '--tx takes the 64-hex-character id of an earlier agent_invoke');
  const saltFlag = typeof values.salt === 'string' ? values.salt.toLowerCase() : undefined;
  if (saltFlag !== undefined && (payTx === undefined || !isHex(saltFlag, 32))) throw new NodeError(CliErrorCode.USAGE, '--salt takes the 64-hex-character salt of the earlier payment named by --tx');
  const wallet = payTx === undefined ? await unlockWallet(ctx, walletRef(ctx, status.network), status.network) : undefined;
  // Signed payments are kept on disk until mined, so `--tx` can broadcast one again that the node lost.
  const pendingPayments = createFilePaymentStore(join(dirname(defaultWalletPath(ctx.env.home)), 'payments', status.network));
  const client = createAgentClient({ nodeUrl: ctx.client.baseUrl, pendingPayments, ...(wallet ? { key: wallet.keyPair } : {}) });
  // On a terminal, a line redrawn in place while the payment waits for its block (cli/waitLine.ts).
  let waiting: WaitLine | undefined;
  const progress = (e: AgentEvent) => {
    if (ctx.out.json) return;
    if (e.type === 'quoted') process.stderr.write(`${e.quote.serviceId} costs ${e.quote.priceNative} NATIVE, paid to ${e.quote.payTo}\n`);
    else if (e.type === 'paid') {
      process.stderr.write(`paid in ${e.txId} (fee ${formatAmount(e.feeBase)} NATIVE), waiting for its block…\n`);
      waiting = startWaitLine(process.stderr, 'waiting for the block with the payment');
    } else if (e.type === 'pending') waiting?.update('payment not mined yet, the node holds the request');
    else if (e.type === 'retry') {
      waiting?.stop();
      process.stderr.write(`settle: ${e.reason}, retrying…\n`);
      waiting = startWaitLine(process.stderr, 'settling again');
    } else if (e.type === 'rebroadcast') {
      waiting?.stop();
      process.stderr.write(`the node did not know ${e.txId}: broadcast it again (same payment)…\n`);
      waiting = startWaitLine(process.stderr, 'waiting for the block with the payment');
    }
  };
  try {
    let r: AgentCallResult;
    if (payTx === undefined) {
      r = await client.call(serviceId, request, { maxPriceBase, timeoutMs, onEvent: progress });
    } else {
      const q = await client.quote(serviceId, request);
      // The salt the payment committed to: given, or kept with the signed payment until it settled.
      const salt = saltFlag ?? (await pendingPayments.get(payTx))?.salt;
      if (salt === undefined) throw new NodeError(CliErrorCode.USAGE, `no salt known for ${payTx} (it is kept only until the payment settles): pass the one printed by the call with --salt`);
      r = await client.settle(q, payTx, { timeoutMs, onEvent: progress, salt });
    }
    waiting?.stop();
    const rc = r.receipt;
    const human = [
      formatResult(r.result),
      '',
      `receipt  ${rc.serviceId} paid ${formatAmount(r.quote.amount)} NATIVE by ${rc.caller}`,
      `tx       ${rc.txId}${rc.height !== undefined ? ` (block ${rc.height}${rc.blockHash ? ` ${rc.blockHash}` : ''})` : ''}`,
      ...(r.feeBase > 0n ? [`fee      ${formatAmount(r.feeBase)} NATIVE`] : []),
      // The payment's secret: with the tx id, what settles it again (`--tx <id> --salt <salt>`); kept nowhere else once settled.
      `salt     ${r.salt}`,
    ].join('\n');
    ctx.out.print(human, { serviceId, result: r.result, receipt: rc, txId: r.txId, salt: r.salt, price: r.quote.priceNative, priceBase: r.quote.amount.toString(), fee: formatAmount(r.feeBase), feeBase: r.feeBase.toString() });
    return 0;
  } catch (caught) {
    const e = await withServiceSuggestion(ctx, caught, serviceId);
    // With --json, keep what the caller needs to recover (txId to settle again, refundTxId).
    if (!ctx.out.json || !isAgentClientError(e)) throw e;
    const { status: httpStatus, ...rest } = e.payload;
    process.stdout.write(`${JSON.stringify({ error: { code: e.code, message: e.message, ...rest, ...(httpStatus !== undefined ? { status: httpStatus } : {}) } })}\n`);
    return e.code === ClientErrorCode.UNREACHABLE ? 3 : 2;
  } finally {
    waiting?.stop();
  }
}
