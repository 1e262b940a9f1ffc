import { describe, expect, test } from '@jest/globals';
import { TxErrorCode, ValidationError } from '../../consensus/errors.js';
import { encodeTx, signTx, txId, txSighash, TxType, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { sha256d } from '../../consensus/hash.js';
import { verifyHybridReference } from '../../consensus/keys.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { validateTx } from '../../consensus/validate.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { encodeAddress, tryDecodeAddress } from '../../consensus/address.js';
import { testKey } from '../helpers/keys.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff });
const alice = testKey('alice');
const bob = testKey('bob');

function make(over: Partial<Tx> = {}, amount = 1000n): Tx {
  const tx = signTx(
    { version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, nonce: 0n, fee: 20_000n, payload: transfer.encodePayload({ to: bob.address, amount }), publicKey: alice.publicKey },
    alice,
  );
  return { ...tx, ...over };
}

function codeOf(tx: Tx): string | undefined {
  try {
    validateTx(tx, encodeTx(tx).length, params);
  } catch (e) {
    if (e instanceof ValidationError) return e.code;
    throw e;
  }
  return undefined;
}

describe('transaction envelope', () => {
  test('id is SHA-256d of the signed bytes', () => {
    const tx = make();
    expect(txId(tx)).toEqual(sha256d(encodeTx(tx)));
  });
  test('both signatures verify over the sighash', () => {
    const tx = make();
    expect(verifyHybridReference(alice.publicKey, txSighash(tx), tx.signature)).toBe(true);
  });
  test('the sighash commits to the chain id (no replay across chains)', () => {
    const tx = make();
    const other = { ...tx, chainId: 1 };
    expect(txSighash(other)).not.toEqual(txSighash(tx));
    expect(verifyHybridReference(alice.publicKey, txSighash(other), tx.signature)).toBe(false);
  });
  test('a valid transfer passes the stateless rules', () => {
    expect(codeOf(make())).toBeUndefined();
  });
  test.each([
    ['wrong chain', { chainId: 1 }, TxErrorCode.WRONG_CHAIN],
    ['bad version', { version: 2 }, TxErrorCode.BAD_VERSION],
    ['fee below the per-byte floor', { fee: 1n }, TxErrorCode.FEE_TOO_LOW],
    ['unknown type', { type: 99 }, TxErrorCode.UNKNOWN_TYPE],
    ['key of someone else', { publicKey: bob.publicKey }, TxErrorCode.KEY_MISMATCH],
    ['malformed payload', { payload: Uint8Array.of(1, 2, 3) }, TxErrorCode.BAD_PAYLOAD],
  ])('%s → %s', (_name, over, code) => {
    expect(codeOf(make(over as Partial<Tx>))).toBe(code);
  });
  test('zero-amount transfer is rejected', () => {
    expect(codeOf(make({}, 0n))).toBe(TxErrorCode.BAD_PAYLOAD);
  });
  test('oversized payload is rejected', () => {
    expect(codeOf(make({ payload: new Uint8Array(params.limits.maxPayloadBytes + 1), fee: 10n ** 9n }))).toBe(TxErrorCode.TOO_LARGE);
  });
});

describe('addresses', () => {
  test('bech32m with hrp tnative on devnets, round-trips, rejects other hrps and typos', () => {
    const a = encodeAddress(alice.address, 'tnative');
    expect(a.startsWith('tnative1')).toBe(true);
    expect(tryDecodeAddress(a, 'tnative')).toEqual(alice.address);
    expect(tryDecodeAddress(a, 'native')).toBeUndefined();
    const typo = a.slice(0, -1) + (a.endsWith('q') ? 'p' : 'q');
    expect(tryDecodeAddress(typo, 'tnative')).toBeUndefined();
    expect(encodeAddress(alice.address, 'native').startsWith('native1')).toBe(true);
  });
});
