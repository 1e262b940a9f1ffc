/** Price views of a definition for outputs: NATIVE decimal, base units and USD at the node's NATIVE/USD source. */
import { COIN } from '../consensus/params.js';
import { formatMicroUsd, formatNative } from './format.js';
import type { NativeUsdSource, ServiceDefinition } from './types.js';

/** USD price of `priceBase` in micro-USD, rounded up (as quotes round up to the next USDC unit). */
export function priceMicroUsd(priceBase: bigint, microUsdPerNative: bigint): bigint {
  return (priceBase * microUsdPerNative + COIN - 1n) / COIN;
}

/** `{ priceNative, priceBase, priceUsd }` of a service (priceUsd a number, as the catalog's field). */
export function priceFields(def: ServiceDefinition, usd: NativeUsdSource): { priceNative: string; priceBase: string; priceUsd: number } {
  const micro = priceMicroUsd(def.priceBase, usd.get().microUsd);
  return { priceNative: formatNative(def.priceBase), priceBase: def.priceBase.toString(), priceUsd: Number(formatMicroUsd(micro)) };
}
