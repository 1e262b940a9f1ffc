import { describe, expect, test } from '@jest/globals';
import { EconomyErrorCode as E, TxErrorCode } from '../../consensus/errors.js';
import { COIN } from '../../consensus/params.js';
import { MAX_AMOUNT } from '../../consensus/amount.js';
import { balanceOf, NATIVE } from '../../consensus/ledger.js';
import { getBridgeTotals, getPool, getStakeTotals, getToken, lpKey, TokenFlag, TokenKind } from '../../consensus/economyState.js';
import { decodeVarintValue } from '../../consensus/ledger.js';
import { tokenIssue } from '../../consensus/txTypes/tokenIssue.js';
import { tokenMint } from '../../consensus/txTypes/tokenMint.js';
import { tokenBurn } from '../../consensus/txTypes/tokenBurn.js';
import { tokenTransfer } from '../../consensus/txTypes/tokenTransfer.js';
import { tokenFlags } from '../../consensus/txTypes/tokenFlags.js';
import { tokenBack } from '../../consensus/txTypes/tokenBack.js';
import { stableMint } from '../../consensus/txTypes/stableMint.js';
import { tokenRedeem } from '../../consensus/txTypes/tokenRedeem.js';
import { poolCreate } from '../../consensus/txTypes/poolCreate.js';
import { poolAdd } from '../../consensus/txTypes/poolAdd.js';
import { poolRemove } from '../../consensus/txTypes/poolRemove.js';
import { swap } from '../../consensus/txTypes/swap.js';
import { stake, lockBlocks } from '../../consensus/txTypes/stake.js';
import { unstake } from '../../consensus/txTypes/unstake.js';
import { bridgeRecord, cosignBridgeRecord } from '../../consensus/txTypes/bridgeRecord.js';
import { validateTx } from '../../consensus/validate.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetParams } from '../../consensus/params.js';
import { signTx, TX_VERSION, TxType, encodeTx } from '../../consensus/tx.js';
import { ValidationError } from '../../consensus/errors.js';
import { actor, Econ, econParams } from '../helpers/econ.js';
import { testKey } from '../helpers/keys.js';

const [alice, bob, carol] = ['alice', 'bob', 'carol'].map(actor);
const authority = actor('bridge');
const params = econParams(['alice', 'bob', 'carol', 'bridge']);
const issue = (symbol: string, extra: Partial<Parameters<typeof tokenIssue.encodePayload>[0]> = {}) => ({
  symbol,
  name: `${symbol} token`,
  decimals: 6,
  maxSupply: 1_000_000_000_000n,
  initialSupply: 500_000_000_000n,
  kind: TokenKind.token,
  ...extra,
});

function withToken(): Econ {
  const e = new Econ(params);
  e.apply(alice, tokenIssue, issue('GOLD'));
  return e;
}

describe('tokens', () => {
  test('issue, mint, transfer, burn keep supply figures and the holder count', () => {
    const e = withToken();
    e.apply(alice, tokenMint, { symbol: 'GOLD', to: bob, amount: 1000n });
    e.apply(alice, tokenTransfer, { symbol: 'GOLD', to: carol, amount: 250n });
    expect(getToken(e.view, 'GOLD')).toMatchObject({ supply: 500_000_001_000n, minted: 500_000_001_000n, burned: 0n, holders: 3 });
    e.apply(bob, tokenBurn, { symbol: 'GOLD', amount: 1000n });
    expect(getToken(e.view, 'GOLD')).toMatchObject({ supply: 500_000_000_000n, burned: 1000n, holders: 2 });
    const s = e.read();
    expect([balanceOf(s, alice, 'GOLD'), balanceOf(s, bob, 'GOLD'), balanceOf(s, carol, 'GOLD')]).toEqual([499_999_999_750n, 0n, 250n]);
  });

  test('bad and taken symbols, bad decimals and supply', () => {
    const e = withToken();
    expect(e.code(bob, tokenIssue, issue('GOLD'))).toBe(E.SYMBOL_TAKEN);
    expect(e.code(bob, tokenIssue, issue('NATIVE'))).toBe(E.SYMBOL_TAKEN);
    expect(e.code(bob, tokenIssue, issue('gold'))).toBe(E.BAD_SYMBOL);
    expect(e.code(bob, tokenIssue, issue('A'))).toBe(E.BAD_SYMBOL);
    expect(e.code(bob, tokenIssue, issue('AB-C'))).toBe(E.BAD_SYMBOL);
    expect(e.code(bob, tokenIssue, issue('SILVER', { decimals: 19 }))).toBe(E.BAD_DECIMALS);
    expect(e.code(bob, tokenIssue, issue('SILVER', { initialSupply: 2_000_000_000_000n }))).toBe(E.BAD_SUPPLY);
    expect(e.code(bob, tokenIssue, issue('SILVER', { name: '' }))).toBe(E.BAD_NAME);
    expect(e.code(bob, tokenIssue, issue('USDX', { kind: TokenKind.usdStable }))).toBe(E.BAD_SUPPLY);
  });

  test('mint past maxSupply, non-issuer mint and flag change, unknown token', () => {
    const e = withToken();
    expect(e.code(alice, tokenMint, { symbol: 'GOLD', to: alice, amount: 500_000_000_001n })).toBe(E.MAX_SUPPLY);
    expect(e.code(alice, tokenMint, { symbol: 'GOLD', to: alice, amount: 500_000_000_000n })).toBeUndefined();
    expect(e.code(bob, tokenMint, { symbol: 'GOLD', to: bob, amount: 1n })).toBe(E.NOT_ISSUER);
    expect(e.code(bob, tokenFlags, { symbol: 'GOLD', flags: TokenFlag.frozen })).toBe(E.NOT_ISSUER);
    expect(e.code(bob, tokenTransfer, { symbol: 'NOPE', to: alice, amount: 1n })).toBe(E.UNKNOWN_TOKEN);
    expect(e.code(bob, tokenTransfer, { symbol: 'GOLD', to: alice, amount: 1n })).toBe(TxErrorCode.INSUFFICIENT_FUNDS);
  });

  test('a frozen token halts transfers and swaps; hidden is only a flag', () => {
    const e = withToken();
    e.apply(alice, poolCreate, { assetX: NATIVE, assetY: 'GOLD', amountX: 1000n * COIN, amountY: 1_000_000_000n });
    e.apply(alice, tokenFlags, { symbol: 'GOLD', flags: TokenFlag.frozen | TokenFlag.hidden });
    expect(e.code(alice, tokenTransfer, { symbol: 'GOLD', to: bob, amount: 1n })).toBe(E.FROZEN);
    expect(e.code(bob, swap, { path: [NATIVE, 'GOLD'], amountIn: COIN, minOut: 0n, expiryHeight: 10 })).toBe(E.FROZEN);
    e.apply(alice, tokenFlags, { symbol: 'GOLD', flags: TokenFlag.hidden });
    expect(e.code(alice, tokenTransfer, { symbol: 'GOLD', to: bob, amount: 1n })).toBeUndefined();
  });

  test('backing locks NATIVE; redeeming pays the pro-rata reserve, rounded down', () => {
    const e = new Econ(params);
    e.apply(alice, tokenIssue, issue('BACK', { initialSupply: 3000n, maxSupply: 3000n }));
    e.apply(bob, tokenBack, { symbol: 'BACK', amount: 1000n });
    e.apply(alice, tokenTransfer, { symbol: 'BACK', to: carol, amount: 7n });
    const before = balanceOf(e.read(), carol, NATIVE);
    e.apply(carol, tokenRedeem, { symbol: 'BACK', amount: 7n });
    // 1000 · 7 / 3000 = 2.33 → 2; the fee of the redeem is 1000 base units.
    expect(balanceOf(e.read(), carol, NATIVE)).toBe(before + 2n - 1000n);
    expect(getToken(e.view, 'BACK')).toMatchObject({ reserve: 998n, supply: 2993n, burned: 7n });
    expect(e.code(alice, tokenRedeem, { symbol: 'GOLDX', amount: 1n })).toBe(E.UNKNOWN_TOKEN);
    e.apply(alice, tokenIssue, issue('BARE'));
    expect(e.code(alice, tokenRedeem, { symbol: 'BARE', amount: 1n })).toBe(E.NOTHING_TO_REDEEM);
  });
});

describe('stablecoins', () => {
  function withStable(): Econ {
    const e = new Econ(params);
    e.apply(alice, tokenIssue, issue('USDN', { initialSupply: 0n, kind: TokenKind.usdStable, maxSupply: MAX_AMOUNT }));
    return e;
  }

  test('mint at the minimum ratio at the reference price, and not a unit below', () => {
    const e = withStable();
    // 100 USDN at 150% and $0.5 / NATIVE needs 300 NATIVE.
    expect(e.code(bob, stableMint, { symbol: 'USDN', collateral: 300n * COIN - 1n, amount: 100_000_000n })).toBe(E.UNDERCOLLATERALIZED);
    expect(e.code(bob, stableMint, { symbol: 'USDN', collateral: 300n * COIN, amount: 100_000_000n })).toBeUndefined();
    expect(getToken(e.view, 'USDN')).toMatchObject({ supply: 100_000_000n, reserve: 300n * COIN, holders: 1 });
    expect(e.code(alice, tokenMint, { symbol: 'USDN', to: alice, amount: 1n })).toBe(E.IS_STABLE);
    e.apply(alice, tokenIssue, issue('GOLD'));
    expect(e.code(bob, stableMint, { symbol: 'GOLD', collateral: COIN, amount: 1n })).toBe(E.NOT_STABLE);
  });

  test('the coin\'s own NATIVE pool prices it once it exists', () => {
    const e = withStable();
    e.apply(bob, stableMint, { symbol: 'USDN', collateral: 3000n * COIN, amount: 1000_000_000n });
    // Pool at $2 / NATIVE: 100 NATIVE against 200 USDN.
    e.apply(bob, poolCreate, { assetX: 'USDN', assetY: NATIVE, amountX: 200_000_000n, amountY: 100n * COIN });
    // 100 USDN at 150% and $2 needs 75 NATIVE.
    expect(e.code(carol, stableMint, { symbol: 'USDN', collateral: 75n * COIN - 1n, amount: 100_000_000n })).toBe(E.UNDERCOLLATERALIZED);
    expect(e.code(carol, stableMint, { symbol: 'USDN', collateral: 75n * COIN, amount: 100_000_000n })).toBeUndefined();
    // Redeeming 10 USDN pays par, 5 NATIVE (below the pro-rata share).
    const before = balanceOf(e.read(), carol, NATIVE);
    e.apply(carol, tokenRedeem, { symbol: 'USDN', amount: 10_000_000n });
    expect(balanceOf(e.read(), carol, NATIVE)).toBe(before + 5n * COIN - 1000n);
  });
});

describe('pools and swaps', () => {
  function withPool(): Econ {
    const e = withToken();
    e.apply(alice, poolCreate, { assetX: 'GOLD', assetY: NATIVE, amountX: 4_000_000n, amountY: 1_000_000n });
    return e;
  }

  test('creation: sorted assets, √(x·y) shares with 1000 locked', () => {
    const e = withPool();
    expect(getPool(e.view, 'GOLD-NATIVE')).toMatchObject({ a: 'GOLD', b: 'NATIVE', reserveA: 4_000_000n, reserveB: 1_000_000n, lpSupply: 2_000_000n });
    expect(decodeVarintValue(e.state.get(lpKey('GOLD-NATIVE', alice))!)).toBe(1_999_000n);
    expect(e.code(bob, poolCreate, { assetX: NATIVE, assetY: 'GOLD', amountX: 10n ** 9n, amountY: 10n ** 9n })).toBe(E.POOL_EXISTS);
    expect(e.code(bob, poolCreate, { assetX: 'GOLD', assetY: 'GOLD', amountX: 1n, amountY: 1n })).toBe(E.IDENTICAL_ASSETS);
    expect(e.code(alice, poolCreate, { assetX: 'GOLD', assetY: 'NOPE', amountX: 1n, amountY: 1n })).toBe(E.UNKNOWN_TOKEN);
    e.apply(alice, tokenIssue, issue('TINY'));
    expect(e.code(alice, poolCreate, { assetX: 'TINY', assetY: NATIVE, amountX: 1000n, amountY: 1000n })).toBe(E.INSUFFICIENT_LIQUIDITY);
  });

  test('a swap pays the reference formula, keeps the fee in the pool and honours minOut and expiry', () => {
    const e = withPool();
    // in 10000 NATIVE: out = 10000·9970·4000000 / (1000000·10000 + 10000·9970) = 39486 (floor of 39486.3)
    expect(e.code(bob, swap, { path: [NATIVE, 'GOLD'], amountIn: 10_000n, minOut: 39_487n, expiryHeight: 5 })).toBe(E.SLIPPAGE);
    e.height = 6;
    expect(e.code(bob, swap, { path: [NATIVE, 'GOLD'], amountIn: 10_000n, minOut: 0n, expiryHeight: 5 })).toBe(E.EXPIRED);
    const [ev] = e.apply(bob, swap, { path: [NATIVE, 'GOLD'], amountIn: 10_000n, minOut: 39_486n, expiryHeight: 6 });
    expect(ev).toMatchObject({ kind: 'swap', amountOut: 39_486n, fee: 30n });
    expect(getPool(e.view, 'GOLD-NATIVE')).toMatchObject({ reserveA: 3_960_514n, reserveB: 1_010_000n });
    expect(3_960_514n * 1_010_000n).toBeGreaterThan(4_000_000n * 1_000_000n);
    expect(balanceOf(e.read(), bob, 'GOLD')).toBe(39_486n);
    expect(e.code(bob, swap, { path: [NATIVE], amountIn: 1n, minOut: 0n, expiryHeight: 9 })).toBe(E.BAD_PATH);
    expect(e.code(bob, swap, { path: [NATIVE, 'SILVER'], amountIn: 1n, minOut: 0n, expiryHeight: 9 })).toBe(E.UNKNOWN_TOKEN);
  });

  test('two-hop swap through NATIVE', () => {
    const e = withPool();
    e.apply(bob, tokenIssue, issue('SILV'));
    e.apply(bob, poolCreate, { assetX: 'SILV', assetY: NATIVE, amountX: 2_000_000n, amountY: 1_000_000n });
    const evs = e.apply(bob, swap, { path: ['SILV', NATIVE, 'GOLD'], amountIn: 20_000n, minOut: 1n, expiryHeight: 9 });
    expect(evs.map((x) => x.kind)).toEqual(['swap', 'swap']);
    // hop 1: 20000·9970·1000000 / (2000000·10000 + 20000·9970) = 9871; hop 2: 9871·9970·4000000 / (1000000·10000 + 9871·9970) = 38981
    expect(evs.map((x) => (x as { amountOut: bigint }).amountOut)).toEqual([9_871n, 38_981n]);
  });

  test('add at the pool ratio, remove pro-rata, cannot remove more shares than held', () => {
    const e = withPool();
    e.apply(alice, tokenTransfer, { symbol: 'GOLD', to: bob, amount: 1_000_000n });
    const [add] = e.apply(bob, poolAdd, { assetX: NATIVE, assetY: 'GOLD', desiredX: 100_000n, desiredY: 1_000_000n, minShares: 0n });
    expect(add).toMatchObject({ amountA: 400_000n, amountB: 100_000n, shares: 200_000n });
    expect(e.code(bob, poolRemove, { assetX: 'GOLD', assetY: NATIVE, shares: 200_001n, minX: 0n, minY: 0n })).toBe(E.INSUFFICIENT_SHARES);
    expect(e.code(bob, poolAdd, { assetX: NATIVE, assetY: 'GOLD', desiredX: 100_000n, desiredY: 1_000_000n, minShares: 200_001n })).toBe(E.LIQUIDITY_SLIPPAGE);
    const [rem] = e.apply(bob, poolRemove, { assetX: 'GOLD', assetY: NATIVE, shares: 200_000n, minX: 400_000n, minY: 100_000n });
    expect(rem).toMatchObject({ amountA: 400_000n, amountB: 100_000n });
    expect(e.state.has(lpKey('GOLD-NATIVE', bob))).toBe(false);
  });
});

describe('staking', () => {
  test('stake in a tier, early unstake refused, reward per block after the lock', () => {
    const e = new Econ(params);
    e.apply(bob, stake, { tier: 1, amount: 1000n * COIN });
    const id = e.lastId;
    const lock = lockBlocks(params, 1);
    expect(lock).toBe(864_000);
    expect(getStakeTotals(e.view)).toEqual({ staked: 1000n * COIN, locked: 1000n * COIN, count: 1, rewardsPaid: 0n });
    e.height = lock;
    expect(e.code(bob, unstake, { stakeId: id })).toBe(E.STAKE_LOCKED);
    expect(e.code(alice, unstake, { stakeId: id })).toBe(E.NOT_STAKE_OWNER);
    e.height = 1 + lock;
    const before = balanceOf(e.read(), bob, NATIVE);
    const [ev] = e.apply(bob, unstake, { stakeId: id });
    // 1000 NATIVE · 5% · 864000 / 10512000 blocks a year
    const reward = (1000n * COIN * 500n * 864_000n) / (10_000n * 10_512_000n);
    expect(ev).toMatchObject({ kind: 'unstake', reward });
    expect(balanceOf(e.read(), bob, NATIVE)).toBe(before + 1000n * COIN + reward - 1000n);
    expect(getStakeTotals(e.view)).toEqual({ staked: 0n, locked: 0n, count: 0, rewardsPaid: reward });
    expect(e.code(bob, unstake, { stakeId: id })).toBe(E.UNKNOWN_STAKE);
    expect(e.code(bob, stake, { tier: 9, amount: 1n })).toBe(E.BAD_TIER);
  });
});

describe('bridge records', () => {
  const rec = (ref: string, direction: 'in' | 'out', amount: bigint, network = 0) => ({ network, direction, amount, fee: amount / 1000n, ref, account: bob, cosignatures: [] });

  test('in and out keep the custody float; duplicates, unknown networks and outsiders refused', () => {
    const e = new Econ(params);
    e.apply(authority, bridgeRecord, rec('0xaa', 'in', 5000n));
    e.apply(authority, bridgeRecord, rec('0xbb', 'out', 2000n));
    expect(getBridgeTotals(e.view, '0')).toEqual({ inAmount: 5000n, outAmount: 2000n, fees: 7n, inCount: 1, outCount: 1 });
    expect(e.code(authority, bridgeRecord, rec('0xcc', 'out', 3001n))).toBe(E.INSUFFICIENT_FLOAT);
    expect(e.code(authority, bridgeRecord, rec('0xaa', 'in', 1n))).toBe(E.DUPLICATE_REF);
    expect(e.code(alice, bridgeRecord, rec('0xdd', 'in', 1n))).toBe(E.NOT_AUTHORITY);
    expect(e.code(authority, bridgeRecord, rec('0xdd', 'in', 1n, 10))).toBe(E.UNKNOWN_NETWORK);
    expect(e.code(authority, bridgeRecord, { ...rec('0xdd', 'in', 10n), fee: 11n })).toBe(E.BAD_FEE);
    expect(e.code(authority, bridgeRecord, rec('bad ref', 'in', 10n))).toBe(E.BAD_REF);
    e.apply(authority, bridgeRecord, rec('0xee', 'in', MAX_AMOUNT - 5000n, 1));
    expect(e.code(authority, bridgeRecord, rec('0xef', 'in', 5001n, 1))).toBe(TxErrorCode.AMOUNT_OVERFLOW);
  });

  test('a threshold of two needs a verified co-signature of another authority', () => {
    const [k1, k2] = [testKey('bridge-1'), testKey('bridge-2')];
    const base = econParams(['alice']);
    const p2 = createDevnetParams({ genesisBits: 0x207fffff, bridgeAuthorities: [k1, k2].map((k) => encodeAddress(k.address, 'tnative')), economy: base.economy });
    const twoOfTwo = { ...p2, authorities: { ...p2.authorities, bridgeThreshold: 2 } };
    const body = { network: 3, direction: 'in' as const, amount: 10n, fee: 0n, ref: 'btc:ab12', account: alice };
    const build = (cosignatures: ReturnType<typeof cosignBridgeRecord>[]) =>
      signTx({ version: TX_VERSION, chainId: twoOfTwo.chainId, type: TxType.bridge_record, nonce: 0n, fee: 20_000n, payload: bridgeRecord.encodePayload({ ...body, cosignatures }), publicKey: k1.publicKey }, k1);
    const codeOf = (tx: ReturnType<typeof build>) => {
      try {
        validateTx(tx, encodeTx(tx).length, twoOfTwo);
      } catch (err) {
        return (err as ValidationError).code;
      }
      return undefined;
    };
    expect(codeOf(build([]))).toBe(E.BAD_COSIGNATURE);
    expect(codeOf(build([cosignBridgeRecord(body, twoOfTwo.chainId, k1)]))).toBe(E.BAD_COSIGNATURE);
    expect(codeOf(build([cosignBridgeRecord({ ...body, amount: 11n }, twoOfTwo.chainId, k2)]))).toBe(E.BAD_COSIGNATURE);
    expect(codeOf(build([cosignBridgeRecord(body, twoOfTwo.chainId, k2)]))).toBeUndefined();
  });
});
