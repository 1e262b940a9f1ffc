/** The contract every transaction type module fulfils, so new types slot in beside `transfer`. */
import type { ChainParams } from '../params.js';
import type { StateOverlay } from '../state.js';
import type { Tx } from '../tx.js';
import type { EconomyEvent } from '../events.js';

/** What a type's state transition may read besides the state. */
export interface ApplyContext {
  readonly params: ChainParams;
  /** Height of the block being built or connected. */
  readonly height: number;
  /** Id of the transaction being applied. */
  readonly txId: Uint8Array;
  /** Receives what the transaction did (for the chain's indexes); absent when nobody listens. */
  readonly emit?: (e: EconomyEvent) => void;
}

/** The unit of an amount field of a payload's JSON: an asset (NATIVE, or a token whose decimals are in state), or explicit decimals (a token the payload itself issues). */
export interface AmountUnit {
  readonly asset: string;
  readonly decimals?: number;
}

/** One transaction type: payload codec, stateless checks, state transition. */
export interface TxTypeModule<P> {
  /** Numeric id on the wire. */
  readonly type: number;
  /** Name used in JSON and the API, e.g. `transfer`. */
  readonly name: string;
  encodePayload(p: P): Uint8Array;
  /** Strict decoding; throws CodecError. */
  decodePayload(bytes: Uint8Array): P;
  /** Rules that need no state; throws ValidationError. */
  validatePayload(p: P, tx: Tx, params: ChainParams): void;
  /** The type's effect after the envelope took the fee and bumped the nonce; throws ValidationError. */
  apply(state: StateOverlay, tx: Tx, p: P, ctx: ApplyContext): void;
  /** State keys the transition reads or writes besides the sender's account (for prefetching). */
  touchedKeys(tx: Tx, p: P): string[];
  /** JSON view of the payload for the API and explorers (amounts as base-unit strings). */
  toJson(p: P, params: ChainParams): Record<string, unknown>;
  /**
   * The asset of each amount field of `toJson` (base-unit strings), for renderers that print
   * decimals (txTypes/amountUnits.ts). Absent: `amount` and fields ending in `Amount` are NATIVE.
   */
  amountUnits?(p: P): Readonly<Record<string, AmountUnit>>;
}
