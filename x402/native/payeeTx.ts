/**
 * Signing and submitting a transaction of the node's payee key (refunds, provider payouts): a
 * nonce from the payee's one allocator (x402/native/payeeNonces.ts: claimed with the signed bytes in the
 * ledger before the transaction leaves; never another purpose's), the key published by the first
 * transaction, and a fee that enters the mempool (`payeeTxFee`: the minimum fee rate, or above the pool's
 * floor while it is full, never above `MAX_FEE_RATE_MULTIPLE` times the minimum). A payee transaction waiting for a block is bumped by a replacement
 * with the same nonce and a higher fee rate (`submitPayeeTx` with `replace`). And sending such a
 * transaction again from its stored bytes (`resubmitPayeeTx`): refunds and payouts write the
 * signed bytes ahead of the submission, and a restart or a fleet's next signer re-sends those
 * very bytes while they can still be mined — unless the payee cannot pay their fee (a bid made
 * while the pool was full), then they are signed again at their nonce with today's lower bid; a
 * node that becomes the signer first sends every stored transaction again (`reconcilePayeeTxs`)
 * and signs nothing new before.
 */
import { randomBytes } from 'node:crypto';
import { decodeTx, encodeTx, encodeUnsignedTx, signTx, txId as computeTxId, TxType, TX_VERSION, type Tx, type UnsignedTx } from '../../consensus/tx.js';
import { providerPayout } from '../../consensus/txTypes/providerPayout.js';
import { refund as refundType } from '../../consensus/txTypes/refund.js';
import { bytesEqual, fromHex, toHex } from '../../consensus/hash.js';
import { isNodeError, NodeError, TxErrorCode } from '../../consensus/errors.js';
import { ED25519_SIGNATURE_SIZE, MLDSA_SIGNATURE_SIZE, type HybridKeyPair } from '../../consensus/keys.js';
import type { ChainParams } from '../../consensus/params.js';
import type { Account } from '../../consensus/state.js';
import type { MempoolEntry, MempoolStats } from '../../chain/types.js';
import type { PaymentChain, PaymentMempool } from '../core/ports.js';
import { defaultPayeeNonces, PayeeNonceErrorCode, type PayeeNonces, type PayeeTxSlot } from './payeeNonces.js';

/** Margin over a full pool's floor (the lowest package's fee rate) a payee transaction bids, percent: the floor moves. */
export const FLOOR_MARGIN_PCT = 10;
/** Fee-rate increase of a replacement over the transaction it replaces, percent (the mempool asks at least 10). */
export const REPLACE_BUMP_PCT = 25;
/**
 * Highest fee rate a payee transaction bids, as a multiple of the chain's minimum fee rate: the
 * floor bid and every bump stop there, so sustained congestion makes a refund wait (pending,
 * never stuck) instead of pushing its fee up until the payee's balance refuses it.
 */
export const MAX_FEE_RATE_MULTIPLE = 10;
/** Code of the mempool's refusal of a transaction under a full pool's floor (chain/mempool.ts `MempoolErrorCode.FULL`). */
const MEMPOOL_FULL = 'mempool_full';

/** The smallest integer fee whose rate over `size` bytes exceeds `rate`. */
function feeAbove(rate: number, size: number): bigint {
  return BigInt(Math.floor(rate * size)) + 1n;
}

/**
 * An upper bound of a transaction's signed size from its unsigned encoding at fee 0: signatures
 * have fixed sizes, and a fee varint is at most 9 bytes longer than fee 0's.
 */
export function signedSizeBound(unsignedAtFeeZero: Uint8Array): number {
  return unsignedAtFeeZero.length + 9 + MLDSA_SIGNATURE_SIZE + ED25519_SIGNATURE_SIZE;
}

/** The most a payee transaction of `size` signed bytes pays: `MAX_FEE_RATE_MULTIPLE` times the minimum fee rate. */
export function payeeFeeCap(size: number, params: Pick<ChainParams, 'minFeeRate'>): bigint {
  return BigInt(size) * params.minFeeRate * BigInt(MAX_FEE_RATE_MULTIPLE);
}

/**
 * The fee a payee transaction of `size` signed bytes bids, base units: the chain's minimum; above
 * the pool's floor (plus `FLOOR_MARGIN_PCT`) when it would not fit the pool's free bytes (a full
 * pool admits only fee rates above its lowest package's, chain/mempool.ts); above `floorRate`
 * when the mempool named one in a refusal; and `REPLACE_BUMP_PCT` above `replacesRate`, the fee
 * rate of the transaction it replaces — never above `payeeFeeCap`.
 */
export function payeeTxFee(size: number, params: Pick<ChainParams, 'minFeeRate'>, o: { pool?: MempoolStats; floorRate?: number; replacesRate?: number } = {}): bigint {
  let fee = BigInt(size) * params.minFeeRate;
  const bid = (rate: number) => {
    const f = feeAbove(rate, size);
    if (f > fee) fee = f;
  };
  const pool = o.pool;
  if (pool && pool.evictionFeeRate !== null && pool.bytes + size > pool.maxBytes) bid(pool.evictionFeeRate * (1 + FLOOR_MARGIN_PCT / 100));
  if (o.floorRate !== undefined) bid(o.floorRate * (1 + FLOOR_MARGIN_PCT / 100));
  if (o.replacesRate !== undefined) bid(o.replacesRate * (1 + REPLACE_BUMP_PCT / 100));
  const cap = payeeFeeCap(size, params);
  return fee > cap ? cap : fee;
}

/** A replacement: the stored transaction's nonce, and its fee rate (base units per byte) to outbid. */
export interface PayeeTxReplacement {
  readonly nonce: bigint;
  readonly feeRate: number;
}

/** Submissions per payee key run one at a time, so refunds and payouts never pick the same nonce. */
const queues = new WeakMap<HybridKeyPair, Promise<unknown>>();

/** Attempts at a nonce when a block connects between the account read and the submission, or a claim loses a race. */
const NONCE_ATTEMPTS = 3;

/** Options of a payee submission. */
export interface PayeeTxOptions {
  /** Replace the purpose's stored transaction (bump): its nonce, a higher fee rate. */
  readonly replace?: PayeeTxReplacement;
  /** What the transaction does (x402/native/payeeNonces.ts): `refund:<invoke id>`, `payout:<payment id>`. Absent: a purpose of its own. */
  readonly purpose?: string;
  /** The allocator (default: an in-memory one per mempool and payee key, x402/native/payeeNonces.ts). */
  readonly nonces?: PayeeNonces;
}

/** The payee's address as the nonce log keys it. */
const payeeKey = (payee: HybridKeyPair) => toHex(payee.address);

/**
 * Signs `payload` of `type` with the payee key and submits it to the mempool; resolves to the tx id
 * (throws when the mempool refuses it). The nonce comes from the allocator (x402/native/payeeNonces.ts):
 * the next one after the mempool's pending transactions of the payee that no slot holds, claimed
 * in the log together with the signed bytes before the transaction leaves. A purpose that already
 * holds a live slot (an earlier attempt: a crash, a refusal, another node of the fleet) sends that
 * very transaction again instead of signing a second one, and so does a pending transaction of
 * the payee doing what the purpose does at a nonce no slot holds (its slot lost with a ledger
 * restored from a backup): it takes its slot back. `beforeSubmit`, when given, runs with the
 * tx's id and bytes before it leaves (write-ahead into the refund's or payout's record). The fee is
 * `payeeTxFee`'s; a refusal under a full pool's floor that moved since it was read is bid again
 * once above the floor the refusal names (for a stored slot: a replacement at its nonce).
 *
 * With `replace`, the transaction takes the stored one's nonce and outbids its fee rate: it
 * replaces it in the mempool (bump and replace), in the slot too. The caller's write-ahead names
 * the replacement from then on; the replaced transaction may still be mined instead (the same
 * payment: consensus takes one refund per invoke, one payout per invoke), never both.
 *
 * Refused while the allocator's gate is not open (`payee_signer_not_ready`).
 */
export function submitPayeeTx(
  chain: Pick<PaymentChain, 'getAccount'>,
  mempool: PaymentMempool,
  payee: HybridKeyPair,
  params: ChainParams,
  type: number,
  payload: Uint8Array,
  beforeSubmit?: (id: string, bytes: Uint8Array) => Promise<unknown>,
  opts: PayeeTxOptions = {},
): Promise<string> {
  const nonces = opts.nonces ?? defaultPayeeNonces(mempool, payee);
  const purpose = opts.purpose ?? `tx:${toHex(randomBytes(8))}`;
  const who = payeeKey(payee);
  const sign = (acc: Pick<Account, 'publicKey'>, nonce: bigint, o: { floorRate?: number; replacesRate?: number }) => {
    const base: Omit<UnsignedTx, 'fee'> = {
      version: TX_VERSION,
      chainId: params.chainId,
      type,
      from: payee.address,
      nonce,
      payload,
      ...(acc.publicKey ? {} : { publicKey: payee.publicKey }),
    };
    const size = signedSizeBound(encodeUnsignedTx({ ...base, fee: 0n }));
    const fee = payeeTxFee(size, params, { pool: mempool.stats?.(), ...o });
    const bytes = encodeTx(signTx({ ...base, fee }, payee));
    return { bytes, id: toHex(computeTxId(bytes)) };
  };
  const send = async (id: string, bytes: Uint8Array) => {
    await beforeSubmit?.(id, bytes);
    await mempool.add(bytes);
    return id;
  };
  // A stored transaction the mempool refuses for the payee's balance at its fee (a bid made while the
  // pool was full) is signed again at its nonce with today's bid when that is lower: it was never
  // admitted, and one nonce is mined once, so the payment still ends once.
  const resendStored = async (acc: Pick<Account, 'publicKey'>, slot: PayeeTxSlot): Promise<string> => {
    try {
      return await send(slot.txId, fromHex(slot.raw));
    } catch (e) {
      if (!isNodeError(e, TxErrorCode.INSUFFICIENT_FUNDS)) throw e;
      const { id, bytes } = sign(acc, slot.nonce, {});
      if (decodeTx(bytes).fee >= decodeTx(fromHex(slot.raw)).fee || !(await nonces.log.replace(who, { nonce: slot.nonce, purpose, txId: id, raw: toHex(bytes) }))) throw e;
      return send(id, bytes);
    }
  };
  const submitOnce = async (floorRate?: number): Promise<string> => {
    if (!nonces.isOpen()) throw new NodeError(PayeeNonceErrorCode.NOT_READY, `this node does not sign payee transactions now (${nonces.state()}): what it was for stays owed to the signer`);
    const acc = await chain.getAccount(payee.address);
    const replace = opts.replace;
    if (replace && replace.nonce < acc.nonce) throw new NodeError(TxErrorCode.BAD_NONCE, `nonce ${replace.nonce} already used; next is ${acc.nonce}`);
    const live = await nonces.log.live(who, acc.nonce);
    const mine = live.find((s) => s.purpose === purpose);
    // A replacement: asked for (a bump), or the purpose's stored transaction refused under a floor that rose.
    const replacing = replace ?? (mine && floorRate !== undefined ? { nonce: mine.nonce, feeRate: storedFeeRate(mine.raw) } : undefined);
    if (replacing) {
      if (mine && mine.nonce !== replacing.nonce) throw new NodeError(PayeeNonceErrorCode.NONCE_TAKEN, `nonce ${replacing.nonce} is not this transaction's (it holds ${mine.nonce})`);
      const { id, bytes } = sign(acc, replacing.nonce, { floorRate, replacesRate: replacing.feeRate });
      const slot = { nonce: replacing.nonce, purpose, txId: id, raw: toHex(bytes) };
      if (!(mine ? await nonces.log.replace(who, slot) : await nonces.log.claim(who, slot, acc.nonce)))
        throw new NodeError(PayeeNonceErrorCode.NONCE_TAKEN, `nonce ${replacing.nonce} of the payee is another transaction's, or this node is not the signer`);
      return send(id, bytes);
    }
    // Written ahead by an earlier attempt and not mined: that very transaction again, never a second one.
    if (mine) {
      if (!mempool.has(mine.txId)) return resendStored(acc, mine);
      await beforeSubmit?.(mine.txId, fromHex(mine.raw));
      return mine.txId;
    }
    const held = new Set(live.map((s) => s.nonce));
    let nonce = mempool.pendingNonce(payee.address, acc.nonce);
    // A pending transaction of the payee at a nonce no slot holds (its slot was lost with a ledger restored from a
    // backup) doing what this purpose does: it takes its slot back and stands for the purpose, no second one is signed.
    const orphan = pendingOrphan(mempool, payee, acc.nonce, nonce, held, purpose);
    if (orphan && (await nonces.log.claim(who, { nonce: orphan.tx.nonce, purpose, txId: orphan.id, raw: toHex(orphan.bytes) }, acc.nonce))) {
      await beforeSubmit?.(orphan.id, orphan.bytes);
      return orphan.id;
    }
    while (held.has(nonce)) nonce++;
    const { id, bytes } = sign(acc, nonce, { floorRate });
    if (!(await nonces.log.claim(who, { nonce, purpose, txId: id, raw: toHex(bytes) }, acc.nonce))) throw new NodeError(PayeeNonceErrorCode.NONCE_TAKEN, `nonce ${nonce} of the payee was claimed by another transaction, or this node is not the signer`);
    return send(id, bytes);
  };
  // Again with a fresh account read when the mempool answers that the nonce was just used: a block
  // that connects while the account is read can mine the payee's previous tx, so the (older)
  // account nonce and the (newer) mempool disagree for a moment; and when a claim lost its nonce.
  // Other refusals are final. A pool whose floor rose between the read and the admission (a flood)
  // names the rate to exceed in its refusal: bid above that once more.
  const submit = async (): Promise<string> => {
    let floorRate: number | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return await submitOnce(floorRate);
      } catch (e) {
        if (attempt < NONCE_ATTEMPTS && floorRate === undefined && isNodeError(e, MEMPOOL_FULL) && typeof e.payload.minFeeRate === 'number') {
          floorRate = e.payload.minFeeRate;
          continue;
        }
        const code = (e as { code?: string }).code;
        if (opts.replace || attempt >= NONCE_ATTEMPTS || (code !== TxErrorCode.BAD_NONCE && code !== PayeeNonceErrorCode.NONCE_TAKEN)) throw e;
      }
    }
  };
  return serialPerPayee(payee, submit);
}

/** The purpose a payee transaction's payload names: the refund or the payout of an invoke (as refunds.ts and x402/providers/payouts.ts name them). */
function purposeOfTx(tx: Tx): string | undefined {
  if (tx.type === TxType.refund) return `refund:${toHex(refundType.decodePayload(tx.payload).invokeId)}`;
  if (tx.type === TxType.provider_payout) return `payout:${toHex(providerPayout.decodePayload(tx.payload).invokeId)}`;
  return undefined;
}

/**
 * The payee's pending transaction for `purpose` at a nonce from `from` on that no slot holds; looked for only when the
 * pool holds such a nonce (below `pendingNext`, the pool's next nonce for the payee), which the normal course never leaves.
 */
function pendingOrphan(mempool: PaymentMempool, payee: HybridKeyPair, from: bigint, pendingNext: bigint, held: ReadonlySet<bigint>, purpose: string): MempoolEntry | undefined {
  let unheld = false;
  for (let n = from; n < pendingNext && !unheld; n++) unheld = !held.has(n);
  if (!unheld) return undefined;
  return mempool.list().find((e) => bytesEqual(e.tx.from, payee.address) && e.tx.nonce >= from && !held.has(e.tx.nonce) && purposeOfTx(e.tx) === purpose);
}

/** The fee rate of stored hex bytes, base units per byte. */
function storedFeeRate(raw: string): number {
  return Number(decodeTx(fromHex(raw)).fee) / (raw.length / 2);
}

/** Runs `fn` after the payee key's queued submissions (see `queues`). */
function serialPerPayee<T>(payee: HybridKeyPair, fn: () => Promise<T>): Promise<T> {
  const run = (queues.get(payee) ?? Promise.resolve()).then(fn);
  queues.set(payee, run.catch(() => undefined));
  return run;
}

/**
 * A node becoming the signer: sends every stored transaction of the payee the chain has not used
 * the nonce of again (in nonce order, from their slots: whoever signed them, a predecessor of the
 * fleet too), with the allocator's gate `reconciling`: nothing new is signed until the caller
 * opens it (after the refunds and payouts resumed what their records store). Refusals are
 * logged through `onRefused` (the refunds and payouts that own them retry, bump or sign again once
 * their nonce is used by another). Slots at nonces the chain used are pruned (a failure goes to
 * `onPruneFailed`, nothing more). Answers the number sent.
 */
export async function reconcilePayeeTxs(
  chain: Pick<PaymentChain, 'getAccount' | 'getTx'>,
  mempool: PaymentMempool,
  payee: HybridKeyPair,
  nonces: PayeeNonces,
  onRefused?: (slot: PayeeTxSlot, e: Error) => void,
  onPruneFailed?: (e: Error) => void,
): Promise<number> {
  nonces.reconciling();
  const sent = await serialPerPayee(payee, async () => {
    const acc = await chain.getAccount(payee.address);
    let n = 0;
    for (const slot of await nonces.log.live(payeeKey(payee), acc.nonce)) {
      if (mempool.has(slot.txId) || (await chain.getTx(slot.txId))) continue;
      await mempool.add(fromHex(slot.raw)).then(
        () => n++,
        (e: Error) => onRefused?.(slot, e),
      );
    }
    // Housekeeping only: a failure (a role without DELETE, say) does not keep the node from signing.
    await nonces.log.prune(payeeKey(payee), acc.nonce).catch((e: Error) => onPruneFailed?.(e));
    return n;
  });
  return sent;
}

/** A payee transaction stored when it was signed: its hex id and, written ahead of its submission, its hex bytes. */
export interface StoredPayeeTx {
  readonly txId?: string;
  /** Absent for records written before the bytes were kept: such a tx can be waited for, not re-sent. */
  readonly raw?: string;
}

/**
 * Where a stored payee transaction is: `mined` (the chain has it), `pending` (in the mempool, or
 * submitted again now: its nonce is unused, so only it may take that nonce — a refusal, e.g. the
 * payee's balance, is logged through `onRefused` and waits for the next check), or `lost`: it can
 * never be mined (its nonce was used by another transaction of the payee, or there is nothing to
 * re-send), so a new one is to be signed.
 */
export type StoredPayeeTxState = 'mined' | 'pending' | 'lost';

/**
 * Finds a stored payee transaction and submits its very bytes again when they were lost (a
 * restart, a new signer of a fleet, dropped from the mempool, a reorganization); see
 * `StoredPayeeTxState`. Runs in the payee's submission queue, so no new transaction takes the
 * nonce between the check and the re-submission.
 *
 * The payee's nonce is read before the transaction is looked up: a block mining it between the
 * two reads then shows it mined, whereas in the other order it would be neither in the chain
 * (read before the block) nor in the mempool (which the block emptied) with its nonce used, and
 * it would be judged lost (a second transaction signed: for a USDC call's transfer, the provider
 * paid twice).
 */
export function resubmitPayeeTx(
  chain: Pick<PaymentChain, 'getAccount' | 'getTx'>,
  mempool: PaymentMempool,
  payee: HybridKeyPair,
  stored: StoredPayeeTx,
  onRefused?: (e: Error) => void,
  opts: Pick<PayeeTxOptions, 'purpose' | 'nonces'> = {},
): Promise<StoredPayeeTxState> {
  return serialPerPayee(payee, async (): Promise<StoredPayeeTxState> => {
    if (!stored.txId) return 'lost';
    const payeeNonce = stored.raw ? (await chain.getAccount(payee.address)).nonce : undefined;
    if (await chain.getTx(stored.txId)) return 'mined';
    if (mempool.has(stored.txId)) return 'pending';
    if (!stored.raw) return 'lost';
    const bytes = fromHex(stored.raw);
    const nonce = decodeTx(bytes).nonce;
    if (payeeNonce! > nonce) return 'lost';
    // A transaction stored before its nonce had a slot (written by an older version): its slot now,
    // unless another purpose holds the nonce (then it waits, and is lost once the chain uses it).
    if (opts.purpose) {
      const nonces = opts.nonces ?? defaultPayeeNonces(mempool, payee);
      const slot = (await nonces.log.live(payeeKey(payee), nonce)).find((s) => s.nonce === nonce);
      if (slot && slot.purpose !== opts.purpose) return 'pending';
      if (!slot && !(await nonces.log.claim(payeeKey(payee), { nonce, purpose: opts.purpose, txId: stored.txId, raw: stored.raw }, payeeNonce!))) return 'pending';
    }
    await mempool.add(bytes).catch((e: Error) => onRefused?.(e));
    return 'pending';
  });
}
