/**
 * `native-node pay --quote-file <q.json> [--request <text>] [--print]`: builds and signs the
 * `agent_invoke` that pays a saved quote (the 402 body of `POST /api/x402/<serviceId>`, or its
 * x402 v2 `PAYMENT-REQUIRED` decoded), committed to the request with a fresh salt, and prints
 * its hex, tx id and salt. With `--print` nothing is sent: the hex is what `POST /api/v1/tx`
 * takes (`{"tx": hex}`), the salt what the settle reveals — the plain-HTTP path of an agent that
 * has curl but no SDK. Without `--print` the command broadcasts it too.
 *
 * Signing needs the account's next nonce, whether the chain knows its key and the fee rate: from
 * the node at `--node`, or, offline, from `--nonce`, `--include-key` and `--fee-rate`.
 */
import { readFile } from 'node:fs/promises';
import { NodeError } from '../consensus/errors.js';
import { formatAmount } from '../consensus/amount.js';
import { isObject } from '../sdk/http.js';
import { createPaymentTx, quoteFromRequirement } from '../sdk/client.js';
import { CliErrorCode, nodeStatus, offlineNetwork, unlockWallet, walletRef, type Ctx, type Options, type Values } from './cliKit.js';

/** The options of `pay` beyond the common ones (the parser and the help read this table). */
export const PAY_OPTIONS = {
  pay: {
    'quote-file': { type: 'string' },
    request: { type: 'string' },
    print: { type: 'boolean' },
    nonce: { type: 'string' },
    'include-key': { type: 'boolean' },
    'fee-rate': { type: 'string' },
  },
} as const satisfies Record<string, Options>;

const uint = (v: unknown, flag: string): bigint => {
  if (typeof v !== 'string' || !/^\d{1,19}$/.test(v)) throw new NodeError(CliErrorCode.USAGE, `${flag} takes a non-negative integer`);
  return BigInt(v);
};

/** The native option of a saved quote file: a 402 body (x402 v1) or a decoded `PAYMENT-REQUIRED` (v2). */
async function nativeOptionOf(path: string): Promise<Record<string, unknown>> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new NodeError(CliErrorCode.USAGE, `--quote-file ${path}: ${(e as Error).message}`);
  }
  const accepts = isObject(json) && Array.isArray(json.accepts) ? json.accepts : [];
  const native = accepts.find((a): a is Record<string, unknown> => isObject(a) && a.scheme === 'native-x402');
  if (!native) throw new NodeError('no_native_option', `${path} holds no 402 quote with a native-x402 option (save the body of the unpaid POST /api/x402/<serviceId>)`);
  return native;
}

export async function payCommand(ctx: Ctx, values: Values): Promise<number> {
  const file = values['quote-file'];
  if (typeof file !== 'string') throw new NodeError(CliErrorCode.USAGE, 'pay needs --quote-file <the saved 402 body>');
  const option = await nativeOptionOf(file);
  const extra = isObject(option.extra) ? option.extra : {};
  // The request the quote was asked for: --request, else the one a v2 option names.
  const request = typeof values.request === 'string' ? values.request : typeof extra.request === 'string' ? extra.request : undefined;
  const serviceId = typeof extra.serviceId === 'string' ? extra.serviceId : '';
  const quote = quoteFromRequirement(option, { request, endpoint: `${ctx.client.baseUrl}/api/x402/${encodeURIComponent(serviceId)}`, now: Date.now() });

  const offline = values.nonce !== undefined;
  const status = offline ? undefined : await nodeStatus(ctx);
  if (status && status.chainId !== quote.chainId) throw new NodeError('chain_mismatch', `the quote is for chain ${quote.chainId}, the node at ${ctx.client.baseUrl} runs chain ${status.chainId}`);
  const network = status?.network ?? (await offlineNetwork(ctx));
  const wallet = await unlockWallet(ctx, walletRef(ctx, network), network);
  const account = offline ? undefined : await ctx.client.account(wallet.address);
  const signed = createPaymentTx(quote, {
    key: wallet.keyPair,
    nonce: offline ? uint(values.nonce, '--nonce') : BigInt(account!.pendingNonce),
    includeKey: offline ? values['include-key'] === true : account!.publicKeyKnown !== true,
    feeRate: values['fee-rate'] !== undefined ? uint(values['fee-rate'], '--fee-rate') : status ? BigInt(status.minFeeRate ?? '1') : 1n,
  });
  const broadcast = values.print !== true;
  if (broadcast) {
    const sent = await ctx.client.submitTx(signed.tx);
    if (sent.txId !== signed.txId) throw new NodeError('node_bad_response', `the node accepted tx ${sent.txId}, we sent ${signed.txId}`);
  }
  const settleBody = { ...(request !== undefined ? { request } : {}), payment: { txId: signed.txId, salt: signed.salt } };
  ctx.out.print(
    [
      `service    ${quote.serviceId}`,
      `amount     ${quote.priceNative} NATIVE to ${quote.payTo}, fee ${formatAmount(signed.fee)} NATIVE, nonce ${signed.nonce}`,
      `txId       ${signed.txId}`,
      `salt       ${signed.salt}`,
      `broadcast  ${broadcast ? 'sent' : `not sent: POST ${ctx.client.baseUrl}/api/v1/tx {"tx": "<hex below>"}`}`,
      `settle     POST ${quote.endpoint}?wait=30 ${JSON.stringify(settleBody)}`,
      `tx         ${signed.tx}`,
    ].join('\n'),
    {
      serviceId: quote.serviceId,
      request: request ?? null,
      tx: signed.tx,
      txId: signed.txId,
      salt: signed.salt,
      requestHash: signed.requestHash,
      nonce: signed.nonce.toString(),
      fee: formatAmount(signed.fee),
      feeBase: signed.fee.toString(),
      amountBase: quote.amount.toString(),
      broadcast,
      settle: { url: `${quote.endpoint}?wait=30`, body: settleBody },
    },
  );
  return 0;
}
