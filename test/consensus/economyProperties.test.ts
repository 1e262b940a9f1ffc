/**
 * Property tests over random sequences of every economy transaction type (seeded): blocks are
 * filled with random transactions, the applicable ones kept in order (as block templates do),
 * and applied with `applyBlock` (fees, burn, subsidy included).
 */
import { describe, expect, test } from '@jest/globals';
import { applyBlock, selectApplicable, writeChanges } from '../../consensus/apply.js';
import { assembleBlock } from '../../consensus/assemble.js';
import { decodeAccount, decodeSupply, SUPPLY_KEY } from '../../consensus/state.js';
import { decodePool, decodeToken, getStakeTotals, TokenKind } from '../../consensus/economyState.js';
import { decodeVarintValue, NATIVE } from '../../consensus/ledger.js';
import { COIN } from '../../consensus/params.js';
import { encodeTx, txId, type Tx } from '../../consensus/tx.js';
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
import { stake } from '../../consensus/txTypes/stake.js';
import { unstake } from '../../consensus/txTypes/unstake.js';
import { bridgeRecord } from '../../consensus/txTypes/bridgeRecord.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import type { Block } from '../../consensus/block.js';
import { actor, Econ, econParams, expectSameState } from '../helpers/econ.js';
import { Rng } from '../helpers/rng.js';

const names = ['p0', 'p1', 'p2', 'p3', 'bridge'];
const ids = names.map(actor);
const params = econParams(names, 1_000_000n * COIN, actor('bridge'));
const ASSETS = [NATIVE, 'AAA', 'BBB', 'USDS'];
const miner = actor('miner');

/** Per-asset totals held anywhere: balances, pool reserves, token reserves (NATIVE), stakes (NATIVE). */
function totals(state: Map<string, Uint8Array>): Map<string, bigint> {
  const t = new Map<string, bigint>();
  const add = (a: string, v: bigint) => t.set(a, (t.get(a) ?? 0n) + v);
  for (const [k, v] of state) {
    if (k[0] === 'a') add(NATIVE, decodeAccount(v).balance);
    else if (k[0] === 'B') add(k.slice(1, k.indexOf(':')), decodeVarintValue(v));
    else if (k[0] === 'P') {
      const p = decodePool(k.slice(1), v);
      add(p.a, p.reserveA);
      add(p.b, p.reserveB);
    } else if (k[0] === 'T') add(NATIVE, decodeToken(v).reserve);
  }
  add(NATIVE, getStakeTotals({ get: (k) => state.get(k) }).staked);
  return t;
}

function randomTxs(e: Econ, rng: Rng, stakes: Uint8Array[], n: number): Tx[] {
  const nonces = new Map<number, bigint>();
  const amount = () => [1n, 10n, 1000n, 123_456n, 10n ** 6n, 10n ** 8n, 5n * 10n ** 9n, 10n ** 11n][rng.int(8)] * BigInt(1 + rng.int(9));
  const asset = () => rng.pick(ASSETS);
  const pair = () => {
    const x = asset();
    let y = asset();
    if (rng.int(20) && y === x) y = ASSETS[(ASSETS.indexOf(x) + 1) % ASSETS.length];
    return [x, y] as const;
  };
  const txs: Tx[] = [];
  for (let i = 0; i < n; i++) {
    const who = rng.int(4);
    const from = ids[who];
    const to = ids[rng.int(4)];
    const r = rng.int(22);
    const [x, y] = pair();
    const tok = rng.pick(['AAA', 'BBB', 'USDS', 'ZZZ']);
    let tx: Tx;
    if (r === 0) tx = e.tx(from, tokenIssue, { symbol: tok, name: tok, decimals: rng.int(19), maxSupply: 10n ** 15n, initialSupply: tok === 'USDS' ? 0n : 10n ** 13n, kind: tok === 'USDS' ? TokenKind.usdStable : TokenKind.token });
    else if (r === 1) tx = e.tx(from, tokenMint, { symbol: tok, to, amount: amount() });
    else if (r === 2) tx = e.tx(from, tokenBurn, { symbol: tok, amount: amount() });
    else if (r === 3) tx = e.tx(from, tokenTransfer, { symbol: tok, to, amount: amount() });
    else if (r === 4) tx = e.tx(from, tokenFlags, { symbol: tok, flags: rng.int(8) === 0 ? 1 : rng.int(2) * 2 });
    else if (r === 5) tx = e.tx(from, tokenBack, { symbol: tok, amount: amount() });
    else if (r === 6) tx = e.tx(from, stableMint, { symbol: 'USDS', collateral: amount() * 4n, amount: amount() / 100n + 1n });
    else if (r === 7) tx = e.tx(from, tokenRedeem, { symbol: tok, amount: amount() });
    else if (r === 8) tx = e.tx(from, poolCreate, { assetX: x, assetY: y, amountX: amount(), amountY: amount() });
    else if (r === 9) tx = e.tx(from, poolAdd, { assetX: x, assetY: y, desiredX: amount(), desiredY: amount(), minShares: rng.int(3) ? 0n : amount() });
    else if (r === 10) tx = e.tx(from, poolRemove, { assetX: x, assetY: y, shares: amount(), minX: 0n, minY: rng.int(4) ? 0n : amount() });
    else if (r <= 12 || r >= 17) {
      const path = rng.int(3) ? [x, y] : [x, NATIVE, y];
      tx = e.tx(from, swap, { path, amountIn: amount(), minOut: rng.int(4) ? 0n : amount(), expiryHeight: e.height + rng.int(3) - 1 || 1 });
    } else if (r === 13) tx = e.tx(from, stake, { tier: rng.int(params.staking.aprTiers.length), amount: amount() });
    else if (r === 14 && stakes.length) tx = e.tx(from, unstake, { stakeId: rng.pick(stakes) });
    else if (r === 15) tx = e.tx(ids[4], bridgeRecord, { network: rng.int(10), direction: rng.int(2) ? 'in' : 'out', amount: amount(), fee: 0n, ref: `ref-${rng.int(1e9)}`, account: to, cosignatures: [] });
    else tx = e.tx(from, transfer, { to, amount: amount() });
    const sender = tx.from === ids[4] ? 4 : who;
    const nonce = nonces.get(sender) ?? tx.nonce;
    nonces.set(sender, nonce + 1n);
    txs.push({ ...tx, nonce });
  }
  return txs;
}

describe('economy properties (seeded random sequences of every type)', () => {
  test.each([1, 2, 3])('seed %i: conservation per asset, k never decreases, swaps pay the reference formula, apply then undo restores the state byte for byte', (seed) => {
    const rng = new Rng(seed);
    const e = new Econ(params);
    const stakes: Uint8Array[] = [];
    const seenTypes = new Set<string>();
    let swaps = 0;
    const initialNative = totals(e.state).get(NATIVE)!;
    expect(initialNative).toBe(decodeSupply(e.state.get(SUPPLY_KEY)!).minted);
    for (let b = 0; b < 200; b++) {
      e.height += rng.int(10) === 0 ? 900_000 : 1;
      const txs = randomTxs(e, rng, stakes, 12);
      const txIds = txs.map((t) => txId(encodeTx(t)));
      const keep = selectApplicable(e.view, txs, txIds, e.height, params);
      const kept = keep.map((i) => txs[i]);
      kept.forEach((t) => seenTypes.add(String(t.type)));
      const block: Block = assembleBlock(
        { parent: { hash: new Uint8Array(32), height: e.height - 1, time: params.genesis.time + e.height * 3 }, medianTimePast: 0, now: params.genesis.time + e.height * 3, txs: kept, txIds: keep.map((i) => txIds[i]), miner, state: e.view },
        params,
      );
      const before = new Map(e.state);
      const app = applyBlock(e.view, block, params, keep.map((i) => txIds[i]));
      // Apply then undo restores every byte.
      writeChanges(e.state, app.changes);
      writeChanges(e.state, app.undo);
      expectSameState(before, e.state);
      writeChanges(e.state, app.changes);

      for (const ev of app.events) {
        if (ev.kind === 'stake') stakes.push(ev.id);
        if (ev.kind !== 'swap') continue;
        swaps++;
        const inIsA = ev.pool.startsWith(`${ev.assetIn}-`);
        const rInAfter = inIsA ? ev.reserveA : ev.reserveB;
        const rOutAfter = inIsA ? ev.reserveB : ev.reserveA;
        const rIn = rInAfter - ev.amountIn;
        const rOut = rOutAfter + ev.amountOut;
        // Reference formula (Uniswap v2 getAmountOut with 0.3%: 997/1000).
        expect(ev.amountOut).toBe((ev.amountIn * 997n * rOut) / (rIn * 1000n + ev.amountIn * 997n));
        expect(rInAfter * rOutAfter).toBeGreaterThanOrEqual(rIn * rOut);
      }
      // Conservation: every asset's holdings equal issued − burned (NATIVE: minted − burned, rewards included).
      const t = totals(e.state);
      const supply = decodeSupply(e.state.get(SUPPLY_KEY)!);
      expect(t.get(NATIVE)).toBe(supply.minted - supply.burned);
      for (const [k, v] of e.state) {
        if (k[0] !== 'T') continue;
        const tok = decodeToken(v);
        const sym = k.slice(1);
        expect(t.get(sym) ?? 0n).toBe(tok.minted - tok.burned);
        expect(tok.supply).toBe(tok.minted - tok.burned);
        expect(tok.holders).toBe([...e.state.keys()].filter((x) => x.startsWith(`B${sym}:`)).length);
      }
    }
    expect(swaps).toBeGreaterThan(20);
    expect(seenTypes.size).toBeGreaterThanOrEqual(15);
  }, 120_000);
});
