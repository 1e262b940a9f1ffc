/**
 * x402/native/payeeTx.ts: a payee transaction submitted while a block mines the payee's previous one (the
 * account read is older than the mempool) is retried with a fresh read instead of failing with
 * tx_bad_nonce; other refusals are final. Its fee enters the mempool: the minimum fee rate while
 * the pool has room, above a full pool's floor, above the floor a refusal names, and above the
 * rate of the transaction a replacement (same nonce) replaces.
 */
import { describe, expect, test } from '@jest/globals';
import { NodeError, ValidationError, TxErrorCode } from '../../consensus/errors.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { decodeTx } from '../../consensus/tx.js';
import { TxType } from '../../consensus/tx.js';
import { FLOOR_MARGIN_PCT, MAX_FEE_RATE_MULTIPLE, payeeFeeCap, payeeTxFee, REPLACE_BUMP_PCT, submitPayeeTx } from '../../x402/native/payeeTx.js';
import { memoryPayeeTxLog, PayeeNonceErrorCode, PayeeNonces } from '../../x402/native/payeeNonces.js';
import type { MempoolStats } from '../../chain/types.js';
import type { PaymentChain, PaymentMempool } from '../../x402/core/ports.js';

const params = createDevnetChainParams();
const payee = getDevKeyPair();

/** A chain whose account nonce is `nonces[i]` at the i-th read, and a mempool that holds nothing of the payee's but refuses nonces below `used`. */
function rig(nonces: bigint[], used: bigint, refuse?: Error, pool?: MempoolStats, refuseBelowRate?: number) {
  let reads = 0;
  const submitted: bigint[] = [];
  const rates: number[] = [];
  const chain = { getAccount: async () => ({ nonce: nonces[Math.min(reads++, nonces.length - 1)], balance: 10n ** 12n, publicKey: undefined }) } as unknown as Pick<PaymentChain, 'getAccount'>;
  const mempool = {
    pendingNonce: (_a: Uint8Array, n: bigint) => n,
    has: () => false,
    stats: pool && (() => pool),
    add: async (bytes: Uint8Array) => {
      const tx = decodeTx(bytes);
      rates.push(Number(tx.fee) / bytes.length);
      if (refuse) throw refuse;
      if (refuseBelowRate !== undefined && Number(tx.fee) / bytes.length <= refuseBelowRate) throw new NodeError('mempool_full', 'mempool is full', { minFeeRate: refuseBelowRate });
      if (tx.nonce < used) throw new ValidationError(TxErrorCode.BAD_NONCE, `nonce ${tx.nonce} already used; next is ${used}`);
      submitted.push(tx.nonce);
      return { id: 'x', status: 'accepted' as const };
    },
  } as unknown as PaymentMempool;
  return { chain, mempool, submitted, rates, reads: () => reads };
}

describe('submitPayeeTx', () => {
  test('a stale account read (the previous tx was just mined) is retried with a fresh one', async () => {
    const r = rig([32n, 33n], 33n);
    const id = await submitPayeeTx(r.chain, r.mempool, payee, params, TxType.transfer, new Uint8Array(0));
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(r.submitted).toEqual([33n]);
    expect(r.reads()).toBe(2);
  });

  test('a nonce still wrong after three reads, and any other refusal, are final', async () => {
    const stale = rig([32n], 40n);
    await expect(submitPayeeTx(stale.chain, stale.mempool, payee, params, TxType.transfer, new Uint8Array(0))).rejects.toMatchObject({ code: TxErrorCode.BAD_NONCE });
    expect(stale.reads()).toBe(3);
    const other = rig([5n], 0n, new ValidationError(TxErrorCode.BAD_SIGNATURE, 'bad'));
    await expect(submitPayeeTx(other.chain, other.mempool, payee, params, TxType.transfer, new Uint8Array(0))).rejects.toMatchObject({ code: TxErrorCode.BAD_SIGNATURE });
    expect(other.reads()).toBe(1);
  });
});

describe('the payee nonce allocator', () => {
  test('a purpose holding a live nonce sends that very transaction again; another purpose takes the next free nonce; nothing is signed while the gate is not open', async () => {
    const r = rig([0n], 0n);
    const nonces = new PayeeNonces(memoryPayeeTxLog());
    const first = await submitPayeeTx(r.chain, r.mempool, payee, params, TxType.transfer, new Uint8Array([1]), undefined, { purpose: 'refund:01', nonces });
    const again = await submitPayeeTx(r.chain, r.mempool, payee, params, TxType.transfer, new Uint8Array([1]), undefined, { purpose: 'refund:01', nonces });
    expect(again).toBe(first);
    // The mempool holds nothing of the payee's (pendingNonce 0): the slot keeps nonce 0 from the next purpose.
    await submitPayeeTx(r.chain, r.mempool, payee, params, TxType.transfer, new Uint8Array([2]), undefined, { purpose: 'payout:02', nonces });
    expect(r.submitted).toEqual([0n, 0n, 1n]);
    nonces.close();
    await expect(submitPayeeTx(r.chain, r.mempool, payee, params, TxType.transfer, new Uint8Array([3]), undefined, { purpose: 'payout:03', nonces })).rejects.toMatchObject({ code: PayeeNonceErrorCode.NOT_READY });
    nonces.reconciling();
    await expect(submitPayeeTx(r.chain, r.mempool, payee, params, TxType.transfer, new Uint8Array([3]), undefined, { purpose: 'payout:03', nonces })).rejects.toMatchObject({ code: PayeeNonceErrorCode.NOT_READY });
    nonces.open();
    await submitPayeeTx(r.chain, r.mempool, payee, params, TxType.transfer, new Uint8Array([3]), undefined, { purpose: 'payout:03', nonces });
    expect(r.submitted).toEqual([0n, 0n, 1n, 2n]);
  });
});

const fullPool = (floor: number): MempoolStats => ({ count: 10, bytes: 50_000, maxBytes: 52_000, evictionFeeRate: floor, queued: { count: 0, bytes: 0, maxCount: 0, maxBytes: 0, maxPerSender: 0, expirySeconds: 0 } });

describe('the fee a payee transaction bids', () => {
  test('the minimum while the pool has room; above a full pool floor, a named floor and a replaced rate', () => {
    const min = params.minFeeRate;
    expect(payeeTxFee(4800, params)).toBe(4800n * min);
    expect(payeeTxFee(4800, params, { pool: { ...fullPool(3), bytes: 1000 } })).toBe(4800n * min);
    const aboveFloor = Number(payeeTxFee(4800, params, { pool: fullPool(3) })) / 4800;
    expect(aboveFloor).toBeGreaterThan(3 * (1 + FLOOR_MARGIN_PCT / 100));
    expect(Number(payeeTxFee(4800, params, { floorRate: 5 })) / 4800).toBeGreaterThan(5 * (1 + FLOOR_MARGIN_PCT / 100));
    expect(Number(payeeTxFee(4800, params, { replacesRate: 4 })) / 4800).toBeGreaterThan(4 * (1 + REPLACE_BUMP_PCT / 100));
    // Never above the cap, whatever the floor or the rate replaced: the refund waits instead.
    const cap = 4800n * min * BigInt(MAX_FEE_RATE_MULTIPLE);
    expect(payeeFeeCap(4800, params)).toBe(cap);
    expect(payeeTxFee(4800, params, { pool: fullPool(50) })).toBe(cap);
    expect(payeeTxFee(4800, params, { floorRate: 40, replacesRate: 9.5 })).toBe(cap);
    expect(payeeTxFee(4800, params, { replacesRate: 5 })).toBeLessThan(cap);
  });

  test('submitted into a full pool: the fee rate exceeds its floor', async () => {
    const r = rig([0n], 0n, undefined, fullPool(3 * Number(params.minFeeRate)));
    await submitPayeeTx(r.chain, r.mempool, payee, params, TxType.transfer, new Uint8Array(0));
    expect(r.rates[0]).toBeGreaterThan(3 * Number(params.minFeeRate));
  });

  test('a refusal under a floor that rose since the read is bid again once, above the floor it names', async () => {
    const r = rig([0n], 0n, undefined, undefined, 7);
    await submitPayeeTx(r.chain, r.mempool, payee, params, TxType.transfer, new Uint8Array(0));
    expect(r.rates).toHaveLength(2);
    expect(r.rates[1]).toBeGreaterThan(7);
    const stubborn = rig([0n], 0n, new NodeError('mempool_full', 'full', { minFeeRate: 9 }));
    await expect(submitPayeeTx(stubborn.chain, stubborn.mempool, payee, params, TxType.transfer, new Uint8Array(0))).rejects.toMatchObject({ code: 'mempool_full' });
    expect(stubborn.rates).toHaveLength(2);
  });

  test('a replacement takes the given nonce and outbids the replaced rate; a nonce already used is refused', async () => {
    const r = rig([3n], 0n);
    await submitPayeeTx(r.chain, r.mempool, payee, params, TxType.transfer, new Uint8Array(0), undefined, { replace: { nonce: 5n, feeRate: 2 } });
    expect(r.submitted).toEqual([5n]);
    expect(r.rates[0]).toBeGreaterThan(2 * (1 + REPLACE_BUMP_PCT / 100));
    const used = rig([6n], 0n);
    await expect(submitPayeeTx(used.chain, used.mempool, payee, params, TxType.transfer, new Uint8Array(0), undefined, { replace: { nonce: 5n, feeRate: 2 } })).rejects.toMatchObject({ code: TxErrorCode.BAD_NONCE });
    expect(used.submitted).toEqual([]);
  });
});
