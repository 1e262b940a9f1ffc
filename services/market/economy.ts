/** Helpers shared by the chain-data services on the economy: the reader, asset and pool resolution, unit formatting. */
import type { EconomyReader, PoolView } from '../../chain/economyReader.js';
import { encodeAddress, tryDecodeAddress } from '../../consensus/address.js';
import { fromHex } from '../../consensus/hash.js';
import { NATIVE } from '../../consensus/ledger.js';
import { formatUnitsExact } from '../../consensus/txTypes/amountUnits.js';
import { OutboundError } from '../outbound/types.js';
import { ServiceError, type ServiceContext } from '../types.js';

/** The chain's economy reader; a ServiceError (refund) on a chain that has none. */
export function economyOf(ctx: ServiceContext): EconomyReader {
  const eco = ctx.chain.economy;
  if (!eco) throw new ServiceError('economy_unavailable', 'this node keeps no economy index');
  return eco;
}

/**
 * The refusal of an input that names nothing on this chain (an unknown token, a foreign address),
 * thrown by a service's `precheck`: the paid-call core answers 400 `invalid_request` with `code`
 * as its reason, before any quote (services/types.ts `precheck`).
 */
export function inputRefusal(code: string, message: string): OutboundError {
  return new OutboundError(code, message, true);
}

/** Why `address` names no account of this chain (another network's prefix, or not an address of this chain at all). */
export function foreignAddressReason(address: string, hrp: string): string {
  const prefix = /^([a-z]+)1/i.exec(address)?.[1]?.toLowerCase();
  return prefix && prefix !== hrp && /^t?native$/.test(prefix)
    ? `${address} is an address of another network of this chain (${prefix}1…): this node serves ${hrp}1… addresses`
    : `${address} is not an address of this chain: this node serves ${hrp}1… addresses only`;
}

/** Precheck of the services that read one wallet of this chain: refuses (400, before any quote) an address of another network. */
export async function thisChainAddress(ctx: ServiceContext, input: unknown): Promise<void> {
  const address = String(input).trim();
  if (!tryDecodeAddress(address.toLowerCase(), ctx.params.hrp)) throw inputRefusal('foreign_address', foreignAddressReason(address, ctx.params.hrp));
}

/** Decimal text of `units` smallest units at `decimals` (exact): the chain API's own formatting. */
export const formatUnits = formatUnitsExact;

/** Smallest units of a decimal text at `decimals`, or undefined when it has more decimals or is not a number. */
export function parseUnits(text: string, decimals: number): bigint | undefined {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) return undefined;
  const frac = m[2] ?? '';
  if (frac.length > decimals) return undefined;
  return BigInt(m[1]) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
}

/** Decimals of an asset (NATIVE: 8), undefined for an unknown token. */
export async function decimalsOf(eco: EconomyReader, asset: string): Promise<number | undefined> {
  if (asset === NATIVE) return 8;
  return (await eco.getTokenRecord(asset))?.decimals;
}

/** Rounds a display number to `digits` significant decimals (no float noise in results). */
export function round(x: number, digits = 6): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** What a token-or-pool input names: a token symbol, a pool id (`A-B`), or nothing known. */
export type AssetRef = { kind: 'token'; symbol: string } | { kind: 'native' } | { kind: 'pool'; pool: PoolView } | { kind: 'unknown'; input: string; code: 'unknown_token' | 'unknown_pool'; reason: string };

/**
 * Resolves the `tokenOrPoolInput` forms: `SYMBOL`, `A/B` or `A-B` (either order), or a 64-hex id
 * (pools on this chain are named by their two symbols, so a hex id names nothing). Symbols are
 * matched case-insensitively.
 */
export async function resolveAssetRef(eco: EconomyReader, input: string): Promise<AssetRef> {
  const text = input.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return { kind: 'unknown', input: text, code: 'unknown_pool', reason: 'pools on this chain are named by their two assets (e.g. NATIVE/USDN), not by a hex id' };
  const parts = text.toUpperCase().split(/[/-]/);
  if (parts.length === 2) {
    const [x, y] = parts;
    const id = x < y ? `${x}-${y}` : `${y}-${x}`;
    const pool = await eco.getPool(id);
    return pool ? { kind: 'pool', pool } : { kind: 'unknown', input: text, code: 'unknown_pool', reason: `no pool ${x}/${y} on this chain` };
  }
  const sym = parts[0];
  if (sym === NATIVE) return { kind: 'native' };
  if (await eco.getTokenRecord(sym)) return { kind: 'token', symbol: sym };
  return { kind: 'unknown', input: text, code: 'unknown_token', reason: `no token ${sym} on this chain` };
}

/** An index's hex account id as an address (other values, e.g. empty for a mint, pass through). */
export function addressOf(hex: string, hrp: string): string {
  return /^[0-9a-f]{40}$/.test(hex) ? encodeAddress(fromHex(hex), hrp) : hex;
}

/**
 * Why this chain cannot answer an input (an unknown token or pool, a foreign address, a block or
 * transaction it does not hold): the `code` is the stable reason of the 400 before any quote, and
 * of the refund when the chain changed between the quote and the settlement.
 */
export class Unservable {
  constructor(
    readonly code: string,
    readonly reason: string,
  ) {}
}

/**
 * The `precheck` and the run-time guard of a service whose answer needs something to exist on
 * this chain: `resolve` finds it or says why not. The precheck refuses an `Unservable` with 400
 * before any quote (`inputRefusal`); `resolved` in `run` turns it into a `ServiceError`, which
 * refunds a payment that skipped the precheck (a native payment already on chain) or met a chain
 * that changed since its quote (docs/decisions.md, the upstream-failure rule).
 */
export function servable<T>(resolve: (ctx: ServiceContext, input: unknown) => Promise<T | Unservable>) {
  return {
    precheck: async (ctx: ServiceContext, input: unknown): Promise<void> => {
      const r = await resolve(ctx, input);
      if (r instanceof Unservable) throw inputRefusal(r.code, r.reason);
    },
    resolved: async (ctx: ServiceContext, input: unknown): Promise<T> => {
      const r = await resolve(ctx, input);
      if (r instanceof Unservable) throw new ServiceError(r.code, r.reason);
      return r;
    },
  };
}

/**
 * A token-or-pool input that names issued tokens of this chain (native-supply-audit,
 * native-holder-stats): the token, or a pool's non-NATIVE tokens; empty input is `all` when the
 * service lists every token for it. NATIVE itself and names this chain does not know are unservable.
 */
export async function tokensOfRef(eco: EconomyReader, text: string, nativeReason: string): Promise<{ scope: 'all' } | { scope: 'token'; symbols: string[] } | { scope: 'pool'; pool: PoolView; symbols: string[] } | Unservable> {
  if (!text.trim()) return { scope: 'all' };
  const ref = await resolveAssetRef(eco, text);
  if (ref.kind === 'unknown') return new Unservable(ref.code, ref.reason);
  if (ref.kind === 'native') return new Unservable('not_a_token', nativeReason);
  if (ref.kind === 'token') return { scope: 'token', symbols: [ref.symbol] };
  return { scope: 'pool', pool: ref.pool, symbols: [ref.pool.a, ref.pool.b].filter((s) => s !== NATIVE) };
}
