/**
 * The `native-node` command line. Each command is a small function; `main` parses the
 * arguments, runs one and returns the process exit code. Errors carry a stable code, printed
 * as `error <code>: <message>` on stderr (or `{"error": {code, message}}` on stdout with `--json`).
 *
 * Wallet resolution (wallet show|balance, send): `--wallet` / `NATIVE_WALLET` / config `wallet`;
 * otherwise, on the devnet, `<data-dir>/dev-wallet.json` (or the built-in dev key when that file
 * is absent), and elsewhere `~/.native-node/wallet.json`. `wallet new` writes `--wallet` or
 * `~/.native-node/wallet.json`, never the dev wallet. The network is the node's for commands
 * that talk to one, else `--network` / `--dev` / `NATIVE_NETWORK`, else the node's if one
 * answers at `--node`, else mainnet.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { NodeError, isNodeError } from '../consensus/errors.js';
import { encodeAddress, MAINNET_HRP, TESTNET_HRP, tryDecodeAddress } from '../consensus/address.js';
import { getDevKeyPair } from '../consensus/devnet.js';
import { isHex } from '../consensus/hash.js';
import { parseAmount, parsePositiveAmount, formatAmount } from '../consensus/amount.js';
import { ClientErrorCode, DEFAULT_NODE_URL, NodeClient, type StatusResponse, type TxResponse } from './client.js';
import { canonicalNetwork, configFromEnv, configFromFlagValues, configParseOptions, loadConfig, resolveConfig, type NetworkName, type NodeConfig } from './config.js';
import { createLogger } from './logger.js';
import { startWaitLine, type WaitLine } from './waitLine.js';
import { formatMiningLines, type MiningResponse } from './mining/stats.js';
import { createTransferTx } from '../consensus/txBuilder.js';
import { createAgentClient, isAgentClientError, type AgentCallResult, type AgentEvent, type AgentQuote } from '../sdk/client.js';
import { createFilePaymentStore } from '../sdk/pendingPayments.js';
import { NODE_VERSION } from './version.js';
import { AGENT_CLI_OPTIONS, agentCliPositionals, runAgentCommand } from './agentCli.js';
import { createPassphraseSource, createWalletFile, defaultWalletPath, openWallet, readWalletFile, isClearWallet, DEV_WALLET_FILE, WalletErrorCode, type OpenedWallet } from './wallet.js';

/** Error codes of the command line itself. */
export const CliErrorCode = {
  USAGE: 'cli_usage',
  UNKNOWN_COMMAND: 'cli_unknown_command',
  INVALID_ADDRESS: 'invalid_address',
  INVALID_TX_ID: 'invalid_tx_id',
  NETWORK_MISMATCH: 'network_mismatch',
  WAIT_TIMEOUT: 'wait_timeout',
} as const;

const USAGE = `native-node ${NODE_VERSION}

Usage: native-node <command> [options]

Commands:
  start [flags]                    run a node (see docs/operators-guide.md for every flag)
      --dev | --network <devnet|mainnet>  --data-dir <dir>  --http-host <h>  --http-port <p>
      --mine | --no-mine  --miner-address <addr>  --mine-threads <n>  --log-level <level>
      --stratum-port <p> | --no-stratum  --rpc-user <u> --rpc-password <p>  (docs/miners-guide.md)
      --config <file.json>  --p2p-port <p> (0: free)  --p2p-host <h>  --bootstrap <multiaddr>…  --no-p2p
  devnet [--nodes N]               a local network of N connected, mining devnet nodes
      [--data-dir <dir>] [--http-port <base>] [--p2p-port <base>] [--mine-threads <n>] [--no-mine]
  status                           the node's network, tip, difficulty, mempool, mining, Stratum workers
  tx <id> [--wait]                 a transaction, pending or mined
  wallet new                       create an encrypted wallet and print its address
  wallet show                      print the wallet's address
  wallet balance                   the wallet's balance and nonce, from the node
  send <address> <amount> [--fee <NATIVE>] [--wait] [--timeout <s>]
                                   send NATIVE (decimals, e.g. 1.5) from the wallet
  quote <serviceId> [request]      the price of a paid call (the node's 402 quote); no payment
  call <serviceId> [request] [--max-price <NATIVE>] [--timeout <s>] [--tx <id>]
                                   pay a service from the wallet (agent_invoke), wait for the
                                   block, print the result and the receipt; --tx settles an
                                   earlier payment instead of paying again (broadcasting it
                                   again, same tx id, if the node lost it)
  agent register|update <name> --description <text> [--capabilities a,b] [--payout <addr>] [--contact <c>]
  agent show [--name <name>]       an agent and its services (default: the wallet's)
  agent serve --service <id> (--exec "<command>" | --forward http://127.0.0.1:PORT/path)
                                   sell a service: take paid jobs from the node's inbox, answer them
  service register|update <id> --name <n> --description <d> --category <c> --price <NATIVE>
      [--tags a,b] [--request-format <text>] [--request-required] [--json-input] [--schema <JSON|@file>] [--job-timeout <s>]
  service retire <id> | service list
  moderate approve|suspend|reject <serviceId> [--reason <text>] | moderate label <address> <label>
                                   (signed by a moderator key; on the devnet, the dev wallet)
                                   agent/service/moderate take --wait to wait for the block
  rdap-bootstrap [--out <file>]    refresh the IANA RDAP bootstrap registry of native-domain-info
                                   (default: the snapshot in services/web/rdapBootstrap.json)
  sanctions update [--ofac-url <u>] [--un-url <u>] [--eu-url <u>]
                                   download the official OFAC, UN and EU sanctions lists into
                                   <data dir>/sanctions (validated, swapped atomically; a failed
                                   list keeps the one the node has)
  data status | data install <pack>
                                   data packs of services, installed on demand (packs/<pack>,
                                   npm ci from a lock pinning each tarball's sha512): geoip
                                   (native-geo-ip, 191 MB; the service is down without it)
  usdc-payments [--status <s>]     list the ledger's USDC payments (settled, settle_pending,
                                   expired_unsettled, failed); run with the node stopped
  token issue|mint|burn|send|flags|back|info|list, pool create|add|remove|list|info,
  swap "100 NATIVE -> USDN" [--max-slippage 1%], stake, unstake, stable mint|redeem,
  bridge record, simulate --node <url> [--rate N]   the chain's economy (docs/economy.md)
  version                          print the version
  help                             show this help

Options:
  --node <url>       node to talk to (default ${DEFAULT_NODE_URL})
  --wallet <file>    wallet file (default: the dev wallet on the devnet, else ~/.native-node/wallet.json)
  --network <name>, --dev, --data-dir <dir>   where the dev wallet lives, which network a new wallet is for
  --json             machine-readable output

The wallet passphrase is read from NATIVE_WALLET_PASSPHRASE or asked on the terminal.`;

/** Injected environment of a CLI run (tests pin it). */
export interface CliEnv {
  readonly env: Record<string, string | undefined>;
  readonly cwd: string;
  readonly home?: string;
}

interface Out {
  readonly json: boolean;
  print(human: string, data: unknown): void;
}

function output(json: boolean): Out {
  return {
    json,
    print(human, data) {
      process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${human}\n`);
    },
  };
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

const COMMON: Options = {
  json: { type: 'boolean' },
  node: { type: 'string' },
  ...configParseOptions(['network', 'dev', 'dataDir', 'config', 'wallet']),
};

function parse(args: string[], extra: Options, positionals: number): { values: Values; positionals: string[] } {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { ...COMMON, ...extra }, strict: true, allowPositionals: true });
  } catch (e) {
    throw new NodeError(CliErrorCode.USAGE, (e as Error).message);
  }
  if (parsed.positionals.length !== positionals) {
    throw new NodeError(CliErrorCode.USAGE, `expected ${positionals} argument(s), got ${parsed.positionals.length}; see native-node help`);
  }
  return parsed;
}

/** What every command shares: output, config (network, data dir, wallet), the node client. */
interface Ctx {
  readonly out: Out;
  readonly config: NodeConfig;
  readonly client: NodeClient;
  readonly env: CliEnv;
}

function context(values: Values, out: Out, cenv: CliEnv): Ctx {
  const config = resolveConfig(configFromFlagValues(values), configFromEnv(cenv.env), { cwd: cenv.cwd, devAddress: devAddress });
  const url = typeof values.node === 'string' ? values.node : DEFAULT_NODE_URL;
  if (!/^https?:\/\/[^\s/]+/.test(url)) throw new NodeError(CliErrorCode.USAGE, `--node must be an http(s) URL, got ${url}`);
  return { out, config, client: new NodeClient(url), env: cenv };
}

function devAddress(): string {
  return encodeAddress(getDevKeyPair().address, TESTNET_HRP);
}

function hrpOf(network: NetworkName): string {
  return network === 'native-devnet' ? TESTNET_HRP : MAINNET_HRP;
}

const networkExplicit = (c: NodeConfig) => c.sources.network !== 'default';

/** The network of a command that does not need a node: explicit, else the node's if one answers quickly, else mainnet. */
async function offlineNetwork(ctx: Ctx): Promise<NetworkName> {
  return (await chooseNetwork(ctx)).network;
}

/** `offlineNetwork` and where the choice came from: `flag` (or config/environment), `node`, or `default` (no node answered). */
async function chooseNetwork(ctx: Ctx): Promise<{ network: NetworkName; source: 'flag' | 'node' | 'default' }> {
  if (networkExplicit(ctx.config)) return { network: ctx.config.network, source: 'flag' };
  try {
    return { network: canonicalNetwork((await ctx.client.status(1_500)).network), source: 'node' };
  } catch {
    return { network: ctx.config.network, source: 'default' };
  }
}

/** The node's status, checked against an explicitly requested network. */
async function nodeStatus(ctx: Ctx): Promise<StatusResponse & { network: NetworkName }> {
  const status = await ctx.client.status();
  const network = canonicalNetwork(status.network);
  if (networkExplicit(ctx.config) && ctx.config.network !== network) {
    throw new NodeError(CliErrorCode.NETWORK_MISMATCH, `the node at ${ctx.client.baseUrl} runs ${status.network}, not ${ctx.config.network}`);
  }
  return { ...status, network };
}

/** Where the wallet of a command is: a file, or the built-in dev key on a devnet without a dev wallet file. */
type WalletRef = { kind: 'file'; path: string } | { kind: 'dev' };

function walletRef(ctx: Ctx, network: NetworkName): WalletRef {
  if (ctx.config.wallet) return { kind: 'file', path: ctx.config.wallet };
  if (network === 'native-devnet') {
    const dataDir = ctx.config.sources.dataDir !== 'default' ? ctx.config.dataDir : resolve(ctx.env.cwd, 'data', network);
    const path = join(dataDir, DEV_WALLET_FILE);
    return existsSync(path) ? { kind: 'file', path } : { kind: 'dev' };
  }
  return { kind: 'file', path: defaultWalletPath(ctx.env.home) };
}

async function walletAddress(ref: WalletRef, hrp: string): Promise<{ address: string; network: string; encrypted: boolean; path: string | null }> {
  if (ref.kind === 'dev') return { address: encodeAddress(getDevKeyPair().address, hrp), network: 'native-devnet', encrypted: false, path: null };
  const file = await readWalletFile(ref.path);
  return { address: file.address, network: file.network, encrypted: !isClearWallet(file), path: ref.path };
}

async function unlockWallet(ctx: Ctx, ref: WalletRef, network: NetworkName): Promise<OpenedWallet> {
  if (ref.kind === 'dev') {
    const keyPair = getDevKeyPair();
    return { address: encodeAddress(keyPair.address, TESTNET_HRP), network: 'native-devnet', keyPair, clear: true };
  }
  const w = await openWallet(ref.path, createPassphraseSource({ env: ctx.env.env }), hrpOf(network));
  if (canonicalNetwork(w.network) !== network) throw new NodeError(WalletErrorCode.WRONG_NETWORK, `wallet ${ref.path} is for ${w.network}, the node runs ${network}`);
  return w;
}

/** Why `wallet new` chose its network, in words. */
function networkChoiceText(source: 'flag' | 'node' | 'default', network: NetworkName, nodeUrl: string): string {
  if (source === 'node') return `the network of the node at ${nodeUrl}`;
  if (source === 'flag') return 'as asked (--network / --dev, config or NATIVE_NETWORK)';
  const other = network === 'native-mainnet' ? '--dev' : '--network mainnet';
  return `no node answered at ${nodeUrl}, so the default network; start your node first or pass ${other} for the other one`;
}

async function walletNew(ctx: Ctx): Promise<number> {
  const { network, source } = await chooseNetwork(ctx);
  const path = ctx.config.wallet ?? defaultWalletPath(ctx.env.home);
  if (existsSync(path)) throw new NodeError(WalletErrorCode.EXISTS, `${path} already exists; refusing to overwrite it (use --wallet <new file>)`, { path });
  const passphrase = await createPassphraseSource({ env: ctx.env.env }).get('create');
  const w = await createWalletFile(path, { network, hrp: hrpOf(network), passphrase });
  const why = networkChoiceText(source, network, ctx.client.baseUrl);
  ctx.out.print(`address ${w.address}\nnetwork ${w.network} (${why})\nwallet  ${w.path} (encrypted)`, { ...w, networkSource: source });
  return 0;
}

async function walletShow(ctx: Ctx): Promise<number> {
  const network = ctx.config.wallet ? ctx.config.network : await offlineNetwork(ctx);
  const w = await walletAddress(walletRef(ctx, network), hrpOf(network));
  ctx.out.print(`address ${w.address}\nnetwork ${w.network}\nwallet  ${w.path ?? '(built-in dev key)'}${w.encrypted ? ' (encrypted)' : ''}`, w);
  return 0;
}

async function walletBalance(ctx: Ctx): Promise<number> {
  const status = await nodeStatus(ctx);
  const w = await walletAddress(walletRef(ctx, status.network), status.hrp);
  const acc = await ctx.client.account(w.address);
  ctx.out.print(`address ${acc.address}\nbalance ${acc.balance} NATIVE\nnonce   ${acc.nonce} (next ${acc.pendingNonce})`, acc);
  return 0;
}

async function waitMined(ctx: Ctx, id: string, timeoutSec: number): Promise<TxResponse> {
  const deadline = Date.now() + timeoutSec * 1000;
  let last: TxResponse | undefined;
  for (;;) {
    try {
      last = await ctx.client.tx(id);
      if (last.status === 'mined') return last;
    } catch (e) {
      // Briefly absent while a block moves it from the mempool to the chain, or during a reorg.
      if (!isNodeError(e, 'tx_not_found')) throw e; // HttpErrorCode.TX_NOT_FOUND (not imported: keeps koa out of the CLI)
    }
    if (Date.now() > deadline) throw new NodeError(CliErrorCode.WAIT_TIMEOUT, `transaction ${id} not mined after ${timeoutSec} s (last status: ${last?.status ?? 'unknown'})`, { txId: id });
    await new Promise((r) => setTimeout(r, 500));
  }
}

function timeoutOption(values: Values): number {
  const raw = values.timeout;
  if (raw === undefined) return 120;
  if (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw) || Number(raw) === 0) throw new NodeError(CliErrorCode.USAGE, '--timeout must be a positive number of seconds');
  return Number(raw);
}

async function send(ctx: Ctx, values: Values, toText: string, amountText: string): Promise<number> {
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

async function status(ctx: Ctx): Promise<number> {
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

async function txCommand(ctx: Ctx, values: Values, id: string): Promise<number> {
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

/** `quote` and `call` take a service id and an optional request (`--` before a request that starts with a dash). */
function parseCallArgs(args: string[], extra: Options): { values: Values; positionals: string[] } {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { ...COMMON, ...extra }, strict: true, allowPositionals: true });
  } catch (e) {
    throw new NodeError(CliErrorCode.USAGE, (e as Error).message);
  }
  if (parsed.positionals.length < 1 || parsed.positionals.length > 2) {
    throw new NodeError(CliErrorCode.USAGE, `expected <serviceId> [request], got ${parsed.positionals.length} argument(s); quote a request that has spaces`);
  }
  return parsed;
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
  if (q.requestHash) lines.push(`request  sha256 ${q.requestHash}`);
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
    requestHash: q.requestHash ?? null,
    maxTimeoutSeconds: q.requirement.maxTimeoutSeconds,
    resource: q.requirement.resource,
    native: q.requirement,
    usdc: q.usdc ?? null,
  };
}

async function quoteCommand(ctx: Ctx, serviceId: string, request: string | undefined): Promise<number> {
  const q = await createAgentClient({ nodeUrl: ctx.client.baseUrl }).quote(serviceId, request);
  ctx.out.print(quoteLines(q).join('\n'), quoteJson(q));
  return 0;
}

/** Prints the result of a service: strings as they are, anything else as indented JSON. */
function formatResult(result: unknown): string {
  return typeof result === 'string' ? result : JSON.stringify(result, null, 2);
}

async function callCommand(ctx: Ctx, values: Values, serviceId: string, request: string | undefined): Promise<number> {
  const status = await nodeStatus(ctx);
  const maxPriceBase = typeof values['max-price'] === 'string' ? parseAmount(values['max-price'], '--max-price') : undefined;
  const timeoutMs = timeoutOption(values) * 1000;
  const payTx = typeof values.tx === 'string' ? values.tx.toLowerCase() : undefined;
  if (payTx !== undefined && !isHex(payTx, 32)) throw new NodeError(CliErrorCode.INVALID_TX_ID, '--tx takes the 64-hex-character id of an earlier agent_invoke');
  const wallet = payTx === undefined ? await unlockWallet(ctx, walletRef(ctx, status.network), status.network) : undefined;
  // Signed payments are kept on disk until mined, so `--tx` can broadcast one again that the node lost.
  const pendingPayments = createFilePaymentStore(join(dirname(defaultWalletPath(ctx.env.home)), 'payments', status.network));
  const client = createAgentClient({ nodeUrl: ctx.client.baseUrl, pendingPayments, ...(wallet ? { key: wallet.keyPair } : {}) });
  // On a terminal, a line redrawn in place while the payment waits for its block (node/waitLine.ts).
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
      r = await client.settle(q, payTx, { timeoutMs, onEvent: progress });
    }
    waiting?.stop();
    const rc = r.receipt;
    const human = [
      formatResult(r.result),
      '',
      `receipt  ${rc.serviceId} paid ${formatAmount(r.quote.amount)} NATIVE by ${rc.caller}`,
      `tx       ${rc.txId}${rc.height !== undefined ? ` (block ${rc.height}${rc.blockHash ? ` ${rc.blockHash}` : ''})` : ''}`,
      ...(r.feeBase > 0n ? [`fee      ${formatAmount(r.feeBase)} NATIVE`] : []),
    ].join('\n');
    ctx.out.print(human, { serviceId, result: r.result, receipt: rc, txId: r.txId, price: r.quote.priceNative, priceBase: r.quote.amount.toString(), fee: formatAmount(r.feeBase), feeBase: r.feeBase.toString() });
    return 0;
  } catch (e) {
    // With --json, keep what the caller needs to recover (txId to settle again, refundTxId).
    if (!ctx.out.json || !isAgentClientError(e)) throw e;
    const { status: httpStatus, ...rest } = e.payload;
    process.stdout.write(`${JSON.stringify({ error: { code: e.code, message: e.message, ...rest, ...(httpStatus !== undefined ? { status: httpStatus } : {}) } })}\n`);
    return e.code === ClientErrorCode.UNREACHABLE ? 3 : 2;
  } finally {
    waiting?.stop();
  }
}

async function start(args: string[], cenv: CliEnv): Promise<number> {
  const config = loadConfig(args, cenv.env, { cwd: cenv.cwd, devAddress });
  const log = createLogger({ level: config.logLevel, format: config.logFormat });
  const { runNode } = await import('./node.js');
  try {
    await runNode(config, log);
  } catch (e) {
    log.fatal({ err: e, code: isNodeError(e) ? e.code : undefined }, 'node failed');
    throw e;
  }
  return 0;
}

/** Runs the command line with `argv` (without node and script); returns the exit code. */
export async function main(argv: string[], cenv: CliEnv = { env: process.env, cwd: process.cwd() }): Promise<number> {
  const json = argv.includes('--json');
  const out = output(json);
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        return 0;
      case 'version':
      case '--version':
        out.print(NODE_VERSION, { version: NODE_VERSION });
        return 0;
      case 'start':
        return await start(rest.filter((a) => a !== '--json'), cenv);
      case 'devnet':
        return await (await import('./devnet.js')).runDevnet(rest, cenv.cwd);
      case 'token':
      case 'pool':
      case 'swap':
      case 'stake':
      case 'unstake':
      case 'stable':
      case 'bridge':
      case 'simulate':
        return await (await import('./economyCli.js')).runEconomyCommand(cmd, rest, out, cenv);
      case 'status': {
        const { values } = parse(rest, {}, 0);
        return await status(context(values, out, cenv));
      }
      case 'tx': {
        const { values, positionals } = parse(rest, { wait: { type: 'boolean' }, timeout: { type: 'string' } }, 1);
        return await txCommand(context(values, out, cenv), values, positionals[0]);
      }
      case 'send': {
        const { values, positionals } = parse(rest, { fee: { type: 'string' }, wait: { type: 'boolean' }, timeout: { type: 'string' } }, 2);
        return await send(context(values, out, cenv), values, positionals[0], positionals[1]);
      }
      case 'quote': {
        const { values, positionals } = parseCallArgs(rest, {});
        return await quoteCommand(context(values, out, cenv), positionals[0], positionals[1]);
      }
      case 'call': {
        const { values, positionals } = parseCallArgs(rest, { 'max-price': { type: 'string' }, timeout: { type: 'string' }, tx: { type: 'string' } });
        return await callCommand(context(values, out, cenv), values, positionals[0], positionals[1]);
      }
      case 'agent':
      case 'service':
      case 'moderate': {
        const [sub, ...args] = rest;
        const n = agentCliPositionals(cmd, sub);
        const parsed = parse(args, AGENT_CLI_OPTIONS, n);
        const ctx = context(parsed.values, out, cenv);
        return await runAgentCommand(cmd, sub, {
          out,
          client: ctx.client,
          values: parsed.values,
          positionals: parsed.positionals,
          env: cenv.env,
          status: () => nodeStatus(ctx),
          wallet: async () => {
            const s = await nodeStatus(ctx);
            return unlockWallet(ctx, walletRef(ctx, s.network), s.network);
          },
          waitMined: (id) => waitMined(ctx, id, timeoutOption(parsed.values)),
        });
      }
      case 'rdap-bootstrap': {
        const { values } = parse(rest, { out: { type: 'string' }, url: { type: 'string' } }, 0);
        const { refreshRdapBootstrap } = await import('./rdapBootstrapCommand.js');
        const r = await refreshRdapBootstrap({ out: values.out as string | undefined, url: values.url as string | undefined, cwd: cenv.cwd });
        out.print(`${r.file}: ${r.tlds} TLDs, published ${r.publication} (${r.url})`, r);
        return 0;
      }
      case 'wallet': {
        const [sub, ...args] = rest;
        const { values } = parse(args, {}, 0);
        const ctx = context(values, out, cenv);
        if (sub === 'new') return await walletNew(ctx);
        if (sub === 'show') return await walletShow(ctx);
        if (sub === 'balance') return await walletBalance(ctx);
        throw new NodeError(CliErrorCode.USAGE, `unknown wallet command ${sub ?? '(none)'}; try: wallet new | show | balance`);
      }
      case 'sanctions': {
        const [sub, ...args] = rest;
        const { values } = parse(args, { 'ofac-url': { type: 'string' }, 'un-url': { type: 'string' }, 'eu-url': { type: 'string' } }, 0);
        if (sub !== 'update') throw new NodeError(CliErrorCode.USAGE, `unknown sanctions command ${sub ?? '(none)'}; try: sanctions update`);
        const ctx = context(values, out, cenv);
        return await (await import('./sanctions.js')).sanctionsUpdate(ctx.config, ctx.out, { OFAC: values['ofac-url'] as string | undefined, UN: values['un-url'] as string | undefined, EU: values['eu-url'] as string | undefined });
      }
      case 'data': {
        const sub = rest[0];
        const name = parse(rest.slice(1), {}, sub === 'install' ? 1 : 0).positionals[0];
        const packs = await import('./dataPacks.js');
        if (sub === 'status') {
          const all = Object.values(packs.DATA_PACKS).map(packs.dataPackStatus);
          out.print(all.map((p) => `${p.name}: ${p.installed ? 'installed' : 'not installed'} (${p.description}; ${Object.entries(p.packages).map(([k, v]) => `${k}@${v}`).join(', ')}) in ${p.dir}`).join('\n'), { packs: all });
          return 0;
        }
        if (sub !== 'install') throw new NodeError(CliErrorCode.USAGE, `unknown data command ${sub ?? '(none)'}; try: data status | data install <pack>`);
        const pack = packs.dataPack(name);
        if (!out.json) process.stderr.write(`installing the ${pack.name} data pack into ${pack.dir} (npm ci)…\n`);
        const st = await packs.installDataPack(pack);
        out.print(`${st.name}: installed (${Object.entries(st.packages).map(([k, v]) => `${k}@${v}`).join(', ')}) in ${st.dir}; paid calls to its service work at once, the catalog shows it active after the next health check (about a minute)`, st);
        return 0;
      }
      case 'usdc-payments': {
        const { values } = parse(rest, { status: { type: 'string' } }, 0);
        const ctx = context(values, out, cenv);
        return await (await import('./usdcPaymentsCommand.js')).usdcPaymentsCommand(ctx.config, ctx.out, values.status as string | undefined);
      }
      default:
        throw new NodeError(CliErrorCode.UNKNOWN_COMMAND, `unknown command ${cmd}; see native-node help`);
    }
  } catch (e) {
    const code = isNodeError(e) ? e.code : 'internal_error';
    const message = e instanceof Error ? e.message : String(e);
    if (json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    else process.stderr.write(`error ${code}: ${message}\n`);
    if (code === 'internal_error' && e instanceof Error && e.stack && cenv.env.NATIVE_DEBUG) process.stderr.write(`${e.stack}\n`);
    return code === 'internal_error' ? 70 : code === ClientErrorCode.UNREACHABLE ? 3 : 2;
  }
}

/** What the economy's commands (node/economyCli.ts) borrow from this CLI: options, context, wallet, waiting. */
export const cliKit = { commonOptions: COMMON, context, nodeStatus, unlockWallet, walletRef, waitMined, timeoutOption, output } as const;
