/**
 * The chain-data services on the economy against a small deterministic chain
 * (test/services/economyFixture.ts). Expected numbers are computed by hand from the fixture's
 * transactions; the comments show the arithmetic.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServiceRegistry, executeService, type ServiceContext } from '../../services/index.js';
import { precheckRefusal } from '../../x402/core/paidCall.js';
import { encodeAddress } from '../../consensus/address.js';
import { cleanupTmp } from '../helpers/tmp.js';
import { encodeTx } from '../../consensus/tx.js';
import { NATIVE } from '../../consensus/ledger.js';
import { swap } from '../../consensus/txTypes/swap.js';
import { bridgeRecord } from '../../consensus/txTypes/bridgeRecord.js';
import { createEconomyFixture, eaddr, ealice, ebob, ecarol, economyContext, type EconomyFixture } from './economyFixture.js';

const registry = createServiceRegistry();
let f: EconomyFixture;
let ctx: ServiceContext;

beforeAll(async () => {
  f = await createEconomyFixture();
  ctx = economyContext(f, registry);
});

afterAll(async () => {
  await f?.close();
  await cleanupTmp();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The 400 the paid-call core answers before any quote (the service's precheck), or undefined when the request would be quoted. */
async function refusal(id: string, request: string) {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) throw new Error(`${id}: ${v.error.message}`);
  return precheckRefusal(def, v.input, ctx);
}

async function call(id: string, request?: string): Promise<Json> {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) throw new Error(`${id}: ${v.error.message}`);
  return (await executeService(def, ctx, v.input)) as Json;
}

// The one swap: 10 NATIVE into NATIVE-USDN (1,000 NATIVE : 500 USDN), fee 30 bps:
// out = ⌊10e8·9970·500e6 / (1000e8·10000 + 10e8·9970)⌋ = ⌊4.985e21 / 1.00997e15⌋ = 4,935,790 USDN units.
const SWAP_OUT = (10n ** 9n * 9970n * 500_000_000n) / (10n ** 11n * 10_000n + 10n ** 9n * 9970n);
const R_NATIVE = 1010n * 10n ** 8n;
const R_USDN = 500_000_000n - SWAP_OUT;

test('the fixture swap output is the hand-computed 4,935,790', () => {
  expect(SWAP_OUT).toBe(4_935_790n);
});

describe('native-stable-health', () => {
  test('USDN: backing = 3,000 NATIVE at the pool price / 1,000 USDN; at-risk between 100% and the 150% mint ratio', async () => {
    // collateral value = 3000e8 · 495,064,210 / 1010e8 = 1,470,487,752 units (1,470.487752 USD) → 147.0487% of 1,000 USDN.
    const value = (3000n * 10n ** 8n * R_USDN) / R_NATIVE;
    expect(value).toBe(1_470_487_752n);
    const r = await call('native-stable-health');
    expect(r.count).toBe(1);
    expect(r.stablecoins[0]).toMatchObject({
      symbol: 'USDN',
      supply: '1000',
      collateralNative: '3000',
      collateralValueUsd: '1470.487752',
      backingPct: 147.0487,
      redeemableSupply: '1000',
      health: 'at-risk',
      minRatioPct: 150,
      priceSource: 'pool',
      holders: 2,
    });
  });
});

describe('native-supply-audit', () => {
  test('GOLD: minted 10,000,000.00 of 10,000,000,000.00, issuer holds supply − pool − bob', async () => {
    const r = await call('native-supply-audit', 'gold');
    expect(r.scope).toBe('token');
    // 10^9 − 1,000,000 (pool) − 5,000 (bob) = 998,995,000 units = 9,989,950.00 GOLD; headroom (10^12 − 10^9)/10^12 = 99.9%.
    expect(r.tokens[0]).toMatchObject({ symbol: 'GOLD', minted: '10000000', burned: '0', supply: '10000000', maxSupply: '10000000000', headroom: '9990000000', headroomPct: 99.9, holders: 2, issuer: eaddr(ealice), issuerBalance: '9989950', issuerSharePct: 99.8995 });
  });
  test('empty: all tokens; a pool: its tokens; unknown names and NATIVE are refused before any quote, and refunded if paid', async () => {
    expect((await call('native-supply-audit', '')).tokens.map((t: Json) => t.symbol).sort()).toEqual(['GOLD', 'USDN']);
    expect((await call('native-supply-audit', 'NATIVE/USDN')).tokens.map((t: Json) => t.symbol)).toEqual(['USDN']);
    expect(await refusal('native-supply-audit', 'NOPE')).toMatchObject({ code: 'invalid_request', message: 'no token NOPE on this chain', reason: 'unknown_token' });
    expect(await refusal('native-supply-audit', 'GOLD/NOPE')).toMatchObject({ code: 'invalid_request', reason: 'unknown_pool' });
    expect(await refusal('native-supply-audit', 'native')).toMatchObject({ code: 'invalid_request', reason: 'not_a_token' });
    expect(registry.validateInput(registry.get('native-supply-audit')!, 'ab'.repeat(32)).ok).toBe(false);
    for (const ok of ['', 'gold', 'USDN/NATIVE']) expect(await refusal('native-supply-audit', ok)).toBeUndefined();
    await expect(call('native-supply-audit', 'NOPE')).rejects.toMatchObject({ code: 'unknown_token' });
  });
});

describe('native-holder-stats', () => {
  test('GOLD: HHI = 99.8995² + 0.0005² on 10^9 supply (the pool\'s reserve is not a wallet)', async () => {
    const r = await call('native-holder-stats', 'GOLD');
    const s = r.tokens[0];
    // alice 998,995,000 / 10^9 = 99.8995%, bob 5,000 / 10^9 = 0.0005%: HHI = 9979.91010025 + 0.00000025 → 9979.91.
    expect(s).toMatchObject({ holders: 2, top10ConcentrationPct: 99.9, hhi: 9979.91, hhiComplete: true, concentration: 'highly concentrated' });
    expect(s.largestWallets).toEqual([
      { rank: 1, address: eaddr(ealice), balance: '9989950', balanceUnits: '998995000', sharePct: 99.8995 },
      { rank: 2, address: eaddr(ebob), balance: '50', balanceUnits: '5000', sharePct: 0.0005 },
    ]);
  });
});

describe('native-token-audit', () => {
  test('GOLD: no backing, issuer concentration, mint headroom; pool depth = 2 × 100 NATIVE', async () => {
    const r = await call('native-token-audit', 'GOLD');
    expect(r).toMatchObject({ found: true, kind: 'token', backingPct: 0, frozen: false, hidden: false, holders: 2, issuerSharePct: 99.8995, mintHeadroomPct: 99.9 });
    expect(r.poolDepth.tvlNative).toBe(200);
    // 200 NATIVE at the pool's 495.06421/1010 USD = 98.0325...
    expect(r.poolDepth.tvlUsd).toBeCloseTo(200 * (Number(R_USDN) / 1e6 / 1010), 2);
    expect(r.riskFlags.map((x: Json) => x.flag)).toEqual(['noBacking', 'issuerConcentration', 'holderConcentration', 'thinLiquidity', 'mintHeadroom']);
    expect(r.riskLevel).toBe('medium');
  });
  test('USDN: backing 147.0487%, no mint headroom flag; unknown token is a clear not-found', async () => {
    const r = await call('native-token-audit', 'USDN');
    expect(r.backingPct).toBe(147.0487);
    expect(r.riskFlags.map((x: Json) => x.flag)).not.toContain('mintHeadroom');
    expect(await refusal('native-token-audit', 'NOPE')).toMatchObject({ code: 'invalid_request', message: 'no token NOPE on this chain', reason: 'unknown_token' });
    expect(await refusal('native-token-audit', 'NATIVE')).toMatchObject({ code: 'invalid_request', reason: 'not_a_token' });
    expect(await refusal('native-token-audit', 'usdn')).toBeUndefined();
    await expect(call('native-token-audit', 'NOPE')).rejects.toMatchObject({ code: 'unknown_token' });
  });
});

describe('native-price-feed', () => {
  test('price from NATIVE-USDN after the swap, its TVL and the swap\'s volume', async () => {
    const r = await call('native-price-feed');
    // 495.06421 USDN / 1010 NATIVE = 0.49016258… USD; TVL = 2 × 495.06421.
    expect(r.priceUsd).toBeCloseTo(495.06421 / 1010, 8);
    expect(r).toMatchObject({ source: 'pool', tvlUsd: 990.13, volume24h: { native: '10', usd: 4.94, swaps: 1 } });
    expect(r.pool).toMatchObject({ id: 'NATIVE-USDN', stablecoin: 'USDN', reserveNative: '1010', reserveStable: '495.06421' });
    // The pool's first candle opened after the swap at the same price: no change within the day.
    expect(r.change24hPct).toBe(0);
  });
});

describe('native-pool-analytics', () => {
  test('NATIVE/USDN: reserves, TVL, the swap\'s volume, APR from fees and the five-size impact table', async () => {
    const r = await call('native-pool-analytics', 'native/usdn');
    const price = Number(R_USDN) / 1e6 / 1010; // USD per NATIVE
    expect(r).toMatchObject({ found: true, pool: 'NATIVE-USDN', reserves: { NATIVE: '1010', USDN: '495.06421' }, tvlNative: 2020, feeBps: 30 });
    expect(r.tvlUsd).toBeCloseTo(2020 * price, 2);
    expect(r.volume24h).toMatchObject({ NATIVE: '10', USDN: '4.93579', swaps: 1 });
    // volume = 10 NATIVE × price; fees = 0.3% of it; APR = fees × 365 / TVL.
    expect(r.volume24h.usd).toBeCloseTo(10 * price, 2);
    expect(r.lpAprPct).toBeCloseTo(((10 * price * 0.003 * 365) / (2020 * price)) * 100, 3);
    expect(r.impactTable.map((x: Json) => x.sizePctOfReserve)).toEqual([0.1, 0.5, 1, 5, 10]);
    expect(r.impactTable.map((x: Json) => x.amountIn)).toEqual(['1.01', '5.05', '10.1', '50.5', '101']);
    // Selling a fraction f of the input reserve after the fee (γ = 0.997): impact = fγ / (1 + fγ).
    for (const row of r.impactTable) {
      const fg = (row.sizePctOfReserve / 100) * 0.997;
      expect(row.priceImpactPct).toBeCloseTo((fg / (1 + fg)) * 100, 3);
    }
    // The 10% row's output exactly: ⌊101e8·9970·R_USDN / (1010e8·10000 + 101e8·9970)⌋.
    const out10 = (101n * 10n ** 8n * 9970n * R_USDN) / (R_NATIVE * 10_000n + 101n * 10n ** 8n * 9970n);
    expect(r.impactTable[4].amountOut).toBe((Number(out10) / 1e6).toString());
  });
  test('a token picks its deepest pool; unknown pools are a clear not-found', async () => {
    expect((await call('native-pool-analytics', 'GOLD')).pool).toBe('GOLD-NATIVE');
    expect(await refusal('native-pool-analytics', 'GOLD/USDN')).toMatchObject({ code: 'invalid_request', message: 'no pool GOLD/USDN on this chain', reason: 'unknown_pool' });
    expect(await refusal('native-pool-analytics', 'NOPE')).toMatchObject({ code: 'invalid_request', reason: 'unknown_token' });
    expect(await refusal('native-pool-analytics', 'gold')).toBeUndefined();
    await expect(call('native-pool-analytics', 'GOLD/USDN')).rejects.toMatchObject({ code: 'unknown_pool' });
  });
});

describe('native-swap-quote', () => {
  test('100 NATIVE -> USDN: exact output, fee, impact, minimum at 0.5% slippage', async () => {
    const out = (100n * 10n ** 8n * 9970n * R_USDN) / (R_NATIVE * 10_000n + 100n * 10n ** 8n * 9970n);
    const r = await call('native-swap-quote', '100 native → usdn');
    expect(r).toMatchObject({ feasible: true, amountOutUnits: out.toString(), route: 'direct', path: ['NATIVE', 'USDN'], fees: [{ amount: '0.3', asset: 'NATIVE', pool: 'NATIVE-USDN' }], slippageBps: 50, minimumReceivedUnits: ((out * 9950n) / 10_000n).toString() });
    // impact = fγ/(1+fγ) with f = 100/1010.
    const fg = (100 / 1010) * 0.997;
    expect(r.priceImpactPct).toBeCloseTo((fg / (1 + fg)) * 100, 3);
  });
  test('GOLD -> USDN has no direct pool and routes via NATIVE; impossible pairs say why', async () => {
    const r = await call('native-swap-quote', '1000 GOLD -> USDN');
    // hop 1: 100,000 GOLD units into GOLD-NATIVE (1,000,000 : 100e8); hop 2: its NATIVE into NATIVE-USDN.
    const n1 = (100_000n * 9970n * 100n * 10n ** 8n) / (1_000_000n * 10_000n + 100_000n * 9970n);
    const n2 = (n1 * 9970n * R_USDN) / (R_NATIVE * 10_000n + n1 * 9970n);
    expect(r).toMatchObject({ feasible: true, route: 'via NATIVE', amountOutUnits: n2.toString() });
    // The only path over the fixture's two pools.
    expect(r.routes).toEqual([{ path: 'GOLD -> NATIVE -> USDN', available: true, amountOut: r.amountOut }]);
    // Requests this chain cannot quote are refused before any quote (400); a paid run of one is refunded.
    expect(await precheckRefusal(registry.get('native-swap-quote')!, '1 NOPE -> USDN', ctx)).toMatchObject({ code: 'invalid_request', message: 'no token NOPE on this chain', reason: 'unknown_token' });
    expect(await precheckRefusal(registry.get('native-swap-quote')!, '1.001 GOLD -> USDN', ctx)).toMatchObject({ code: 'invalid_request', message: 'GOLD has 2 decimals: 1.001 has more' });
    await expect(call('native-swap-quote', '1 NOPE -> USDN')).rejects.toMatchObject({ code: 'unknown_token' });
    // An amount no route can fill (1 base unit of NATIVE rounds to zero USDN) has no quote: 400 before payment, a refund after.
    expect(await precheckRefusal(registry.get('native-swap-quote')!, '0.00000001 NATIVE -> USDN', ctx)).toMatchObject({ code: 'invalid_request', reason: 'insufficient_liquidity' });
    await expect(call('native-swap-quote', '0.00000001 NATIVE -> USDN')).rejects.toMatchObject({ code: 'insufficient_liquidity' });
  });
});

describe('native-swap-quote of a frozen token', () => {
  test('the chain refuses a swap of a frozen token (token_frozen): no feasible quote, refused before payment; routes through it are left out', async () => {
    const g = await createEconomyFixture({ tokenPool: true, frozenGold: true });
    try {
      const gctx = economyContext(g, registry);
      // The reference: the chain's own admission of a swap of GOLD after its issuer froze it.
      const tx = g.sign(ebob, swap, { path: ['GOLD', NATIVE], amountIn: 100n, minOut: 1n, expiryHeight: 100 });
      await expect(g.pool.add(encodeTx(tx))).rejects.toMatchObject({ code: 'token_frozen' });
      const def = registry.get('native-swap-quote')!;
      for (const req of ['1 GOLD -> NATIVE', '1 NATIVE -> GOLD']) {
        expect(await precheckRefusal(def, req, gctx)).toMatchObject({ code: 'invalid_request', reason: 'token_frozen' });
        await expect(executeService(def, gctx, req)).rejects.toMatchObject({ code: 'token_frozen' });
      }
      // NATIVE -> USDN stays quotable, but not through the GOLD pools (NATIVE -> GOLD -> USDN).
      const r = (await executeService(def, gctx, '1 NATIVE -> USDN')) as Json;
      expect(r).toMatchObject({ feasible: true, path: ['NATIVE', 'USDN'] });
      expect(r.routes.map((x: Json) => x.path)).toEqual(['NATIVE -> USDN']);
    } finally {
      await g.close();
    }
  });
});

describe('GET /api/v1/tx of a bridge_record', () => {
  test('fee is the transaction\'s fee (its size at the fee rate it paid); the bridge\'s charge is bridgeFee', async () => {
    const { txToJson } = await import('../../node/api/http.js');
    const { decodeTx } = await import('../../consensus/tx.js');
    const { formatAmount } = await import('../../consensus/amount.js');
    const block = (await f.chain.getBlock(f.chain.getEntryByHeight(2)!.hashHex))!;
    const i = block.txs.findIndex((t) => t.type === bridgeRecord.type);
    const bytes = encodeTx(block.txs[i]);
    const tx = decodeTx(bytes);
    const j = await txToJson(tx, bytes, f.chain.params, f.chain);
    // The reference: the envelope as the chain decodes it; the fixture paid 1 base unit per byte, the bridge charged 1,000.
    expect(tx.fee).toBe(BigInt(bytes.length));
    expect(j).toMatchObject({ type: 'bridge_record', fee: formatAmount(tx.fee), feeBase: tx.fee.toString(), size: bytes.length, bridgeFee: '0.00001' });
    expect(j.fee).not.toBe(j.bridgeFee);
  });
});

describe('native-bridge-status', () => {
  test('the 10 networks with vaults, floats, fees and record counts', async () => {
    const r = await call('native-bridge-status');
    expect(r.count).toBe(10);
    expect(r.networks[3]).toMatchObject({ network: 'bitcoin', vault: 'vault-bitcoin', custodyFloat: '7', bridgedIn: '7', bridgedOut: '0', fees: '0.00001', inRecords: 1, outRecords: 0, lastRecordHeight: 2 });
    expect(r.networks[0]).toMatchObject({ network: 'base', custodyFloat: '0', inRecords: 0, lastRecordHeight: null });
    expect(r.totalCustodyFloat).toBe('7');
  });
});

describe('native-price-history', () => {
  test('one hourly candle from the one swap, in USDN per NATIVE', async () => {
    const r = await call('native-price-history');
    const p = Number(R_USDN) / 1e6 / 1010;
    expect(r).toMatchObject({ pool: 'NATIVE-USDN', base: 'NATIVE', quote: 'USDN', window: { hours: 24, candle: '1h' } });
    expect(r.candles).toHaveLength(1);
    expect(r.candles[0]).toMatchObject({ volumeNative: '10', volumeQuote: '4.93579', swaps: 1 });
    for (const k of ['open', 'high', 'low', 'close']) expect(r.candles[0][k]).toBeCloseTo(p, 8);
  });
});

describe('native-token-launch-check', () => {
  test('a free symbol passes every rule; a taken one, a bad format and excess decimals fail with their codes', async () => {
    const ok = await call('native-token-launch-check', 'SILVR|Silver|8|21000000');
    expect(ok).toMatchObject({ valid: true, maxSupplyUnits: '2100000000000000', warnings: [] });
    expect(ok.rules.map((x: Json) => x.rule)).toEqual(['symbol format', 'symbol free', 'name', 'decimals', 'max supply bounds']);
    const taken = await call('native-token-launch-check', 'GOLD|Gold|2|100');
    expect(taken.valid).toBe(false);
    expect(taken.rules.find((x: Json) => !x.passed)).toMatchObject({ rule: 'symbol free', code: 'token_symbol_taken' });
    expect(taken.warnings).toContain('name is already used by GOLD');
    const bad = await call('native-token-launch-check', 'golf|Golf|2|1.234');
    expect(bad.rules.filter((x: Json) => !x.passed).map((x: Json) => x.code)).toEqual(['token_bad_symbol', 'token_bad_supply']);
    expect(bad.warnings).toContain('symbol is one character away from existing token(s) GOLD');
    const big = await call('native-token-launch-check', 'BIG|Big|18|99999999999');
    expect(big.rules.find((x: Json) => !x.passed)).toMatchObject({ rule: 'max supply bounds', code: 'token_bad_supply' });
  });
});

describe('native-whale-watch', () => {
  test('threshold in NATIVE value over the window; tokens valued through their NATIVE pool', async () => {
    const r = await call('native-whale-watch', '40');
    expect(r.window).toEqual({ fromHeight: 0, toHeight: 3, blocks: 4 });
    expect(r.transfers.map((t: Json) => [t.asset, t.amount, t.from, t.to])).toEqual([['NATIVE', '50', eaddr(ealice), eaddr(ecarol)]]);
    // 5,000 GOLD units × (100e8 / 1,000,000) base units each = 0.5 NATIVE... at the pool price when the scan runs.
    const low = await call('native-whale-watch', '0.5');
    expect(low.transfers.map((t: Json) => t.asset)).toEqual(['NATIVE', 'GOLD']);
    expect(low.transfers[1]).toMatchObject({ amount: '50', valueNative: 0.5 });
    expect((await call('native-whale-watch')).threshold).toBe('1000');
  });
  test('a past transfer is valued at the price of its time from the chain\'s swap log, not at today\'s', async () => {
    const g = await createEconomyFixture({ goldRally: true });
    try {
      const gctx = economyContext(g, registry);
      // The reference: the chain's record of bob's GOLD purchase (block 5) after alice sent carol 500,000 GOLD units (block 4).
      const [rally] = await g.chain.economy!.swaps({ pool: 'GOLD-NATIVE', since: 0, limit: 1 });
      expect(rally).toMatchObject({ height: 5, assetIn: 'NATIVE', amountIn: String(5000n * 10n ** 8n) });
      const goldBefore = BigInt(rally.reserveA) + BigInt(rally.amountOut);
      const nativeBefore = BigInt(rally.reserveB) - BigInt(rally.amountIn);
      const thenNative = (500_000 * Number(nativeBefore)) / Number(goldBefore) / 1e8;
      const nowNative = (500_000 * Number(rally.reserveB)) / Number(rally.reserveA) / 1e8;
      expect(thenNative).toBe(50);
      expect(nowNative).toBeGreaterThan(100_000);
      const r = (await executeService(registry.get('native-whale-watch')!, gctx, '40')) as Json;
      const gift = r.transfers.find((t: Json) => t.asset === 'GOLD' && t.to === eaddr(ecarol));
      expect(gift).toMatchObject({ height: 4, amount: '5000', valueNative: thenNative });
      // At today's price it would be ~130,000 NATIVE and the largest transfer listed at a 1,000 NATIVE threshold.
      const high = (await executeService(registry.get('native-whale-watch')!, gctx, '1000')) as Json;
      expect(high.transfers.filter((t: Json) => t.asset === 'GOLD')).toEqual([]);
      expect(r.method).toContain('price of its time');
    } finally {
      await g.close();
    }
  });
});

describe('native-wallet-portfolio', () => {
  test('bob: balance, a flexible stake, GOLD and USDN valued through their NATIVE pools', async () => {
    const r = await call('native-wallet-portfolio', eaddr(ebob));
    const price = Number(R_USDN) / 1e6 / 1010;
    const balance = (await f.chain.getAccount(ebob.address)).balance;
    expect(r.balance).toMatchObject({ asset: 'NATIVE', amount: (Number(balance) / 1e8).toString() });
    expect(r.stakes).toHaveLength(1);
    expect(r.stakes[0]).toMatchObject({ kind: 'stake', amount: '10', valueNative: 10, detail: { tier: 'flexible' } });
    // GOLD: 5,000 units × (100e8 / 1,000,000) = 0.5 NATIVE; USDN: 4,935,790 × (1010e8 / R_USDN) / 1e8 NATIVE.
    const gold = r.tokens.find((t: Json) => t.asset === 'GOLD');
    expect(gold).toMatchObject({ amount: '50', valueNative: 0.5 });
    expect(gold.valueUsd).toBeCloseTo(0.5 * price, 4);
    const usdn = r.tokens.find((t: Json) => t.asset === 'USDN');
    expect(usdn.valueNative).toBeCloseTo((4_935_790 * 1010) / Number(R_USDN), 6);
    expect(r.totalValueNative).toBeCloseTo(Number(balance) / 1e8 + 10 + 0.5 + usdn.valueNative, 6);
    expect(r.lpPositions).toEqual([]);
  });
  test('alice: her LP positions with underlying amounts = shares × reserves / LP supply', async () => {
    const r = await call('native-wallet-portfolio', eaddr(ealice));
    const pool = (await f.chain.economy!.getPoolRecord('NATIVE-USDN'))!;
    const lp = r.lpPositions.find((p: Json) => p.asset === 'NATIVE-USDN');
    const shares = BigInt(lp.amount);
    // The pool's first deposit minted √(1000e8 · 500e6) shares; alice holds all but the locked minimum.
    expect(pool.lpSupply).toBe(7_071_067_811n);
    expect(shares).toBeLessThan(pool.lpSupply);
    expect(lp.detail.underlying).toEqual({ NATIVE: (Number((shares * R_NATIVE) / pool.lpSupply) / 1e8).toString(), USDN: (Number((shares * R_USDN) / pool.lpSupply) / 1e6).toString() });
    expect(shares).toBe(pool.lpSupply - 1000n);
    // A mainnet address is well-formed but names no account of this devnet.
    // A mainnet address on this devnet names no account here: refused before any quote, refunded if paid.
    expect(await refusal('native-wallet-portfolio', encodeAddress(ealice.address, 'native'))).toMatchObject({ code: 'invalid_request', reason: 'foreign_address' });
    expect(await refusal('native-wallet-portfolio', eaddr(ealice))).toBeUndefined();
    await expect(call('native-wallet-portfolio', encodeAddress(ealice.address, 'native'))).rejects.toMatchObject({ code: 'foreign_address' });
  });
});

describe('native-market-summary', () => {
  test('price, TVL of both pools, the swap\'s 24h volume, pools deepest first, the latest swap', async () => {
    const r = await call('native-market-summary');
    const price = Number(R_USDN) / 1e6 / 1010;
    // TVL: NATIVE-USDN 2,020 NATIVE + GOLD-NATIVE 200 NATIVE.
    expect(r.tvlUsd).toBeCloseTo(2220 * price, 1);
    expect(r.volume24hNative).toBe(10);
    expect(r).toMatchObject({ swaps24h: 1, poolCount: 2, priceSource: 'pool' });
    expect(r.topPools.map((p: Json) => p.id)).toEqual(['NATIVE-USDN', 'GOLD-NATIVE']);
    expect(r.latestSwaps).toEqual([expect.objectContaining({ height: 3, pool: 'NATIVE-USDN', sender: eaddr(ebob), sold: '10 NATIVE', bought: '4.93579 USDN' })]);
  });
});

describe('native-bridge-route-check', () => {
  test('bitcoin → native is feasible; the fee rate is recorded fees / volume (1,000 / 7e8)', async () => {
    const r = await call('native-bridge-route-check', 'bitcoin-native-100');
    expect(r).toMatchObject({ feasible: true, route: 'bitcoin -> native', reasons: [] });
    // ⌈100e8 × 1,000 / 7e8⌉ = ⌈14,285.7⌉ = 14,286 base units; rate 1,000 / 7e8 = 0.000143%.
    expect(r.legs[0]).toMatchObject({ network: 'bitcoin', direction: 'in', feeRatePct: 0.000143, estimatedFee: '0.00014286', estimatedSeconds: 3 });
    expect(r.estimatedFee).toBe('0.00014286');
  });
  test('out above a vault\'s float, unknown networks and same-network routes say why', async () => {
    const out = await call('native-bridge-route-check', 'native-bitcoin-8');
    expect(out).toMatchObject({ feasible: false, reasons: ['the bitcoin vault\'s custody float is 7 NATIVE, below 8 NATIVE'] });
    expect((await call('native-bridge-route-check', 'native-bitcoin-7')).feasible).toBe(true);
    // Routes this chain's bridge does not serve: 400 before any quote (and a refund if paid).
    expect(await refusal('native-bridge-route-check', 'mars-bitcoin-1')).toMatchObject({ code: 'invalid_request', reason: 'unknown_network', message: expect.stringContaining('mars is not a bridge network of this chain') });
    expect(await refusal('native-bridge-route-check', 'base-base-1')).toMatchObject({ code: 'invalid_request', reason: 'same_network' });
    expect(await refusal('native-bridge-route-check', 'base-native-0.000')).toMatchObject({ code: 'invalid_request', reason: 'zero_amount' });
    expect(await refusal('native-bridge-route-check', 'base-native-1.000000001')).toMatchObject({ code: 'invalid_request', reason: 'too_many_decimals' });
    expect(await refusal('native-bridge-route-check', 'native-bitcoin-8')).toBeUndefined();
    await expect(call('native-bridge-route-check', 'mars-bitcoin-1')).rejects.toMatchObject({ code: 'unknown_network' });
    const via = await call('native-bridge-route-check', 'bitcoin-base-1');
    expect(via).toMatchObject({ route: 'bitcoin -> native -> base', feasible: false, estimatedFee: null });
  });
});

describe('native-arb-scan', () => {
  test('without a token/token pool every asset has one price and there is no spread', async () => {
    const r = await call('native-arb-scan');
    expect(r.widestSpread).toBeNull();
    expect(r.assets.find((a: Json) => a.asset === 'GOLD').prices).toEqual([{ source: 'GOLD-NATIVE', via: null, priceNative: 0.01, pools: ['GOLD-NATIVE'] }]);
  });
  test('a GOLD/USDN pool implies GOLD at 0.02 USDN × 2.0401 NATIVE; the spread and the 3-hop route that captures it', async () => {
    const g = await createEconomyFixture({ tokenPool: true });
    try {
      const r = (await executeService(registry.get('native-arb-scan')!, economyContext(g, registry), '')) as Json;
      // GOLD direct: 100 NATIVE / 10,000 GOLD = 0.01; via USDN: (1 USDN / 50 GOLD) × (1010 / 495.06421) NATIVE per USDN.
      const usdnNative = 1010 / (Number(R_USDN) / 1e6);
      const viaUsdn = 0.02 * usdnNative;
      const gold = r.assets.find((a: Json) => a.asset === 'GOLD');
      expect(gold.prices.map((p: Json) => p.via)).toEqual([null, 'USDN']);
      expect(gold.prices[1].priceNative).toBeCloseTo(viaUsdn, 8);
      expect(gold.spreadPct).toBeCloseTo(((viaUsdn - 0.01) / 0.01) * 100, 3);
      expect(r.widestSpread).toMatchObject({ asset: 'GOLD', buyAt: 'GOLD-NATIVE', sellAt: 'GOLD-USDN', path: ['NATIVE', 'GOLD', 'USDN', 'NATIVE'], hops: 3, profitableAtSpot: true });
      // 1 − 0.997³ = 0.897302…%.
      expect(r.widestSpread.feeCostPct).toBeCloseTo(0.8973, 4);
    } finally {
      await g.close();
    }
  });
});

describe('native-crypto-portfolio-tracker', () => {
  test('bob: allocation of his holdings and the P/L of the USDN he bought for 10 NATIVE (average cost)', async () => {
    const r = await call('native-crypto-portfolio-tracker', `portfolio:${eaddr(ebob)}`);
    const price = Number(R_USDN) / 1e6 / 1010;
    // Cost 10 NATIVE for 4.93579 USDN; marked at 1010e8 / R_USDN base units per USDN unit:
    // value = 4,935,790 × 1010 / 495,064,210 = 10.06958… NATIVE → unrealized +0.06958… NATIVE.
    const value = (4_935_790 * 1010) / Number(R_USDN);
    const usdn = r.pnl.positions.find((x: Json) => x.asset === 'USDN');
    expect(usdn).toMatchObject({ unitsFromSwaps: '4.93579', costNative: 10, realizedPnlNative: 0 });
    expect(usdn.averageCostNative).toBeCloseTo(10 / 4.93579, 8);
    expect(usdn.unrealizedPnlNative).toBeCloseTo(value - 10, 7);
    expect(usdn.unrealizedPnlUsd).toBeCloseTo((value - 10) * price, 4);
    expect(r.pnl).toMatchObject({ swapsRead: 1, realizedNative: 0 });
    const alloc = r.holdings.reduce((s: number, h: Json) => s + h.allocationPct, 0);
    expect(alloc).toBeCloseTo(100, 2);
    expect(r.holdings[0]).toMatchObject({ kind: 'balance', asset: 'NATIVE' });
    expect(r.holdings.find((h: Json) => h.asset === 'GOLD').allocationPct).toBeCloseTo((0.5 / r.totalValueNative) * 100, 3);
  });
  test('average cost: selling half for NATIVE realizes proceeds − half the cost; a token-to-token swap carries the cost over', async () => {
    const { averageCost } = await import('../../services/crypto-portfolio-tracker.js');
    const pos = averageCost([
      { assetIn: 'NATIVE', assetOut: 'AAA', amountIn: 100n, amountOut: 10n },
      { assetIn: 'NATIVE', assetOut: 'AAA', amountIn: 200n, amountOut: 10n }, // 20 units for 300: 15 each
      { assetIn: 'AAA', assetOut: 'NATIVE', amountIn: 10n, amountOut: 180n }, // cost 150 → realized +30
      { assetIn: 'AAA', assetOut: 'BBB', amountIn: 5n, amountOut: 50n }, // cost 75 moves to BBB
    ]);
    expect(pos.get('AAA')).toEqual({ units: 5n, cost: 75, realized: 30 });
    expect(pos.get('BBB')).toEqual({ units: 50n, cost: 75, realized: 0 });
  });
  test('an EVM address names nothing on this chain: refused before any quote', async () => {
    const def = registry.get('native-crypto-portfolio-tracker')!;
    expect(registry.validateInput(def, '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
  });
});

describe('native-crypto-whale-watch', () => {
  test('alice (newest first): levels relative to the circulating supply and her wallet; the 200 NATIVE GOLD-NATIVE liquidity and the 50 NATIVE gift are below them', async () => {
    const r = await call('native-crypto-whale-watch', eaddr(ealice));
    const supply = await f.chain.getSupply();
    const circulating = Number(supply.minted - supply.burned) / 1e8;
    // NATIVE-USDN add at block 2, valued at the price of then: 500 USDN at 1,000e8 / 500e6 base units each (the
    // pool's reserves before bob's swap of block 3, from the chain's swap log) = 1,000 NATIVE; today's price would give 1,020.07….
    const [bobSwap] = await f.chain.economy!.swaps({ pool: 'NATIVE-USDN', since: 0, limit: 1 });
    expect(bobSwap).toMatchObject({ height: 3, assetIn: 'NATIVE', amountIn: String(10n * 10n ** 8n), reserveA: String(R_NATIVE), reserveB: String(R_USDN) });
    const usdnSide = (500_000_000 * Number(R_NATIVE - 10n * 10n ** 8n)) / Number(R_USDN + SWAP_OUT) / 1e8;
    expect(usdnSide).toBe(1000);
    // Both are 0.1-1 % of the ~300,000 NATIVE in circulation (medium) and under 10 % of alice's wallet.
    expect(r.movements.map((m: Json) => [m.kind, m.alertLevel])).toEqual([['liquidity_add', 'medium'], ['token_stable_mint', 'medium']]);
    expect(r.movements[0].valueNative).toBeCloseTo(1000 + usdnSide, 6);
    expect(r.movements[0].shareOfSupplyPct).toBeCloseTo(((1000 + usdnSide) / circulating) * 100, 4);
    expect(r.movements[1]).toMatchObject({ valueNative: 3000, asset: 'NATIVE' });
    expect(r.movements[1].shareOfSupplyPct).toBeCloseTo((3000 / circulating) * 100, 4);
    expect(r.movements.every((m: Json) => m.shareOfPortfolioPct < 10)).toBe(true);
    // Read: the two liquidity adds, the mint, the GOLD and NATIVE transfers.
    expect(r.movementsRead).toBeGreaterThan(r.alertCount);
    // Flows: out 50 NATIVE (to carol) + 5,000 GOLD units (to bob) = 0.5 NATIVE; in nothing.
    expect(r.holdingAnalysis.changes[0]).toMatchObject({ windowBlocks: 1200, inNative: 0, outNative: 50.5, netNative: -50.5 });
  });
  test('a past movement is valued at the price of its time from the chain\'s swap log, not at today\'s', async () => {
    const g = await createEconomyFixture({ goldRally: true });
    try {
      const gctx = economyContext(g, registry);
      const eco = g.chain.economy!;
      // The reference: the chain's own record of bob's GOLD purchase after carol received her GOLD.
      const [rally] = await eco.swaps({ pool: 'GOLD-NATIVE', since: 0, limit: 1 });
      expect(rally).toMatchObject({ height: 5, assetIn: 'NATIVE', amountIn: String(5000n * 10n ** 8n) });
      // Reserves before it (the pool keeps the whole input): GOLD-NATIVE 1,000,000 GOLD units : 100 NATIVE, 10^4 base units per GOLD unit.
      const goldBefore = BigInt(rally.reserveA) - BigInt(rally.amountOut) * -1n;
      const nativeBefore = BigInt(rally.reserveB) - BigInt(rally.amountIn);
      expect([goldBefore, nativeBefore]).toEqual([1_000_000n, 100n * 10n ** 8n]);
      const thenNative = (500_000 * Number(nativeBefore)) / Number(goldBefore) / 1e8;
      const nowNative = (500_000 * Number(rally.reserveB)) / Number(rally.reserveA) / 1e8;
      expect(thenNative).toBe(50);
      expect(nowNative).toBeGreaterThan(100_000);
      const r = (await executeService(registry.get('native-crypto-whale-watch')!, gctx, eaddr(ecarol))) as Json;
      // The gift was worth 50 NATIVE then: 0.0166 % of the supply and a sliver of her wallet now, so no alert
      // (at today's price it would be a critical ~43 % of the supply); it is read, and the 24 h inflow counts it at 50.
      expect(r.movements.filter((m: Json) => m.asset === 'GOLD')).toEqual([]);
      expect(r.holdingAnalysis.changes[1]).toMatchObject({ windowBlocks: 28800, inNative: 50 + 50, outNative: 0 });
      // Holdings stay at today's price: carol's GOLD is now worth far more than the gift was.
      expect(r.totalValueNative).toBeGreaterThan(100_000);
      expect(r.movementsUnpriced).toBe(0);
    } finally {
      await g.close();
    }
  });
  test('carol: one holding, HHI 10,000; the gift that is all her wallet (and 0.0166 % of the supply) is critical; foreign addresses are refused', async () => {
    const r = await call('native-crypto-whale-watch', eaddr(ecarol));
    expect(r).toMatchObject({ alertCount: 1, totalValueNative: 50, movements: [{ kind: 'transfer_in', valueNative: 50, shareOfPortfolioPct: 100, alertLevel: 'critical' }] });
    expect(r.holdingAnalysis).toMatchObject({ largestHolding: { asset: 'NATIVE', sharePct: 100 }, concentrationHhi: 10000 });
    expect(r.holdingAnalysis.changes[1]).toMatchObject({ windowBlocks: 28800, inNative: 50, netPctOfHoldings: 100 });
    expect(registry.validateInput(registry.get('native-crypto-whale-watch')!, '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa').ok).toBe(false);
  });
});

describe('native-market-report', () => {
  test('a markdown report with every section, from the same figures as the other services', async () => {
    const r = await call('native-market-report');
    const md: string = r.markdown;
    for (const h of ['## Price', '## Pools', '## Movers (24h)', '## Stablecoins', '## Staking', '## Bridges', '## Notable transfers']) expect(md).toContain(h);
    expect(md).toContain('- USDN: supply 1000, backing 147.0487%, at-risk');
    expect(md).toContain('- staked 10 NATIVE in 1 stakes');
    expect(md).toContain('- bitcoin: float 7, 1 in / 0 out');
    expect(md).toContain('| NATIVE-USDN |');
    // One candle per pool at most: open = close of the same post-swap price → 0% for NATIVE-USDN.
    expect(r.data.movers).toEqual([{ pool: 'NATIVE-USDN', changePct: 0, swaps: 1 }]);
    expect(r.data.notableTransfers).toBe(0);
  });
});

describe('native-risk-score', () => {
  test('an OFAC-listed Lazarus Group address: sanctionHit (60) + exploitContract (25) = 85, with the list and its date', async () => {
    const r = await call('native-risk-score', '0x098B716B8Aaf21512996dC57EB0615e2383E2f96');
    expect(r).toMatchObject({ family: 'evm', onThisChain: false, score: 85, level: 'high' });
    expect(r.flags.sanctionHit.flagged).toBe(true);
    expect(r.flags.sanctionHit.evidence.matches[0]).toMatchObject({ list: 'OFAC', name: 'LAZARUS GROUP', listDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}/) });
    expect(r.flags.exploitContract.flagged).toBe(true);
    expect(r.flags.mixerInteraction.flagged).toBe(false);
    expect(r.flags.washTrading).toMatchObject({ flagged: false, evidence: expect.stringContaining('not an address of this chain') });
  });
  test('Tornado Cash: sanctionHit + mixerInteraction = 85', async () => {
    const r = await call('native-risk-score', '0x12D66f87A04A9E220743712cE6d9bB1B5616B8Fc');
    expect(r.score).toBe(85);
    expect(r.flags.mixerInteraction.flagged).toBe(true);
  });
  test('bob on this chain: no flags, score 0, his counterparties screened', async () => {
    const r = await call('native-risk-score', eaddr(ebob));
    expect(r).toMatchObject({ onThisChain: true, score: 0, level: 'low' });
    expect(r.flags.washTrading.evidence.roundTrips).toBe(0);
    expect(r.flags.sanctionHit.evidence.screened).toBe(2); // bob and alice (his GOLD sender)
  });
  test('moderation labels on chain: alice sent carol (labelled mixer) NATIVE and bob (labelled exploit) GOLD: 25 + 25 = 50; carol, herself a labelled mixer, and bob, himself exploit-labelled, score high', async () => {
    const g = await createEconomyFixture({ labels: true });
    try {
      const run = async (addr: string) => (await executeService(registry.get('native-risk-score')!, economyContext(g, registry), addr)) as Json;
      const a = await run(eaddr(ealice));
      expect(a).toMatchObject({ onThisChain: true, score: 50, level: 'medium' });
      expect(a.flags.sanctionHit.flagged).toBe(false);
      expect(a.flags.mixerInteraction.flagged).toBe(true);
      expect(a.flags.mixerInteraction.evidence.labelled).toEqual([{ address: eaddr(ecarol), role: 'counterparty', label: 'mixer', reason: 'pools deposits to hide their source', labelledAtHeight: 4 }]);
      expect(a.flags.exploitContract.evidence.labelled).toEqual([{ address: eaddr(ebob), role: 'counterparty', label: 'exploit', reason: 'drained a lending pool', labelledAtHeight: 4 }]);
      // A wallet that is itself labelled: as risky as a mixer or exploit group's address OFAC lists (Tornado Cash, Lazarus Group: 85).
      const listedMixer = (await call('native-risk-score', '0x12D66f87A04A9E220743712cE6d9bB1B5616B8Fc')) as Json;
      expect(listedMixer.flags.sanctionHit.evidence.matches[0]).toMatchObject({ list: 'OFAC', name: expect.stringMatching(/tornado/i) });
      const c = await run(eaddr(ecarol));
      expect(c).toMatchObject({ score: listedMixer.score, level: 'high' });
      expect(c.flags.mixerInteraction).toMatchObject({ flagged: true, evidence: { labelled: [{ address: eaddr(ecarol), role: 'wallet', label: 'mixer' }] } });
      const b = await run(eaddr(ebob));
      expect(b).toMatchObject({ score: 85, level: 'high' });
      expect(b.flags.exploitContract.evidence.labelled[0]).toMatchObject({ address: eaddr(ebob), role: 'wallet', label: 'exploit' });
      expect(b.flags.mixerInteraction.flagged).toBe(false);
      // Without the fixture's labels (same chain up to block 3) nothing is flagged.
      expect((await call('native-risk-score', eaddr(ealice))).score).toBe(0);
    } finally {
      await g.close();
    }
  });
  test('the heuristics by hand: 3 swap round trips in one pool flag wash trading', async () => {
    const { washTrading } = await import('../../services/market/riskHeuristics.js');
    const sw = (height: number, assetIn: string, assetOut: string, amountIn = '100') => ({ height, kind: 'swap', pool: 'NATIVE-USDN', assetIn, assetOut, amountIn, amountOut: '1' });
    const acts = [sw(10, 'NATIVE', 'USDN'), sw(20, 'USDN', 'NATIVE'), sw(30, 'NATIVE', 'USDN'), sw(40, 'USDN', 'NATIVE'), sw(50, 'NATIVE', 'USDN'), sw(60, 'USDN', 'NATIVE')];
    expect(washTrading(acts)).toMatchObject({ flagged: true, roundTrips: 3, counterparties: ['NATIVE-USDN'] });
    // Two round trips are not enough; a reversal 101 blocks later is outside the window.
    expect(washTrading(acts.slice(0, 4)).flagged).toBe(false);
    expect(washTrading([sw(10, 'NATIVE', 'USDN'), sw(111, 'USDN', 'NATIVE')]).roundTrips).toBe(0);
  });

});
