/**
 * Pure formatting helpers of the services' JSON outputs: NATIVE amounts as exact decimal strings
 * beside base-unit strings (the API's `fee` / `feeBase` convention), USD from micro-USD, times,
 * and the JSON view of a transaction. Duplicated from `node/` on purpose: services never import it.
 */
import { encodeAddress } from '../consensus/address.js';
import { toHex } from '../consensus/hash.js';
import { COIN, type ChainParams } from '../consensus/params.js';
import { txId as computeTxId, type Tx } from '../consensus/tx.js';
import { getTxType } from '../consensus/txTypes/index.js';
import { payloadView } from '../consensus/txTypes/amountUnits.js';
import type { ChainReader } from '../chain/types.js';

/** Decimal places of NATIVE. */
export const NATIVE_DECIMALS = 8;
/** Micro-USD per USD. */
export const MICRO_USD = 1_000_000n;

/** Base units as the shortest exact NATIVE decimal string: 150000000n → "1.5", 1n → "0.00000001". */
export function formatNative(base: bigint): string {
  const neg = base < 0n;
  const abs = neg ? -base : base;
  const frac = (abs % COIN).toString().padStart(NATIVE_DECIMALS, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${abs / COIN}${frac ? `.${frac}` : ''}`;
}

/** `{ [name]: "1.5", [name + 'Base']: "150000000" }`: an amount in NATIVE and in base units. */
export function amountFields<N extends string>(name: N, base: bigint): Record<N | `${N}Base`, string> {
  return { [name]: formatNative(base), [`${name}Base`]: base.toString() } as Record<N | `${N}Base`, string>;
}

/**
 * Parses a non-negative NATIVE decimal ("1000", "0.5", at most 8 decimals) into base units;
 * undefined when it is not one. Inputs are schema-checked before, so this only converts.
 */
export function parseNative(text: string): bigint | undefined {
  const m = /^(\d{1,20})(?:\.(\d{1,8}))?$/.exec(text);
  if (!m) return undefined;
  return BigInt(m[1]) * COIN + BigInt((m[2] ?? '').padEnd(NATIVE_DECIMALS, '0'));
}

/** Micro-USD as the shortest exact USD decimal string: 1_500_000n → "1.5". */
export function formatMicroUsd(micro: bigint): string {
  const neg = micro < 0n;
  const abs = neg ? -micro : micro;
  const frac = (abs % MICRO_USD).toString().padStart(6, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${abs / MICRO_USD}${frac ? `.${frac}` : ''}`;
}

/** USD value, in micro-USD rounded down, of `base` units at `microUsdPerNative`. */
export function usdMicroOf(base: bigint, microUsdPerNative: bigint): bigint {
  return (base * microUsdPerNative) / COIN;
}

/** ISO 8601 UTC of Unix seconds. */
export function isoOfSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/** Name of a transaction type id (`unknown` for ids this build does not know). */
export function txTypeName(type: number): string {
  try {
    return getTxType(type).name;
  } catch {
    return 'unknown';
  }
}

/**
 * JSON view of a transaction: id, type, sender, nonce, fee, size, and the decoded payload with
 * every amount as a decimal at its own asset's decimals (NATIVE 8, a token's from chain state)
 * beside its base-unit string. An undecodable payload is shown as hex.
 */
export async function txJson(tx: Tx, bytes: Uint8Array, params: ChainParams, chain: Pick<ChainReader, 'economy'>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {
    txId: toHex(computeTxId(bytes)),
    type: txTypeName(tx.type),
    typeId: tx.type,
    version: tx.version,
    chainId: tx.chainId,
    from: encodeAddress(tx.from, params.hrp),
    nonce: tx.nonce.toString(),
    ...amountFields('fee', tx.fee),
    size: bytes.length,
    feeRate: Number(tx.fee) / bytes.length,
    publicKeyIncluded: tx.publicKey !== undefined,
  };
  const view = await payloadView(tx, params, async (symbol) => (await chain.economy?.getTokenRecord(symbol))?.decimals);
  if (view) out.payload = view.json;
  else {
    out.payload = null;
    out.payloadHex = toHex(tx.payload);
  }
  return out;
}
