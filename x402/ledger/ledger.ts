/**
 * The settlement ledger: one record per payment (native: the agent_invoke tx id; USDC: the
 * authorization). A native payment moves `claimed → settled` or `claimed → refund_pending →
 * refunded`. `SettlementLedger` is the interface (this file, which imports no engine); two implementations keep the same state
 * machine and pass the same test suite (test/x402/ledger.test.ts), and `openLedger` (open.ts)
 * chooses between them:
 *
 *   LevelLedger (levelLedger.ts)  its own LevelDB database in `<dataDir>/ledger`: one node (the default)
 *   PgLedger (pgLedger.ts)        PostgreSQL (`--ledger postgres://…`): several nodes selling under one
 *                                 payee share it, and its one seller id (fleet mode)
 *
 * Claiming is atomic: however many requests race on one payment, exactly one gets the claim and
 * executes (LevelLedger: under an in-memory lock, one process being the only writer; PgLedger: an
 * INSERT … ON CONFLICT DO NOTHING, so across nodes too). The stored result and receipt answer a
 * repeated settle with the same payment and request. Each transition names the statuses it may
 * leave (`settle` only ends a claim still `claimed`, …); any other is refused `ledger_conflict`
 * and writes nothing.
 *
 * A payment the node will never honour (x402/native/unhonored.ts: wrong amount, unknown or unavailable
 * service, never settled within the refund window) is claimed straight into `refund_pending`
 * with `refused: true` by `claimRefusal`, under the same lock as `claim`: a settle racing the
 * watcher either executes or is refunded, never both.
 *
 * Keys:  p:<payment id>  → JSON record (below)
 *        m:<name>        → JSON marks of the payment watchers (x402/native/unhonored.ts: its scan height,
 *                          the ledger's creation height and any gap of chain it never judged)
 *        m:auth-secret   → {secret}: 32 random bytes (hex), written once; the HTTP Payment
 *                          challenges and sign-in challenges are keyed by it, so every node of a
 *                          ledger checks the others' (node/api/paymentDialects.ts, x402/usdc/siwx.ts)
 *        m:seller        → {sellerId, createdAt}: this ledger's random id, written when it is
 *                          created; quotes name it and native payments commit to it
 *                          (x402/core/wire.ts requestCommitment), so a payment quoted against one
 *                          ledger is never honoured by another (two nodes sharing a payee)
 *        r:<ref>         → {mldsa, ed25519}: the hybrid signature of a batch of receipts (x402/core/receiptBatch.ts),
 *                          stored once for the whole batch; a record's batched receipt names it as
 *                          `signature: {ref}` (32 hex: the start of the sha256 of the two signatures) and
 *                          reads it back whole (a receipt as stored used to repeat the 4.6 kB signature in every record)
 *        s:<seq>         → the number of writes so far (16 digits; the highest key counts), put
 *                          in the same batch as the writes it counts (one batch takes the writes
 *                          of one turn of the event loop, and deletes the key before) and
 *                          mirrored to the witness files (witness.ts) before the write
 *                          returns: a restored ledger is found behind its witness
 */
import { NodeError } from '../../consensus/errors.js';

/**
 * Where a payment is in its life. `failed` (USDC rail): the authorization was refused by the
 * facilitator, its service failed or its settlement did not go through; nothing was charged and
 * the authorization stays used (never accepted again).
 */
export type PaymentStatus = 'claimed' | 'settled' | 'refund_pending' | 'refunded' | 'failed' | 'settle_pending' | 'expired_unsettled';

/**
 * A USDC payment whose facilitator `/settle` timed out or failed ambiguously (`settle_pending`):
 * the service's result is stored, and the reconciler (x402/usdc/reconcile.ts) reads Base until
 * the authorization is used (→ `settled`, receipt with the Transfer's tx hash) or its
 * `validBefore` has passed unused (→ `expired_unsettled`, nothing charged).
 */
export interface UsdcReconcileState {
  /** EIP-3009 authorizer (checksummed) and nonce (0x, 32 bytes). */
  readonly authorizer: string;
  readonly nonce: string;
  /** Unix seconds; the authorization can no longer be used in a block at or after it. */
  readonly validBefore: number;
  /** The receipt to complete with the tx hash once the authorization is found used. */
  readonly receipt: Record<string, unknown>;
  /** The x402 network name of the payment (`base` / `eip155:8453`), for the payment-response header. */
  readonly network: string;
  /** First block searched for the AuthorizationUsed log (set at the first check). */
  readonly fromBlock?: string;
  /** Checks made so far. */
  readonly checks?: number;
  /**
   * Written ahead of the node's own `/settle` call (x402/usdc/settle.ts): the facilitator is
   * settling it right now. Cleared when that call's answer is ambiguous and by the reconciler's
   * first check (a node that died mid-call left it).
   */
  readonly settling?: true;
  /** Where the call was sold (its base URL and resource), so the reconciler signs its receipts as the node would have. */
  readonly issue?: { readonly baseUrl: string; readonly resource: string };
}

/** The payment rail of a record. */
export type Rail = 'native' | 'usdc';

/** One ledger record (JSON on disk; amounts as base-unit strings). */
export interface PaymentRecord {
  readonly id: string;
  readonly rail: Rail;
  readonly status: PaymentStatus;
  readonly serviceId: string;
  /** Hex sha256 of the request string the payment was claimed for. */
  readonly requestHash: string;
  /** Payer: bech32m address (native) or 0x address (USDC). */
  readonly caller: string;
  /** Base units (native) or USDC atomic units. */
  readonly amount: string;
  readonly claimedAt: number;
  readonly updatedAt: number;
  /** The service's output (settled). */
  readonly result?: unknown;
  /** The receipt returned to the caller (settled). */
  readonly receipt?: Record<string, unknown>;
  /** Why execution failed (refund_pending, refunded). */
  readonly error?: { code: string; message: string };
  /** Hex id of the refund transaction (refund_pending, refunded). */
  readonly refundTxId?: string;
  /**
   * Hex bytes of the signed refund transaction `refundTxId` names (refund_pending), written ahead
   * of its submission: a restart or a fleet's next signer sends these very bytes again instead of
   * signing a second refund. Dropped once it is mined (`refunded`).
   */
  readonly refundTx?: string;
  /** refund_pending without a refund tx: why the refund could not be sent yet (the payee's balance, …). */
  readonly refundStuck?: string;
  /**
   * Refunded without a call: the node will not honour this payment (`error.code` says why:
   * amount_mismatch, unknown_service, service_unavailable, settle_window_expired). A settle of
   * it answers `payment_refunded`, whatever service and request it names.
   */
  readonly refused?: true;
  /** USDC rail: hex sha256 of the payment identifier the first call sent; a retry must carry it to get the stored result. */
  readonly accessKey?: string;
  /** USDC rail, settle_pending / expired_unsettled: what the reconciler needs (see UsdcReconcileState). */
  readonly reconcile?: UsdcReconcileState;
}

/** Totals of settled calls per service, for the catalog's proven* fields. */
export interface ServiceVolume {
  calls: number;
  callsUsdc: number;
  /** Base units. */
  volumeBase: bigint;
  /** USDC atomic units. */
  volumeUsdcAtomic: bigint;
}

/** Result of `claim`. */
export type ClaimResult = { readonly claimed: true; readonly record: PaymentRecord } | { readonly claimed: false; readonly record: PaymentRecord };

/** Codes of the ledger's own failures. */
export const LedgerErrorCode = {
  /** The ledger's database cannot be reached (PostgreSQL down): the node stops selling until it is back (503). */
  UNAVAILABLE: 'ledger_unavailable',
  /** A transition from a status it may not leave (the record moved on meanwhile): nothing was written. */
  CONFLICT: 'ledger_conflict',
  /** The database's role lacks a privilege the running node needs (x402/ledger/pgPrivileges.ts): the node does not start. */
  PRIVILEGE_MISSING: 'ledger_privilege_missing',
  /** The schema is behind this node's and its role may not migrate it: the owner role must (`native-node ledger migrate`). */
  MIGRATION_REQUIRED: 'ledger_migration_required',
  /** The schema is newer than this node's: upgrade the node. */
  SCHEMA_NEWER: 'ledger_schema_newer',
  /** A record names something the ledger does not hold (a damaged database). */
  CORRUPT: 'ledger_corrupt',
} as const;
export type LedgerErrorCode = (typeof LedgerErrorCode)[keyof typeof LedgerErrorCode];

/** The statuses each transition may leave (the once-only rules, the same for every implementation). */
export const TRANSITION_FROM = {
  settle: ['claimed'],
  fail: ['claimed'],
  settlePending: ['claimed'],
  reconcileProgress: ['settle_pending'],
  settleReconciled: ['settle_pending'],
  expireUnsettled: ['settle_pending'],
  // A refund reopened by a reorganization goes back from refunded (RefundManager.reopen).
  refundPending: ['claimed', 'refund_pending', 'refunded'],
  refunded: ['refund_pending', 'refunded'],
} as const satisfies Record<string, readonly PaymentStatus[]>;

/**
 * What `refundPending` records of the refund transaction: a signed one written ahead of its
 * submission (its id and hex bytes), or none in flight and why (`stuck`: the payee's balance, a
 * refusal by the mempool). Without it the record keeps what it has.
 */
export type RefundTxWrite = { readonly txId: string; readonly tx: string } | { readonly stuck: string };

/** The fields of a record `refundPending` writes for `refund`. */
export function refundTxPatch(refund: RefundTxWrite | undefined): Partial<PaymentRecord> {
  if (!refund) return {};
  return 'txId' in refund ? { refundTxId: refund.txId, refundTx: refund.tx, refundStuck: undefined } : { refundTxId: undefined, refundTx: undefined, refundStuck: refund.stuck };
}

/** Which implementation a ledger is. */
export type LedgerKind = 'leveldb' | 'postgres';

/** The settlement ledger (see module comment): every method but the totals reads or writes the database. */
export interface SettlementLedger {
  readonly kind: LedgerKind;
  /** This ledger's id (16 hex characters): the seller id of the quotes, one per ledger (one per fleet). */
  readonly sellerId: string;
  /** False while the database cannot be reached (PostgreSQL): paid calls answer 503 `ledger_unavailable`. */
  available(): boolean;
  /** The record of a payment, if any. */
  get(id: string): Promise<PaymentRecord | undefined>;
  /** Which of `ids` have a record, in one read (the payment watcher checks a whole block's invokes at once). */
  hasMany(ids: readonly string[]): Promise<boolean[]>;
  /** The record of a payment, with a token to pass to `claim` when there is none (it may save the claim a read). */
  lookup(id: string): Promise<{ record: PaymentRecord | undefined; absentToken: number }>;
  /**
   * Claims a payment for one execution. Returns `{claimed: true}` to exactly one caller per id;
   * every other caller (concurrent or later, on any node sharing the ledger) gets
   * `{claimed: false}` with the existing record. `absentToken`: from a `lookup` that found no record.
   */
  claim(rec: Omit<PaymentRecord, 'status' | 'claimedAt' | 'updatedAt'>, now?: number, absentToken?: number): Promise<ClaimResult>;
  /**
   * Claims a payment the node will not honour straight into `refund_pending` (`refused`): exactly
   * one of a settle's claim and this one wins. The caller then sends the refund.
   */
  claimRefusal(rec: Omit<PaymentRecord, 'status' | 'claimedAt' | 'updatedAt' | 'refused' | 'error'>, error: { code: string; message: string }, now?: number): Promise<ClaimResult>;
  /** claimed → settled, storing the result and receipt (one write). */
  settle(id: string, result: unknown, receipt: Record<string, unknown>): Promise<PaymentRecord>;
  /** claimed → refund_pending; `refund`: the refund tx written ahead of its submission, or none in flight and why (see RefundTxWrite). */
  refundPending(id: string, error: { code: string; message: string }, refund?: RefundTxWrite): Promise<PaymentRecord>;
  /** claimed → failed (USDC rail: not charged, no result; the authorization stays used). */
  fail(id: string, error: { code: string; message: string }): Promise<PaymentRecord>;
  /** claimed → settle_pending (USDC): the result is kept until Base says whether the authorization was used. */
  settlePending(id: string, result: unknown, reconcile: UsdcReconcileState, error: { code: string; message: string }): Promise<PaymentRecord>;
  /** settle_pending: the reconciler's progress (first block searched, checks made). */
  reconcileProgress(id: string, reconcile: UsdcReconcileState): Promise<PaymentRecord>;
  /** settle_pending → settled with the receipt found on chain (the stored result is kept). */
  settleReconciled(id: string, receipt: Record<string, unknown>): Promise<PaymentRecord>;
  /** settle_pending → expired_unsettled: never used before validBefore; the result is dropped, nothing charged. */
  expireUnsettled(id: string, error: { code: string; message: string }): Promise<PaymentRecord>;
  /** refund_pending → refunded (the stored refund bytes are dropped). */
  refunded(id: string, refundTxId: string): Promise<PaymentRecord>;
  /** Every record, by id (a full scan: for start-up recovery and audits). */
  records(): AsyncGenerator<PaymentRecord>;
  /** A watcher's mark (see module comment), undefined when never written. */
  getMark<T>(name: string): Promise<T | undefined>;
  /** Writes a watcher's mark. */
  putMark(name: string, value: unknown): Promise<void>;
  /** The mark `name`, first written as `value` when there is none: once per ledger, so every node sharing it reads the same. */
  initMark<T>(name: string, value: T): Promise<T>;
  /** Settled totals of one service (PgLedger: from the database, at most a few seconds old). */
  volume(serviceId: string): ServiceVolume;
  /** How many records are in each status, and how many were refused (PgLedger: at most a few seconds old). */
  counts(): Readonly<Record<PaymentStatus, number>> & { readonly refused: number };
  /** Brings `volume` and `counts` up to date with the database now (LevelLedger: they always are). */
  refreshTotals(): Promise<void>;
  close(): Promise<void>;
}

/** The error of a transition from a status it may not leave. */
export function transitionConflict(id: string, from: PaymentStatus | undefined, to: string): NodeError {
  return new NodeError(LedgerErrorCode.CONFLICT, from === undefined ? `ledger has no payment ${id}` : `payment ${id} is ${from}: ${to} refused`, { id, status: from ?? null });
}

/** Options of `openLedger` (PostgreSQL only; see pgLedger.ts). */
export interface LedgerOptions {
  /** This node's name in the fleet (claims record it). */
  readonly nodeId?: string;
  /** How long `volume` and `counts` may be served from memory, ms. */
  readonly totalsTtlMs?: number;
}
