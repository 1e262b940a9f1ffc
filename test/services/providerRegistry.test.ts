/**
 * The live registry over a real LevelDB chain (trivial difficulty): provider services appear
 * when approved, leave when suspended, and a reorg to a branch without the registration takes
 * the service and the agent away exactly (the state equals a replay of the winning branch).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { openChain } from '../../chain/chain.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { encodeAddress } from '../../consensus/address.js';
import { COIN } from '../../consensus/params.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { createAgentTx, createModerationTx, createServiceTx } from '../../consensus/registryTxBuilder.js';
import { createServiceRegistry } from '../../services/index.js';
import { createLiveRegistry, type ProviderJobs } from '../../services/providerRegistry.js';
import { MemChain } from '../helpers/memChain.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { join } from 'node:path';
import { silentLogger } from '../../chain/types.js';
import { encodeTx, signTx, txId, TxType, TX_VERSION } from '../../consensus/tx.js';
import { agentInvoke } from '../../consensus/txTypes/agentInvoke.js';
import { openLedger } from '../../x402/ledger/open.js';
import { createUnhonoredPayments } from '../../x402/native/unhonored.js';
import { requestCommitment } from '../../x402/core/wire.js';

const alice = testKey('live-alice');
const miner = testKey('live-miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(alice.address, 'tnative'), amount: 10n * COIN }] });
const moderator = getDevKeyPair();
const now = () => params.genesis.time + 1_000_000;

afterAll(cleanupTmp);

const online = new Set<string>();
const graced = new Set<string>();
const jobs: ProviderJobs = {
  run: async () => 'ok',
  isOnline: (a) => online.has(a),
  inGrace: (a) => graced.has(a),
  lastPollAt: () => 0,
  statsOf: () => ({ calls: 0, failures: 0, medianLatencyMs: 0 }),
  version: 0,
};

let nonces = new Map<HybridKeyPair, bigint>();
const env = (key: HybridKeyPair) => {
  const nonce = nonces.get(key) ?? 0n;
  nonces.set(key, nonce + 1n);
  return { key, chainId: params.chainId, nonce, includeKey: nonce === 0n };
};
const service = {
  id: 'echo-bot-upper',
  name: 'Upper',
  description: 'uppercases text',
  category: 'utility',
  price: 1_000_000n,
  tags: ['text'],
  requestFormat: 'text',
  requestRequired: true,
  inputIsJson: false,
  inputSchema: JSON.stringify({ type: 'string', maxLength: 10 }),
  timeoutMs: 5000,
};

/** Mines `txs` into a block on the in-memory chain `a`, adds it to `chain`, then runs `after` (registry refresh, watcher). */
function blockMiner(a: MemChain, chain: { addBlock(b: ReturnType<MemChain['build']>): Promise<unknown> }, after: () => Promise<unknown>) {
  return async (txs: Parameters<MemChain['build']>[0]): Promise<void> => {
    const blk = a.build(txs, miner.address);
    a.connect(blk);
    await chain.addBlock(blk);
    await after();
  };
}

describe('live registry on a real chain', () => {
  test('approved → listed with the schema enforced; suspended → gone; a reorg without the registration → gone, state equal to a replay', async () => {
    const chain = await openChain({ dataDir: await tmpDir(), params, verifier: new CountingVerifier(), now });
    const registry = createLiveRegistry(createServiceRegistry(), chain, jobs, params.hrp);
    await registry.start();
    const a = new MemChain(params);
    const mine = blockMiner(a, chain, () => registry.refresh());
    nonces = new Map();
    await mine([createAgentTx(env(alice), { name: 'echo-bot', description: 'upper', capabilities: ['text'], payout: alice.address, contact: '' }).tx]);
    await mine([createServiceTx(env(alice), service).tx]);
    expect(registry.get('echo-bot-upper')).toBeUndefined();
    expect(registry.providerService('echo-bot-upper')?.status).toBe('pending');
    await mine([createModerationTx(env(moderator), { action: 'approve', serviceId: 'echo-bot-upper', reason: '' }).tx, createModerationTx(env(moderator), { action: 'label', address: miner.address, label: 'mixer', reason: 'report 7' }).tx]);
    // The label reader risk scoring uses (ServiceContext.addressLabels).
    expect(await registry.addressLabel(miner.address)).toMatchObject({ label: 'mixer', reason: 'report 7' });
    expect(await registry.addressLabel(alice.address)).toBeUndefined();
    const def = registry.get('echo-bot-upper')!;
    expect(def).toMatchObject({ nodeOperated: false, providerAgent: 'echo-bot', priceBase: 1_000_000n, timeoutMs: 5000 });
    expect(registry.list()).toHaveLength(59);
    expect(registry.validateInput(def, 'hello')).toEqual({ ok: true, input: 'hello' });
    expect(registry.validateInput(def, 'much too long text')).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    // Sold only while its agent polls.
    expect(registry.isAvailable(def)).toBe(false);
    expect(registry.isHonorable(def)).toBe(false);
    // In its start-up grace after a restart: payments already made are honoured, nothing new is sold.
    graced.add(toHex(alice.address));
    expect([registry.isAvailable(def), registry.isHonorable(def), registry.liveHealth('echo-bot-upper')?.status]).toEqual([false, true, 'down']);
    graced.clear();
    online.add(toHex(alice.address));
    expect(registry.isAvailable(def)).toBe(true);
    expect(registry.isHonorable(def)).toBe(true);
    expect(registry.liveHealth('echo-bot-upper')?.status).toBe('active');
    await mine([createModerationTx(env(moderator), { action: 'suspend', serviceId: 'echo-bot-upper', reason: 'abuse' }).tx]);
    expect(registry.get('echo-bot-upper')).toBeUndefined();
    expect(registry.list()).toHaveLength(58);

    // A heavier branch from genesis without any registration.
    const b = new MemChain(params);
    for (let i = 0; i < 6; i++) {
      const blk = b.build([], alice.address, b.tip.block.header.time + 2);
      b.connect(blk);
      await chain.addBlock(blk);
    }
    await registry.refresh();
    expect(chain.tip.hashHex).toBe(toHex(b.tip.hash));
    expect(await chain.exportState()).toEqual(b.state);
    expect(registry.agents()).toEqual([]);
    expect(registry.providerServices()).toEqual([]);
    expect(await registry.addressLabel(miner.address)).toBeUndefined();
    registry.stop();
    await chain.close();
  }, 60_000);
  test('the payment watcher (x402/native/unhonored.ts) reads provider services through the live registry: a payment mined while the agent polls waits for its settle, one mined while it is offline or for an unknown provider service is refunded at once', async () => {
    const dir = await tmpDir();
    const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier: new CountingVerifier(), now });
    const registry = createLiveRegistry(createServiceRegistry(), chain, jobs, params.hrp);
    await registry.start();
    const ledger = await openLedger(join(dir, 'ledger'));
    const payee = testKey('live-payee');
    const refunded: { id: string; code: string }[] = [];
    const refunds = {
      async refund(id: string, error: { code: string; message: string }) {
        refunded.push({ id, code: error.code });
        return (await ledger.get(id))!;
      },
    };
    const watcher = createUnhonoredPayments({ chain, ledger, catalog: registry, payees: [{ address: payee.address, refunds }], params }, { windowMs: 3_600_000, checkMs: 3_600_000, now: () => now() * 1000, logger: silentLogger });
    await watcher.start();
    const a = new MemChain(params);
    const mine = blockMiner(a, chain, async () => {
      await registry.refresh();
      await watcher.idle();
    });
    const invoke = (serviceId: string) => {
      const e = env(alice);
      // Committed to this ledger's seller id, as a quote's payment is (one without a commitment is refunded at once, missing_commitment).
      const requestHash = fromHex(requestCommitment({ sellerId: ledger.sellerId, serviceId, request: undefined, salt: '11'.repeat(32) }));
      const payload = agentInvoke.encodePayload({ serviceId, payTo: payee.address, amount: service.price, requestHash });
      const tx = signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.agent_invoke, nonce: e.nonce, fee: 30_000n, payload, publicKey: e.includeKey ? alice.publicKey : undefined }, alice);
      return { tx, id: toHex(txId(tx)), bytes: encodeTx(tx) };
    };
    nonces = new Map();
    online.clear();
    await mine([createAgentTx(env(alice), { name: 'echo-bot', description: 'upper', capabilities: ['text'], payout: alice.address, contact: '' }).tx]);
    await mine([createServiceTx(env(alice), service).tx]);
    await mine([createModerationTx(env(moderator), { action: 'approve', serviceId: 'echo-bot-upper', reason: '' }).tx]);
    // Agent polling: the payment is the settle's (it would take it and queue the job).
    online.add(toHex(alice.address));
    const polled = invoke('echo-bot-upper');
    await mine([polled.tx]);
    expect(refunded).toEqual([]);
    expect(watcher.awaitingCount).toBe(1);
    expect(await ledger.get(polled.id)).toBeUndefined();
    // Agent offline (the service is down): refunded at once, claimed as refused so no settle (and no payout) can follow.
    online.clear();
    const offline = invoke('echo-bot-upper');
    const unknown = invoke('echo-bot-missing');
    await mine([offline.tx, unknown.tx]);
    expect(refunded).toEqual([
      { id: offline.id, code: 'service_unavailable' },
      { id: unknown.id, code: 'unknown_service' },
    ]);
    expect(await ledger.get(offline.id)).toMatchObject({ refused: true });
    expect((await ledger.claim({ id: offline.id, rail: 'native', serviceId: 'echo-bot-upper', requestHash: '', caller: encodeAddress(alice.address, params.hrp), amount: service.price.toString() })).claimed).toBe(false);
    watcher.stop();
    await watcher.idle();
    registry.stop();
    await ledger.close();
    await chain.close();
  }, 60_000);
});
