/**
 * The test vector of docs/agents-guide.md ("The invoke, byte by byte"): an agent_invoke and its
 * request commitment built from fixed inputs (test/fixtures/agent-invoke-vector.json) must come
 * out byte for byte — commitment, payload, unsigned envelope, sighash, both signatures (ML-DSA-87
 * signs deterministically), signed bytes and tx id — and the signed bytes must decode back to the
 * inputs and verify. A Python or Go implementation checks itself against the same file; the agent
 * package's installed build is checked against it too (test/integration/agentPackage.test.ts).
 */
import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { encodeAddress } from '../../consensus/address.js';
import { fromHex, sha256, taggedHash, toHex } from '../../consensus/hash.js';
import { createKeyPairFromSeed, verifyHybridReference } from '../../consensus/keys.js';
import { decodeTx, encodeTx, encodeUnsignedTx, signTx, SIGHASH_TAG, txId, txSighash, TxType, TX_VERSION } from '../../consensus/tx.js';
import { agentInvoke } from '../../consensus/txTypes/agentInvoke.js';
import { COMMITMENT_SCHEME, requestCommitment } from '../../x402/core/wire.js';

const V = JSON.parse(readFileSync(new URL('../fixtures/agent-invoke-vector.json', import.meta.url), 'utf8')) as Record<string, any>;
const key = createKeyPairFromSeed(fromHex(V.key.seed));
const unsigned = {
  version: TX_VERSION,
  chainId: V.invoke.chainId as number,
  type: TxType.agent_invoke,
  from: key.address,
  nonce: BigInt(V.invoke.nonce),
  fee: BigInt(V.invoke.fee),
  payload: agentInvoke.encodePayload({ serviceId: V.invoke.serviceId, payTo: fromHex(V.invoke.payTo), amount: BigInt(V.invoke.amount), requestHash: fromHex(V.commitment.requestHash) }),
};

describe('agent_invoke test vector', () => {
  test('the wallet seed derives the documented keys and address', () => {
    expect(toHex(key.address)).toBe(V.key.accountId);
    expect(encodeAddress(key.address, 'tnative')).toBe(V.key.address);
    expect(toHex(key.publicKey.ed25519)).toBe(V.key.ed25519PublicKey);
    expect(toHex(sha256(key.publicKey.mldsa))).toBe(V.key.mldsaPublicKeySha256);
  });

  test('the request commitment: sellerId ‖ first 24 bytes of sha256(tag ‖ sellerId ‖ u8 len ‖ serviceId ‖ u32be len ‖ request ‖ salt)', () => {
    const c = V.commitment;
    expect(requestCommitment({ sellerId: c.sellerId, serviceId: c.serviceId, request: c.request, salt: c.salt })).toBe(c.requestHash);
    // The same bytes spelled out as the guide does, independently of requestCommitment.
    const enc = new TextEncoder();
    const service = enc.encode(c.serviceId);
    const request = enc.encode(c.request);
    const len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, request.length, false);
    const msg = Buffer.concat([enc.encode(COMMITMENT_SCHEME), fromHex(c.sellerId), Uint8Array.of(service.length), service, len, request, fromHex(c.salt)]);
    expect(`${c.sellerId}${toHex(sha256(msg)).slice(0, 48)}`).toBe(c.requestHash);
  });

  test('payload, unsigned envelope and sighash', () => {
    expect(toHex(unsigned.payload)).toBe(V.payload);
    expect(toHex(encodeUnsignedTx(unsigned))).toBe(V.unsigned);
    expect(toHex(txSighash(unsigned))).toBe(V.sighash);
    // sighash = sha256(sha256(tag) ‖ sha256(tag) ‖ unsigned)
    const t = sha256(new TextEncoder().encode(SIGHASH_TAG));
    expect(toHex(sha256(Buffer.concat([t, t, fromHex(V.unsigned)])))).toBe(V.sighash);
    expect(toHex(taggedHash(SIGHASH_TAG, fromHex(V.unsigned)))).toBe(V.sighash);
  });

  test('signatures, signed bytes and tx id (ML-DSA-87 deterministic, Ed25519)', () => {
    const tx = signTx(unsigned, key);
    expect(toHex(tx.signature.ed25519)).toBe(V.ed25519Signature);
    expect(toHex(sha256(tx.signature.mldsa))).toBe(V.mldsaSignatureSha256);
    const bytes = encodeTx(tx);
    expect(toHex(bytes)).toBe(V.tx);
    expect(toHex(txId(bytes))).toBe(V.txId);
    // signed = unsigned ‖ mldsaSig(4627) ‖ ed25519Sig(64)
    expect(V.tx).toBe(`${V.unsigned}${toHex(tx.signature.mldsa)}${V.ed25519Signature}`);
  });

  test('the signed bytes decode back to the inputs and verify with the public key', () => {
    const tx = decodeTx(fromHex(V.tx));
    expect(tx.type).toBe(TxType.agent_invoke);
    expect(tx.chainId).toBe(V.invoke.chainId);
    expect(tx.nonce).toBe(BigInt(V.invoke.nonce));
    expect(tx.fee).toBe(BigInt(V.invoke.fee));
    expect(tx.publicKey).toBeUndefined();
    const p = agentInvoke.decodePayload(tx.payload);
    expect(p.serviceId).toBe(V.invoke.serviceId);
    expect(toHex(p.payTo)).toBe(V.invoke.payTo);
    expect(p.amount).toBe(BigInt(V.invoke.amount));
    expect(toHex(p.requestHash!)).toBe(V.commitment.requestHash);
    expect(verifyHybridReference(key.publicKey, fromHex(V.sighash), tx.signature)).toBe(true);
  });
});
