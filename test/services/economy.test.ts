/**
 * The chain-data services on the economy (issue 14) against a small deterministic chain
 * (test/services/economyFixture.ts). Expected numbers are computed by hand from the fixture's
 * transactions; the comments show the arithmetic.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServiceRegistry, executeService, type ServiceContext } from '../../services/index.js';
import { cleanupTmp } from '../helpers/tmp.js';
import { createEconomyFixture, eaddr, ealice, ebob, economyContext, type EconomyFixture } from './economyFixture.js';

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
  test('empty: all tokens; a pool: its tokens; unknown names are a clear not-found', async () => {
    expect((await call('native-supply-audit', '')).tokens.map((t: Json) => t.symbol).sort()).toEqual(['GOLD', 'USDN']);
    expect((await call('native-supply-audit', 'NATIVE/USDN')).tokens.map((t: Json) => t.symbol)).toEqual(['USDN']);
    expect(await call('native-supply-audit', 'NOPE')).toMatchObject({ found: false, reason: 'no token NOPE on this chain' });
    expect(await call('native-supply-audit', 'ab'.repeat(32))).toMatchObject({ found: false });
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
    expect(await call('native-token-audit', 'NOPE')).toEqual({ symbol: 'NOPE', found: false, reason: 'no token NOPE on this chain' });
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
