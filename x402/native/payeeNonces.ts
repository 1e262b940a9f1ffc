/**
 * The payee's nonces: one allocator for every payee transaction (refunds, provider payouts), and
 * in a fleet for every node. A transaction takes its nonce by writing a slot — (payee, nonce) →
 * purpose, tx id, signed bytes — to the ledger before it leaves the process (x402/native/payeeTx.ts); a
 * nonce a slot holds is never given to another purpose, and a purpose holds at most one nonce the
 * chain has not used yet, so a payment's refund or payout is never signed at two live nonces.
 *
 * The purpose names what the transaction does (`refund:<invoke id>`, `payout:<payment id>`); a
 * slot's transaction may be replaced by one with the same nonce, the same payload and a higher fee
 * (a bump), never by another purpose's. Slots at nonces the chain has used are history: the
 * transaction was mined, or (a transaction signed outside the allocator took the nonce) lost, and
 * its purpose signs again at a new nonce.
 *
 * Where slots live (`PayeeTxLog`): a single node in its providers database
 * (x402/native/levelPayeeTxLog.ts), a fleet in the ledger's PostgreSQL (`payee_txs`,
 * x402/native/pgPayeeTxLog.ts), tests in memory; x402/native/open.ts picks the engine.
 *
 * The gate (`PayeeNonces.state`): a node signs new payee transactions only while it is `open`. A
 * node that becomes the signer (start-up, a fleet's lease acquired) is `reconciling` until the
 * stored transactions were sent again and checked against the chain (`reconcilePayeeTxs`), and
 * `closed` once it is no longer the signer; a submission then is refused (`payee_signer_not_ready`)
 * and what it was for stays owed for the next signer.
 */
/** A payee transaction's claim on its nonce (see module comment). */
export interface PayeeTxSlot {
  readonly nonce: bigint;
  /** What the transaction does: `refund:<invoke id>`, `payout:<payment id>`; one purpose per nonce. */
  readonly purpose: string;
  /** Hex id of the slot's transaction (the latest replacement's). */
  readonly txId: string;
  /** Its hex bytes, written before it leaves the process. */
  readonly raw: string;
}

/** Where slots live (see module comment). `payee` is the payee's address in hex. */
export interface PayeeTxLog {
  /** The slots of `payee` at nonces ≥ `from`, by nonce. */
  live(payee: string, from: bigint): Promise<PayeeTxSlot[]>;
  /**
   * Writes `slot` unless its nonce has a slot, or its purpose holds one at a nonce ≥ `from`
   * (the chain's next nonce for the payee); true when written. A fleet's log also refuses a
   * node that does not hold the signer lease.
   */
  claim(payee: string, slot: PayeeTxSlot, from: bigint): Promise<boolean>;
  /** A replacement of the slot's transaction (same nonce, same purpose); false when the nonce is another purpose's or has no slot. */
  replace(payee: string, slot: PayeeTxSlot): Promise<boolean>;
  /** Forgets slots below `below` (nonces the chain has used). */
  prune(payee: string, below: bigint): Promise<void>;
}

/** Codes of the allocator's refusals. */
export const PayeeNonceErrorCode = {
  /** This node is not (or not yet) the signer: nothing new is signed; what was owed stays owed. */
  NOT_READY: 'payee_signer_not_ready',
  /** No nonce could be claimed (another signer claimed the ones tried, or the lease was lost). */
  NONCE_TAKEN: 'payee_nonce_taken',
} as const;

/** The gate's states (see module comment). */
export type PayeeSignerState = 'closed' | 'reconciling' | 'open';

/** The allocator of one node: the log and the gate (see module comment). */
export class PayeeNonces {
  private current: PayeeSignerState;

  constructor(
    readonly log: PayeeTxLog,
    opts: { readonly state?: PayeeSignerState } = {},
  ) {
    this.current = opts.state ?? 'open';
  }

  /** Whether new payee transactions may be signed now. */
  isOpen(): boolean {
    return this.current === 'open';
  }

  state(): PayeeSignerState {
    return this.current;
  }

  /** Becoming the signer: nothing new is signed until `open()`, after the stored transactions went out again. */
  reconciling(): void {
    this.current = 'reconciling';
  }

  /** Reconciled: signs again (only from `reconciling`: a signer that was closed meanwhile stays closed). */
  open(): void {
    if (this.current === 'reconciling') this.current = 'open';
  }

  /** No longer the signer. */
  close(): void {
    this.current = 'closed';
  }
}

/**
 * The allocators used where none was given (tests, tools): in memory and open, one per mempool
 * (a node) and payee key, shared by the refunds and payouts submitting to that mempool.
 */
const defaults = new WeakMap<object, WeakMap<object, PayeeNonces>>();

/** The in-memory allocator of `payee` at `mempool` (see `defaults`). */
export function defaultPayeeNonces(mempool: object, payee: object): PayeeNonces {
  let byPayee = defaults.get(mempool);
  if (!byPayee) defaults.set(mempool, (byPayee = new WeakMap()));
  let n = byPayee.get(payee);
  if (!n) byPayee.set(payee, (n = new PayeeNonces(memoryPayeeTxLog())));
  return n;
}

/** Slots in memory (one process; tests). */
export function memoryPayeeTxLog(): PayeeTxLog {
  const slots = new Map<string, Map<bigint, PayeeTxSlot>>();
  const of = (payee: string) => {
    let m = slots.get(payee);
    if (!m) slots.set(payee, (m = new Map()));
    return m;
  };
  return {
    async live(payee, from) {
      return [...of(payee).values()].filter((s) => s.nonce >= from).sort((a, b) => (a.nonce < b.nonce ? -1 : 1));
    },
    async claim(payee, slot, from) {
      const m = of(payee);
      if (m.has(slot.nonce)) return false;
      for (const s of m.values()) if (s.purpose === slot.purpose && s.nonce >= from) return false;
      m.set(slot.nonce, slot);
      return true;
    },
    async replace(payee, slot) {
      const m = of(payee);
      if (m.get(slot.nonce)?.purpose !== slot.purpose) return false;
      m.set(slot.nonce, slot);
      return true;
    },
    async prune(payee, below) {
      const m = of(payee);
      for (const n of [...m.keys()]) if (n < below) m.delete(n);
    },
  };
}
