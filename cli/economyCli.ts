/**
 * The economy's commands: `token issue|mint|burn|send|flags|back|info|list`, `pool
 * create|add|remove|list|info`, `swap "100 NATIVE -> USDN" [--max-slippage 1%]`, `stake`,
 * `unstake`, `stable mint|redeem`, `bridge record` (the bridge authority's wallet), and
 * `simulate --node URL [--rate N]`. Every command takes --json; the ones that send a transaction
 * take --wait [--timeout s] and --fee. Refusals carry the consensus codes (docs/economy.md).
 */
import { parseArgs } from 'node:util';
import { nearest } from './commandDocs.js';
import { getAmountOut } from '../consensus/amm.js';
import { parseAmount, parsePositiveAmount, formatAmount } from '../consensus/amount.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { NodeError, isNodeError } from '../consensus/errors.js';
import { fromHex, isHex } from '../consensus/hash.js';
import { NATIVE } from '../consensus/ledger.js';
import { poolId, TokenFlag, TokenKind } from '../consensus/economyState.js';
import { signTx, TX_VERSION, encodeTx } from '../consensus/tx.js';
import { feeForRate } from '../consensus/txBuilder.js';
import { tokenIssue } from '../consensus/txTypes/tokenIssue.js';
import { tokenMint } from '../consensus/txTypes/tokenMint.js';
import { tokenBurn } from '../consensus/txTypes/tokenBurn.js';
import { tokenTransfer } from '../consensus/txTypes/tokenTransfer.js';
import { tokenFlags } from '../consensus/txTypes/tokenFlags.js';
import { tokenBack } from '../consensus/txTypes/tokenBack.js';
import { stableMint } from '../consensus/txTypes/stableMint.js';
import { tokenRedeem } from '../consensus/txTypes/tokenRedeem.js';
import { poolCreate } from '../consensus/txTypes/poolCreate.js';
import { poolAdd } from '../consensus/txTypes/poolAdd.js';
import { poolRemove } from '../consensus/txTypes/poolRemove.js';
import { swap } from '../consensus/txTypes/swap.js';
import { stake } from '../consensus/txTypes/stake.js';
import { unstake } from '../consensus/txTypes/unstake.js';
import { bridgeRecord } from '../consensus/txTypes/bridgeRecord.js';
import type { TxTypeModule } from '../consensus/txTypes/types.js';
import { createDevnetChainParams } from '../consensus/devnet.js';
import { cliKit, type CliEnv } from './cliKit.js';
import { formatUnits } from '../node/api/economyAccount.js';
import { NodeClient } from '../node/client.js';
import { EconomySimulator } from '../node/economy/simulator.js';
import { createHttpBackend } from '../node/economy/backends.js';

/** Error codes of the economy commands. */
export const EconomyCliErrorCode = {
  USAGE: 'cli_usage',
  INVALID_AMOUNT: 'invalid_amount',
  INVALID_ADDRESS: 'invalid_address',
  NO_ROUTE: 'swap_no_route',
  TOKEN_NOT_FOUND: 'token_not_found',
} as const;

type Out = ReturnType<typeof cliKit.output>;
type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;
type Ctx = ReturnType<typeof cliKit.context>;

function usage(msg: string): NodeError {
  return new NodeError(EconomyCliErrorCode.USAGE, `${msg}; see docs/economy.md or npx native-node help`);
}

/** Parses a decimal amount of an asset with `decimals` places into smallest units. */
export function parseUnits(text: string, decimals: number, what = 'amount'): bigint {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m || (m[2] ?? '').length > decimals) throw new NodeError(EconomyCliErrorCode.INVALID_AMOUNT, `${what} "${text}" is not a decimal with at most ${decimals} decimals`);
  const v = BigInt(m[1]) * 10n ** BigInt(decimals) + BigInt((m[2] ?? '').padEnd(decimals, '0') || '0');
  if (v <= 0n || v >= 1n << 64n) throw new NodeError(EconomyCliErrorCode.INVALID_AMOUNT, `${what} "${text}" must be positive and below 2^64 smallest units`);
  return v;
}

/** Parses `100 NATIVE -> USDN` (also `→`, case-insensitive symbols). */
export function parseSwapSpec(spec: string): { amount: string; from: string; to: string } {
  const m = /^\s*(\d+(?:\.\d+)?)\s+([A-Za-z0-9]{2,10})\s*(?:->|→)\s*([A-Za-z0-9]{2,10})\s*$/.exec(spec);
  if (!m) throw usage(`swap takes "AMOUNT FROM -> TO", e.g. "100 NATIVE -> USDN", got "${spec}"`);
  return { amount: m[1], from: m[2].toUpperCase(), to: m[3].toUpperCase() };
}

/** Decimals of an asset; a token the chain does not have is `token_not_found`, naming the nearest symbol it has. */
async function decimalsOf(ctx: Ctx, asset: string): Promise<number> {
  if (asset === NATIVE) return 8;
  try {
    const r = await ctx.client.request<{ token: { decimals: number } }>('GET', `/api/v1/token/${encodeURIComponent(asset)}`);
    return r.token.decimals;
  } catch (e) {
    if (!isNodeError(e, 'token_not_found') && !isNodeError(e, 'invalid_symbol')) throw e;
    const known = await ctx.client.request<{ tokens: { symbol: string }[] }>('GET', '/api/v1/tokens').then((r) => r.tokens.map((t) => t.symbol), () => [] as string[]);
    const near = nearest(asset, [NATIVE, ...known]);
    throw new NodeError(EconomyCliErrorCode.TOKEN_NOT_FOUND, `no token ${asset} on this chain${near ? ` (did you mean ${near}?)` : ''}; npx native-node token list lists them`, { symbol: asset });
  }
}

function address(text: string, hrp: string): Uint8Array {
  const id = tryDecodeAddress(text, hrp);
  if (!id) throw new NodeError(EconomyCliErrorCode.INVALID_ADDRESS, `${text} is not an address of this network (${hrp}1…)`);
  return id;
}

/** Signs a transaction of `mod` with the wallet, submits it, waits when asked and prints it. */
async function submit<P>(
  ctx: Ctx,
  values: Values,
  mod: TxTypeModule<P>,
  payload: P,
  summary: Record<string, unknown>,
  /** What to add once mined (a swap's amount received). */
  minedExtra?: (mined: { txId: string; height: number }) => Promise<{ line: string; data: Record<string, unknown> }>,
): Promise<number> {
  const status = await cliKit.nodeStatus(ctx);
  const wallet = await cliKit.unlockWallet(ctx, cliKit.walletRef(ctx, status.network), status.network);
  const acc = await ctx.client.account(wallet.address);
  const base = { version: TX_VERSION, chainId: status.chainId, type: mod.type, from: wallet.keyPair.address, nonce: BigInt(acc.pendingNonce), payload: mod.encodePayload(payload), ...(acc.publicKeyKnown ? {} : { publicKey: wallet.keyPair.publicKey }) };
  const fee = typeof values.fee === 'string' ? parseAmount(values.fee, '--fee') : feeForRate(base, BigInt(status.minFeeRate ?? '1'));
  const tx = signTx({ ...base, fee }, wallet.keyPair);
  const res = await ctx.client.submitTx(Buffer.from(encodeTx(tx)).toString('hex'));
  const data: Record<string, unknown> = { txId: res.txId, type: mod.name, status: 'pending', from: wallet.address, ...summary, fee: formatAmount(fee), feeBase: fee.toString(), nonce: Number(tx.nonce) };
  if (values.wait) {
    if (!ctx.out.json) process.stderr.write(`sent ${res.txId} (${mod.name}), waiting for a block…\n`);
    const mined = await cliKit.waitMined(ctx, res.txId, cliKit.timeoutOption(values));
    Object.assign(data, { status: 'mined', height: mined.height, blockHash: mined.blockHash });
    const extra = minedExtra && mined.height !== null ? await minedExtra({ txId: res.txId, height: mined.height }) : undefined;
    Object.assign(data, extra?.data);
    ctx.out.print(`${res.txId}\n${mod.name} mined in block ${mined.height}${extra ? `: ${extra.line}` : ''}`, data);
  } else ctx.out.print(`${res.txId}\n${mod.name} sent (pending)`, data);
  return 0;
}

const TX_OPTIONS = { wait: { type: 'boolean' }, timeout: { type: 'string' }, fee: { type: 'string' } } as const;

type EconomyOptions = Record<string, { type: 'string' | 'boolean' }>;
const withTx = (extra: EconomyOptions): EconomyOptions => ({ ...cliKit.commonOptions, ...TX_OPTIONS, ...extra }) as EconomyOptions;
/** A command that reads the node and signs nothing: no wallet, data directory, fee or wait (the parser still takes and ignores the common flags). */
const read = (extra: EconomyOptions): EconomyOptions => ({ ...cliKit.nodeReadOptions, ...extra }) as EconomyOptions;

/** Every economy command and subcommand with the options its parser accepts (the help lists them from here). */
export const ECONOMY_OPTIONS: Readonly<Record<string, EconomyOptions>> = {
  'token list': read({ hidden: { type: 'boolean' } }),
  'token info': read({}),
  'token issue': withTx({ stable: { type: 'boolean' } }),
  'token mint': withTx({ to: { type: 'string' } }),
  'token burn': withTx({ to: { type: 'string' } }),
  'token back': withTx({ to: { type: 'string' } }),
  'token send': withTx({}),
  'token flags': withTx({ frozen: { type: 'boolean' }, hidden: { type: 'boolean' } }),
  'pool list': read({ asset: { type: 'string' } }),
  'pool info': read({}),
  'pool create': withTx({ 'min-shares': { type: 'string' } }),
  'pool add': withTx({ 'min-shares': { type: 'string' } }),
  'pool remove': withTx({}),
  swap: withTx({ 'max-slippage': { type: 'string' }, expiry: { type: 'string' } }),
  stake: withTx({ tier: { type: 'string' } }),
  unstake: withTx({}),
  'stable mint': withTx({}),
  'stable redeem': withTx({}),
  'bridge record': withTx({ 'fee-amount': { type: 'string' }, account: { type: 'string' } }),
  // Drives the devnet's own actors (their keys), at the node given.
  simulate: { ...cliKit.commonWithout('config', 'dev', 'network', 'data-dir', 'wallet'), rate: { type: 'string' }, duration: { type: 'string' }, seed: { type: 'string' } } as EconomyOptions,
};

function parse(args: string[], options: EconomyOptions, min: number, max = min): { values: Values; positionals: string[] } {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { ...cliKit.commonOptions, ...options }, strict: true, allowPositionals: true }) as { values: Values; positionals: string[] };
  } catch (e) {
    // One plain line; the command line adds which --help lists the flags.
    throw new NodeError(EconomyCliErrorCode.USAGE, cliKit.withSuggestion((e as Error).message, options));
  }
  if (parsed.positionals.length < min || parsed.positionals.length > max) throw usage(`expected ${min === max ? min : `${min}-${max}`} argument(s), got ${parsed.positionals.length}`);
  return parsed;
}

async function tokenCommand(sub: string | undefined, args: string[], out: Out, cenv: CliEnv): Promise<number> {
  if (sub === 'list') {
    const { values } = parse(args, ECONOMY_OPTIONS['token list'], 0);
    const ctx = cliKit.context(values, out, cenv);
    const r = await ctx.client.request<{ tokens: { symbol: string; name: string; supply: string; decimals: number; holders: number; kind: string; frozen: boolean }[] }>('GET', `/api/v1/tokens${values.hidden ? '?hidden=1' : ''}`);
    out.print(r.tokens.map((t) => `${t.symbol.padEnd(10)} ${formatUnits(t.supply, t.decimals).padStart(22)}  ${String(t.holders).padStart(6)} holders  ${t.kind}${t.frozen ? ' frozen' : ''}  ${t.name}`).join('\n') || '(no tokens)', r);
    return 0;
  }
  if (sub === 'info') {
    const { values, positionals } = parse(args, ECONOMY_OPTIONS['token info'], 1);
    const ctx = cliKit.context(values, out, cenv);
    const r = await ctx.client.request<{ token: Record<string, unknown> & { decimals: number; supply: string; maxSupply: string } }>('GET', `/api/v1/token/${encodeURIComponent(positionals[0].toUpperCase())}`);
    out.print(Object.entries(r.token).map(([k, v]) => `${k.padEnd(14)} ${String(v)}`).join('\n'), r);
    return 0;
  }
  if (sub === 'issue') {
    const { values, positionals } = parse(args, ECONOMY_OPTIONS['token issue'], 4, 5);
    const ctx = cliKit.context(values, out, cenv);
    const [symbol, name, decText, maxText, initText] = positionals;
    const decimals = Number(decText);
    if (!/^\d{1,2}$/.test(decText) || decimals > 18) throw usage('decimals must be 0-18');
    const maxSupply = parseUnits(maxText, decimals, 'maxSupply');
    const initialSupply = initText ? parseUnits(initText, decimals, 'initial supply') : 0n;
    return submit(ctx, values, tokenIssue, { symbol: symbol.toUpperCase(), name, decimals, maxSupply, initialSupply, kind: values.stable ? TokenKind.usdStable : TokenKind.token }, { symbol: symbol.toUpperCase() });
  }
  if (sub === 'mint' || sub === 'burn' || sub === 'back') {
    const { values, positionals } = parse(args, ECONOMY_OPTIONS[`token ${sub}`], 2);
    const ctx = cliKit.context(values, out, cenv);
    const symbol = positionals[0].toUpperCase();
    if (sub === 'back') {
      const amount = parsePositiveAmount(positionals[1]);
      return submit(ctx, values, tokenBack, { symbol, amount }, { symbol, amount: formatAmount(amount) });
    }
    const amount = parseUnits(positionals[1], await decimalsOf(ctx, symbol));
    if (sub === 'burn') return submit(ctx, values, tokenBurn, { symbol, amount }, { symbol, amount: positionals[1] });
    const status = await cliKit.nodeStatus(ctx);
    const to = typeof values.to === 'string' ? address(values.to, status.hrp) : (await cliKit.unlockWallet(ctx, cliKit.walletRef(ctx, status.network), status.network)).keyPair.address;
    return submit(ctx, values, tokenMint, { symbol, to, amount }, { symbol, amount: positionals[1] });
  }
  if (sub === 'send') {
    const { values, positionals } = parse(args, ECONOMY_OPTIONS['token send'], 3);
    const ctx = cliKit.context(values, out, cenv);
    const symbol = positionals[0].toUpperCase();
    const status = await cliKit.nodeStatus(ctx);
    const to = address(positionals[1], status.hrp);
    const amount = parseUnits(positionals[2], await decimalsOf(ctx, symbol));
    return submit(ctx, values, tokenTransfer, { symbol, to, amount }, { symbol, to: positionals[1], amount: positionals[2] });
  }
  if (sub === 'flags') {
    const { values, positionals } = parse(args, ECONOMY_OPTIONS['token flags'], 1);
    const ctx = cliKit.context(values, out, cenv);
    const flags = (values.frozen ? TokenFlag.frozen : 0) | (values.hidden ? TokenFlag.hidden : 0);
    return submit(ctx, values, tokenFlags, { symbol: positionals[0].toUpperCase(), flags }, { symbol: positionals[0].toUpperCase(), frozen: !!values.frozen, hidden: !!values.hidden });
  }
  throw usage(`unknown token command ${sub ?? '(none)'}; try: token issue | mint | burn | send | flags | back | info | list`);
}

async function poolCommand(sub: string | undefined, args: string[], out: Out, cenv: CliEnv): Promise<number> {
  if (sub === 'list') {
    const { values } = parse(args, ECONOMY_OPTIONS['pool list'], 0);
    const ctx = cliKit.context(values, out, cenv);
    const r = await ctx.client.request<{ pools: { id: string; price: number; tvlUsd: number }[] }>('GET', `/api/v1/pools${typeof values.asset === 'string' ? `?asset=${encodeURIComponent(values.asset)}` : ''}`);
    out.print(r.pools.map((p) => `${p.id.padEnd(22)} price ${p.price.toPrecision(6).padStart(14)}  TVL $${p.tvlUsd.toFixed(2)}`).join('\n') || '(no pools)', r);
    return 0;
  }
  if (sub === 'info') {
    const { values, positionals } = parse(args, ECONOMY_OPTIONS['pool info'], 1);
    const ctx = cliKit.context(values, out, cenv);
    const r = await ctx.client.request<{ pool: Record<string, unknown> }>('GET', `/api/v1/pool/${encodeURIComponent(positionals[0])}`);
    out.print(Object.entries(r.pool).map(([k, v]) => `${k.padEnd(14)} ${String(v)}`).join('\n'), r);
    return 0;
  }
  if (sub === 'create' || sub === 'add') {
    const { values, positionals } = parse(args, ECONOMY_OPTIONS[`pool ${sub}`], 4);
    const ctx = cliKit.context(values, out, cenv);
    const [x, ax, y, ay] = [positionals[0].toUpperCase(), positionals[1], positionals[2].toUpperCase(), positionals[3]];
    const amountX = parseUnits(ax, await decimalsOf(ctx, x), `${x} amount`);
    const amountY = parseUnits(ay, await decimalsOf(ctx, y), `${y} amount`);
    if (sub === 'create') return submit(ctx, values, poolCreate, { assetX: x, assetY: y, amountX, amountY }, { pool: poolId(x, y) });
    const minShares = typeof values['min-shares'] === 'string' ? BigInt(values['min-shares']) : 0n;
    return submit(ctx, values, poolAdd, { assetX: x, assetY: y, desiredX: amountX, desiredY: amountY, minShares }, { pool: poolId(x, y) });
  }
  if (sub === 'remove') {
    const { values, positionals } = parse(args, ECONOMY_OPTIONS['pool remove'], 3);
    const ctx = cliKit.context(values, out, cenv);
    if (!/^\d{1,20}$/.test(positionals[2])) throw usage('LP shares are an integer');
    return submit(ctx, values, poolRemove, { assetX: positionals[0].toUpperCase(), assetY: positionals[1].toUpperCase(), shares: BigInt(positionals[2]), minX: 0n, minY: 0n }, { pool: poolId(positionals[0].toUpperCase(), positionals[1].toUpperCase()) });
  }
  throw usage(`unknown pool command ${sub ?? '(none)'}; try: pool create | add | remove | list | info`);
}

async function swapCommand(args: string[], out: Out, cenv: CliEnv): Promise<number> {
  const { values, positionals } = parse(args, ECONOMY_OPTIONS.swap, 1);
  const ctx = cliKit.context(values, out, cenv);
  const spec = parseSwapSpec(positionals[0]);
  const slip = typeof values['max-slippage'] === 'string' ? values['max-slippage'] : '1%';
  const sm = /^(\d{1,2}(?:\.\d{1,2})?)%?$/.exec(slip);
  if (!sm) throw usage('--max-slippage is a percentage below 100, e.g. 0.5%');
  const slipBp = BigInt(Math.round(Number(sm[1]) * 100));
  const amountIn = parseUnits(spec.amount, await decimalsOf(ctx, spec.from));
  // Both tokens exist before any route is looked for: an unknown one is named as such, not as "no route".
  const outDec = await decimalsOf(ctx, spec.to);
  const fetchPool = async (x: string, y: string) => {
    try {
      return (await ctx.client.request<{ pool: { a: string; reserveA: string; reserveB: string } }>('GET', `/api/v1/pool/${poolId(x, y)}`)).pool;
    } catch {
      return undefined;
    }
  };
  const direct = await fetchPool(spec.from, spec.to);
  const path = direct ? [spec.from, spec.to] : [spec.from, NATIVE, spec.to];
  let amount = amountIn;
  for (let i = 0; i + 1 < path.length; i++) {
    const p = i === 0 && direct ? direct : await fetchPool(path[i], path[i + 1]);
    if (!p) throw new NodeError(EconomyCliErrorCode.NO_ROUTE, `no pool route from ${spec.from} to ${spec.to} (direct or via NATIVE)`);
    const inIsA = p.a === path[i];
    amount = getAmountOut(amount, BigInt(inIsA ? p.reserveA : p.reserveB), BigInt(inIsA ? p.reserveB : p.reserveA), 30);
  }
  const minOut = (amount * (10_000n - slipBp)) / 10_000n;
  const status = await cliKit.nodeStatus(ctx);
  const expiryHeight = status.height + (typeof values.expiry === 'string' ? Number(values.expiry) : 20);
  const summary = { path, amountIn: spec.amount, expectedOut: formatUnits(amount, outDec), minOut: formatUnits(minOut, outDec), expiryHeight };
  return submit(ctx, values, swap, { path, amountIn, minOut, expiryHeight }, summary, async (mined) => {
    // What the swap gave, from the chain's swap log at its block: the last hop's output.
    const log = await ctx.client.request<{ swaps: { tx: string; assetOut: string; amountOut: string }[] }>('GET', `/api/v1/swaps?since=${mined.height}&limit=1000`).catch(() => undefined);
    const hops = log?.swaps.filter((s) => s.tx === mined.txId && s.assetOut === spec.to) ?? [];
    const got = hops.at(-1);
    return got
      ? { line: `swapped ${spec.amount} ${spec.from} for ${formatUnits(got.amountOut, outDec)} ${spec.to} (quoted ${summary.expectedOut}, at least ${summary.minOut})`, data: { amountOut: formatUnits(got.amountOut, outDec), amountOutBase: got.amountOut } }
      : { line: `expected ${summary.expectedOut} ${spec.to} (at least ${summary.minOut})`, data: {} };
  });
}

async function simulateCommand(args: string[], out: Out, cenv: CliEnv): Promise<number> {
  const { values } = parse(args, ECONOMY_OPTIONS.simulate, 0);
  const url = typeof values.node === 'string' ? values.node : 'http://127.0.0.1:8402';
  const rate = typeof values.rate === 'string' ? Number(values.rate) : 5;
  if (!(rate > 0 && rate <= 1000)) throw usage('--rate is actions per second, 0-1000');
  const client = new NodeClient(url);
  const status = await client.status();
  if (status.network !== 'native-devnet') throw usage(`simulate drives the devnet actors; ${url} runs ${status.network}`);
  const params = createDevnetChainParams({ actors: true });
  const sim = new EconomySimulator(createHttpBackend(client, { ...params, chainId: status.chainId }), { ...params, chainId: status.chainId }, { rate, seed: typeof values.seed === 'string' ? Number(values.seed) : Date.now() % 1e9 });
  const duration = typeof values.duration === 'string' ? Number(values.duration) : 0;
  if (!out.json) process.stderr.write(`simulating the devnet economy against ${url} at ${rate} actions/s${duration ? ` for ${duration} s` : ' (Ctrl-C to stop)'}…\n`);
  sim.start();
  await new Promise<void>((resolve) => {
    const stopAt = duration ? setTimeout(resolve, duration * 1000) : undefined;
    const onSig = () => {
      if (stopAt) clearTimeout(stopAt);
      resolve();
    };
    process.once('SIGINT', onSig);
    process.once('SIGTERM', onSig);
  });
  await sim.stop();
  out.print(`submitted ${sim.stats.submitted}, refused ${sim.stats.refused}`, sim.stats);
  return 0;
}

/** Dispatches the economy commands (see module comment). */
export async function runEconomyCommand(cmd: string, rest: string[], out: Out, cenv: CliEnv): Promise<number> {
  const [sub, ...args] = rest;
  switch (cmd) {
    case 'token':
      return tokenCommand(sub, args, out, cenv);
    case 'pool':
      return poolCommand(sub, args, out, cenv);
    case 'swap':
      return swapCommand(rest, out, cenv);
    case 'stake': {
      const { values, positionals } = parse(rest, ECONOMY_OPTIONS.stake, 1);
      const ctx = cliKit.context(values, out, cenv);
      const tiers = (await ctx.client.request<{ tiers: { name: string }[] }>('GET', '/api/v1/staking')).tiers;
      const t = typeof values.tier === 'string' ? values.tier : '0';
      const tier = /^\d+$/.test(t) ? Number(t) : tiers.findIndex((x) => x.name === t);
      if (tier < 0 || tier >= tiers.length) throw usage(`--tier is one of ${tiers.map((x, i) => `${i} (${x.name})`).join(', ')}`);
      const amount = parsePositiveAmount(positionals[0]);
      return submit(ctx, values, stake, { tier, amount }, { tier: tiers[tier].name, amount: formatAmount(amount) });
    }
    case 'unstake': {
      const { values, positionals } = parse(rest, ECONOMY_OPTIONS.unstake, 1);
      const ctx = cliKit.context(values, out, cenv);
      if (!isHex(positionals[0], 32)) throw usage('unstake takes the 64-hex id of the staking transaction');
      return submit(ctx, values, unstake, { stakeId: fromHex(positionals[0]) }, { stakeId: positionals[0] });
    }
    case 'stable': {
      if (sub === 'mint') {
        const { values, positionals } = parse(args, ECONOMY_OPTIONS['stable mint'], 3);
        const ctx = cliKit.context(values, out, cenv);
        const symbol = positionals[0].toUpperCase();
        const collateral = parsePositiveAmount(positionals[1], 'collateral');
        const amount = parseUnits(positionals[2], await decimalsOf(ctx, symbol));
        return submit(ctx, values, stableMint, { symbol, collateral, amount }, { symbol, collateral: formatAmount(collateral), amount: positionals[2] });
      }
      if (sub === 'redeem') {
        const { values, positionals } = parse(args, ECONOMY_OPTIONS['stable redeem'], 2);
        const ctx = cliKit.context(values, out, cenv);
        const symbol = positionals[0].toUpperCase();
        const amount = parseUnits(positionals[1], await decimalsOf(ctx, symbol));
        return submit(ctx, values, tokenRedeem, { symbol, amount }, { symbol, amount: positionals[1] });
      }
      throw usage('try: stable mint SYMBOL COLLATERAL_NATIVE AMOUNT | stable redeem SYMBOL AMOUNT');
    }
    case 'bridge': {
      if (sub !== 'record') throw usage('try: bridge record NETWORK in|out AMOUNT REF [--fee-amount X] [--account ADDR]');
      const { values, positionals } = parse(args, ECONOMY_OPTIONS['bridge record'], 4);
      const ctx = cliKit.context(values, out, cenv);
      const [network, dir, amountText, ref] = positionals;
      const nets = (await ctx.client.request<{ networks: { index: number; name: string }[] }>('GET', '/api/v1/bridge')).networks;
      const net = nets.find((n) => n.name === network.toLowerCase());
      if (!net) throw usage(`unknown bridge network ${network} (${nets.map((n) => n.name).join(', ')})`);
      if (dir !== 'in' && dir !== 'out') throw usage('direction is in or out');
      const status = await cliKit.nodeStatus(ctx);
      const wallet = await cliKit.unlockWallet(ctx, cliKit.walletRef(ctx, status.network), status.network);
      const account = typeof values.account === 'string' ? address(values.account, status.hrp) : wallet.keyPair.address;
      const amount = parsePositiveAmount(amountText);
      const fee = typeof values['fee-amount'] === 'string' ? parseAmount(values['fee-amount'], '--fee-amount') : 0n;
      return submit(ctx, values, bridgeRecord, { network: net.index, direction: dir, amount, fee, ref, account, cosignatures: [] }, { network: net.name, direction: dir, amount: formatAmount(amount), ref });
    }
    case 'simulate':
      return simulateCommand(rest, out, cenv);
    default:
      throw usage(`unknown command ${cmd}`);
  }
}
