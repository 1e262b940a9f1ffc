/**
 * The consensus state as a key-value space, and typed accessors over it.
 *
 * Every piece of state (accounts, the supply record, later: invokes, refunds, tokens…) lives under
 * a string key with a canonically encoded value. Applying a block records, per touched key, the
 * new value and the prior value, so `changes` are what the store writes and `undo` restores the
 * exact prior state, whatever the transaction types did.
 *
 * Keys:
 *   a<40 hex>   account (balance, nonce, optional hybrid public key)
 *   supply      minted and burned totals
 *   i<64 hex>   agent_invoke record by tx id (sender, payTo, amount, refunded flag)
 */
import { Reader, Writer, decodeAll } from './codec.js';
import { CodecError, CodecErrorCode } from './errors.js';
import { toHex } from './hash.js';
import { ED25519_PUBLIC_KEY_SIZE, MLDSA_PUBLIC_KEY_SIZE, type HybridPublicKey } from './keys.js';

/** Read access to the state at some tip. Synchronous: the chain prefetches what a block touches. */
export interface StateView {
  /** The encoded value under `key`, or undefined when absent. */
  get(key: string): Uint8Array | undefined;
}

/** A set of key writes: a value, or null to delete the key. */
export type StateChanges = Map<string, Uint8Array | null>;

/** An account: spendable balance and next nonce, in base units. */
export interface Account {
  readonly balance: bigint;
  readonly nonce: bigint;
  /** Published by the account's first transaction; absent before. */
  readonly publicKey?: HybridPublicKey;
}

/** Supply figures tracked by consensus, in base units. */
export interface Supply {
  /** Everything ever created: genesis allocations plus block subsidies. */
  readonly minted: bigint;
  /** Everything destroyed by the fee burn. */
  readonly burned: bigint;
}

/** State key of an account. */
export function accountKey(id: Uint8Array): string {
  return `a${toHex(id)}`;
}

/** State key of the supply record. */
export const SUPPLY_KEY = 'supply';

/** Canonical bytes of an account. */
export function encodeAccount(a: Account): Uint8Array {
  const w = new Writer(a.publicKey ? 2700 : 32).varint(a.balance).varint(a.nonce);
  if (a.publicKey) w.u8(1).raw(a.publicKey.mldsa).raw(a.publicKey.ed25519);
  else w.u8(0);
  return w.finish();
}

/** Decodes an account (strict). */
export function decodeAccount(bytes: Uint8Array): Account {
  return decodeAll(bytes, (r: Reader) => {
    const balance = r.varint();
    const nonce = r.varint();
    const flag = r.u8();
    if (flag > 1) throw new CodecError(CodecErrorCode.BAD_VALUE, 'bad account key flag', r.offset);
    if (flag === 0) return { balance, nonce };
    return { balance, nonce, publicKey: { mldsa: r.raw(MLDSA_PUBLIC_KEY_SIZE).slice(), ed25519: r.raw(ED25519_PUBLIC_KEY_SIZE).slice() } };
  });
}

/** Canonical bytes of the supply record. */
export function encodeSupply(s: Supply): Uint8Array {
  return new Writer(20).varint(s.minted).varint(s.burned).finish();
}

/** Decodes the supply record. */
export function decodeSupply(bytes: Uint8Array): Supply {
  return decodeAll(bytes, (r) => ({ minted: r.varint(), burned: r.varint() }));
}

/** An empty account. */
export const EMPTY_ACCOUNT: Account = { balance: 0n, nonce: 0n };

/**
 * A writable layer over a base view that remembers the prior value of every key it changes.
 * Transactions in a block apply to one overlay, so each sees the effects of those before it.
 */
export class StateOverlay implements StateView {
  private readonly writes: StateChanges = new Map();
  private readonly priors: StateChanges = new Map();
  private readonly accounts = new Map<string, Account>();
  /**
   * Accounts set but not encoded yet: a block rewrites the same account many times (fee, then
   * the transfer; every payment to one payee), so each is encoded once, when read as bytes or
   * when the changes are taken.
   */
  private readonly unencoded = new Set<string>();
  constructor(private readonly base: StateView) {}

  get(key: string): Uint8Array | undefined {
    if (this.unencoded.has(key)) this.encode(key);
    if (this.writes.has(key)) return this.writes.get(key) ?? undefined;
    return this.base.get(key);
  }

  set(key: string, value: Uint8Array | null): void {
    if (!this.priors.has(key)) this.priors.set(key, this.base.get(key) ?? null);
    this.writes.set(key, value);
    this.accounts.delete(key);
    this.unencoded.delete(key);
  }

  private encode(key: string): void {
    this.unencoded.delete(key);
    this.writes.set(key, encodeAccount(this.accounts.get(key)!));
  }

  /** The account under `id`, empty when it does not exist. */
  getAccount(id: Uint8Array): Account {
    const key = accountKey(id);
    const cached = this.accounts.get(key);
    if (cached) return cached;
    const raw = this.get(key);
    const acc = raw ? decodeAccount(raw) : EMPTY_ACCOUNT;
    this.accounts.set(key, acc);
    return acc;
  }

  setAccount(id: Uint8Array, a: Account): void {
    const key = accountKey(id);
    if (!this.priors.has(key)) this.priors.set(key, this.base.get(key) ?? null);
    if (!this.writes.has(key)) this.writes.set(key, null); // keeps the order of first writes
    this.accounts.set(key, a);
    this.unencoded.add(key);
  }

  getSupply(): Supply {
    const raw = this.get(SUPPLY_KEY);
    return raw ? decodeSupply(raw) : { minted: 0n, burned: 0n };
  }

  setSupply(s: Supply): void {
    this.set(SUPPLY_KEY, encodeSupply(s));
  }

  /** New values of every key changed, with unchanged rewrites dropped. */
  changes(): StateChanges {
    for (const key of [...this.unencoded]) this.encode(key);
    const out: StateChanges = new Map();
    for (const [k, v] of this.writes) {
      const prior = this.priors.get(k) ?? null;
      if (!sameValue(prior, v)) out.set(k, v);
    }
    return out;
  }

  /** Prior values of every key in `changes()`: writing them back undoes the overlay. */
  undo(): StateChanges {
    const out: StateChanges = new Map();
    for (const k of this.changes().keys()) out.set(k, this.priors.get(k) ?? null);
    return out;
  }
}

function sameValue(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Encodes a set of changes (used for undo records on disk): count, then key and value (flag + bytes). */
export function encodeChanges(c: StateChanges): Uint8Array {
  const te = new TextEncoder();
  const keys = [...c.keys()].map((k) => te.encode(k));
  // Sized up front (a block's undo holds megabytes of account records): no regrowth copies.
  let size = 10;
  for (const [, v] of c) size += 2 * 10 + 1 + (v ? v.length : 0);
  for (const k of keys) size += k.length;
  const w = new Writer(size).varint(c.size);
  let i = 0;
  for (const v of c.values()) {
    w.bytes(keys[i++]);
    if (v === null) w.u8(0);
    else w.u8(1).bytes(v);
  }
  return w.finish();
}

/** Decodes a set of changes. */
export function decodeChanges(bytes: Uint8Array): StateChanges {
  const td = new TextDecoder();
  return decodeAll(bytes, (r) => {
    const n = r.varnum(10_000_000, 'change count');
    const out: StateChanges = new Map();
    for (let i = 0; i < n; i++) {
      const k = td.decode(r.bytes(256, 'key'));
      const flag = r.u8();
      if (flag > 1) throw new CodecError(CodecErrorCode.BAD_VALUE, 'bad change flag', r.offset);
      out.set(k, flag ? r.bytes(1 << 24, 'value').slice() : null);
    }
    return out;
  });
}
