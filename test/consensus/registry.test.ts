import { describe, expect, test } from '@jest/globals';
import type { ValidationError } from '../../consensus/errors.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { encodeAddress } from '../../consensus/address.js';
import { COIN } from '../../consensus/params.js';
import { txId, TxType, type Tx } from '../../consensus/tx.js';
import { validateTx } from '../../consensus/validate.js';
import { encodeTx } from '../../consensus/tx.js';
import { sha256 } from '../../consensus/hash.js';
import { signEnvelope } from '../../consensus/txBuilder.js';
import { agentInvoke } from '../../consensus/txTypes/agentInvoke.js';
import { refund } from '../../consensus/txTypes/refund.js';
import { createAgentTx, createModerationTx, createProviderPayoutTx, createServiceRetireTx, createServiceTx } from '../../consensus/registryTxBuilder.js';
import { getAddressLabel, getAgent, getPayout, getService, RegistryErrorCode, ServiceStatus } from '../../consensus/registryState.js';
import { serviceRegister, type ServicePayload } from '../../consensus/txTypes/agents.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { blockFailure, MemChain } from '../helpers/memChain.js';
import { testKey } from '../helpers/keys.js';

const dev = getDevKeyPair(); // also the devnet moderator
const alice = testKey('alice');
const bob = testKey('bob');
const payee = testKey('payee');
const miner = testKey('miner');
const params = createDevnetChainParams({
  genesisBits: 0x207fffff,
  allocations: [alice, bob, payee].map((k) => ({ address: encodeAddress(k.address, 'tnative'), amount: 10n * COIN })),
});

let nonces = new Map<HybridKeyPair, bigint>();
const env = (key: HybridKeyPair) => {
  const nonce = nonces.get(key) ?? 0n;
  nonces.set(key, nonce + 1n);
  return { key, chainId: params.chainId, nonce, includeKey: nonce === 0n };
};
const agentP = (name: string, over: Partial<{ description: string; contact: string; capabilities: string[] }> = {}) => ({
  name,
  description: 'echoes text',
  capabilities: ['echo'],
  payout: alice.address,
  contact: '',
  ...over,
});
const serviceP = (id: string, over: Partial<ServicePayload> = {}): ServicePayload => ({
  id,
  name: 'Echo',
  description: 'returns the request',
  category: 'utility',
  price: 100_000n,
  tags: ['echo'],
  requestFormat: 'any text',
  requestRequired: true,
  inputIsJson: false,
  inputSchema: JSON.stringify({ type: 'string', maxLength: 100 }),
  timeoutMs: 5000,
  ...over,
});

const failure = (chain: MemChain, txs: Tx[]) => blockFailure(chain, txs, miner.address);
function statelessCode(tx: Tx): string | undefined {
  try {
    validateTx(tx, encodeTx(tx).length, params);
  } catch (e) {
    return (e as ValidationError).code;
  }
  return undefined;
}

describe('provider registry transactions', () => {
  test('type ids 4-10 and payload codecs round-trip', () => {
    expect([TxType.agent_register, TxType.agent_update, TxType.service_register, TxType.service_update, TxType.service_retire, TxType.moderation, TxType.provider_payout]).toEqual([4, 5, 6, 7, 8, 9, 10]);
    nonces = new Map();
    const t = createServiceTx(env(alice), serviceP('echo-bot-upper'));
    expect(() => validateTx(t.tx, t.bytes.length, params)).not.toThrow();
    const p = serviceP('echo-bot-upper');
    expect(serviceRegister.decodePayload(serviceRegister.encodePayload(p))).toEqual(p);
  });

  test('stateless rules: native namespace, over-long fields, bad schema, bad category, bounded timeout', () => {
    nonces = new Map();
    expect(statelessCode(createAgentTx(env(alice), agentP('native-helper')).tx)).toBe(RegistryErrorCode.RESERVED_NAMESPACE);
    expect(statelessCode(createAgentTx(env(alice), agentP('echo-bot', { description: 'x'.repeat(501) })).tx)).toBe(RegistryErrorCode.FIELD_TOO_LONG);
    expect(statelessCode(createAgentTx(env(alice), agentP('Echo Bot')).tx)).toBe(RegistryErrorCode.BAD_FIELD);
    expect(statelessCode(createServiceTx(env(alice), serviceP('native-echo')).tx)).toBe(RegistryErrorCode.RESERVED_NAMESPACE);
    expect(statelessCode(createServiceTx(env(alice), serviceP('echo-bot-x', { inputSchema: '{"type":"strin"}' })).tx)).toBe(RegistryErrorCode.BAD_INPUT_SCHEMA);
    expect(statelessCode(createServiceTx(env(alice), serviceP('echo-bot-x', { inputSchema: JSON.stringify({ type: 'string', description: 'x'.repeat(5000) }) })).tx)).toBe(RegistryErrorCode.FIELD_TOO_LONG);
    expect(statelessCode(createServiceTx(env(alice), serviceP('echo-bot-x', { category: 'gambling' })).tx)).toBe(RegistryErrorCode.BAD_FIELD);
    expect(statelessCode(createServiceTx(env(alice), serviceP('echo-bot-x', { timeoutMs: 120_000 })).tx)).toBe(RegistryErrorCode.BAD_FIELD);
    expect(statelessCode(createServiceTx(env(alice), serviceP('echo-bot-x', { price: 0n })).tx)).toBe(RegistryErrorCode.BAD_FIELD);
    expect(statelessCode(createModerationTx(env(bob), { action: 'approve', serviceId: 'echo-bot-x', reason: '' }).tx)).toBe(RegistryErrorCode.NOT_MODERATOR);
    expect(statelessCode(createModerationTx(env(dev), { action: 'suspend', serviceId: 'echo-bot-x', reason: '' }).tx)).toBe(RegistryErrorCode.BAD_FIELD);
  });

  test('register, moderate, update, retire; duplicate names, foreign namespaces and unregistered agents refused; undo is exact', () => {
    nonces = new Map();
    const chain = new MemChain(params);
    const before = new Map(chain.state);
    // A service before its agent exists.
    expect(failure(chain, [createServiceTx(env(alice), serviceP('echo-bot-upper')).tx])).toBe(RegistryErrorCode.AGENT_NOT_REGISTERED);
    nonces = new Map();
    const undos = [];
    undos.push(chain.connect(chain.build([createAgentTx(env(alice), agentP('echo-bot')).tx], miner.address)).undo);
    expect(getAgent(chain.view, alice.address)?.name).toBe('echo-bot');
    // The same name from another key; a second agent from the same key.
    expect(failure(chain, [createAgentTx(env(bob), agentP('echo-bot')).tx])).toBe(RegistryErrorCode.NAME_TAKEN);
    nonces.set(bob, 0n);
    expect(failure(chain, [createAgentTx(env(alice), agentP('other-bot')).tx])).toBe(RegistryErrorCode.AGENT_EXISTS);
    nonces.set(alice, 1n);
    undos.push(chain.connect(chain.build([createAgentTx(env(bob), agentP('bob-bot')).tx], miner.address)).undo);
    // Another agent's namespace.
    expect(failure(chain, [createServiceTx(env(bob), serviceP('echo-bot-upper')).tx])).toBe(RegistryErrorCode.BAD_FIELD);
    nonces.set(bob, 1n);
    undos.push(chain.connect(chain.build([createServiceTx(env(alice), serviceP('echo-bot-upper')).tx], miner.address)).undo);
    expect(getService(chain.view, 'echo-bot-upper')?.status).toBe(ServiceStatus.pending);
    expect(failure(chain, [createServiceTx(env(alice), serviceP('echo-bot-upper')).tx])).toBe(RegistryErrorCode.SERVICE_EXISTS);
    nonces.set(alice, 2n);
    expect(failure(chain, [createServiceTx(env(bob), serviceP('echo-bot-upper'), true).tx])).toBe(RegistryErrorCode.NOT_SERVICE_OWNER);
    nonces.set(bob, 1n);
    undos.push(chain.connect(chain.build([createModerationTx(env(dev), { action: 'approve', serviceId: 'echo-bot-upper', reason: 'ok' }).tx, createModerationTx(env(dev), { action: 'label', address: bob.address, label: 'mixer', reason: 'tornado' }).tx], miner.address)).undo);
    expect(getService(chain.view, 'echo-bot-upper')?.status).toBe(ServiceStatus.approved);
    expect(getAddressLabel(chain.view, bob.address)?.label).toBe('mixer');
    // An update sends it back to review.
    undos.push(chain.connect(chain.build([createServiceTx(env(alice), serviceP('echo-bot-upper', { price: 200_000n }), true).tx], miner.address)).undo);
    expect(getService(chain.view, 'echo-bot-upper')).toMatchObject({ status: ServiceStatus.pending, price: 200_000n });
    undos.push(chain.connect(chain.build([createServiceRetireTx(env(alice), 'echo-bot-upper').tx], miner.address)).undo);
    expect(getService(chain.view, 'echo-bot-upper')?.retired).toBe(true);
    expect(failure(chain, [createModerationTx(env(dev), { action: 'approve', serviceId: 'echo-bot-upper', reason: '' }).tx])).toBe(RegistryErrorCode.SERVICE_RETIRED);
    for (const u of undos.reverse()) chain.disconnect(u);
    expect(new Map(chain.state)).toEqual(before);
  });

  test('a provider payout: only from the payee, at most the amount, once, never after a refund, and no refund after it', () => {
    nonces = new Map();
    const chain = new MemChain(params);
    const invoke = (amount: bigint) => signEnvelope(env(dev), TxType.agent_invoke, agentInvoke.encodePayload({ serviceId: 'echo-bot-upper', payTo: payee.address, amount, requestHash: sha256(new Uint8Array()) }));
    const a = invoke(100_000n);
    const b = invoke(100_000n);
    chain.connect(chain.build([a.tx, b.tx], miner.address));
    const payout = (from: HybridKeyPair, inv: Tx, amount: bigint) => createProviderPayoutTx(env(from), { invokeId: txId(inv), to: alice.address, amount }).tx;
    expect(failure(chain, [payout(bob, a.tx, 95_000n)])).toBe(RegistryErrorCode.PAYOUT_NOT_PAYEE);
    nonces.set(bob, 0n);
    expect(failure(chain, [payout(payee, a.tx, 100_001n)])).toBe(RegistryErrorCode.PAYOUT_TOO_LARGE);
    nonces.set(payee, 0n);
    const before = new Map(chain.state);
    const first = payout(payee, a.tx, 95_000n);
    const { undo } = chain.connect(chain.build([first], miner.address));
    expect(getPayout(chain.view, txId(a.tx))?.amount).toBe(95_000n);
    // Undo restores the payee, the provider and the marker exactly; the same payout then connects again.
    chain.disconnect(undo);
    expect(new Map(chain.state)).toEqual(before);
    chain.connect(chain.build([first], miner.address));
    expect(failure(chain, [payout(payee, a.tx, 95_000n)])).toBe(RegistryErrorCode.ALREADY_PAID_OUT);
    nonces.set(payee, 1n);
    expect(failure(chain, [signEnvelope(env(payee), TxType.refund, refund.encodePayload({ invokeId: txId(a.tx), to: dev.address, amount: 100_000n })).tx])).toBe(RegistryErrorCode.ALREADY_PAID_OUT);
    nonces.set(payee, 1n);
    chain.connect(chain.build([signEnvelope(env(payee), TxType.refund, refund.encodePayload({ invokeId: txId(b.tx), to: dev.address, amount: 100_000n })).tx], miner.address));
    expect(failure(chain, [payout(payee, b.tx, 95_000n)])).toBe(RegistryErrorCode.INVOKE_REFUNDED);
  });
});
