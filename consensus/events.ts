/**
 * What the economy's transactions did, as plain data: `applyBlock` collects these (with the
 * transaction's index) so the chain can maintain its read indexes (holders, swap log, candles,
 * bridge records, activity per address) without re-running the rules. Not part of consensus:
 * nothing is hashed or stored by consensus from them.
 */

/** One event of a transaction; amounts in the asset's smallest unit (NATIVE base units). */
export type EconomyEvent =
  | { readonly kind: 'transfer'; readonly asset: string; readonly from: Uint8Array; readonly to: Uint8Array; readonly amount: bigint }
  | {
      readonly kind: 'swap';
      readonly pool: string;
      readonly sender: Uint8Array;
      readonly assetIn: string;
      readonly assetOut: string;
      readonly amountIn: bigint;
      readonly amountOut: bigint;
      /** Pool fee kept, in `assetIn`. */
      readonly fee: bigint;
      /** Reserves after the swap (pool order: a, b). */
      readonly reserveA: bigint;
      readonly reserveB: bigint;
    }
  | { readonly kind: 'liquidity'; readonly pool: string; readonly owner: Uint8Array; readonly add: boolean; readonly amountA: bigint; readonly amountB: bigint; readonly shares: bigint }
  | { readonly kind: 'token'; readonly symbol: string; readonly action: 'issue' | 'mint' | 'burn' | 'flags' | 'back' | 'redeem' | 'stable_mint'; readonly account: Uint8Array; readonly amount: bigint; readonly native: bigint }
  | { readonly kind: 'stake'; readonly id: Uint8Array; readonly owner: Uint8Array; readonly amount: bigint; readonly tier: number; readonly unlockHeight: number }
  | { readonly kind: 'unstake'; readonly id: Uint8Array; readonly owner: Uint8Array; readonly amount: bigint; readonly reward: bigint }
  | {
      readonly kind: 'bridge';
      readonly network: string;
      readonly direction: 'in' | 'out';
      readonly amount: bigint;
      readonly fee: bigint;
      readonly ref: string;
      readonly account: Uint8Array;
    };

/** An event with the index of its transaction in the block. */
export type BlockEvent = EconomyEvent & { readonly txIndex: number };
