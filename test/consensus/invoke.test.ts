import { describe, expect, test } from '@jest/globals';
import { TxErrorCode } from '../../consensus/errors.js';
import { signTx, txId, TxType, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { agentInvoke, decodeInvokeRecord, invokeKey } from '../../consensus/txTypes/agentInvoke.js';
import { refund } from '../../consensus/txTypes/refund.js';
import { validateTx } from '../../consensus/validate.js';
import { encodeTx } from '../../consensus/tx.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { encodeAddress } from '../../consensus/address.js';
import { COIN } from '../../consensus/params.js';
import { StateOverlay } from '../../consensus/state.js';
import { sha256 } from '../../consensus/hash.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { blockFailure, MemChain } from '../helpers/memChain.js';
import { testKey } from '../helpers/keys.js';

const agent = getDevKeyPair();
const provider = testKey('provider');
const thief = testKey('thief');
const miner = testKey('miner');
const params = createDevnetChainParams({
  genesisBits: 0x207fffff,
  allocations: [provider, thief].map((k) => ({ address: encodeAddress(k.address, 'tnative'), amount: 10n * COIN })),
});

let nonces = new Map<HybridKeyPair, bigint>();
function send(from: HybridKeyPair, type: number, payload: Uint8Array): Tx {
  const nonce = nonces.get(from) ?? 0n;
  nonces.set(from, nonce + 1n);
  return signTx({ version: TX_VERSION, chainId: params.chainId, type, nonce, fee: 30_000n, payload, publicKey: nonce === 0n ? from.publicKey : undefined }, from);
}
const invoke = (amount: bigint, withHash = true) =>
  send(agent, TxType.agent_invoke, agentInvoke.encodePayload({ serviceId: 'native-world-clock', payTo: provider.address, amount, requestHash: withHash ? sha256(new TextEncoder().encode('Europe/Berlin')) : undefined }));
const refundOf = (from: HybridKeyPair, inv: Tx, amount: bigint, to = agent.address) => send(from, TxType.refund, refund.encodePayload({ invokeId: txId(inv), to, amount }));

const failure = (chain: MemChain, txs: Tx[]) => blockFailure(chain, txs, miner.address);

describe('agent_invoke and refund', () => {
  test('payload codecs round-trip and reject bad service ids', () => {
    const p = { serviceId: 'native-world-clock', payTo: provider.address, amount: 200_000n, requestHash: new Uint8Array(32).fill(7) };
    expect(agentInvoke.decodePayload(agentInvoke.encodePayload(p))).toEqual(p);
    nonces = new Map();
    const bad = send(agent, TxType.agent_invoke, agentInvoke.encodePayload({ ...p, serviceId: 'Bad Id!' }));
    expect(() => validateTx(bad, encodeTx(bad).length, params)).toThrow(expect.objectContaining({ code: TxErrorCode.BAD_PAYLOAD }) as unknown as Error);
  });

  test('an invoke pays the provider and is recorded; the provider refunds it exactly once', () => {
    nonces = new Map();
    const chain = new MemChain(params);
    const inv = invoke(200_000n);
    expect(failure(chain, [inv])).toBeUndefined();
    let s = new StateOverlay(chain.view);
    expect(s.getAccount(provider.address).balance).toBe(10n * COIN + 200_000n);
    const rec = decodeInvokeRecord(chain.state.get(invokeKey(txId(inv)))!);
    expect(rec).toEqual({ sender: agent.address, payTo: provider.address, amount: 200_000n, refunded: false });
    const before = s.getAccount(agent.address).balance;

    const snapshot = new Map(chain.state);
    const undo = chain.connect(chain.build([refundOf(provider, inv, 200_000n)], miner.address)).undo;
    s = new StateOverlay(chain.view);
    expect(s.getAccount(agent.address).balance).toBe(before + 200_000n);
    expect(decodeInvokeRecord(chain.state.get(invokeKey(txId(inv)))!).refunded).toBe(true);
    expect(failure(chain, [refundOf(provider, inv, 200_000n)])).toBe(TxErrorCode.ALREADY_REFUNDED);
    chain.disconnect(undo);
    expect(chain.state).toEqual(snapshot);
  });

  test('only the payee, only the exact amount, only back to the sender, only for a real invoke', () => {
    nonces = new Map();
    const chain = new MemChain(params);
    const inv = invoke(500_000n, false);
    chain.connect(chain.build([inv], miner.address));
    expect(failure(chain, [refundOf(thief, inv, 500_000n)])).toBe(TxErrorCode.REFUND_NOT_PAYEE);
    nonces.set(provider, 0n);
    expect(failure(chain, [refundOf(provider, inv, 400_000n)])).toBe(TxErrorCode.REFUND_MISMATCH);
    nonces.set(provider, 0n);
    expect(failure(chain, [refundOf(provider, inv, 500_000n, thief.address)])).toBe(TxErrorCode.REFUND_MISMATCH);
    nonces.set(provider, 0n);
    const fake = { ...inv, nonce: 99n };
    expect(failure(chain, [refundOf(provider, fake, 500_000n)])).toBe(TxErrorCode.INVOKE_NOT_FOUND);
  });
});
