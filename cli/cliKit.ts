/**
 * What the command-line commands share (cli.ts, callCli.ts, economyCli.ts, agentCli.ts): the
 * CLI's error codes, output (human or `--json`), argument parsing with the common options, the
 * command context (config, node client), the network and wallet resolution described in cli.ts,
 * and waiting for a transaction to be mined.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { NodeError, isNodeError } from '../consensus/errors.js';
import { encodeAddress, MAINNET_HRP, TESTNET_HRP } from '../consensus/address.js';
import { getDevKeyPair } from '../consensus/devnet.js';
import { DEFAULT_NODE_URL, NodeClient, type StatusResponse, type TxResponse } from '../node/client.js';
import { canonicalNetwork, configFromEnv, configFromFlagValues, configParseOptions, resolveConfig, type NetworkName, type NodeConfig } from '../node/config.js';
import { createPassphraseSource, defaultWalletPath, openWallet, readWalletFile, isClearWallet, DEV_WALLET_FILE, WalletErrorCode, type OpenedWallet } from '../node/wallet.js';
import { withSuggestion } from './startHelp.js';

export { withSuggestion };

/** Error codes of the command line itself. */
export const CliErrorCode = {
  USAGE: 'cli_usage',
  UNKNOWN_COMMAND: 'cli_unknown_command',
  INVALID_ADDRESS: 'invalid_address',
  INVALID_TX_ID: 'invalid_tx_id',
  NETWORK_MISMATCH: 'network_mismatch',
  WAIT_TIMEOUT: 'wait_timeout',
} as const;

export interface CliEnv {
  readonly env: Record<string, string | undefined>;
  readonly cwd: string;
  readonly home?: string;
}

export interface Out {
  readonly json: boolean;
  print(human: string, data: unknown): void;
}

export function output(json: boolean): Out {
  return {
    json,
    print(human, data) {
      process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${human}\n`);
    },
  };
}

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export const COMMON: Options = {
  json: { type: 'boolean' },
  node: { type: 'string' },
  ...configParseOptions(['network', 'dev', 'dataDir', 'config', 'wallet']),
};

/**
 * The common flags but `drop`: those a command some of them mean nothing to lists in its help
 * (and `commandOptionTables()` gives). Its parser still takes every common flag and ignores the
 * others, so one set of common flags (an alias, a script) works with every command.
 */
export function commonWithout(...drop: string[]): Options {
  return Object.fromEntries(Object.entries(COMMON).filter(([k]) => !drop.includes(k)));
}

/** The common flags that mean something to a command that reads a node and signs nothing: no --wallet, no --data-dir. */
export const COMMON_NODE_READ: Options = commonWithout('wallet', 'data-dir');

/** How a flag of an options table is written in help: `--flag <value>` or `--flag`. */
export function optionUsage(name: string, spec: Options[string]): string {
  return spec.type === 'string' ? `--${name} <value>` : `--${name}`;
}

/** The "Flags:" lines of a command's help, one per option of its parser's table. */
export function optionLines(options: Options): string[] {
  return Object.entries(options).map(([name, spec]) => `  ${optionUsage(name, spec)}`);
}

/**
 * Parses a command's flags (the shared ones and `extra`) and checks its positionals: exactly
 * `positionals`, or between `min` and `max` (then `usage` names them in the error).
 */
export function parse(args: string[], extra: Options, positionals: number | { readonly min: number; readonly max: number; readonly usage: string }): { values: Values; positionals: string[] } {
  let parsed: { values: Values; positionals: string[] };
  const options = { ...COMMON, ...extra };
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (e) {
    throw new NodeError(CliErrorCode.USAGE, withSuggestion((e as Error).message, options));
  }
  const n = parsed.positionals.length;
  if (typeof positionals === 'number' ? n !== positionals : n < positionals.min || n > positionals.max) {
    throw new NodeError(CliErrorCode.USAGE, typeof positionals === 'number' ? `expected ${positionals} argument(s), got ${n}; see npx native-node help` : `expected ${positionals.usage}, got ${n} argument(s)`);
  }
  return parsed;
}

/** What every command shares: output, config (network, data dir, wallet), the node client. */
export interface Ctx {
  readonly out: Out;
  readonly config: NodeConfig;
  readonly client: NodeClient;
  readonly env: CliEnv;
}

export function context(values: Values, out: Out, cenv: CliEnv): Ctx {
  const config = resolveConfig(configFromFlagValues(values), configFromEnv(cenv.env), { cwd: cenv.cwd, devAddress: devAddress });
  const url = typeof values.node === 'string' ? values.node : DEFAULT_NODE_URL;
  if (!/^https?:\/\/[^\s/]+/.test(url)) throw new NodeError(CliErrorCode.USAGE, `--node must be an http(s) URL, got ${url}`);
  return { out, config, client: new NodeClient(url), env: cenv };
}

export function devAddress(): string {
  return encodeAddress(getDevKeyPair().address, TESTNET_HRP);
}

export function hrpOf(network: NetworkName): string {
  return network === 'native-devnet' ? TESTNET_HRP : MAINNET_HRP;
}

export const networkExplicit = (c: NodeConfig) => c.sources.network !== 'default';

/** The network of a command that does not need a node: explicit, else the node's if one answers quickly, else mainnet. */
export async function offlineNetwork(ctx: Ctx): Promise<NetworkName> {
  return (await chooseNetwork(ctx)).network;
}

/** `offlineNetwork` and where the choice came from: `flag` (or config/environment), `node`, or `default` (no node answered). */
export async function chooseNetwork(ctx: Ctx): Promise<{ network: NetworkName; source: 'flag' | 'node' | 'default' }> {
  if (networkExplicit(ctx.config)) return { network: ctx.config.network, source: 'flag' };
  try {
    return { network: canonicalNetwork((await ctx.client.status(1_500)).network), source: 'node' };
  } catch {
    return { network: ctx.config.network, source: 'default' };
  }
}

/** The node's status, checked against an explicitly requested network. */
export async function nodeStatus(ctx: Ctx): Promise<StatusResponse & { network: NetworkName }> {
  const status = await ctx.client.status();
  const network = canonicalNetwork(status.network);
  if (networkExplicit(ctx.config) && ctx.config.network !== network) {
    throw new NodeError(CliErrorCode.NETWORK_MISMATCH, `the node at ${ctx.client.baseUrl} runs ${status.network}, not ${ctx.config.network}`);
  }
  return { ...status, network };
}

/** Where the wallet of a command is: a file, or the built-in dev key on a devnet without a dev wallet file. */
export type WalletRef = { kind: 'file'; path: string } | { kind: 'dev' };

export function walletRef(ctx: Ctx, network: NetworkName): WalletRef {
  if (ctx.config.wallet) return { kind: 'file', path: ctx.config.wallet };
  if (network === 'native-devnet') {
    const dataDir = ctx.config.sources.dataDir !== 'default' ? ctx.config.dataDir : resolve(ctx.env.cwd, 'data', network);
    const path = join(dataDir, DEV_WALLET_FILE);
    return existsSync(path) ? { kind: 'file', path } : { kind: 'dev' };
  }
  return { kind: 'file', path: defaultWalletPath(ctx.env.home) };
}

export async function walletAddress(ref: WalletRef, hrp: string): Promise<{ address: string; network: string; encrypted: boolean; path: string | null }> {
  if (ref.kind === 'dev') return { address: encodeAddress(getDevKeyPair().address, hrp), network: 'native-devnet', encrypted: false, path: null };
  const file = await readWalletFile(ref.path);
  return { address: file.address, network: file.network, encrypted: !isClearWallet(file), path: ref.path };
}

export async function unlockWallet(ctx: Ctx, ref: WalletRef, network: NetworkName): Promise<OpenedWallet> {
  if (ref.kind === 'dev') {
    const keyPair = getDevKeyPair();
    return { address: encodeAddress(keyPair.address, TESTNET_HRP), network: 'native-devnet', keyPair, clear: true };
  }
  const w = await openWallet(ref.path, createPassphraseSource({ env: ctx.env.env }), hrpOf(network));
  if (canonicalNetwork(w.network) !== network) throw new NodeError(WalletErrorCode.WRONG_NETWORK, `wallet ${ref.path} is for ${w.network}, the node runs ${network}`);
  return w;
}

/** Why `wallet new` chose its network, in words. */
export function networkChoiceText(source: 'flag' | 'node' | 'default', network: NetworkName, nodeUrl: string): string {
  if (source === 'node') return `the network of the node at ${nodeUrl}`;
  if (source === 'flag') return 'as asked (--network / --dev, config or NATIVE_NETWORK)';
  const other = network === 'native-mainnet' ? '--dev' : '--network mainnet';
  return `no node answered at ${nodeUrl}, so the default network; start your node first or pass ${other} for the other one`;
}

export async function waitMined(ctx: Ctx, id: string, timeoutSec: number): Promise<TxResponse> {
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

export function timeoutOption(values: Values): number {
  const raw = values.timeout;
  if (raw === undefined) return 120;
  if (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw) || Number(raw) === 0) throw new NodeError(CliErrorCode.USAGE, '--timeout must be a positive number of seconds');
  return Number(raw);
}

/** The kit other command files use (economyCli.ts). */
export const cliKit = { commonOptions: COMMON, nodeReadOptions: COMMON_NODE_READ, commonWithout, withSuggestion, context, nodeStatus, unlockWallet, walletRef, waitMined, timeoutOption, output } as const;
