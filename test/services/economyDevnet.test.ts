/**
 * The nineteen chain-data services on the devnet economy the node runs with `npm start`
 * (node/economy/simulator.ts, seeded): each example call of discovery/examples.ts returns a
 * non-empty result that names real data (found tokens and pools, a feasible quote).
 * The paid path of calls of the nineteen on a running node: test/integration/economyServices.test.ts.
 */
import { afterAll, expect, test } from '@jest/globals';
import { openChain } from '../../chain/chain.js';
import { createMempool } from '../../chain/mempool.js';
import { silentLogger } from '../../chain/types.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevnetActor } from '../../consensus/devnet.js';
import { EconomySimulator } from '../../node/economy/simulator.js';
import { createChainBackend } from '../../node/economy/backends.js';
import { exampleRequest } from '../../discovery/examples.js';
import { createServiceRegistry, executeService, type ServiceContext } from '../../services/index.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { mineUntilEmpty } from '../helpers/mine.js';

afterAll(cleanupTmp);

const ECONOMY_SERVICES = [
  'native-token-audit', 'native-price-feed', 'native-market-summary', 'native-swap-quote', 'native-wallet-portfolio', 'native-stable-health',
  'native-supply-audit', 'native-token-launch-check', 'native-pool-analytics', 'native-price-history', 'native-arb-scan', 'native-market-report',
  'native-holder-stats', 'native-whale-watch', 'native-bridge-status', 'native-bridge-route-check', 'native-risk-score', 'native-crypto-whale-watch',
  'native-crypto-portfolio-tracker',
];

const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: 1_800_000_000, actors: true });
let clock = params.genesis.time;

const nextBlockTime = () => (clock += 3);

test('every example call of the nineteen returns real data on the devnet economy', async () => {
  const chain = await openChain({ dataDir: await tmpDir(), params, verifier: new CountingVerifier(), now: () => clock });
  const mempool = createMempool(chain, new CountingVerifier(), params, { now: () => clock * 1000 });
  mempool.start();
  try {
    const sim = new EconomySimulator(createChainBackend(chain, mempool), params, { rate: 1, seed: 7 });
    await sim.bootstrap();
    await mineUntilEmpty(chain, mempool, params, nextBlockTime);
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 10; i++) await sim.step();
      await mineUntilEmpty(chain, mempool, params, nextBlockTime);
    }
    const registry = createServiceRegistry();
    const ctx: ServiceContext = {
      chain, mempool, params, now: () => clock * 1000, log: silentLogger, registry,
      nativeUsd: { get: () => ({ microUsd: 500_000n, source: 'reference', live: false }) },
      signal: new AbortController().signal,
    };
    const payTo = encodeAddress(getDevnetActor('trader1').address, params.hrp);
    const results: Record<string, Record<string, unknown>> = {};
    for (const id of ECONOMY_SERVICES) {
      const def = registry.get(id)!;
      const request = exampleRequest(def, { payTo });
      const v = registry.validateInput(def, request);
      expect({ id, ok: v.ok }).toEqual({ id, ok: true });
      if (!v.ok) continue;
      const r = (await executeService(def, ctx, v.input)) as Record<string, unknown>;
      expect(Object.keys(r).length).toBeGreaterThan(2);
      results[id] = r;
    }
    expect(results['native-token-audit']).toMatchObject({ found: true, kind: 'usd-stable' });
    expect(results['native-price-feed']).toMatchObject({ source: 'pool' });
    expect(results['native-swap-quote']).toMatchObject({ feasible: true });
    expect(results['native-pool-analytics']).toMatchObject({ found: true });
    expect(results['native-wallet-portfolio']).toMatchObject({ found: true });
    expect(results['native-stable-health'].count).toBe(1);
    expect((results['native-supply-audit'].tokens as unknown[]).length).toBe(1);
    expect((results['native-market-summary'].poolCount as number)).toBeGreaterThanOrEqual(8);
    expect((results['native-price-history'].candles as unknown[]).length).toBeGreaterThan(0);
    expect((results['native-arb-scan'].assets as unknown[]).length).toBeGreaterThan(3);
    expect(results['native-bridge-status'].count).toBe(10);
    expect(results['native-bridge-route-check']).toMatchObject({ feasible: true });
    expect(results['native-risk-score']).toMatchObject({ score: expect.any(Number) });
    expect(results['native-crypto-portfolio-tracker']).toMatchObject({ found: true });
    expect(results['native-crypto-whale-watch']).toMatchObject({ found: true });
    expect(String(results['native-market-report'].markdown)).toContain('## Stablecoins');
  } finally {
    mempool.stop();
    await chain.close();
  }
}, 120_000);
