import { afterAll, describe, expect, test } from '@jest/globals';
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { createBlockTemplate } from '../../chain/template.js';
import { grindHeader } from '../../consensus/assemble.js';
import { createDevnetChainParams, getDevnetActor } from '../../consensus/devnet.js';
import { COIN } from '../../consensus/params.js';
import { EconomySimulator } from '../../node/economy/simulator.js';
import { createChainBackend, createHttpBackend } from '../../node/economy/backends.js';
import { createHttpServer } from '../../node/api/http.js';
import { NodeClient } from '../../node/client.js';
import { createEconomyRouter, economyErrorStatuses } from '../../node/api/economyRoutes.js';
import { accountEconomyFields } from '../../node/api/economyAccount.js';
import { createJsonApp, HttpServer } from '../../node/api/app.js';
import { silentLogger } from '../../chain/types.js';
import { parseSwapSpec, parseUnits } from '../../cli/economyCli.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

afterAll(cleanupTmp);

const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: 1_800_000_000, actors: true });
let clock = params.genesis.time;
const now = () => clock;

/** Mines template blocks (3 s apart on the test clock) until the mempool is empty (at least one, at most 20). */
async function mineUntilEmpty(chain: Chain, mempool: Mempool): Promise<void> {
  const miner = getDevnetActor('miner-test').address;
  await mempool.idle();
  for (let i = 0; i < 20 && (mempool.count > 0 || i === 0); i++) {
    clock += 3;
    const tpl = await createBlockTemplate(chain, mempool, params, { miner, now });
    await chain.addBlock({ ...tpl.block, header: grindHeader(tpl.block.header, params.powLimit)! });
    await mempool.idle();
  }
}

describe('the devnet economy and its read API', () => {
  test('the actors set up ≥6 tokens with a USD stablecoin, ≥8 pools with token/token pairs, stakes in every tier, bridge flows on all 10 networks; the API serves them', async () => {
    const chain = await openChain({ dataDir: await tmpDir(), params, verifier: new CountingVerifier(), now });
    const mempool = createMempool(chain, new CountingVerifier(), params, { now: () => clock * 1000 });
    mempool.start();
    const mineAll = () => mineUntilEmpty(chain, mempool);
    const sim = new EconomySimulator(createChainBackend(chain, mempool), params, { rate: 1, seed: 7 });
    expect(await sim.bootstrap()).toBe(true);
    expect(sim.stats.refused).toBe(0);
    await mineAll();
    expect(await sim.bootstrap()).toBe(false);
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 10; i++) await sim.step();
      await mineAll();
    }
    expect(mempool.count).toBe(0);
    const eco = chain.economy;
    const tokens = await eco.listTokens({ includeHidden: true });
    expect(tokens.length).toBeGreaterThanOrEqual(6);
    expect(tokens.find((t) => t.symbol === 'USDN')?.kind).toBe('usd-stable');
    const pools = await eco.listPools();
    expect(pools.length).toBeGreaterThanOrEqual(8);
    expect(pools.some((p) => p.a !== 'NATIVE' && p.b !== 'NATIVE')).toBe(true);
    expect((await eco.swaps({ limit: 1000 })).length).toBeGreaterThan(5);
    expect((await eco.nativeUsd()).source).toBe('pool');
    const usdn = await eco.stableHealth('USDN');
    expect(usdn?.priceSource).toBe('pool');
    expect(usdn?.ratio).toBeGreaterThan(1.5);
    expect(usdn?.health).toBe('healthy');
    expect(await eco.stableHealth('GOLD')).toBeUndefined();
    const staker = await eco.account(getDevnetActor('staker').address);
    expect(new Set(staker.stakes.map((s) => s.tier))).toEqual(new Set([0, 1, 2, 3]));
    const nets = await eco.bridgeNetworks();
    expect(nets).toHaveLength(10);
    for (const n of nets) expect(n.inCount >= 1 && n.outCount >= 1 && BigInt(n.float) > 0n).toBe(true);

    const opts = { host: '127.0.0.1', port: 0, bodyLimit: 1 << 20, timeoutMs: 10_000, version: 'test' };
    const server = new HttpServer(opts, createJsonApp(opts, silentLogger, [createEconomyRouter(eco, params)], economyErrorStatuses));
    await server.start();
    const get = async (path: string) => {
      const res = await fetch(`${server.url}${path}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error?: { code: string } } };
    };
    try {
      expect((await get('/api/v1/tokens')).body.count).toBe(tokens.filter((t) => !t.hidden).length);
      const gold = await get('/api/v1/token/gold');
      expect(gold.status).toBe(200);
      expect((gold.body.topHolders as unknown[]).length).toBeGreaterThan(1);
      expect((await get('/api/v1/token/NOPE')).body.error?.code).toBe('token_not_found');
      expect((await get('/api/v1/token/no-pe')).status).toBe(422);
      expect((await get('/api/v1/pools')).body.count).toBe(pools.length);
      const pool = await get('/api/v1/pool/USDN-NATIVE');
      expect(pool.status).toBe(200);
      expect((pool.body.pool as { id: string }).id).toBe('NATIVE-USDN');
      expect((await get('/api/v1/pool/NATIVE-ZZZ')).status).toBe(404);
      expect((await get('/api/v1/pool/bad')).status).toBe(400);
      const swaps = await get('/api/v1/swaps?pool=NATIVE-USDN&since=0');
      expect((swaps.body.swaps as { pool: string }[]).every((s) => s.pool === 'NATIVE-USDN')).toBe(true);
      expect((await get('/api/v1/swaps?since=x')).status).toBe(400);
      expect(((await get('/api/v1/bridge')).body.networks as unknown[]).length).toBe(10);
      expect(((await get('/api/v1/bridge?network=bitcoin')).body.records as unknown[]).length).toBeGreaterThan(0);
      const fields = await accountEconomyFields(eco, getDevnetActor('trader1').address);
      expect((fields.tokens as unknown[]).length).toBeGreaterThan(3);
    } finally {
      await server.stop();
      mempool.stop();
      await chain.close();
    }
  }, 120_000);

  test('native-node simulate\'s HTTP backend sets the economy up and trades through a node\'s API', async () => {
    const chain = await openChain({ dataDir: await tmpDir(), params, verifier: new CountingVerifier(), now });
    const mempool = createMempool(chain, new CountingVerifier(), params, { now: () => clock * 1000 });
    mempool.start();
    const opts = { host: '127.0.0.1', port: 0, bodyLimit: 1 << 20, timeoutMs: 10_000, version: 'test' };
    const server = createHttpServer(opts, { chain, mempool, params, routers: [createEconomyRouter(chain.economy, params)], errorStatuses: economyErrorStatuses });
    await server.start();
    const mineAll = () => mineUntilEmpty(chain, mempool);
    try {
      const sim = new EconomySimulator(createHttpBackend(new NodeClient(server.url), params), params, { rate: 1, seed: 3 });
      expect(await sim.bootstrap()).toBe(true);
      expect(sim.stats.refused).toBe(0);
      await mineAll();
      for (let i = 0; i < 15; i++) await sim.step();
      await mineAll();
      expect(sim.stats.submitted).toBeGreaterThan(90);
      expect((await chain.economy.listPools()).length).toBe(9);
      expect((await chain.economy.swaps({ limit: 1000 })).length).toBeGreaterThan(0);
    } finally {
      await server.stop();
      mempool.stop();
      await chain.close();
    }
  }, 120_000);

  test('CLI parsing: swap specs and token amounts', () => {
    expect(parseSwapSpec('100 native → usdn')).toEqual({ amount: '100', from: 'NATIVE', to: 'USDN' });
    expect(parseSwapSpec(' 1.5 GOLD -> NATIVE ')).toEqual({ amount: '1.5', from: 'GOLD', to: 'NATIVE' });
    expect(() => parseSwapSpec('100 NATIVE to USDN')).toThrow(/AMOUNT FROM -> TO/);
    expect(parseUnits('1.25', 2)).toBe(125n);
    expect(() => parseUnits('1.255', 2)).toThrow(/at most 2 decimals/);
    expect(parseUnits('3', 8)).toBe(3n * COIN);
  });
});
