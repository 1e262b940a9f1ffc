/**
 * The unit of every amount in a payload's JSON view, so the API and the explorer services print
 * each amount with its own asset's decimals (an AGNT transfer of 200,000 units at 6 decimals is
 * "0.2", not "0.002"). A type module declares its amount fields (`TxTypeModule.amountUnits`);
 * without a declaration, `amount` and fields ending in `Amount` are NATIVE. Pure: the decimals of
 * tokens come from the caller (read from state), none are guessed here.
 */
import { NATIVE } from '../ledger.js';
import type { ChainParams } from '../params.js';
import type { Tx } from '../tx.js';
import { getTxType } from './index.js';
import type { AmountUnit, TxTypeModule } from './types.js';

/** Decimal places of NATIVE. */
const NATIVE_DECIMALS = 8;

/** Whether a JSON key names a NATIVE amount by the default rule: `amount`, or a name ending in `Amount`. */
function isDefaultAmountKey(k: string): boolean {
  return k === 'amount' || k.endsWith('Amount');
}

/** The unit of each amount field of `json` (the module's declaration, else the default rule). */
export function payloadAmountUnits<P>(mod: TxTypeModule<P>, p: P, json: Record<string, unknown>): Record<string, AmountUnit> {
  if (mod.amountUnits) return { ...mod.amountUnits(p) };
  const out: Record<string, AmountUnit> = {};
  for (const k of Object.keys(json)) if (isDefaultAmountKey(k)) out[k] = { asset: NATIVE };
  return out;
}

/** The token symbols whose decimals are needed to render `units` (NATIVE and explicit decimals excluded). */
export function tokensOfUnits(units: Record<string, AmountUnit>): string[] {
  return [...new Set(Object.values(units).filter((u) => u.decimals === undefined && u.asset !== NATIVE).map((u) => u.asset))];
}

/** Exact decimal text of `units` smallest units at `decimals`: 200000n at 6 → "0.2". */
export function formatUnitsExact(units: bigint, decimals: number): string {
  const neg = units < 0n;
  const abs = neg ? -units : units;
  if (decimals === 0) return `${neg ? '-' : ''}${abs}`;
  const s = abs.toString().padStart(decimals + 1, '0');
  const frac = s.slice(-decimals).replace(/0+$/, '');
  return `${neg ? '-' : ''}${s.slice(0, -decimals)}${frac ? `.${frac}` : ''}`;
}

/**
 * `json` with every amount field as a decimal at its asset's decimals, its base-unit string
 * beside it (`amount` → `amount`, `amountBase`; every payload names its assets in other fields).
 * An amount of a token whose decimals are unknown (not issued on this chain) stays in base units,
 * with `amountDecimals: null`.
 */
export function renderPayloadAmounts(json: Record<string, unknown>, units: Record<string, AmountUnit>, decimalsOf: (symbol: string) => number | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) {
    const unit = units[k];
    if (!unit || typeof v !== 'string' || !/^\d+$/.test(v)) {
      out[k] = v;
      continue;
    }
    const decimals = unit.decimals ?? (unit.asset === NATIVE ? NATIVE_DECIMALS : decimalsOf(unit.asset));
    if (decimals === undefined) {
      out[k] = v;
      out[`${k}Base`] = v;
      out[`${k}Decimals`] = null;
    } else {
      out[k] = formatUnitsExact(BigInt(v), decimals);
      out[`${k}Base`] = v;
    }
  }
  return out;
}

/** A decoded payload's JSON with its amounts rendered (see `renderPayloadAmounts`). */
export interface PayloadView {
  /** The type's name (`transfer`, `token_transfer`, …). */
  readonly type: string;
  readonly json: Record<string, unknown>;
}

/**
 * Decodes `tx`'s payload and renders its amounts at their assets' decimals; `readDecimals` gives
 * a token's decimals from the caller's state (undefined: no such token). Undefined when the type
 * is unknown or the payload does not decode.
 */
export async function payloadView(tx: Tx, params: ChainParams, readDecimals: (symbol: string) => Promise<number | undefined>): Promise<PayloadView | undefined> {
  let mod: TxTypeModule<unknown>;
  let p: unknown;
  try {
    mod = getTxType(tx.type);
    p = mod.decodePayload(tx.payload);
  } catch {
    return undefined;
  }
  const json = mod.toJson(p, params);
  const units = payloadAmountUnits(mod, p, json);
  const tokens = tokensOfUnits(units);
  const decimals = new Map<string, number | undefined>(await Promise.all(tokens.map(async (s) => [s, await readDecimals(s)] as const)));
  return { type: mod.name, json: renderPayloadAmounts(json, units, (s) => decimals.get(s)) };
}
