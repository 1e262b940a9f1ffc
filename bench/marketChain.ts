/**
 * A large devnet economy for the chain-data services benchmark (`npm run bench -- services`):
 * by default 5,000 blocks 3 s apart ending about now, each connected through `Chain.addBlock`
 * into a LevelDB chain (full consensus rules, state, undo and the economy indexes in the block's
 * batch, exactly as the node connects blocks). 16 tokens (one USD stablecoin), 20 pools (16
 * NATIVE pairs, 4 token/token pairs), and per block: 20 swaps by 20 of 200 traders (buys for
 * NATIVE, sells of what they hold, token/token and two-hop swaps), one swap of a wash-trading
 * bot (now and then a buy and its sell in one block), 2 transfers of HOLD from the issuer to new
 * holders (10,000 holders by block 5,000), a NATIVE transfer, and every few blocks whale
 * transfers, stakes, liquidity adds and removes, bridge records on the ten networks, stablecoin
 * mints and transfers to a moderation-labelled mixer address.
 *
 * Signatures are not the subject here (the import benchmark measures them): the actors' public
 * keys are deterministic filler bytes whose hash is the sender address (so a key is published
 * and bound to its account as usual), the signatures are zero bytes, and the chain's verifier
 * accepts every signature. Everything else is the node's code path.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChain, type Chain } from '../chain/chain.js';
import { selectApplicable, writeChanges } from '../consensus/apply.js';
import { encodeAddress } from '../consensus/address.js';
import { blockHash } from '../consensus/block.js';
import { balanceOf, NATIVE } from '../consensus/ledger.js';
import { getAmountOut } from '../consensus/amm.js';
import { createDevnetParams, BRIDGE_NETWORK_NAMES, COIN, type ChainParams } from '../consensus/params.js';
import { createGenesisBlock, createGenesisState } from '../consensus/genesis.js';
import { decodePool, lpKey, poolId, poolKey, TokenKind } from '../consensus/economyState.js';
import { sha256 } from '../consensus/hash.js';
import { decodeVarintValue } from '../consensus/ledger.js';
import { addressOfPublicKey, ED25519_PUBLIC_KEY_SIZE, ED25519_SIGNATURE_SIZE, MLDSA_PUBLIC_KEY_SIZE, MLDSA_SIGNATURE_SIZE, type HybridPublicKey } from '../consensus/keys.js';
import { encodeTx, txId, TX_VERSION, type Tx } from '../consensus/tx.js';
import { StateOverlay, type StateView } from '../consensus/state.js';
import { transfer } from '../consensus/txTypes/transfer.js';
import { tokenIssue } from '../consensus/txTypes/tokenIssue.js';
import { tokenTransfer } from '../consensus/txTypes/tokenTransfer.js';
import { stableMint } from '../consensus/txTypes/stableMint.js';
import { poolCreate } from '../consensus/txTypes/poolCreate.js';
import { poolAdd } from '../consensus/txTypes/poolAdd.js';
import { poolRemove } from '../consensus/txTypes/poolRemove.js';
import { swap } from '../consensus/txTypes/swap.js';
import { stake } from '../consensus/txTypes/stake.js';
import { bridgeRecord } from '../consensus/txTypes/bridgeRecord.js';
import { moderation } from '../consensus/txTypes/moderation.js';
import type { TxTypeModule } from '../consensus/txTypes/types.js';
import { acceptAllVerifier } from './acceptAllVerifier.js';
import { sealBlock, type BenchParent } from './transferChain.js';

/** What to build. */
export interface MarketChainOptions {
  readonly blocks: number;
  readonly traders: number;
  readonly holders: number;
  /** Where the LevelDB goes (default: a new temp dir). */
  readonly dataDir?: string;
}

/** Defaults: the issue's sizes. */
export const defaultMarketChainOptions: MarketChainOptions = { blocks: 5_000, traders: 200, holders: 10_000 };

/** An actor: an address bound to filler key bytes. */
export interface BenchActor {
  readonly name: string;
  readonly address: Uint8Array;
  readonly publicKey: HybridPublicKey;
}

/** The built chain, open, and who is who in it. */
export interface MarketChain {
  readonly chain: Chain;
  readonly params: ChainParams;
  readonly dataDir: string;
  readonly traders: BenchActor[];
  readonly bots: BenchActor[];
  readonly whale: BenchActor;
  readonly issuer: BenchActor;
  readonly mixer: Uint8Array;
  readonly exploiter: Uint8Array;
  readonly tokens: readonly string[];
  readonly pools: readonly string[];
  /** Transactions by type, and in all. */
  readonly mix: Record<string, number>;
  readonly txs: number;
  readonly holders: number;
  readonly seconds: number;
}


function fillerBytes(seed: string, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i * 32 < n; i++) out.set(sha256(new TextEncoder().encode(`${seed}/${i}`)).subarray(0, Math.min(32, n - i * 32)), i * 32);
  return out;
}

function actor(name: string): BenchActor {
  const publicKey = { mldsa: fillerBytes(`bench-market ${name} mldsa`, MLDSA_PUBLIC_KEY_SIZE), ed25519: fillerBytes(`bench-market ${name} ed25519`, ED25519_PUBLIC_KEY_SIZE) };
  return { name, address: addressOfPublicKey(publicKey), publicKey };
}

const ZERO_SIG = { mldsa: new Uint8Array(MLDSA_SIGNATURE_SIZE), ed25519: new Uint8Array(ED25519_SIGNATURE_SIZE) };

/** Tokens: symbol, decimals, whole units issued, whole units in its NATIVE pool (against 1,000,000 NATIVE). */
const TOKENS: readonly { sym: string; dec: number; supply: bigint; pool: bigint }[] = [
  { sym: 'USDN', dec: 6, supply: 0n, pool: 500_000n },
  { sym: 'GOLD', dec: 2, supply: 1_000_000n, pool: 10_000n },
  { sym: 'NBTC', dec: 8, supply: 21n, pool: 10n },
  { sym: 'NETH', dec: 8, supply: 1_000n, pool: 200n },
  { sym: 'MEME', dec: 0, supply: 500_000_000_000n, pool: 1_000_000_000n },
  { sym: 'AGNT', dec: 6, supply: 5_000_000n, pool: 500_000n },
  { sym: 'HOLD', dec: 4, supply: 100_000_000n, pool: 2_000_000n },
  ...['SOLR', 'WIND', 'RAIN', 'FIRE', 'ROCK', 'SAND', 'LEAF', 'MOON', 'STAR'].map((sym, i) => ({ sym, dec: 8, supply: 100_000_000n, pool: BigInt(200_000 * (i + 1)) })),
];
/** Token/token pools: [x, whole x, y, whole y] (a few % off the NATIVE prices, so arbitrage exists). */
const CROSS_POOLS: readonly [string, bigint, string, bigint][] = [
  ['GOLD', 1_000n, 'USDN', 52_000n],
  ['NBTC', 1n, 'USDN', 52_000n],
  ['NETH', 20n, 'NBTC', 1n],
  ['MEME', 100_000_000n, 'AGNT', 50_000n],
];
const POOL_NATIVE = 1_000_000n * COIN;

/** Builds and connects the chain (see module comment); `progress` is told every 500 blocks. */
export async function buildMarketChain(o: MarketChainOptions = defaultMarketChainOptions, progress?: (height: number, txs: number) => void): Promise<MarketChain> {
  const t0 = performance.now();
  const issuer = actor('issuer');
  const whale = actor('whale');
  const staker = actor('staker');
  const authority = actor('authority');
  const traders = Array.from({ length: o.traders }, (_, i) => actor(`trader${i}`));
  const bots = Array.from({ length: 4 }, (_, i) => actor(`bot${i}`));
  const mixer = sha256(new TextEncoder().encode('bench-market mixer')).slice(0, 20);
  const exploiter = sha256(new TextEncoder().encode('bench-market exploiter')).slice(0, 20);
  const holderAddr = (h: number) => sha256(new TextEncoder().encode(`bench-market holder ${h}`)).slice(0, 20);
  const addr = (a: Uint8Array) => encodeAddress(a, 'tnative');
  const genesisTime = Math.floor(Date.now() / 1000) - 3 * o.blocks - 60;
  const params = createDevnetParams({
    genesisBits: 0x207fffff,
    genesisTime,
    allocations: [
      { address: addr(issuer.address), amount: 60_000_000n * COIN },
      { address: addr(whale.address), amount: 100_000_000n * COIN },
      { address: addr(staker.address), amount: 10_000_000n * COIN },
      { address: addr(authority.address), amount: 100_000n * COIN },
      ...[...traders, ...bots].map((t) => ({ address: addr(t.address), amount: 1_000_000n * COIN })),
    ],
    bridgeAuthorities: [addr(authority.address)],
    moderationAuthorities: [addr(authority.address)],
    economy: { bridgeNetworks: BRIDGE_NETWORK_NAMES.map((name) => ({ name, vault: `vault-${name}` })) },
  });
  const dataDir = o.dataDir ?? (await mkdtemp(join(tmpdir(), 'native-bench-market-')));
  const chain = await openChain({ dataDir, params, verifier: acceptAllVerifier, now: () => Math.floor(Date.now() / 1000) + 60 });

  const state = new Map<string, Uint8Array>();
  writeChanges(state, createGenesisState(params));
  const view: StateView = { get: (k) => state.get(k) };
  const nonces = new Map<BenchActor, bigint>();
  const mix: Record<string, number> = {};
  const typeNames = new Map<number, string>();
  const make = <P>(a: BenchActor, mod: TxTypeModule<P>, p: P): Tx => {
    typeNames.set(mod.type, mod.name);
    const nonce = nonces.get(a) ?? 0n;
    nonces.set(a, nonce + 1n);
    return { version: TX_VERSION, chainId: params.chainId, type: mod.type, from: a.address, nonce, fee: 30_000n, payload: mod.encodePayload(p), ...(nonce === 0n ? { publicKey: a.publicKey } : {}), signature: ZERO_SIG };
  };
  let seed = 20261126;
  const rand = () => {
    let t = (seed = (seed + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const unit = (sym: string) => 10n ** BigInt(sym === NATIVE ? 8 : TOKENS.find((t) => t.sym === sym)!.dec);
  const syms = TOKENS.map((t) => t.sym);
  const nativePools = syms.map((s) => poolId(NATIVE, s));
  const pools = [...nativePools, ...CROSS_POOLS.map(([x, , y]) => poolId(x, y))];
  const poolOf = (s: StateView, id: string) => {
    const raw = s.get(poolKey(id));
    return raw ? decodePool(id, raw) : undefined;
  };
  const genesis = createGenesisBlock(params);
  let parent: BenchParent = { hash: blockHash(genesis.header), height: 0, time: genesis.header.time };
  let txs = 0;
  let holders = 0;
  const miner = issuer.address;

  const plan = (height: number, s: StateOverlay): Tx[] => {
    const list: Tx[] = [];
    if (height === 1) {
      for (const t of TOKENS) list.push(make(issuer, tokenIssue, { symbol: t.sym, name: `Bench ${t.sym}`, decimals: t.dec, maxSupply: (t.supply || 1_000_000_000n) * 10n * unit(t.sym), initialSupply: t.supply * unit(t.sym), kind: t.sym === 'USDN' ? TokenKind.usdStable : TokenKind.token }));
      return list;
    }
    if (height === 2) {
      // 1,000,000 USDN at 150% and the $0.5 reference price needs 3,000,000 NATIVE; lock 3.6 M.
      list.push(make(issuer, stableMint, { symbol: 'USDN', collateral: 3_600_000n * COIN, amount: 1_000_000n * unit('USDN') }));
      for (const t of TOKENS) list.push(make(issuer, poolCreate, { assetX: NATIVE, assetY: t.sym, amountX: POOL_NATIVE, amountY: t.pool * unit(t.sym) }));
      for (const [x, ax, y, ay] of CROSS_POOLS) list.push(make(issuer, poolCreate, { assetX: x, assetY: y, amountX: ax * unit(x), amountY: ay * unit(y) }));
      list.push(make(authority, moderation, { action: 'label', address: mixer, label: 'mixer', reason: 'pools deposits to hide where they came from' }));
      list.push(make(authority, moderation, { action: 'label', address: exploiter, label: 'exploit', reason: 'drained a lending contract' }));
      return list;
    }
    const expiryHeight = height + 100;
    // The bot's round trips in NATIVE-GOLD; every 50th block a buy and its sell in the same block.
    const bot = bots[height % bots.length];
    const gold = balanceOf(s, bot.address, 'GOLD');
    if (height % 50 === 0) {
      const p = poolOf(s, poolId(NATIVE, 'GOLD'))!;
      const amountIn = 500n * COIN;
      const [rIn, rOut] = p.a === NATIVE ? [p.reserveA, p.reserveB] : [p.reserveB, p.reserveA];
      const out = getAmountOut(amountIn, rIn, rOut, params.economy.swapFeeBps);
      list.push(make(bot, swap, { path: [NATIVE, 'GOLD'], amountIn, minOut: 1n, expiryHeight }));
      list.push(make(bot, swap, { path: ['GOLD', NATIVE], amountIn: out, minOut: 1n, expiryHeight }));
    } else if (gold > 0n) list.push(make(bot, swap, { path: ['GOLD', NATIVE], amountIn: gold, minOut: 1n, expiryHeight }));
    else list.push(make(bot, swap, { path: [NATIVE, 'GOLD'], amountIn: BigInt(20 + Math.floor(rand() * 80)) * COIN, minOut: 1n, expiryHeight }));
    // Twenty traders, each once a block.
    for (let k = 0; k < 20; k++) {
      const tr = traders[(height * 20 + k) % traders.length];
      const held = syms.map((sym) => [sym, balanceOf(s, tr.address, sym)] as const).filter(([, b]) => b > 0n);
      const r = rand();
      if (held.length && r < 0.45) {
        const [sym, bal] = pick(held);
        const cross = CROSS_POOLS.find(([x, , y]) => x === sym || y === sym);
        const r2 = rand();
        if (cross && r2 < 0.25) list.push(make(tr, swap, { path: [sym, cross[0] === sym ? cross[2] : cross[0]], amountIn: bal / 2n + 1n, minOut: 1n, expiryHeight }));
        else if (r2 < 0.4) list.push(make(tr, swap, { path: [sym, NATIVE, pick(syms.filter((x) => x !== sym))], amountIn: bal / 2n + 1n, minOut: 1n, expiryHeight }));
        else list.push(make(tr, swap, { path: [sym, NATIVE], amountIn: r2 < 0.7 ? bal : bal / 2n + 1n, minOut: 1n, expiryHeight }));
      } else list.push(make(tr, swap, { path: [NATIVE, pick(syms)], amountIn: BigInt(1 + Math.floor(rand() * 200)) * COIN, minOut: 1n, expiryHeight }));
    }
    // HOLD to new holders (Zipf-like amounts), then between traders once everyone has some.
    for (let j = 0; j < 2; j++) {
      if (holders < o.holders) {
        list.push(make(issuer, tokenTransfer, { symbol: 'HOLD', to: holderAddr(holders), amount: (1_000_000n / BigInt(holders + 1) + 1n) * unit('HOLD') }));
        holders++;
      }
    }
    const a = traders[(height * 7) % traders.length];
    const b = traders[(height * 13 + 1) % traders.length];
    list.push(make(a, transfer, { to: b.address, amount: BigInt(1 + Math.floor(rand() * 500)) * COIN }));
    if (height % 20 === 0) list.push(make(whale, transfer, { to: pick(traders).address, amount: BigInt(1_000 + Math.floor(rand() * 50_000)) * COIN }));
    if (height % 50 === 25) list.push(make(issuer, tokenTransfer, { symbol: 'USDN', to: pick(traders).address, amount: BigInt(1_000 + Math.floor(rand() * 20_000)) * unit('USDN') }));
    if (height % 10 === 3) list.push(make(height % 20 === 3 ? staker : pick(traders), stake, { tier: Math.floor(rand() * params.staking.aprTiers.length), amount: BigInt(100 + Math.floor(rand() * 10_000)) * COIN }));
    if (height % 10 === 5) {
      const id = pick(nativePools);
      const p = poolOf(s, id)!;
      const x = BigInt(1_000 + Math.floor(rand() * 20_000)) * COIN;
      list.push(make(issuer, poolAdd, { assetX: p.a, assetY: p.b, desiredX: p.a === NATIVE ? x : (x * p.reserveA) / p.reserveB + 1n, desiredY: p.a === NATIVE ? (x * p.reserveB) / p.reserveA + 1n : x, minShares: 0n }));
    }
    if (height % 40 === 7) {
      const id = pick(pools);
      const raw = s.get(lpKey(id, issuer.address));
      const p = poolOf(s, id)!;
      if (raw) list.push(make(issuer, poolRemove, { assetX: p.a, assetY: p.b, shares: decodeVarintValue(raw) / 50n, minX: 0n, minY: 0n }));
    }
    if (height % 10 === 8) {
      const net = Math.floor(height / 10) % 10;
      const out = Math.floor(height / 100) % 2 === 1;
      const amount = BigInt(out ? 100 + Math.floor(rand() * 1_000) : 5_000 + Math.floor(rand() * 20_000)) * COIN;
      list.push(make(authority, bridgeRecord, { network: net, direction: out ? 'out' : 'in', amount, fee: amount / 1000n, ref: `${BRIDGE_NETWORK_NAMES[net]}:${height}`, account: pick(traders).address, cosignatures: [] }));
    }
    if (height % 100 === 60) {
      const p = poolOf(s, poolId(NATIVE, 'USDN'))!;
      const collateral = BigInt(1_000 + Math.floor(rand() * 10_000)) * COIN;
      const [rn, ru] = p.a === NATIVE ? [p.reserveA, p.reserveB] : [p.reserveB, p.reserveA];
      list.push(make(pick(traders), stableMint, { symbol: 'USDN', collateral, amount: (collateral * ru) / rn / 2n }));
    }
    if (height % 100 === 90) list.push(make(pick(traders), transfer, { to: mixer, amount: BigInt(10 + Math.floor(rand() * 100)) * COIN }));
    return list;
  };

  const inflight: Promise<void>[] = [];
  for (let height = 1; height <= o.blocks; height++) {
    const s = new StateOverlay(view);
    const list = plan(height, s);
    const ids = list.map((t) => txId(encodeTx(t)));
    const keep = selectApplicable(view, list, ids, height, params);
    if (keep.length !== list.length) {
      // A dropped transaction frees its nonce (later ones of the sender were dropped with it).
      const kept = new Set(keep);
      const actors = [issuer, whale, staker, authority, ...traders, ...bots];
      for (const [j, t] of list.entries()) {
        if (kept.has(j)) continue;
        const who = actors.find((x) => x.address === t.from)!;
        if ((nonces.get(who) ?? 0n) > t.nonce) nonces.set(who, t.nonce);
      }
    }
    const chosen = keep.map((j) => list[j]);
    for (const t of chosen) mix[typeNames.get(t.type)!] = (mix[typeNames.get(t.type)!] ?? 0) + 1;
    const sealed = sealBlock(parent, chosen, miner, state, params, keep.map((j) => ids[j]));
    // The next block is planned from the builder's own state while the chain connects this one
    // (its LevelDB write runs off the main thread); the chain queues blocks in order.
    inflight.push(chain.addBlock(sealed.raw).then((r) => {
      if (r.status !== 'connected') throw new Error(`block ${height} not connected: ${r.status}`);
    }));
    if (inflight.length > 2) await inflight.shift();
    txs += chosen.length;
    parent = sealed.parent;
    if (progress && height % 500 === 0) progress(height, txs);
  }
  await Promise.all(inflight);
  return { chain, params, dataDir, traders, bots, whale, issuer, mixer, exploiter, tokens: syms, pools, mix, txs, holders, seconds: (performance.now() - t0) / 1000 };
}
