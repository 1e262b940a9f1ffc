/**
 * The payout records of x402/providers/payouts.ts (owed → submitted → paid) and where they live
 * (`PayoutStore`); it imports no engine. A single node keeps them in its providers database
 * (x402/providers/levelPayoutStore.ts), a fleet in the ledger's PostgreSQL
 * (x402/providers/pgPayoutStore.ts); x402/providers/open.ts picks the engine.
 */

/** A payout's record (JSON; amounts as base-unit strings). */
export interface PayoutEntry {
  /** The payment's ledger id: the invoke's tx id (hex), or the USDC authorization's id (`rail: 'usdc'`). */
  readonly invokeId: string;
  /** `usdc`: paid by a plain transfer (no invoke to name); absent: a `provider_payout` of the invoke. */
  readonly rail?: 'usdc';
  readonly serviceId: string;
  /** The agent's payout address. */
  readonly to: string;
  /** Price minus the node fee, base units. */
  readonly amount: string;
  /** The node's fee, base units. */
  readonly fee: string;
  /** `cancelled`: the invoke was refunded (the call was not delivered after all): nothing is owed. */
  status: 'owed' | 'submitted' | 'paid' | 'cancelled';
  txId?: string;
  /** Hex bytes of the signed payout, stored before it was submitted (re-sent as is while its nonce is unused). */
  raw?: string;
  /** The tip's height when it was owed: a USDC payout's transfer is at or above it (x402/providers/payouts.ts, after a restore). */
  readonly owedHeight?: number;
}

/** Where payout records live (see module comment). */
export interface PayoutStore {
  /** Records not finished: owed or submitted. */
  open(): Promise<PayoutEntry[]>;
  /** Base units paid out (mined) per service. */
  paidTotals(): Promise<Map<string, bigint>>;
  get(paymentId: string): Promise<PayoutEntry | undefined>;
  /** Writes a new record; false (nothing written) when the payment has one already. */
  create(entry: PayoutEntry): Promise<boolean>;
  /** Rewrites a record. */
  put(entry: PayoutEntry): Promise<void>;
  /** Which of `txIds` some record names as its transaction (read only after a restore: a whole-store read). */
  namedTxIds(txIds: readonly string[]): Promise<Set<string>>;
}
