/** Prices: NATIVE base units to USD and USDC atomic units, with integer math only. */
import { COIN, type ChainParams } from '../../consensus/params.js';
import type { NativeUsdSource } from '../../services/types.js';

/** Micro-USD per USD (and USDC atomic units per USDC: USDC has 6 decimals). */
export const MICRO = 1_000_000n;

/** Parses a USD decimal string with at most 6 decimals into micro-USD. */
export function parseMicroUsd(text: string): bigint {
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) throw new RangeError(`bad USD amount "${text}"`);
  return BigInt(m[1]) * MICRO + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
}

/** The reference price of the chain parameters: the source until an on-chain pool prices NATIVE. */
export function createReferencePriceSource(params: ChainParams): NativeUsdSource {
  const microUsd = parseMicroUsd(params.referencePriceUsd);
  return { get: () => ({ microUsd, source: 'chain-parameters reference price', live: false }) };
}

/** The part of the chain the live price source reads: the economy's NATIVE/USD price and tip events. */
export interface PriceChain {
  readonly economy: { nativeUsd(): Promise<{ price: number; change24h: number | null; source: 'pool' | 'reference'; pool?: string }> };
  on(event: 'tip', fn: () => void): unknown;
}

/**
 * The node's NATIVE/USD source: the deepest NATIVE/USD-stablecoin pool on chain (with its 24 h
 * change), recomputed after every new tip; the reference price of the chain parameters while no
 * such pool exists. `get()` answers from the last computation (synchronous, as quotes need).
 */
export function createChainPriceSource(chain: PriceChain, params: ChainParams, onError?: (e: unknown) => void): NativeUsdSource & { refresh(): Promise<void> } {
  const reference = createReferencePriceSource(params).get();
  let current: ReturnType<NativeUsdSource['get']> = { ...reference, source: 'chain-parameters reference price (no NATIVE/USD-stablecoin pool yet)' };
  const refresh = async () => {
    try {
      const p = await chain.economy.nativeUsd();
      current =
        p.source === 'pool' && p.price > 0
          ? { microUsd: BigInt(Math.round(p.price * 1e6)), source: `on-chain pool ${p.pool} (deepest NATIVE/USD-stablecoin pool)`, live: true, change24h: p.change24h, pool: p.pool }
          : { ...reference, source: 'chain-parameters reference price (no NATIVE/USD-stablecoin pool yet)' };
    } catch (e) {
      onError?.(e);
    }
  };
  chain.on('tip', () => void refresh());
  void refresh();
  return { get: () => current, refresh };
}

/**
 * USDC atomic units (6 decimals) of a NATIVE price: `priceBase × microUsdPerNative / 10^8`,
 * rounded up to the next atomic unit so the operator never undercharges.
 */
export function usdcAtomicOf(priceBase: bigint, microUsdPerNative: bigint): bigint {
  const num = priceBase * microUsdPerNative;
  return (num + COIN - 1n) / COIN;
}

/** A base-unit amount as a JSON number of NATIVE (the spec's `priceAman`). */
export function nativeNumber(base: bigint): number {
  return Number(base) / Number(COIN);
}

/** USD price as a number (display) from USDC atomic units. */
export function usdNumber(atomic: bigint): number {
  return Number(atomic) / Number(MICRO);
}
