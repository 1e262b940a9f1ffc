/**
 * The economy's consensus state: records, their canonical codecs and state keys.
 *
 * Keys (beside `a<id>`, `supply` and `i<txid>` of state.ts):
 *   T<SYMBOL>              token record (issuer, name, decimals, supply figures, flags, reserve, holders)
 *   B<SYMBOL>:<40 hex>     token balance of an account (one varint; absent = 0)
 *   P<A>-<B>               pool record of the pair A < B (reserves, LP supply)
 *   L<A>-<B>:<40 hex>      LP shares of an account in a pool (one varint; absent = 0)
 *   K<64 hex>              stake record, keyed by the staking tx id
 *   Estake                 staking totals (staked, locked, count, rewards paid)
 *   R<network index>       bridge totals of one network (in, out, fees, record counts)
 *   r<network index>:<ref> marker of a recorded external tx reference (refuses duplicates)
 * Every key a transaction reads or writes can be named from the transaction alone, so the chain
 * prefetches them before applying a block (`touchedKeys`).
 */
import { Writer, decodeAll, type Reader } from './codec.js';
import { CodecError, CodecErrorCode } from './errors.js';
import { toHex } from './hash.js';
import { ADDRESS_SIZE } from './keys.js';
import type { StateOverlay, StateView } from './state.js';

/** Kinds of token: a plain token, or a USD stablecoin minted against NATIVE collateral. */
export const TokenKind = { token: 0, usdStable: 1 } as const;
/** Token flag bits. */
export const TokenFlag = { frozen: 1, hidden: 2 } as const;

/** A token's record. Amounts in the token's smallest unit; `reserve` in NATIVE base units. */
export interface TokenRecord {
  readonly name: string;
  readonly issuer: Uint8Array;
  /** 0–18. */
  readonly decimals: number;
  readonly maxSupply: bigint;
  /** Circulating supply: minted − burned. */
  readonly supply: bigint;
  readonly minted: bigint;
  readonly burned: bigint;
  /** TokenFlag bits. */
  readonly flags: number;
  /** TokenKind. */
  readonly kind: number;
  /** NATIVE locked as collateral / backing; leaves only by redemption. */
  readonly reserve: bigint;
  /** Accounts with a positive balance. */
  readonly holders: number;
  readonly createdHeight: number;
}

/** State key of a token record. */
export function tokenKey(symbol: string): string {
  return `T${symbol}`;
}

/** State key of an account's balance in a token. */
export function tokenBalanceKey(symbol: string, id: Uint8Array): string {
  return `B${symbol}:${toHex(id)}`;
}

const td = new TextDecoder('utf-8', { fatal: true });
const te = new TextEncoder();

/** Canonical bytes of a token record. */
export function encodeToken(t: TokenRecord): Uint8Array {
  return new Writer(96)
    .bytes(te.encode(t.name))
    .raw(t.issuer)
    .u8(t.decimals)
    .varint(t.maxSupply)
    .varint(t.supply)
    .varint(t.minted)
    .varint(t.burned)
    .u8(t.flags)
    .u8(t.kind)
    .varint(t.reserve)
    .varint(t.holders)
    .varint(t.createdHeight)
    .finish();
}

/** Decodes a token record (strict). */
export function decodeToken(bytes: Uint8Array): TokenRecord {
  return decodeAll(bytes, (r: Reader) => {
    const name = td.decode(r.bytes(64, 'token name'));
    const issuer = r.raw(ADDRESS_SIZE).slice();
    const decimals = r.u8();
    const maxSupply = r.varint();
    const supply = r.varint();
    const minted = r.varint();
    const burned = r.varint();
    const flags = r.u8();
    const kind = r.u8();
    if (flags > 3 || kind > 1) throw new CodecError(CodecErrorCode.BAD_VALUE, 'bad token flags or kind', r.offset);
    const reserve = r.varint();
    const holders = r.varnum(2 ** 48, 'holders');
    const createdHeight = r.varnum(2 ** 32, 'height');
    return { name, issuer, decimals, maxSupply, supply, minted, burned, flags, kind, reserve, holders, createdHeight };
  });
}

/** The token record of `symbol`, or undefined. */
export function getToken(state: StateView, symbol: string): TokenRecord | undefined {
  const raw = state.get(tokenKey(symbol));
  return raw ? decodeToken(raw) : undefined;
}

/** Writes a token record. */
export function setToken(state: StateOverlay, symbol: string, t: TokenRecord): void {
  state.set(tokenKey(symbol), encodeToken(t));
}

/** A constant-product pool of two assets `a < b` (NATIVE or token symbols). */
export interface PoolRecord {
  readonly a: string;
  readonly b: string;
  readonly reserveA: bigint;
  readonly reserveB: bigint;
  /** LP shares outstanding, the locked minimum liquidity included. */
  readonly lpSupply: bigint;
  readonly creator: Uint8Array;
  readonly createdHeight: number;
}

/** Id of the pool of two assets: the two symbols sorted, joined by `-` (e.g. `NATIVE-USDN`). */
export function poolId(x: string, y: string): string {
  return x < y ? `${x}-${y}` : `${y}-${x}`;
}

/** The two assets of a pool id, or undefined when malformed. */
export function poolAssets(id: string): [string, string] | undefined {
  const m = /^([A-Z0-9]{2,10})-([A-Z0-9]{2,10})$/.exec(id);
  return m && m[1] < m[2] ? [m[1], m[2]] : undefined;
}

/** State key of a pool record. */
export function poolKey(id: string): string {
  return `P${id}`;
}

/** State key of an account's LP shares in a pool. */
export function lpKey(id: string, owner: Uint8Array): string {
  return `L${id}:${toHex(owner)}`;
}

/** Canonical bytes of a pool record (the assets are in the key). */
export function encodePool(p: PoolRecord): Uint8Array {
  return new Writer(64).varint(p.reserveA).varint(p.reserveB).varint(p.lpSupply).raw(p.creator).varint(p.createdHeight).finish();
}

/** Decodes a pool record stored under `poolKey(id)`. */
export function decodePool(id: string, bytes: Uint8Array): PoolRecord {
  const assets = poolAssets(id);
  if (!assets) throw new CodecError(CodecErrorCode.BAD_VALUE, `bad pool id ${id}`);
  return decodeAll(bytes, (r) => ({
    a: assets[0],
    b: assets[1],
    reserveA: r.varint(),
    reserveB: r.varint(),
    lpSupply: r.varint(),
    creator: r.raw(ADDRESS_SIZE).slice(),
    createdHeight: r.varnum(2 ** 32, 'height'),
  }));
}

/** The pool of `id`, or undefined. */
export function getPool(state: StateView, id: string): PoolRecord | undefined {
  const raw = state.get(poolKey(id));
  return raw ? decodePool(id, raw) : undefined;
}

/** Writes a pool record. */
export function setPool(state: StateOverlay, p: PoolRecord): void {
  state.set(poolKey(`${p.a}-${p.b}`), encodePool(p));
}

/** A stake: NATIVE locked for a tier, rewarded per block on unstake. */
export interface StakeRecord {
  readonly owner: Uint8Array;
  readonly amount: bigint;
  /** Index into `params.staking.aprTiers`. */
  readonly tier: number;
  readonly startHeight: number;
  /** First height at which it may be unstaked. */
  readonly unlockHeight: number;
}

/** State key of a stake (the staking tx id). */
export function stakeKey(id: Uint8Array): string {
  return `K${toHex(id)}`;
}

/** Canonical bytes of a stake record. */
export function encodeStake(s: StakeRecord): Uint8Array {
  return new Writer(48).raw(s.owner).varint(s.amount).u8(s.tier).varint(s.startHeight).varint(s.unlockHeight).finish();
}

/** Decodes a stake record. */
export function decodeStake(bytes: Uint8Array): StakeRecord {
  return decodeAll(bytes, (r) => ({
    owner: r.raw(ADDRESS_SIZE).slice(),
    amount: r.varint(),
    tier: r.u8(),
    startHeight: r.varnum(2 ** 32, 'height'),
    unlockHeight: r.varnum(2 ** 40, 'height'),
  }));
}

/** Staking totals (NATIVE base units). */
export interface StakeTotals {
  /** Everything staked now. */
  readonly staked: bigint;
  /** The part of `staked` in tiers with a lock (minLockDays > 0). */
  readonly locked: bigint;
  /** Open stakes. */
  readonly count: number;
  /** Rewards paid (minted) so far. */
  readonly rewardsPaid: bigint;
}

/** State key of the staking totals. */
export const STAKE_TOTALS_KEY = 'Estake';

/** Canonical bytes of the staking totals. */
export function encodeStakeTotals(t: StakeTotals): Uint8Array {
  return new Writer(40).varint(t.staked).varint(t.locked).varint(t.count).varint(t.rewardsPaid).finish();
}

/** Decodes the staking totals. */
export function decodeStakeTotals(bytes: Uint8Array): StakeTotals {
  return decodeAll(bytes, (r) => ({ staked: r.varint(), locked: r.varint(), count: r.varnum(2 ** 48, 'count'), rewardsPaid: r.varint() }));
}

/** The staking totals (zero before the first stake). */
export function getStakeTotals(state: StateView): StakeTotals {
  const raw = state.get(STAKE_TOTALS_KEY);
  return raw ? decodeStakeTotals(raw) : { staked: 0n, locked: 0n, count: 0, rewardsPaid: 0n };
}

/** Bridge totals of one network (amounts in NATIVE base units). */
export interface BridgeTotals {
  readonly inAmount: bigint;
  readonly outAmount: bigint;
  readonly fees: bigint;
  readonly inCount: number;
  readonly outCount: number;
}

/** State key of a network's bridge totals (`network` is its index in the chain parameters, as a decimal string). */
export function bridgeTotalsKey(network: string): string {
  return `R${network}`;
}

/** State key marking an external reference as recorded. */
export function bridgeRefKey(network: string, ref: string): string {
  return `r${network}:${ref}`;
}

/** Canonical bytes of bridge totals. */
export function encodeBridgeTotals(t: BridgeTotals): Uint8Array {
  return new Writer(48).varint(t.inAmount).varint(t.outAmount).varint(t.fees).varint(t.inCount).varint(t.outCount).finish();
}

/** Decodes bridge totals. */
export function decodeBridgeTotals(bytes: Uint8Array): BridgeTotals {
  return decodeAll(bytes, (r) => ({ inAmount: r.varint(), outAmount: r.varint(), fees: r.varint(), inCount: r.varnum(2 ** 48, 'count'), outCount: r.varnum(2 ** 48, 'count') }));
}

/** The bridge totals of a network (zero before its first record). */
export function getBridgeTotals(state: StateView, network: string): BridgeTotals {
  const raw = state.get(bridgeTotalsKey(network));
  return raw ? decodeBridgeTotals(raw) : { inAmount: 0n, outAmount: 0n, fees: 0n, inCount: 0, outCount: 0 };
}
