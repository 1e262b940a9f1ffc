/**
 * Reads of the economy at the chain's tip, for the HTTP API, the CLI and the chain-data
 * services. Every call is a few point reads or one bounded range scan of an index
 * (chain/economyIndex.ts); none scans the chain. Amounts are base-unit strings; prices and USD
 * figures are numbers (display values derived from exact reserves, which are returned beside them).
 *
 * Size (~470 lines): one read per economy endpoint (tokens, pools, swaps, candles, holders,
 * positions, bridge records, activity), each short and over the same index layout; their view
 * types sit with them.
 */
import type { Level } from 'level';
import { encodeAddress } from '../consensus/address.js';
import {
  decodePool,
  decodeStake,
  decodeToken,
  getBridgeTotals,
  getStakeTotals,
  lpKey,
  poolKey,
  stakeKey,
  tokenBalanceKey,
  tokenKey,
  TokenFlag,
  TokenKind,
  type PoolRecord,
  type StakeTotals,
  type TokenRecord,
} from '../consensus/economyState.js';
import { fromHex, toHex } from '../consensus/hash.js';
import { decodeVarintValue, NATIVE } from '../consensus/ledger.js';
import { microUsd, stablePoolKey, stablePrice } from '../consensus/stablePrice.js';
import { stakeReward } from '../consensus/txTypes/stake.js';
import { MAX_AMOUNT } from '../consensus/amount.js';
import type { ChainParams } from '../consensus/params.js';
import type { StateView } from '../consensus/state.js';
import { econKeys, type Candle, type HolderSquares } from './economyIndex.js';

/** A token as the API shows it. */
export interface TokenView {
  readonly symbol: string;
  readonly name: string;
  readonly issuer: string;
  readonly decimals: number;
  readonly kind: 'token' | 'usd-stable';
  readonly maxSupply: string;
  readonly supply: string;
  readonly minted: string;
  readonly burned: string;
  readonly frozen: boolean;
  readonly hidden: boolean;
  /** NATIVE base units locked as collateral / backing. */
  readonly reserve: string;
  readonly holders: number;
  readonly createdHeight: number;
}

/** A pool as the API shows it. */
export interface PoolView {
  readonly id: string;
  readonly a: string;
  readonly b: string;
  readonly reserveA: string;
  readonly reserveB: string;
  readonly lpSupply: string;
  /** Units of b per unit of a (decimals applied). */
  readonly price: number;
  /** Both sides valued in NATIVE (decimal NATIVE), through NATIVE pools. */
  readonly tvlNative: number;
  readonly tvlUsd: number;
  readonly createdHeight: number;
}

/** The USD price of NATIVE and where it comes from. */
export interface NativeUsd {
  readonly price: number;
  /** Percent change against the price 24 h before the tip (null without history). */
  readonly change24h: number | null;
  /** `pool`: the deepest NATIVE/USD-stablecoin pool; `reference`: genesis reference price (no such pool). */
  readonly source: 'pool' | 'reference';
  readonly pool?: string;
  readonly stablecoin?: string;
  readonly tvlUsd?: number;
}

/** A swap from the log. */
export interface SwapView {
  readonly height: number;
  readonly time: number;
  readonly tx: string;
  readonly pool: string;
  readonly sender: string;
  readonly assetIn: string;
  readonly assetOut: string;
  readonly amountIn: string;
  readonly amountOut: string;
  readonly fee: string;
  readonly reserveA: string;
  readonly reserveB: string;
  /** Raw price after the swap: reserve b / reserve a in smallest units. */
  readonly price: number;
}

/** The store access the reader needs (the chain's LevelDB). */
export type EconomyDb = Pick<Level<string, Uint8Array>, 'get' | 'getMany' | 'iterator' | 'keys'>;

const td = new TextDecoder();
/** The key part of a block's (or one of its transactions') events in the height-ordered logs. */
const blockPart = (height: number, txIndex?: number) => `${econKeys.heightPart(height)}:${txIndex === undefined ? '' : `${String(txIndex).padStart(5, '0')}:`}`;
/** The transaction index in such a key (`<log>:<height>:<txIndex>:…`). */
const txIndexOf = (k: string) => Number(k.split(':')[2]);
const parse = <T>(v: Uint8Array): T => JSON.parse(td.decode(v)) as T;

/** A transfer of the index (`et:`), account ids as hex. */
export interface TransferRow {
  readonly height: number;
  readonly time: number;
  readonly tx: string;
  readonly asset: string;
  readonly from: string;
  readonly to: string;
  readonly amount: string;
}

/** Blocks whose parsed transfers the reader keeps (about 3 windows of whale-watch). */
const TRANSFER_CACHE_BLOCKS = 4_000;
/** Accounts whose newest activity entries the reader keeps (at most 1,000 entries each). */
const ACTIVITY_CACHE_ACCOUNTS = 64;

/** Where the best chain is, for caches keyed by block (the chain manager supplies it). */
export interface BestChainView {
  /** Hash hex of the best-chain block at a height, undefined above the tip. */
  hashAt(height: number): string | undefined;
  /** Blocks disconnected so far (a cache filled across a change of it may hold another branch). */
  disconnects(): number;
}

/** Reader of the economy (see module comment). */
export class EconomyReader {
  /**
   * Parsed transfers of recent blocks by block hash: a connected block's index entries never
   * change, so a block's rows are exact while its hash is on the best chain (whale-watch reads the
   * same 1,200-block window on every call; only new blocks are read from the store).
   */
  private readonly transferCache = new Map<string, TransferRow[]>();
  /** The newest activity entries of recently read accounts (see `activity`). */
  private readonly activityCache = new Map<string, { gen: number; newest: string | undefined; limit: number; rows: Record<string, unknown>[] }>();

  constructor(
    private readonly db: EconomyDb,
    private readonly params: ChainParams,
    /** Height and header time of the tip. */
    private readonly tip: () => { height: number; time: number },
    private readonly best?: BestChainView,
  ) {}

  private async state(key: string): Promise<Uint8Array | undefined> {
    return this.db.get(`s:${key}`);
  }

  private async scan(gte: string, lt: string, opts: { limit?: number; reverse?: boolean; keys?: boolean } = {}): Promise<[string, Uint8Array][]> {
    const out: [string, Uint8Array][] = [];
    for await (const kv of this.db.iterator({ gte, lt, limit: opts.limit ?? -1, reverse: opts.reverse ?? false })) out.push(kv);
    return out;
  }

  /** A StateView over the given state keys (for pure consensus helpers). */
  async view(keys: readonly string[]): Promise<StateView> {
    const values = await this.db.getMany(keys.map((k) => `s:${k}`));
    const m = new Map<string, Uint8Array>();
    keys.forEach((k, i) => values[i] && m.set(k, values[i]!));
    return { get: (k) => m.get(k) };
  }

  /** The raw token record. */
  async getTokenRecord(symbol: string): Promise<TokenRecord | undefined> {
    const raw = await this.state(tokenKey(symbol));
    return raw ? decodeToken(raw) : undefined;
  }

  /** Every token record by symbol (one range scan of `s:T`). */
  async tokenRecords(): Promise<Map<string, TokenRecord>> {
    const out = new Map<string, TokenRecord>();
    for (const [k, v] of await this.scan('s:T', 's:U')) out.set(k.slice(3), decodeToken(v));
    return out;
  }

  /** A token's view, or undefined. */
  async getToken(symbol: string): Promise<TokenView | undefined> {
    const t = await this.getTokenRecord(symbol);
    return t ? this.tokenView(symbol, t) : undefined;
  }

  /** Tokens, hidden ones only when asked. */
  async listTokens(opts: { includeHidden?: boolean } = {}): Promise<TokenView[]> {
    const out: TokenView[] = [];
    for (const [sym, t] of await this.tokenRecords()) if (opts.includeHidden || !(t.flags & TokenFlag.hidden)) out.push(this.tokenView(sym, t));
    return out;
  }

  /** A token's view from its record. */
  tokenView(symbol: string, t: TokenRecord): TokenView {
    return {
      symbol,
      name: t.name,
      issuer: encodeAddress(t.issuer, this.params.hrp),
      decimals: t.decimals,
      kind: t.kind === TokenKind.usdStable ? 'usd-stable' : 'token',
      maxSupply: t.maxSupply.toString(),
      supply: t.supply.toString(),
      minted: t.minted.toString(),
      burned: t.burned.toString(),
      frozen: (t.flags & TokenFlag.frozen) !== 0,
      hidden: (t.flags & TokenFlag.hidden) !== 0,
      reserve: t.reserve.toString(),
      holders: t.holders,
      createdHeight: t.createdHeight,
    };
  }

  /** An account's balance in a token (smallest units). */
  async tokenBalance(symbol: string, id: Uint8Array): Promise<bigint> {
    const raw = await this.state(tokenBalanceKey(symbol, id));
    return raw ? decodeVarintValue(raw) : 0n;
  }

  /** The largest holders of a token, largest first (one scan of `limit` index entries). */
  async topHolders(symbol: string, limit = 10): Promise<{ address: string; balance: string }[]> {
    const prefix = econKeys.holderPrefix(symbol);
    return (await this.scan(prefix, `${prefix}~`, { limit })).map(([k]) => {
      const [, , inv, id] = k.split(':');
      return { address: encodeAddress(fromHex(id), this.params.hrp), balance: (MAX_AMOUNT - BigInt(inv)).toString() };
    });
  }

  /**
   * Σ balance² over a token's holders (smallest units²) from the `eH` aggregate, or undefined when
   * it does not cover every holder (a database indexed before the aggregate existed): its count
   * must equal the token record's holder count, which consensus keeps.
   */
  async holderSquares(symbol: string, holders: number): Promise<bigint | undefined> {
    const raw = await this.db.get(econKeys.holderSquares(symbol));
    if (!raw) return holders === 0 ? 0n : undefined;
    const agg = parse<HolderSquares>(raw);
    return agg.n === holders ? BigInt(agg.sq) : undefined;
  }

  /** The balances of a token's largest `limit` holders, largest first (keys only, no addresses). */
  async holderBalances(symbol: string, limit: number): Promise<bigint[]> {
    const prefix = econKeys.holderPrefix(symbol);
    const out: bigint[] = [];
    for await (const k of this.db.keys({ gte: prefix, lt: `${prefix}~`, limit })) out.push(MAX_AMOUNT - BigInt(k.slice(prefix.length, prefix.length + 20)));
    return out;
  }

  /**
   * A stablecoin's backing at the on-chain price consensus uses (consensus/stablePrice.ts):
   * ratio = collateral value / supply; `healthy` at or above the minimum mint ratio, `at-risk`
   * between 100% and it, `under-collateralized` below 100%. Undefined for other tokens.
   */
  async stableHealth(symbol: string): Promise<
    { collateral: string; supply: string; collateralValue: string; ratio: number | null; minRatio: number; health: 'healthy' | 'at-risk' | 'under-collateralized'; priceSource: 'pool' | 'reference' } | undefined
  > {
    const view = await this.view([tokenKey(symbol), stablePoolKey(symbol)]);
    const raw = view.get(tokenKey(symbol));
    if (!raw) return undefined;
    const t = decodeToken(raw);
    if (t.kind !== TokenKind.usdStable) return undefined;
    const price = stablePrice(view, symbol, t, this.params);
    const value = (t.reserve * price.num) / price.den;
    const minRatio = this.params.economy.stableMinRatioBps / 10_000;
    const ratio = t.supply === 0n ? null : Number((value * 1_000_000n) / t.supply) / 1_000_000;
    const health = ratio === null || ratio >= minRatio ? 'healthy' : ratio >= 1 ? 'at-risk' : 'under-collateralized';
    return { collateral: t.reserve.toString(), supply: t.supply.toString(), collateralValue: value.toString(), ratio, minRatio, health, priceSource: price.source };
  }

  /** Every pool record (one range scan of `s:P`). */
  async poolRecords(): Promise<PoolRecord[]> {
    return (await this.scan('s:P', 's:Q')).map(([k, v]) => decodePool(k.slice(3), v));
  }

  /** A pool record, or undefined. */
  async getPoolRecord(id: string): Promise<PoolRecord | undefined> {
    const raw = await this.state(poolKey(id));
    return raw ? decodePool(id, raw) : undefined;
  }

  /** Ids of the pools holding an asset. */
  async poolIdsByAsset(asset: string): Promise<string[]> {
    const prefix = econKeys.poolByAssetPrefix(asset);
    return (await this.scan(prefix, `${prefix}~`)).map(([k]) => k.slice(prefix.length));
  }

  /** Decimals of an asset (8 for NATIVE). */
  private decimalsOf(asset: string, tokens: Map<string, TokenRecord>): number {
    return asset === NATIVE ? 8 : (tokens.get(asset)?.decimals ?? 0);
  }

  /**
   * Value of one smallest unit of each asset in NATIVE base units, from the NATIVE pools
   * (spot: reserveNative / reserveToken); assets without a NATIVE pool are absent.
   */
  nativeValues(pools: readonly PoolRecord[]): Map<string, number> {
    const out = new Map<string, number>([[NATIVE, 1]]);
    for (const p of pools) {
      if (p.a === NATIVE && p.reserveB > 0n) out.set(p.b, Number(p.reserveA) / Number(p.reserveB));
      else if (p.b === NATIVE && p.reserveA > 0n) out.set(p.a, Number(p.reserveB) / Number(p.reserveA));
    }
    return out;
  }

  /** Pools with prices and TVL, deepest first; `asset` keeps only its pools. */
  async listPools(opts: { asset?: string; limit?: number } = {}): Promise<PoolView[]> {
    const [records, tokens, usd] = await Promise.all([this.poolRecords(), this.tokenRecords(), this.nativeUsd()]);
    const values = this.nativeValues(records);
    const views = records.filter((p) => !opts.asset || p.a === opts.asset || p.b === opts.asset).map((p) => this.poolView(p, tokens, values, usd.price));
    views.sort((x, y) => y.tvlNative - x.tvlNative || (x.id < y.id ? -1 : 1));
    return opts.limit ? views.slice(0, opts.limit) : views;
  }

  /** One pool's view, or undefined. */
  async getPool(id: string): Promise<PoolView | undefined> {
    const p = await this.getPoolRecord(id);
    if (!p) return undefined;
    const [records, tokens, usd] = await Promise.all([this.poolRecords(), this.tokenRecords(), this.nativeUsd()]);
    return this.poolView(p, tokens, this.nativeValues(records), usd.price);
  }

  private poolView(p: PoolRecord, tokens: Map<string, TokenRecord>, values: Map<string, number>, nativeUsd: number): PoolView {
    const da = this.decimalsOf(p.a, tokens);
    const db = this.decimalsOf(p.b, tokens);
    const price = p.reserveA > 0n ? Number(p.reserveB) / 10 ** db / (Number(p.reserveA) / 10 ** da) : 0;
    const va = values.get(p.a);
    const vb = values.get(p.b);
    const sideA = va === undefined ? undefined : Number(p.reserveA) * va;
    const sideB = vb === undefined ? undefined : Number(p.reserveB) * vb;
    const tvlBase = (sideA ?? sideB ?? 0) + (sideB ?? sideA ?? 0);
    const tvlNative = tvlBase / 1e8;
    return {
      id: `${p.a}-${p.b}`,
      a: p.a,
      b: p.b,
      reserveA: p.reserveA.toString(),
      reserveB: p.reserveB.toString(),
      lpSupply: p.lpSupply.toString(),
      price,
      tvlNative,
      tvlUsd: tvlNative * nativeUsd,
      createdHeight: p.createdHeight,
    };
  }

  /** NATIVE's USD price: the deepest NATIVE/USD-stablecoin pool, else the reference price. */
  async nativeUsd(): Promise<NativeUsd> {
    const tokens = await this.tokenRecords();
    let best: { pool: PoolRecord; sym: string; d: number; stable: bigint; native: bigint } | undefined;
    const stables = [...tokens].filter(([, t]) => t.kind === TokenKind.usdStable);
    const pools = await Promise.all(stables.map(([sym]) => this.getPoolRecord(sym < NATIVE ? `${sym}-${NATIVE}` : `${NATIVE}-${sym}`)));
    stables.forEach(([sym, t], i) => {
      const pool = pools[i];
      if (!pool) return;
      const nativeIsA = pool.a === NATIVE;
      const stable = nativeIsA ? pool.reserveB : pool.reserveA;
      const native = nativeIsA ? pool.reserveA : pool.reserveB;
      if (stable === 0n || native === 0n) return;
      // Deepest by TVL: both sides are worth the same at spot, so compare the stable side in USD.
      if (!best || Number(stable) / 10 ** t.decimals > Number(best.stable) / 10 ** best.d) best = { pool, sym, d: t.decimals, stable, native };
    });
    if (!best) return { price: Number(microUsd(this.params.referencePriceUsd)) / 1e6, change24h: null, source: 'reference' };
    const b = best;
    const toUsd = (raw: number) => (b.pool.a === NATIVE ? (raw * 1e8) / 10 ** b.d : 1e8 / (raw * 10 ** b.d));
    const price = Number(b.stable) / 10 ** b.d / (Number(b.native) / 1e8);
    const id = `${b.pool.a}-${b.pool.b}`;
    const tipTime = this.tip().time;
    const then = tipTime - 86_400;
    const prefix = econKeys.candlePrefix(id);
    const hourThen = then - (then % 3600);
    const [before] = await this.scan(prefix, econKeys.candle(id, hourThen + 1), { limit: 1, reverse: true });
    let past: number | undefined;
    if (before) past = toUsd(parse<Candle>(before[1]).c);
    else {
      const [first] = await this.scan(econKeys.candle(id, hourThen), `${prefix}~`, { limit: 1 });
      if (first) past = toUsd(parse<Candle>(first[1]).o);
    }
    const change24h = past ? ((price - past) / past) * 100 : null;
    return { price, change24h, source: 'pool', pool: id, stablecoin: b.sym, tvlUsd: (2 * Number(b.stable)) / 10 ** b.d };
  }

  /**
   * Swaps of one pool (or all pools) from height `since` on, oldest first; without `since`, the
   * latest `limit` (below height `before` when given), newest first.
   */
  async swaps(opts: { pool?: string; since?: number; before?: number; limit?: number } = {}): Promise<SwapView[]> {
    const limit = Math.min(opts.limit ?? 100, 1000);
    const prefix = opts.pool ? econKeys.swapPrefix(opts.pool) : 'eS:';
    const rows =
      opts.since === undefined
        ? await this.scan(prefix, opts.before === undefined ? `${prefix}~` : `${prefix}${econKeys.heightPart(opts.before)}`, { limit, reverse: true })
        : await this.scan(`${prefix}${econKeys.heightPart(opts.since)}`, `${prefix}~`, { limit });
    return rows.map(([, v]) => parse<SwapView>(v));
  }

  /**
   * The swaps and transfers of one block (`txIndex` undefined) or of one of its transactions, in
   * order: two bounded range scans of the all-pools swap log and the transfer log at that height
   * (the explorer's block and transaction pages).
   */
  async blockEvents(height: number, txIndex?: number): Promise<{ swaps: (SwapView & { txIndex: number })[]; transfers: (TransferRow & { txIndex: number })[] }> {
    const part = blockPart(height, txIndex);
    const [swaps, transfers] = await Promise.all([this.blockSwaps(height, txIndex), this.scan(`et:${part}`, `et:${part}~`)]);
    return { swaps, transfers: transfers.map(([k, v]) => ({ ...parse<TransferRow>(v), txIndex: txIndexOf(k) })) };
  }

  /** The swaps of one block (or of one of its transactions), in order: one bounded range scan of the all-pools swap log. */
  async blockSwaps(height: number, txIndex?: number): Promise<(SwapView & { txIndex: number })[]> {
    const part = blockPart(height, txIndex);
    return (await this.scan(`eS:${part}`, `eS:${part}~`)).map(([k, v]) => ({ ...parse<SwapView>(v), txIndex: txIndexOf(k) }));
  }

  /** Hourly candles of a pool with hour starts in [fromTime, toTime] (Unix seconds), oldest first. */
  async candles(pool: string, fromTime: number, toTime: number): Promise<Candle[]> {
    const from = fromTime - (fromTime % 3600);
    return (await this.scan(econKeys.candle(pool, from), econKeys.candle(pool, toTime + 1))).map(([, v]) => parse<Candle>(v));
  }

  /** The last `hours` hourly candles of a pool (the tip's hour included), oldest first. */
  async recentCandles(pool: string, hours = 24): Promise<Candle[]> {
    const t = this.tip().time;
    return this.candles(pool, t - (hours - 1) * 3600, t);
  }

  /** Volume of a pool over the 24 hourly buckets ending with the tip's hour, in asset a and b. */
  async volume24h(pool: string): Promise<{ a: bigint; b: bigint; swaps: number }> {
    const t = this.tip().time;
    const cs = await this.candles(pool, t - 23 * 3600, t);
    return cs.reduce((s, c) => ({ a: s.a + BigInt(c.va), b: s.b + BigInt(c.vb), swaps: s.swaps + c.n }), { a: 0n, b: 0n, swaps: 0 });
  }

  /** Transfers (NATIVE and tokens) in blocks [fromHeight, toHeight], at least `minAmount` when given. */
  async transfers(opts: { fromHeight: number; toHeight?: number; minAmount?: bigint; asset?: string; limit?: number }): Promise<TransferRow[]> {
    const to = opts.toHeight ?? this.tip().height;
    const out = [];
    for (const t of await this.transferRows(opts.fromHeight, to)) {
      if (opts.asset && t.asset !== opts.asset) continue;
      if (opts.minAmount !== undefined && BigInt(t.amount) < opts.minAmount) continue;
      out.push(t);
      if (opts.limit && out.length >= opts.limit) break;
    }
    return out;
  }

  /** The index's transfers of blocks [from, to] in order, through the per-block cache. */
  private async transferRows(from: number, to: number): Promise<TransferRow[]> {
    const scanRows = async (a: number, b: number) => (await this.scan(`et:${econKeys.heightPart(a)}`, `et:${econKeys.heightPart(b + 1)}`)).map(([, v]) => parse<TransferRow>(v));
    if (!this.best || to < from) return to < from ? [] : scanRows(from, to);
    const best = this.best;
    const gen = best.disconnects();
    const hashes: (string | undefined)[] = [];
    let lo = Infinity;
    let hi = -Infinity;
    for (let h = from; h <= to; h++) {
      const hash = best.hashAt(h);
      hashes.push(hash);
      if (!hash || !this.transferCache.has(hash)) {
        lo = Math.min(lo, h);
        hi = Math.max(hi, h);
      }
    }
    const fresh = new Map<number, TransferRow[]>();
    if (lo <= hi) for (const t of await scanRows(lo, hi)) (fresh.get(t.height) ?? fresh.set(t.height, []).get(t.height)!).push(t);
    // Keep what was read only if the best chain did not move under the read.
    const stable = best.disconnects() === gen && hashes.every((hash, i) => hash === best.hashAt(from + i));
    const out: TransferRow[] = [];
    for (let h = from; h <= to; h++) {
      const hash = hashes[h - from];
      const cached = h >= lo && h <= hi ? undefined : this.transferCache.get(hash!);
      const rows = cached ?? fresh.get(h) ?? [];
      if (!cached && stable && hash) this.transferCache.set(hash, rows);
      for (const t of rows) out.push(t);
    }
    while (this.transferCache.size > TRANSFER_CACHE_BLOCKS) this.transferCache.delete(this.transferCache.keys().next().value!);
    return out;
  }

  /**
   * An account's activity, newest first (from `fromHeight` when given). The newest entries of an
   * account (without `fromHeight`) come from a cache while the account's newest key is the same
   * and no block was disconnected since: connecting blocks only adds keys above the newest one, so
   * the same newest key means the same entries.
   */
  async activity(id: Uint8Array, opts: { fromHeight?: number; limit?: number } = {}): Promise<Record<string, unknown>[]> {
    const hex = toHex(id);
    const prefix = econKeys.activityPrefix(hex);
    const limit = opts.limit ?? 100;
    const read = async (gte: string) => (await this.scan(gte, `${prefix}~`, { limit, reverse: true })).map(([k, v]) => [k, parse<Record<string, unknown>>(v)] as const);
    if (opts.fromHeight !== undefined || !this.best) return (await read(opts.fromHeight === undefined ? prefix : `${prefix}${econKeys.heightPart(opts.fromHeight)}`)).map(([, v]) => v);
    const gen = this.best.disconnects();
    let newest: string | undefined;
    for await (const k of this.db.keys({ gte: prefix, lt: `${prefix}~`, reverse: true, limit: 1 })) newest = k;
    const cached = this.activityCache.get(hex);
    if (cached && cached.gen === gen && cached.newest === newest && (cached.limit >= limit || cached.rows.length < cached.limit)) {
      // Refresh its place in the bounded cache.
      this.activityCache.delete(hex);
      this.activityCache.set(hex, cached);
      return cached.rows.slice(0, limit);
    }
    const rows = await read(prefix);
    if (this.best.disconnects() === gen && (rows[0]?.[0] ?? undefined) === newest) {
      this.activityCache.delete(hex);
      this.activityCache.set(hex, { gen, newest, limit, rows: rows.map(([, v]) => v) });
      while (this.activityCache.size > ACTIVITY_CACHE_ACCOUNTS) this.activityCache.delete(this.activityCache.keys().next().value!);
    }
    return rows.map(([, v]) => v);
  }

  /**
   * An account's whole history, newest first: its economy activity (`ex:`) and its payments
   * (`ey:`: paid calls, refunds, payouts, block rewards) merged. `before` is the `cursor` of the
   * last row of a previous page (`<height>:<tx>:<n>`); each row carries its own `cursor`.
   */
  async history(id: Uint8Array, opts: { before?: string; limit?: number } = {}): Promise<Record<string, unknown>[]> {
    const hex = toHex(id);
    const limit = Math.max(1, Math.min(opts.limit ?? 50, 500));
    const before = opts.before !== undefined && /^\d{10}:\d{5}:\d+$/.test(opts.before) ? opts.before : undefined;
    const read = async (prefix: string) =>
      (await this.scan(prefix, before ? `${prefix}${before}` : `${prefix}~`, { limit, reverse: true })).map(([k, v]) => ({ cursor: k.slice(prefix.length), row: parse<Record<string, unknown>>(v) }));
    const [a, b] = await Promise.all([read(econKeys.activityPrefix(hex)), read(econKeys.paymentsPrefix(hex))]);
    // Both halves are keyed `<height>:<tx>:<n>` with fixed-width height and tx: the cursors sort as strings.
    return [...a, ...b]
      .sort((x, y) => (x.cursor < y.cursor ? 1 : x.cursor > y.cursor ? -1 : 0))
      .slice(0, limit)
      .map((r) => ({ ...r.row, cursor: r.cursor }));
  }

  /** An account's token balances, LP positions (with underlying amounts) and stakes (with reward accrued to the tip). */
  async account(id: Uint8Array): Promise<{
    tokens: { symbol: string; balance: string; decimals: number }[];
    lp: { pool: string; shares: string; share: number; amountA: string; amountB: string }[];
    stakes: { id: string; amount: string; tier: number; tierName: string; startHeight: number; unlockHeight: number; accruedReward: string; unlocked: boolean }[];
  }> {
    const hex = toHex(id);
    const prefix = econKeys.accountPrefix(hex);
    const keys = (await this.scan(prefix, `${prefix}~`)).map(([k]) => k.slice(prefix.length));
    const tokens = [];
    const lp = [];
    const stakes = [];
    const height = this.tip().height;
    for (const k of keys) {
      const [kind, ref] = [k[0], k.slice(2)];
      if (kind === 'T') {
        const [bal, rec] = await Promise.all([this.tokenBalance(ref, id), this.getTokenRecord(ref)]);
        tokens.push({ symbol: ref, balance: bal.toString(), decimals: rec?.decimals ?? 0 });
      } else if (kind === 'L') {
        const [raw, pool] = await Promise.all([this.state(lpKey(ref, id)), this.getPoolRecord(ref)]);
        if (!raw || !pool) continue;
        const shares = decodeVarintValue(raw);
        lp.push({
          pool: ref,
          shares: shares.toString(),
          share: Number(shares) / Number(pool.lpSupply),
          amountA: ((shares * pool.reserveA) / pool.lpSupply).toString(),
          amountB: ((shares * pool.reserveB) / pool.lpSupply).toString(),
        });
      } else if (kind === 'K') {
        const raw = await this.state(stakeKey(fromHex(ref)));
        if (!raw) continue;
        const s = decodeStake(raw);
        const tier = this.params.staking.aprTiers[s.tier];
        stakes.push({
          id: ref,
          amount: s.amount.toString(),
          tier: s.tier,
          tierName: tier?.name ?? String(s.tier),
          startHeight: s.startHeight,
          unlockHeight: s.unlockHeight,
          accruedReward: stakeReward(s.amount, tier?.aprBps ?? 0, Math.max(0, height - s.startHeight), this.params).toString(),
          unlocked: height + 1 >= s.unlockHeight,
        });
      }
    }
    return { tokens, lp, stakes };
  }

  /** Staking totals, with the tiers. */
  async staking(): Promise<StakeTotals & { tiers: ChainParams['staking']['aprTiers'] }> {
    return { ...getStakeTotals(await this.view(['Estake'])), tiers: this.params.staking.aprTiers };
  }

  /** The bridge networks with vault, totals and custody float (NATIVE base units). */
  async bridgeNetworks(): Promise<
    { index: number; name: string; vault: string; inAmount: string; outAmount: string; float: string; fees: string; inCount: number; outCount: number }[]
  > {
    const nets = this.params.economy.bridgeNetworks;
    const view = await this.view(nets.map((_, i) => `R${i}`));
    return nets.map((n, i) => {
      const t = getBridgeTotals(view, String(i));
      return {
        index: i,
        name: n.name,
        vault: n.vault,
        inAmount: t.inAmount.toString(),
        outAmount: t.outAmount.toString(),
        float: (t.inAmount - t.outAmount).toString(),
        fees: t.fees.toString(),
        inCount: t.inCount,
        outCount: t.outCount,
      };
    });
  }

  /** Bridge records of a network, newest first (from `fromHeight` when given). */
  async bridgeRecords(network: string, opts: { fromHeight?: number; limit?: number } = {}): Promise<Record<string, unknown>[]> {
    const index = this.params.economy.bridgeNetworks.findIndex((n) => n.name === network);
    if (index < 0) return [];
    const prefix = econKeys.bridgePrefix(String(index));
    const gte = opts.fromHeight === undefined ? prefix : `${prefix}${econKeys.heightPart(opts.fromHeight)}`;
    return (await this.scan(gte, `${prefix}~`, { limit: opts.limit ?? 50, reverse: true })).map(([, v]) => parse<Record<string, unknown>>(v));
  }
}
