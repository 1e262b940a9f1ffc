/**
 * The wallet commands: `wallet new` (an encrypted wallet for the network of the node at --node,
 * or the one asked), `wallet show` (its address), `wallet balance` (its balance and nonce, from
 * the node). Their options and usage lines are declared here, next to them (cli.ts puts the
 * lines into the global usage and the options into `<command> --help`).
 */
import { existsSync } from 'node:fs';
import { NodeError } from '../consensus/errors.js';
import { createPassphraseSource, createWalletFile, defaultWalletPath, WalletErrorCode } from '../node/wallet.js';
import { chooseNetwork, CliErrorCode, context, hrpOf, networkChoiceText, nodeStatus, offlineNetwork, parse, walletAddress, walletRef, type CliEnv, type Ctx, type Options, type Out } from './cliKit.js';

/** The options of each wallet subcommand beyond the common ones (the parser and the help read this table). */
export const WALLET_OPTIONS = {
  'wallet new': {},
  'wallet show': {},
  'wallet balance': {},
} as const satisfies Record<string, Options>;

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

/** `native-node wallet <new|show|balance> …` */
export async function runWalletCommand(rest: string[], out: Out, cenv: CliEnv): Promise<number> {
  const [sub, ...args] = rest;
  const { values } = parse(args, WALLET_OPTIONS[`wallet ${sub === 'show' || sub === 'balance' ? sub : 'new'}`], 0);
  const ctx = context(values, out, cenv);
  if (sub === 'new') return await walletNew(ctx);
  if (sub === 'show') return await walletShow(ctx);
  if (sub === 'balance') return await walletBalance(ctx);
  throw new NodeError(CliErrorCode.USAGE, `unknown wallet command ${sub ?? '(none)'}; try: wallet new | show | balance`);
}
