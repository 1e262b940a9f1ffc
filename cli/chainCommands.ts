/**
 * The chain commands: `status` (the node's network, tip, difficulty, mempool, mining and Stratum
 * workers), `tx <id>` (a transaction, pending or mined) and `send <address> <amount>` (NATIVE
 * from the wallet). Their options and usage lines are declared here, next to them.
 */
import { NodeError } from '../consensus/errors.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { isHex } from '../consensus/hash.js';
import { parseAmount, parsePositiveAmount, formatAmount } from '../consensus/amount.js';
import { createTransferTx } from '../consensus/txBuilder.js';
import { formatMiningLines, type MiningResponse } from '../node/mining/stats.js';
import { CliErrorCode, nodeStatus, timeoutOption, unlockWallet, waitMined, walletRef, type Ctx, type Options, type Values } from './cliKit.js';

/** The options of each chain command beyond the common ones (the parser and the help read this table). */
export const CHAIN_OPTIONS = {
  status: {},
  tx: { wait: { type: 'boolean' }, timeout: { type: 'string' } },
  send: { fee: { type: 'string' }, wait: { type: 'boolean' }, timeout: { type: 'string' } },
} as const satisfies Record<string, Options>;

export async function send(ctx: Ctx, values: Values, toText: string, amountText: string): Promise<number> {
  const status = await nodeStatus(ctx);
  const to = tryDecodeAddress(toText, status.hrp);
  if (!to) throw new NodeError(CliErrorCode.INVALID_ADDRESS, `${toText} is not a ${status.network} address (${status.hrp}1…)`);
  const amount = parsePositiveAmount(amountText);
  const fee = typeof values.fee === 'string' ? parseAmount(values.fee, 'fee') : undefined;
  const timeout = timeoutOption(values);
  const wallet = await unlockWallet(ctx, walletRef(ctx, status.network), status.network);
  const acc = await ctx.client.account(wallet.address);
  const built = createTransferTx({
    key: wallet.keyPair,
    chainId: status.chainId,
    to,
    amount,
    nonce: BigInt(acc.pendingNonce),
    // The key travels until the chain knows it (a pending first transaction may not be mined yet).
    includeKey: !acc.publicKeyKnown,
    fee,
    feeRate: BigInt(status.minFeeRate ?? '1'),
  });
  const res = await ctx.client.submitTx(Buffer.from(built.bytes).toString('hex'));
  const data: Record<string, unknown> = {
    txId: res.txId,
    status: 'pending',
    from: wallet.address,
    to: toText,
    amount: formatAmount(amount),
    amountBase: amount.toString(),
    fee: formatAmount(built.tx.fee),
    feeBase: built.tx.fee.toString(),
    nonce: Number(built.tx.nonce),
  };
  if (values.wait) {
    if (!ctx.out.json) process.stderr.write(`sent ${res.txId}, waiting for a block…\n`);
    const mined = await waitMined(ctx, res.txId, timeout);
    Object.assign(data, { status: 'mined', height: mined.height, blockHash: mined.blockHash, confirmations: mined.confirmations });
    ctx.out.print(`${res.txId}\nmined in block ${mined.height} ${mined.blockHash}`, data);
  } else {
    ctx.out.print(res.txId, data);
  }
  return 0;
}

/** The built-in miner's line: on, off (not configured), or paused (configured, waiting for the network or a sync). */
function miningText(s: { syncing: boolean; mining: { running: boolean; threads: number; hashrate: number; blocksFound: number } }): string {
  const m = s.mining;
  if (m.running) return `on, ${m.threads} thread(s), ${Math.round(m.hashrate)} H/s, ${m.blocksFound} block(s) found`;
  if (m.threads > 0) return `paused (${s.syncing ? 'the node is syncing' : 'waiting for the network'}), ${m.blocksFound} block(s) found`;
  return 'off';
}

/** Status lines for peers found on another chain (a bootstrap peer of the wrong network, say). */
function otherChainLines(peers: unknown): string[] {
  if (!Array.isArray(peers)) return [];
  return (peers as { peerId: string; genesis: string; network: string | null; bootstrap: boolean }[]).map(
    (p) => `warning    ${p.bootstrap ? 'bootstrap peer' : 'peer'} ${p.peerId} is on another chain: ${p.network ?? 'unknown network'}, genesis ${p.genesis}`,
  );
}

export async function status(ctx: Ctx): Promise<number> {
  const s = await ctx.client.status();
  // Stratum, getblocktemplate and per-worker figures (a node without the route simply has none).
  const pool = await ctx.client.request<MiningResponse>('GET', '/api/v1/mining').catch(() => undefined);
  const m = s.mining;
  ctx.out.print(
    [
      `network    ${s.network} (chain id ${s.chainId})`,
      `height     ${s.height}`,
      `tip        ${s.tip}`,
      `difficulty ${s.difficulty}`,
      `hashrate   ${Math.round(s.hashrate)} H/s (network estimate)`,
      `mempool    ${s.mempool.count} txs, ${s.mempool.bytes} bytes`,
      `mining     ${miningText(s)}`,
      `peers      ${s.peers}${s.syncing ? ' (syncing)' : ''}`,
      ...otherChainLines(s.otherChainPeers),
      `version    ${s.version}`,
      ...(s.payments ? [`payments   ${s.payments.settled} paid call(s) settled (${s.payments.settledUsdc} in USDC), ${s.payments.refundsPending} refund(s) pending`] : []),
      ...(pool ? formatMiningLines(pool) : []),
    ].join('\n'),
    pool ? { ...s, miningInfo: pool } : s,
  );
  return 0;
}

export async function txCommand(ctx: Ctx, values: Values, id: string): Promise<number> {
  if (!isHex(id, 32)) throw new NodeError(CliErrorCode.INVALID_TX_ID, 'a transaction id is 64 hex characters');
  const t = values.wait ? await waitMined(ctx, id.toLowerCase(), timeoutOption(values)) : await ctx.client.tx(id.toLowerCase());
  const lines = [`txid          ${t.txId}`, `status        ${t.status}`];
  if (t.status === 'mined') lines.push(`block         ${t.height} ${t.blockHash}`, `confirmations ${t.confirmations}`);
  lines.push(`type          ${t.type}`, `from          ${t.from}`);
  if (typeof t.to === 'string') lines.push(`to            ${t.to}`);
  if (typeof t.amount === 'string') lines.push(`amount        ${t.amount} NATIVE`);
  lines.push(`fee           ${t.fee} NATIVE`, `nonce         ${t.nonce}`);
  ctx.out.print(lines.join('\n'), t);
  return 0;
}
