/** Account addresses: bech32m of the 20-byte account id, hrp `native` on mainnet and `tnative` elsewhere. */
import { bech32m } from '@scure/base';
import { ADDRESS_SIZE } from './keys.js';

/** Human-readable part on mainnet. */
export const MAINNET_HRP = 'native';
/** Human-readable part on every other network. */
export const TESTNET_HRP = 'tnative';

/** Encodes a 20-byte account id as a bech32m address. */
export function encodeAddress(id: Uint8Array, hrp: string): string {
  if (id.length !== ADDRESS_SIZE) throw new RangeError(`account id must be ${ADDRESS_SIZE} bytes`);
  return bech32m.encode(hrp, bech32m.toWords(id));
}

/** Decodes a bech32m address of the given hrp; undefined when it is not one. */
export function tryDecodeAddress(address: string, hrp: string): Uint8Array | undefined {
  if (typeof address !== 'string' || address.length > 90) return undefined;
  try {
    const { prefix, words } = bech32m.decode(address as `${string}1${string}`);
    if (prefix !== hrp) return undefined;
    const id = bech32m.fromWords(words);
    return id.length === ADDRESS_SIZE ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `address` is a valid address for the given hrp. */
export function isAddress(address: string, hrp: string): boolean {
  return tryDecodeAddress(address, hrp) !== undefined;
}
