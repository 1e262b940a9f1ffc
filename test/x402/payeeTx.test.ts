/**
 * x402/payeeTx.ts: a payee transaction submitted while a block mines the payee's previous one (the
 * account read is older than the mempool) is retried with a fresh read instead of failing with
 * tx_bad_nonce; other refusals are final.
 */
import { describe, expect, test } from '@jest/globals';
import { ValidationError, TxErrorCode } from '../../consensus/errors.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { decodeTx } from '../../consensus/tx.js';
import { TxType } from '../../consensus/tx.js';
import { submitPayeeTx } from '../../x402/payeeTx.js';
import type { PaymentChain, PaymentMempool } from '../../x402/ports.js';

const params = createDevnetChainParams();
const payee = getDevKeyPair();

/** A chain whose account nonce is `nonces[i]` at the i-th read, and a mempool that holds nothing of the payee's but refuses nonces below `used`. */
function rig(nonces: bigint[], used: bigint, refuse?: Error) {
  let reads = 0;
  const submitted: bigint[] = [];
  const chain = { getAccount: async () => ({ nonce: nonces[Math.min(reads++, nonces.length - 1)], balance: 10n ** 12n, publicKey: undefined }) } as unknown as Pick<PaymentChain, 'getAccount'>;
  const mempool = {
    pendingNonce: (_a: Uint8Array, n: bigint) => n,
    add: async (bytes: Uint8Array) => {
      const tx = decodeTx(bytes);
      if (refuse) throw refuse;
      if (tx.nonce < used) throw new ValidationError(TxErrorCode.BAD_NONCE, `nonce ${tx.nonce} already used; next is ${used}`);
      submitted.push(tx.nonce);
      return { id: 'x', status: 'accepted' as const };
    },
  } as unknown as PaymentMempool;
  return { chain, mempool, submitted, reads: () => reads };
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
