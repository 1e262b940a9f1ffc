import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { encodeAddress } from '../../consensus/address.js';
import { COIN } from '../../consensus/params.js';
import { encodeTx } from '../../consensus/tx.js';
import type { MempoolReader } from '../../chain/types.js';
import { txSize } from '../../services/chainStats.js';
import { createServiceRegistry, executeService, type ServiceContext } from '../../services/index.js';
import { precheckRefusal } from '../../x402/core/paidCall.js';
import { cleanupTmp } from '../helpers/tmp.js';
import { alice, bob, contextOf, createFixture, dev, miner, params, type Fixture } from './fixture.js';

const registry = createServiceRegistry();
let f: Fixture;
let ctx: ServiceContext;

beforeAll(async () => {
  f = await createFixture();
  ctx = contextOf(f, registry);
});

afterAll(async () => {
  await f?.close();
  await cleanupTmp();
});

/** Validates `request` as the x402 flow does, then runs the service with its timeout. */
async function call(id: string, request?: string, c: ServiceContext = ctx): Promise<Json> {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) throw new Error(`${id}: ${v.error.message}`);
  return (await executeService(def, c, v.input)) as Json;
}

type Json = Record<string, unknown>;

/** The 400 the paid-call core answers before any quote (the service's precheck), or undefined when the request would be quoted. */
async function refusal(id: string, request: string) {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) throw new Error(`${id}: ${v.error.message}`);
  return precheckRefusal(def, v.input, ctx);
}

/** The value at a dotted path of a result (`fees.averageFeeRate`, `results.0.serviceId`). */
function at(o: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], o);
}

/** The list at a dotted path. */
function list(o: unknown, path: string): Json[] {
  return at(o, path) as Json[];
}

const addr = (id: Uint8Array) => encodeAddress(id, params.hrp);

describe('native-world-clock', () => {
  test('time, offset, date and ISO timestamp in the zone, from the injected clock', async () => {
    // NOW_MS is 2027-01-12T13:46:40Z.
    expect(await call('native-world-clock', 'Europe/Berlin')).toEqual({
      timezone: 'Europe/Berlin',
      requested: 'Europe/Berlin',
      iso: '2027-01-12T14:46:40.000+01:00',
      utc: '2027-01-12T13:46:40.000Z',
      unixMs: 1799761600000,
      unix: 1799761600,
      date: '2027-01-12',
      time: '14:46:40',
      weekday: 'Tuesday',
      utcOffset: '+01:00',
      utcOffsetMinutes: 60,
      abbreviation: expect.any(String), // ICU spells it GMT+1 or CET depending on its data
      observesDst: true,
      isDst: false,
    });
    expect(await call('native-world-clock', 'America/New_York')).toMatchObject({ iso: '2027-01-12T08:46:40.000-05:00', utcOffsetMinutes: -300, abbreviation: 'EST', isDst: false });
    expect(await call('native-world-clock', 'Asia/Kolkata')).toMatchObject({ iso: '2027-01-12T19:16:40.000+05:30', utcOffset: '+05:30', observesDst: false });
    expect(await call('native-world-clock', 'Australia/Sydney')).toMatchObject({ utcOffset: '+11:00', isDst: true, date: '2027-01-13' });
    expect(await call('native-world-clock', 'europe/berlin')).toMatchObject({ timezone: 'Europe/Berlin', requested: 'europe/berlin' });
    expect(await call('native-world-clock')).toMatchObject({ timezone: 'UTC', iso: '2027-01-12T13:46:40.000+00:00', utcOffset: '+00:00' });
    await expect(registry.get('native-world-clock')!.health!(ctx)).resolves.toBe('active');
  });
});

describe('native-address-validator', () => {
  test('reports validity, network and whether it is this node\'s network', async () => {
    expect(await call('native-address-validator', addr(alice.address))).toMatchObject({
      address: addr(alice.address),
      valid: true,
      family: 'native',
      network: 'native-testnet',
      type: 'account',
      normalized: addr(alice.address),
      thisNetwork: true,
      nodeNetwork: 'native-devnet',
    });
    expect(await call('native-address-validator', encodeAddress(alice.address, 'native'))).toMatchObject({ valid: true, network: 'native-mainnet', thisNetwork: false });
    expect(await call('native-address-validator', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toMatchObject({ valid: true, family: 'evm', checksum: 'valid', networks: expect.arrayContaining(['ethereum', 'base']) });
    expect(await call('native-address-validator', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb')).toMatchObject({ valid: false, family: 'bitcoin', reason: 'bad base58check checksum' });
    expect(await call('native-address-validator', 'zzzzzzzzzzzzzzzzzzzzzzzz')).toMatchObject({ valid: false, family: null, reason: expect.any(String) });
  });
});

describe('native-network-stats', () => {
  test('height, hashrate, supply, staking ratio, totals and mempool of the real chain', async () => {
    const r = await call('native-network-stats');
    expect(r).toMatchObject({
      network: 'native-devnet',
      chainId: 1337,
      height: 4,
      tip: f.blockHashes[4],
      supply: {
        minted: '1001200',
        mintedBase: (1_001_200n * COIN).toString(),
        burned: '0.0006',
        burnedBase: '60000',
        circulating: '1001199.9994',
        maxSupply: '1000000000',
        headroom: '998998800',
      },
      // Staking from the chain's stake totals (none staked on this fixture).
      staking: { staked: '0', stakedBase: '0', stakes: 0, rewardsPaidBase: '0', ratio: 0, active: true },
      totals: { blocks: 5, transactions: 3 },
      mempool: { count: 1 },
    });
    expect(at(r, 'hashrate')).toBeGreaterThan(0);
    expect(at(r, 'difficulty')).toBeGreaterThan(0);
    expect(at(r, 'totals.bytes')).toBeGreaterThan(3 * 4700);
    expect(at(r, 'mempool.bytes')).toBeGreaterThan(4700);
  });
});

describe('native-gas-tracker', () => {
  test('fees, fee rate and burn over the last 20 blocks, mempool pressure, congestion', async () => {
    const r = await call('native-gas-tracker');
    expect(r).toMatchObject({
      height: 4,
      window: { blocks: 4, fromHeight: 1, toHeight: 4, seconds: 12 },
      fees: { total: '0.0012', totalBase: '120000', transactions: 3, averagePerTx: '0.0004', averagePerTxBase: '40000', averagePerBlock: '0.0003', minFeeRate: '1' },
      burn: { burnShareBps: 5000, burnedInWindow: '0.0006', burnedInWindowBase: '60000', perBlockBase: '15000', perHourBase: '18000000', perHour: '0.18' },
      mempool: { count: 1 },
      congestion: 'low',
      suggestedFeeRate: { economy: '1', standard: '1', fast: '1' },
    });
    expect(at(r, 'fees.averageFeeRate')).toBeGreaterThan(1);
    expect(at(r, 'mempool.pressure')).toBeGreaterThan(0);
    expect(at(r, 'mempool.topFeeRate')).toBeGreaterThan(1);
    expect(at(r, 'standardTransfer.sizeBytes')).toBeGreaterThan(4700);
    expect(at(r, 'standardTransfer.economyFeeBase')).toBe(String(at(r, 'standardTransfer.sizeBytes')));
  });
});

describe('native-tx-lookup', () => {
  test('mined transaction with its key: decoded payload, confirmations, verified signature', async () => {
    const r = await call('native-tx-lookup', f.mined[0].toUpperCase());
    expect(r).toMatchObject({
      txId: f.mined[0],
      status: 'mined',
      type: 'transfer',
      from: addr(dev.address),
      nonce: '0',
      fee: '0.0004',
      feeBase: '40000',
      height: 1,
      blockHash: f.blockHashes[1],
      index: 0,
      confirmations: 4,
      publicKeyIncluded: true,
      payload: { to: addr(alice.address), amount: '100', amountBase: '10000000000' },
      signature: { checked: true, valid: true, publicKeySource: 'transaction', keyMatchesSender: true },
    });
    expect(at(r, 'blockTimeIso')).toBe(new Date((params.genesis.time + 3) * 1000).toISOString());
  });

  test('mined transaction without a key: checked against the key in account state', async () => {
    expect(await call('native-tx-lookup', f.mined[1])).toMatchObject({ status: 'mined', nonce: '1', publicKeyIncluded: false, signature: { valid: true, publicKeySource: 'account state' } });
  });

  test('pending transaction', async () => {
    expect(await call('native-tx-lookup', f.pending)).toMatchObject({ txId: f.pending, status: 'pending', confirmations: 0, height: null, from: addr(bob.address), signature: { valid: true } });
  });

  test('unknown id: refused before any quote (400 tx_not_found), refunded if paid', async () => {
    expect(await refusal('native-tx-lookup', '00'.repeat(32))).toMatchObject({ code: 'invalid_request', reason: 'tx_not_found' });
    expect(await refusal('native-tx-lookup', f.pending)).toBeUndefined();
    expect(await refusal('native-tx-lookup', f.mined[0].toUpperCase())).toBeUndefined();
    await expect(call('native-tx-lookup', '00'.repeat(32))).rejects.toMatchObject({ code: 'tx_not_found' });
  });

  test('a tampered signature does not verify', async () => {
    const real = f.pool.get(f.pending)!;
    const sig = { ...real.tx.signature, ed25519: real.tx.signature.ed25519.slice() };
    sig.ed25519[0] ^= 1;
    const tampered = { ...real, tx: { ...real.tx, signature: sig } };
    const mempool: MempoolReader = { count: f.pool.count, bytes: f.pool.bytes, has: (id) => f.pool.has(id), get: (id) => (id === f.pending ? tampered : f.pool.get(id)), pendingNonce: (a, n) => f.pool.pendingNonce(a, n), list: (l) => f.pool.list(l) };
    expect(await call('native-tx-lookup', f.pending, { ...ctx, mempool })).toMatchObject({ status: 'pending', signature: { checked: true, valid: false, keyMatchesSender: true } });
  });

  test('txSize matches the encoded size', () => {
    const e = f.pool.get(f.pending)!;
    expect(txSize(e.tx)).toBe(encodeTx(e.tx).length);
  });
});

describe('native-block-inspect', () => {
  test('by height and by hash: header facts, fees burned and paid, tx mix', async () => {
    const byHeight = await call('native-block-inspect', '1');
    const byHash = await call('native-block-inspect', f.blockHashes[1].toUpperCase());
    expect(byHash).toEqual({ ...byHeight, query: f.blockHashes[1].toUpperCase() });
    expect(byHeight).toMatchObject({
      found: true,
      hash: f.blockHashes[1],
      height: 1,
      mainChain: true,
      confirmations: 4,
      prevHash: f.blockHashes[0],
      nextHash: f.blockHashes[2],
      time: params.genesis.time + 3,
      txCount: 2,
      coinbase: { miner: addr(miner.address), subsidy: '50', minerFees: '0.00035', minerFeesBase: '35000' },
      fees: { total: '0.0007', totalBase: '70000', burned: '0.00035', burnedBase: '35000', toMiner: '0.00035', burnShareBps: 5000 },
      supplyEffect: { minted: '50', burned: '0.00035', net: '49.99965' },
      txMix: { transfer: { count: 2, share: 1, fees: '0.0007', feesBase: '70000' } },
      transactions: [{ txId: f.mined[0], type: 'transfer', fee: '0.0004' }, { txId: f.mined[1], type: 'transfer', fee: '0.0003' }],
      transactionsListed: 2,
    });
  });

  test('genesis, the tip and an unknown block', async () => {
    expect(await call('native-block-inspect', '0')).toMatchObject({ found: true, height: 0, txCount: 0, prevHash: '00'.repeat(32), txMix: {} });
    expect(await call('native-block-inspect', '4')).toMatchObject({ found: true, nextHash: null, confirmations: 1 });
    // A block this node does not hold: 400 before any quote, refunded if paid.
    expect(await refusal('native-block-inspect', '5')).toMatchObject({ code: 'invalid_request', reason: 'block_not_found', message: 'no block at height 5 on this node (tip 4)' });
    expect(await refusal('native-block-inspect', 'ab'.repeat(32))).toMatchObject({ code: 'invalid_request', reason: 'block_not_found' });
    expect(await refusal('native-block-inspect', '4')).toBeUndefined();
    await expect(call('native-block-inspect', '99')).rejects.toMatchObject({ code: 'block_not_found' });
  });
});

describe('native-explorer-summary', () => {
  test('recent blocks, type distribution, mempool and supply effects', async () => {
    const r = await call('native-explorer-summary');
    expect(r).toMatchObject({
      height: 4,
      tip: f.blockHashes[4],
      window: { blocks: 5, fromHeight: 0, toHeight: 4 },
      txTypeDistribution: { transfer: { count: 3, share: 1, feesBase: '120000' } },
      mempool: { count: 1, typeDistribution: { transfer: { count: 1, feesBase: '60000' } } },
      supplyEffects: {
        window: { minted: '200', feesPaid: '0.0012', burned: '0.0006', netIssuance: '199.9994' },
        total: { minted: '1001200', burned: '0.0006' },
      },
      totals: { blocks: 5, transactions: 3 },
    });
    expect(list(r, 'recentBlocks').map((b) => b.height)).toEqual([4, 3, 2, 1, 0]);
    expect(list(r, 'recentBlocks')[1]).toMatchObject({ hash: f.blockHashes[3], txCount: 1, fees: '0.0005', burnedBase: '25000', miner: addr(miner.address) });
  });
});

describe('native-staking-rewards', () => {
  test('daily, monthly and yearly rewards per consensus tier, exact and rounded down', async () => {
    const r = await call('native-staking-rewards', '1000');
    expect(r).toMatchObject({ amount: '1000', amountBase: '100000000000', stakingActive: true, network: 'native-devnet', chain: { stakedBase: '0', stakes: 0 } });
    expect(at(r, 'tiers')).toEqual([
      { tier: 'flexible', minLockDays: 0, aprBps: 300, apr: '3%', daily: '0.08219178', dailyBase: '8219178', monthly: '2.5', monthlyBase: '250000000', yearly: '30', yearlyBase: '3000000000', totalAfterYear: '1030', totalAfterYearBase: '103000000000' },
      expect.objectContaining({ tier: '30-day', aprBps: 500, yearly: '50', monthly: '4.16666666', daily: '0.1369863' }),
      expect.objectContaining({ tier: '90-day', aprBps: 800, yearly: '80', monthly: '6.66666666' }),
      expect.objectContaining({ tier: '365-day', aprBps: 1200, yearly: '120', monthly: '10', daily: '0.32876712' }),
    ]);
    expect(list(await call('native-staking-rewards', '0.5 NATIVE'), 'tiers')[0]).toMatchObject({ yearly: '0.015', yearlyBase: '1500000' });
  });
});

describe('native-service-search', () => {
  test('ranks by matched words and fields, with prices in NATIVE, base units and USD', async () => {
    const exact = await call('native-service-search', 'world-clock');
    expect(list(exact, 'results')[0]).toMatchObject({ rank: 1, serviceId: 'native-world-clock', priceNative: '0.002', priceBase: '200000', priceUsd: 0.001, available: true, requestRequired: false });
    const pdf = await call('native-service-search', 'pdf invoice');
    expect(at(pdf, 'results.0.serviceId')).toBe('native-invoice-pdf');
    expect(at(pdf, 'results.0.matchedTerms')).toBe(2);
    expect(list(pdf, 'results').slice(0, 2).map((x) => x.serviceId)).toContain('native-invoice-proforma');
    const gas = await call('native-service-search', 'gas fees');
    expect(list(gas, 'results').slice(0, 2).map((x) => String(x.serviceId)).sort()).toEqual(['native-gas-price', 'native-gas-tracker']);
    expect(at(await call('native-service-search', 'staking'), 'results.0.serviceId')).toBe('native-staking-rewards');
    expect(list(await call('native-service-search', 'explorer'), 'results').map((x) => x.category).slice(0, 3)).toEqual(['explorer', 'explorer', 'explorer']);
    expect(await call('native-service-search', 'qwxzv')).toEqual({ query: 'qwxzv', terms: ['qwxzv'], total: 0, results: [] });
  });
});

describe('native-agent-roster', () => {
  test('the node agent with its services; call counts null without a ledger', async () => {
    const r = await call('native-agent-roster');
    expect(r).toMatchObject({ agentCount: 1, callStatsTracked: false, note: expect.stringContaining('no settlement ledger') });
    expect(list(r, 'agents')[0]).toMatchObject({ agentId: 'native-node', nodeOperated: true, serviceCount: 58, availableCount: 58, calls: null, volumeNative: null });
    expect(list(r, 'agents.0.services')).toHaveLength(58);
    expect(list(r, 'agents.0.services').find((x) => x.serviceId === 'native-risk-score')).toMatchObject({ priceNative: '15', priceUsd: 7.5, available: true });
  });
});

describe('health probes', () => {
  test('every implemented service has a cheap probe that answers active on a working node', async () => {
    // Services that reach outside the node are probed in their own tests (they need the outbound client and providers).
    // native-email-validate's asks the resolver for example.com (test/services/identity.test.ts, against a DNS server on 127.0.0.1).
    const outbound = new Set(['native-web-fetch', 'native-url-meta', 'native-rss-read', 'native-web-search', 'native-domain-info', 'native-x402-validation', 'native-email-validate']);
    // The provider-backed services' probes are tested against their providers' fakes (test/services/providers/).
    for (const id of ['native-weather', 'native-fx-rates', 'native-crypto-prices', 'native-crypto-price', 'native-crypto-price-feed', 'native-gas-price', 'native-evm-balance', 'native-ens-resolve', 'native-llm-chat', 'native-translate', 'native-image-gen']) outbound.add(id);
    for (const def of registry.list().filter((d) => registry.isAvailable(d) && !outbound.has(d.id))) {
      expect({ id: def.id, health: await def.health!(ctx) }).toEqual({ id: def.id, health: 'active' });
    }
  });

  test('chain-reading services report down when the store fails', async () => {
    const broken = { ...ctx, chain: { ...f.chain, tip: f.chain.tip, getSupply: () => Promise.reject(new Error('chain closed')) } as unknown as ServiceContext['chain'] };
    expect(await registry.get('native-network-stats')!.health!(broken)).toEqual({ status: 'down', reason: { code: 'chain_unreadable', message: 'the chain store does not answer: chain closed' } });
    expect(await registry.get('native-staking-rewards')!.health!(broken)).toBe('active');
  });
});
