/**
 * Chain-data services agree with the chain API: the devnet economy (the simulator of
 * `npm start`, seeded) is built on a real chain, the chain stops at a height (nothing is mined
 * after the set-up), the node's own HTTP API (node/api/http.ts + the economy routes) serves that
 * chain on 127.0.0.1, and every figure the chain-data services return — balances, supplies,
 * stakes, reserves, prices, counts, decimals — is compared with the API's answer at that height.
 * Swap quotes are checked against every path the chain's swap accepts, enumerated here by brute
 * force (revisits included) and priced with consensus's AMM on the API's reserves.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { silentLogger } from '../../chain/types.js';
import { encodeAddress } from '../../consensus/address.js';
import { getAmountOut } from '../../consensus/amm.js';
import { createDevnetChainParams, getDevKeyPair, getDevnetActor } from '../../consensus/devnet.js';
import { NATIVE } from '../../consensus/ledger.js';
import { COIN } from '../../consensus/params.js';
import { encodeTx, signTx, TX_VERSION } from '../../consensus/tx.js';
import { feeForRate } from '../../consensus/txBuilder.js';
import { swap } from '../../consensus/txTypes/swap.js';
import { EconomySimulator } from '../../node/economy/simulator.js';
import { createChainBackend } from '../../node/economy/backends.js';
import { createHttpServer, type HttpServer, type TxSubmitter } from '../../node/api/http.js';
import { createEconomyRouter, economyErrorStatuses } from '../../node/api/economyRoutes.js';
import { formatUnits } from '../../node/api/economyAccount.js';
import { createServiceRegistry, executeService, type ServiceContext } from '../../services/index.js';
import { precheckRefusal } from '../../x402/core/paidCall.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { mineUntilEmpty } from '../helpers/mine.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: 1_800_000_000, actors: true });
const registry = createServiceRegistry();
const dev = getDevKeyPair();
const trader1 = encodeAddress(getDevnetActor('trader1').address, params.hrp);
const devAddr = encodeAddress(dev.address, params.hrp);
let clock = params.genesis.time;
let chain: Chain;
let mempool: Mempool;
let server: HttpServer;
let ctx: ServiceContext;
/** Ids of the dev wallet's two opposite swaps mined in one block. */
let roundTrip: string[] = [];

const mineUntilEmptyHere = () => mineUntilEmpty(chain, mempool, params, () => (clock += 3));

async function get(path: string): Promise<Json> {
  const r = await fetch(`${server.url}${path}`);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** Validates `request` as the paid-call core does, then runs the service. */
async function call(id: string, request?: string): Promise<Json> {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) throw new Error(`${id}: ${v.error.message}`);
  return executeService(def, ctx, v.input);
}

/** The 400 the paid-call core answers before any quote (schema, then the service's precheck), or undefined when the request would be quoted. */
async function refusal(id: string, request: string): Promise<string | undefined> {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) return v.error.message;
  return (await precheckRefusal(def, v.input, ctx))?.message;
}

beforeAll(async () => {
  chain = await openChain({ dataDir: await tmpDir(), params, verifier: new CountingVerifier(), now: () => clock });
  mempool = createMempool(chain, new CountingVerifier(), params, { now: () => clock * 1000 });
  mempool.start();
  const sim = new EconomySimulator(createChainBackend(chain, mempool), params, { rate: 1, seed: 7 });
  await sim.bootstrap();
  await mineUntilEmptyHere();
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 10; i++) await sim.step();
    await mineUntilEmptyHere();
  }
  // The dev wallet swaps 50 NATIVE into USDN and the USDN back in one block: an ordinary round trip.
  const nonce = (await chain.getAccount(dev.address)).nonce;
  const signed = (n: bigint, path: string[], amountIn: bigint) => {
    const base = { version: TX_VERSION, chainId: params.chainId, type: swap.type, from: dev.address, nonce: n, payload: swap.encodePayload({ path, amountIn, minOut: 1n, expiryHeight: chain.tip.height + 10 }), ...(n === 0n ? { publicKey: dev.publicKey } : {}) };
    return signTx({ ...base, fee: feeForRate(base, 1n) }, dev);
  };
  const a = await mempool.add(encodeTx(signed(nonce, [NATIVE, 'USDN'], 50n * COIN)));
  const b = await mempool.add(encodeTx(signed(nonce + 1n, ['USDN', NATIVE], 20_000_000n)));
  roundTrip = [a.id, b.id];
  await mineUntilEmptyHere();
  // The chain stops here: every answer below is at this height.
  server = createHttpServer(
    { host: '127.0.0.1', port: 0, bodyLimit: 256 * 1024, timeoutMs: 10_000, version: 'test' },
    { chain, mempool: mempool as Mempool & TxSubmitter, params, routers: [createEconomyRouter(chain.economy!, params)], errorStatuses: economyErrorStatuses },
  );
  await server.start();
  ctx = {
    chain, mempool, params, now: () => clock * 1000, log: silentLogger, registry,
    nativeUsd: { get: () => ({ microUsd: 500_000n, source: 'reference', live: false }) },
    signal: new AbortController().signal,
  };
}, 180_000);

afterAll(async () => {
  await server?.stop();
  mempool?.stop();
  await chain?.close();
  await cleanupTmp();
});

/** The API's view of the chain at the stopped height. */
async function api() {
  const [status, staking, tokens, pools, bridge, price, account] = await Promise.all([
    get('/api/v1/status'), get('/api/v1/staking'), get('/api/v1/tokens?hidden=1'), get('/api/v1/pools'), get('/api/v1/bridge'), get('/api/v1/price'), get(`/api/v1/account/${trader1}`),
  ]);
  const token = new Map<string, Json>(tokens.tokens.map((t: Json) => [t.symbol, t]));
  const pool = new Map<string, Json>(pools.pools.map((p: Json) => [p.id, p]));
  return { status, staking, tokens, token, pools, pool, bridge, price, account };
}

/** Decimals of an asset by the API (NATIVE: 8). */
const decimalsIn = (token: Map<string, Json>, asset: string) => (asset === NATIVE ? 8 : (token.get(asset).decimals as number));

test('the chain stopped: no block was added while the services and the API were read', async () => {
  const { status } = await api();
  expect(status.height).toBe(chain.tip.height);
  expect(status.mempool.count).toBe(0);
});

describe('every figure of the chain-data services equals the chain API\'s', () => {
  test('native-network-stats: height, tip, supply, and staking from the chain\'s own stakes', async () => {
    const { status, staking } = await api();
    const r = await call('native-network-stats');
    expect(r).toMatchObject({ height: status.height, tip: status.tip, chainId: status.chainId });
    expect(r.supply).toMatchObject({ mintedBase: status.supply.mintedBase, burnedBase: status.supply.burnedBase });
    expect(BigInt(staking.staked)).toBeGreaterThan(0n);
    const circulating = BigInt(status.supply.mintedBase) - BigInt(status.supply.burnedBase);
    expect(r.staking).toMatchObject({ active: true, stakedBase: staking.staked, lockedBase: staking.locked, stakes: staking.count, rewardsPaidBase: staking.rewardsPaid, staked: formatUnits(staking.staked, 8) });
    // Parts per million, truncated.
    expect(r.staking.ratio).toBeCloseTo(Number(BigInt(staking.staked)) / Number(circulating), 5);
    expect(JSON.stringify(r)).not.toContain('not active');
  });

  test('native-staking-rewards: staking is active, with the chain\'s totals', async () => {
    const { staking } = await api();
    const r = await call('native-staking-rewards', '1000');
    expect(r).toMatchObject({ stakingActive: true, chain: { stakedBase: staking.staked, stakes: staking.count, rewardsPaidBase: staking.rewardsPaid } });
    expect(r.tiers.map((t: Json) => [t.tier, t.aprBps])).toEqual(staking.tiers.map((t: Json) => [t.name, t.aprBps]));
    expect(JSON.stringify(r)).not.toContain('not active');
  });

  test('native-token-audit, native-supply-audit, native-holder-stats, native-stable-health: supplies, decimals, holders, reserves', async () => {
    const { tokens, token } = await api();
    const audit = await call('native-token-audit', 'USDN');
    const usdn = token.get('USDN');
    expect(audit).toMatchObject({ found: true, decimals: usdn.decimals, holders: usdn.holders, supply: formatUnits(usdn.supply, usdn.decimals), maxSupply: formatUnits(usdn.maxSupply, usdn.decimals), reserveNative: formatUnits(usdn.reserve, 8), issuer: usdn.issuer });
    const supply = await call('native-supply-audit');
    expect(supply.count).toBe(tokens.count);
    for (const t of supply.tokens) {
      const a = token.get(t.symbol);
      expect({ symbol: t.symbol, decimals: t.decimals, holders: t.holders, units: { minted: t.units.minted, burned: t.units.burned, supply: t.units.supply, maxSupply: t.units.maxSupply }, supply: t.supply })
        .toEqual({ symbol: a.symbol, decimals: a.decimals, holders: a.holders, units: { minted: a.minted, burned: a.burned, supply: a.supply, maxSupply: a.maxSupply }, supply: formatUnits(a.supply, a.decimals) });
    }
    const detail = await get('/api/v1/token/USDN');
    const holders = await call('native-holder-stats', 'USDN');
    expect(holders.tokens[0]).toMatchObject({ symbol: 'USDN', holders: usdn.holders, decimals: usdn.decimals, supply: formatUnits(usdn.supply, usdn.decimals) });
    expect(holders.tokens[0].largestWallets.slice(0, detail.topHolders.length).map((w: Json) => [w.address, w.balanceUnits, w.balance])).toEqual(detail.topHolders.map((h: Json) => [h.address, h.balance, h.balanceDecimal]));
    const stable = await call('native-stable-health');
    expect(stable.count).toBe(tokens.tokens.filter((t: Json) => t.kind === 'usd-stable').length);
    expect(stable.stablecoins[0]).toMatchObject({ symbol: 'USDN', supplyUnits: usdn.supply, collateralBase: usdn.reserve, health: detail.stable.health });
    expect(stable.stablecoins[0].backingPct / 100).toBeCloseTo(detail.stable.ratio, 4);
  });

  test('native-price-feed, native-pool-analytics, native-market-summary, native-arb-scan, native-price-history: prices, reserves, counts', async () => {
    const { pools, pool, price } = await api();
    const feed = await call('native-price-feed');
    const usdnPool = pool.get('NATIVE-USDN');
    expect(feed).toMatchObject({ source: price.source, pool: { id: price.pool, stablecoin: price.stablecoin, reserveNative: formatUnits(usdnPool.reserveA, 8), reserveStable: formatUnits(usdnPool.reserveB, 6) } });
    expect(feed.priceUsd).toBeCloseTo(price.price, 8);
    const analytics = await call('native-pool-analytics', 'NATIVE/USDN');
    expect(analytics).toMatchObject({ found: true, reservesUnits: { a: usdnPool.reserveA, b: usdnPool.reserveB }, lpSupply: usdnPool.lpSupply });
    expect(analytics.price).toBeCloseTo(usdnPool.price, 8);
    expect(analytics.tvlNative).toBeCloseTo(usdnPool.tvlNative, 6);
    const summary = await call('native-market-summary');
    expect(summary.poolCount).toBe(pools.count);
    expect(summary.priceUsd).toBeCloseTo(price.price, 8);
    for (const p of summary.topPools) expect({ id: p.id, price: p.price }).toEqual({ id: p.id, price: expect.closeTo(pool.get(p.id).price, 8) });
    const arb = await call('native-arb-scan');
    for (const a of arb.assets) {
      const direct = a.prices.find((x: Json) => x.via === null);
      const p = pool.get(direct.source);
      // NATIVE per unit of the asset, from the API's pool price (b per a).
      expect({ asset: a.asset, priceNative: direct.priceNative }).toEqual({ asset: a.asset, priceNative: expect.closeTo(p.a === NATIVE ? 1 / p.price : p.price, 6) });
    }
    const history = await call('native-price-history');
    const apiPool = await get('/api/v1/pool/NATIVE-USDN');
    expect(history.candles.map((c: Json) => c.swaps)).toEqual(apiPool.candles.map((c: Json) => c.n));
    expect(history.candles.at(-1).close).toBeCloseTo(usdnPool.price, 8);
  });

  test('native-wallet-portfolio, native-crypto-portfolio-tracker, native-crypto-whale-watch: balances and decimals of the account API', async () => {
    const { account, token } = await api();
    const portfolio = await call('native-wallet-portfolio', trader1);
    expect(portfolio).toMatchObject({ found: true, balance: { units: account.balanceBase, amount: account.balance } });
    const apiTokens = account.tokens.map((t: Json) => [t.symbol, t.balanceBase, t.balance]);
    expect(portfolio.tokens.map((t: Json) => [t.asset, t.units, t.amount])).toEqual(apiTokens);
    for (const t of account.tokens) expect(t.decimals).toBe(token.get(t.symbol).decimals);
    const tracker = await call('native-crypto-portfolio-tracker', `portfolio:${trader1}`);
    expect(tracker.holdings.filter((h: Json) => h.kind === 'token').map((h: Json) => [h.asset, h.units, h.amount]).sort()).toEqual([...apiTokens].sort());
    expect(tracker.holdings.find((h: Json) => h.kind === 'balance')).toMatchObject({ units: account.balanceBase });
    expect(tracker.totalValueNative).toBeCloseTo(portfolio.totalValueNative, 6);
    const whale = await call('native-crypto-whale-watch', trader1);
    expect(whale.totalValueNative).toBeCloseTo(portfolio.totalValueNative, 6);
    expect(whale.holdingAnalysis.holdings.filter((h: Json) => h.kind === 'token').map((h: Json) => [h.asset, h.amount]).sort()).toEqual(account.tokens.map((t: Json) => [t.symbol, t.balance]).sort());
  });

  test('native-bridge-status, native-bridge-route-check, native-market-report: floats, records, fees, staking', async () => {
    const { bridge, staking } = await api();
    const status = await call('native-bridge-status');
    expect(status.count).toBe(bridge.networks.length);
    expect(status.networks.map((n: Json) => [n.network, n.inRecords, n.outRecords, n.custodyFloatBase, n.feesBase])).toEqual(bridge.networks.map((n: Json) => [n.name, n.inCount, n.outCount, n.float, n.fees]));
    const route = await call('native-bridge-route-check', 'ethereum-native-100');
    expect(route.legs[0].custodyFloat).toBe(formatUnits(bridge.networks.find((n: Json) => n.name === 'ethereum').float, 8));
    const report = await call('native-market-report');
    expect(report.markdown).toContain(`staked ${formatUnits(staking.staked, 8)} NATIVE in ${staking.count} stakes`);
  });

  test('native-tx-lookup and /api/v1/tx/:id print every amount at its own token\'s decimals (AGNT 6, GOLD 2, NATIVE 8)', async () => {
    const { token } = await api();
    const transfers = (await call('native-whale-watch', '100')).transfers as Json[];
    const picked = ['AGNT', 'GOLD', 'NETH'].map((s) => transfers.find((t) => t.asset === s)).filter(Boolean);
    expect(picked.length).toBe(3);
    for (const t of picked) {
      const apiTx = await get(`/api/v1/tx/${t.tx}`);
      const d = token.get(t.asset).decimals;
      expect({ asset: t.asset, amount: apiTx.amount }).toEqual({ asset: t.asset, amount: formatUnits(apiTx.amountBase, d) });
      // The whale-watch's amount, read from the transfer index, is the same decimal.
      expect(apiTx.amount).toBe(t.amount);
      const looked = await call('native-tx-lookup', t.tx);
      expect(looked.payload).toMatchObject({ symbol: t.asset, amount: apiTx.amount, amountBase: apiTx.amountBase });
    }
    // The AGNT transfer of 200,000 (the example) reads 200000, not 2000.
    const big = transfers.find((t) => t.asset === 'AGNT' && t.amount === '200000');
    expect((await get(`/api/v1/tx/${big.tx}`)).amount).toBe('200000');
    // A swap: amountIn in path[0]'s decimals, minOut in the last asset's.
    const [first] = roundTrip;
    const s = await get(`/api/v1/tx/${first}`);
    expect(s).toMatchObject({ type: 'swap', path: ['NATIVE', 'USDN'], amountIn: '50', amountInBase: String(50n * COIN), minOut: formatUnits('1', 6), minOutBase: '1' });
    expect((await call('native-tx-lookup', first)).payload).toMatchObject({ amountIn: '50', amountInBase: String(50n * COIN) });
  });
});

/** Every path the chain's swap accepts from `from` to `to` (2-4 assets, consecutive ones different, revisits allowed), over the API's pools. */
function allSwapPaths(pools: Json[], from: string, to: string): string[][] {
  const assets = [...new Set(pools.flatMap((p) => [p.a, p.b]))];
  const has = (x: string, y: string) => pools.some((p) => (p.a === x && p.b === y) || (p.a === y && p.b === x));
  const out: string[][] = [];
  const walk = (path: string[]) => {
    if (path.length >= 2 && path[path.length - 1] === to) out.push(path);
    if (path.length === 4) return;
    for (const y of assets) if (y !== path[path.length - 1] && has(path[path.length - 1], y)) walk([...path, y]);
  };
  walk([from]);
  return out;
}

/** Output of `path` for `amountIn`, hop by hop with consensus's AMM on the API's reserves (a pool used twice sees its first hop's reserves); 0n when a hop cannot pay. */
function pathOut(pools: Json[], path: string[], amountIn: bigint, feeBps: number): bigint {
  const reserves = new Map<string, [bigint, bigint]>(pools.map((p) => [p.id, [BigInt(p.reserveA), BigInt(p.reserveB)]]));
  let amount = amountIn;
  for (let i = 0; i + 1 < path.length; i++) {
    const p = pools.find((q) => (q.a === path[i] && q.b === path[i + 1]) || (q.a === path[i + 1] && q.b === path[i]));
    const [ra, rb] = reserves.get(p.id)!;
    const xIsA = p.a === path[i];
    const out = getAmountOut(amount, xIsA ? ra : rb, xIsA ? rb : ra, feeBps);
    if (out === 0n || out >= (xIsA ? rb : ra)) return 0n;
    reserves.set(p.id, xIsA ? [ra + amount, rb - out] : [ra - out, rb + amount]);
    amount = out;
  }
  return amount;
}

describe('native-swap-quote', () => {
  test.each([
    ['100 NATIVE -> USDN', 'NATIVE', 'USDN', 100n * COIN],
    ['0.01 NBTC -> GOLD', 'NBTC', 'GOLD', 1_000_000n],
    ['1000 AGNT -> NETH', 'AGNT', 'NETH', 1_000_000_000n],
    ['5000 MEME -> USDN', 'MEME', 'USDN', 5000n],
  ])('%s: the best of every 1-3-hop path the chain accepts', async (request, from, to, amountIn) => {
    const { pools, token } = await api();
    const feeBps = params.economy.swapFeeBps;
    const paths = allSwapPaths(pools.pools, from, to);
    const outs = paths.map((p) => pathOut(pools.pools, p, amountIn, feeBps));
    const best = outs.reduce((m, x) => (x > m ? x : m), 0n);
    const r = await call('native-swap-quote', request);
    expect(r).toMatchObject({ feasible: true, amountOutUnits: best.toString(), amountOut: formatUnits(best, decimalsIn(token, to)) });
    expect(pathOut(pools.pools, r.path, amountIn, feeBps)).toBe(best);
  });

  test('unknown tokens, a zero amount, the same asset twice and excess decimals: 400 before any quote', async () => {
    expect(await refusal('native-swap-quote', '1 NOPE -> USDN')).toContain('no token NOPE on this chain');
    expect(await refusal('native-swap-quote', '1 NATIVE -> NOPE')).toContain('no token NOPE on this chain');
    for (const zero of ['0 NATIVE -> USDN', '0.000 NATIVE -> USDN']) expect(await refusal('native-swap-quote', zero)).toContain('does not have the expected format');
    expect(await refusal('native-swap-quote', '1 USDN -> usdn')).toContain('same asset');
    expect(await refusal('native-swap-quote', '1.001 GOLD -> USDN')).toContain('GOLD has 2 decimals');
    expect(await refusal('native-swap-quote', '1 GOLD -> USDN')).toBeUndefined();
  });
});

describe('inputs outside what the wallet services serve: 400 before any quote', () => {
  test('native-crypto-whale-watch and native-crypto-portfolio-tracker take addresses of this chain only', async () => {
    const foreign = ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', 'ltc1qg82gj2zwyfm8y2lgh8tztq2e8wzx2kd4yfzcfq', '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV'];
    for (const a of foreign) {
      expect({ a, r: await refusal('native-crypto-whale-watch', a) }).toEqual({ a, r: expect.any(String) });
      expect({ a, r: await refusal('native-crypto-portfolio-tracker', `portfolio:${a}`) }).toEqual({ a, r: expect.any(String) });
    }
    // An address of this chain's mainnet on the devnet: names no account here.
    const mainnet = encodeAddress(getDevnetActor('trader1').address, 'native');
    expect(await refusal('native-crypto-whale-watch', mainnet)).toContain('another network');
    expect(await refusal('native-crypto-portfolio-tracker', mainnet)).toContain('another network');
    // No request at all: nothing to watch.
    expect(registry.validateInput(registry.get('native-crypto-whale-watch')!, undefined).ok).toBe(false);
    expect(registry.validateInput(registry.get('native-crypto-portfolio-tracker')!, '').ok).toBe(false);
    expect(await refusal('native-crypto-whale-watch', trader1)).toBeUndefined();
    expect(await refusal('native-crypto-portfolio-tracker', `portfolio:${trader1}`)).toBeUndefined();
    expect(registry.get('native-crypto-whale-watch')!.requestFormat).toContain('of this chain');
    expect(JSON.stringify(registry.get('native-crypto-whale-watch')!.inputSchema)).not.toMatch(/EVM|Solana|Bitcoin|Litecoin/);
  });

  test('native-staking-rewards refuses zero in every spelling', async () => {
    for (const zero of ['0', '0native', '0.0native', '0NATIVE', '0 NATIVE', '0.00000000 native']) expect({ zero, r: await refusal('native-staking-rewards', zero) }).toEqual({ zero, r: expect.stringContaining('expected format') });
    for (const ok of ['0.00000001native', '1000', '2500.5 NATIVE']) expect(await refusal('native-staking-rewards', ok)).toBeUndefined();
  });
});

describe('native-crypto-whale-watch alert levels are relative', () => {
  test('every wallet: alerts only for movements large against the wallet or the market, each level by its shares', async () => {
    const { status } = await api();
    const circulating = Number(BigInt(status.supply.mintedBase) - BigInt(status.supply.burnedBase)) / 1e8;
    const holders = (await get('/api/v1/token/USDN')).topHolders.map((h: Json) => h.address) as string[];
    let listed = 0;
    let read = 0;
    for (const address of [trader1, devAddr, ...holders]) {
      const r = await call('native-crypto-whale-watch', address);
      read += r.movementsRead;
      listed += r.alertCount;
      for (const m of r.movements) {
        const supplyPct = (m.valueNative / circulating) * 100;
        const walletPct = (m.valueNative / Math.max(r.totalValueNative, m.valueNative)) * 100;
        expect(m.shareOfSupplyPct).toBeCloseTo(supplyPct, 4);
        const bySupply = supplyPct >= 5 ? 3 : supplyPct >= 1 ? 2 : supplyPct >= 0.1 ? 1 : 0;
        const byWallet = supplyPct < 0.01 ? 0 : walletPct >= 50 ? 3 : walletPct >= 25 ? 2 : walletPct >= 10 ? 1 : 0;
        expect({ tx: m.tx, level: m.alertLevel }).toEqual({ tx: m.tx, level: [undefined, 'medium', 'high', 'critical'][Math.max(bySupply, byWallet)] });
        // A movement worth under 1 % of the wallet is never rated high on the wallet's account.
        if (walletPct < 1 && m.alertLevel !== 'medium') expect(supplyPct).toBeGreaterThanOrEqual(1);
      }
    }
    // Not every movement is an alert.
    expect(read).toBeGreaterThan(0);
    expect(listed).toBeLessThan(read);
  });
});

describe('native-risk-score', () => {
  test('opposite swaps in one block are no flash-loan attack on a chain without flash loans', async () => {
    const heights = await Promise.all(roundTrip.map(async (id) => (await get(`/api/v1/tx/${id}`)).height));
    expect(heights[0]).toBe(heights[1]);
    const r = await call('native-risk-score', devAddr);
    expect(r.flags.flashLoanAttack).toMatchObject({ flagged: false, applicable: false });
    expect(r.weights.flashLoanAttack).toBe(0);
    expect(r.score).toBe(0);
  });
});
