import { describe, expect, test } from '@jest/globals';
import { applyBlock, writeChanges } from '../../consensus/apply.js';
import { BlockErrorCode, TxErrorCode, ValidationError } from '../../consensus/errors.js';
import { signTx, TxType, TX_VERSION, encodeTx, type Tx } from '../../consensus/tx.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { createDevnetChainParams, getDevKeyPair, DEV_FUNDS, DEV_PAYEE_FLOAT } from '../../consensus/devnet.js';
import { COIN } from '../../consensus/params.js';
import { StateOverlay, decodeSupply, SUPPLY_KEY } from '../../consensus/state.js';
import { blockSubsidy, splitFees } from '../../consensus/reward.js';
import { encodeAddress } from '../../consensus/address.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { MemChain } from '../helpers/memChain.js';
import { testKey } from '../helpers/keys.js';
import { Rng } from '../helpers/rng.js';

const dev = getDevKeyPair();
const miner = testKey('miner');
const others = ['a', 'b', 'c'].map(testKey);
const fundedParams = createDevnetChainParams({
  genesisBits: 0x207fffff,
  allocations: others.map((k) => ({ address: encodeAddress(k.address, 'tnative'), amount: 1000n * COIN })),
});

function transferTx(from: HybridKeyPair, nonce: bigint, to: Uint8Array, amount: bigint, withKey: boolean, fee = 10_000n): Tx {
  return signTx(
    { version: TX_VERSION, chainId: fundedParams.chainId, type: TxType.transfer, nonce, fee, payload: transfer.encodePayload({ to, amount }), publicKey: withKey ? from.publicKey : undefined },
    from,
  );
}

function blockError(fn: () => unknown): { code: string; txCode?: unknown } | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof ValidationError) return { code: e.code, txCode: e.payload.txCode };
    throw e;
  }
  return undefined;
}

describe('applyBlock', () => {
  test('a transfer is mined: balances, nonce, published key, miner reward and burn', () => {
    const chain = new MemChain(fundedParams);
    const before = new StateOverlay(chain.view);
    const supply0 = before.getSupply();
    const tx = transferTx(dev, 0n, others[0].address, 5n * COIN, true);
    const app = chain.connect(chain.build([tx], miner.address));
    const s = new StateOverlay(chain.view);
    expect(s.getAccount(dev.address).balance).toBe(DEV_FUNDS - 5n * COIN - tx.fee);
    expect(s.getAccount(dev.address).nonce).toBe(1n);
    expect(s.getAccount(dev.address).publicKey?.mldsa).toEqual(dev.publicKey.mldsa);
    expect(s.getAccount(others[0].address).balance).toBe(1005n * COIN);
    const { burned, miner: minerShare } = splitFees(tx.fee, fundedParams);
    expect(app.burned).toBe(burned);
    expect(s.getAccount(miner.address).balance).toBe(fundedParams.reward.initial + minerShare);
    expect(s.getSupply()).toEqual({ minted: supply0.minted + fundedParams.reward.initial, burned });
  });

  test('rejects a wrong nonce, a missing key, insufficient funds', () => {
    const chain = new MemChain(fundedParams);
    const cases: [Tx, string][] = [
      [transferTx(dev, 1n, miner.address, 1n, true), TxErrorCode.BAD_NONCE],
      [transferTx(dev, 0n, miner.address, 1n, false), TxErrorCode.MISSING_KEYS],
      [transferTx(others[1], 0n, miner.address, 1001n * COIN, true), TxErrorCode.INSUFFICIENT_FUNDS],
    ];
    for (const [tx, code] of cases) {
      const b = chain.build([tx], miner.address);
      expect(blockError(() => applyBlock(chain.view, b, fundedParams))).toEqual({ code: BlockErrorCode.BAD_TX, txCode: code });
    }
  });

  test('rejects a coinbase claiming more than subsidy or fee share', () => {
    const chain = new MemChain(fundedParams);
    const b = chain.build([], miner.address);
    const greedy = { ...b, coinbase: { ...b.coinbase, reward: b.coinbase.reward + 1n } };
    expect(blockError(() => applyBlock(chain.view, greedy, fundedParams))?.code).toBe(BlockErrorCode.BAD_COINBASE);
    const feeGrab = { ...b, coinbase: { ...b.coinbase, fees: 1n } };
    expect(blockError(() => applyBlock(chain.view, feeGrab, fundedParams))?.code).toBe(BlockErrorCode.BAD_COINBASE);
  });

  test('the subsidy never mints past the max supply', () => {
    const capped = createDevnetChainParams({ genesisBits: 0x207fffff, reward: { maxSupply: DEV_FUNDS + DEV_PAYEE_FLOAT + 3n * COIN, initial: 2n * COIN } });
    const chain = new MemChain(capped);
    const subsidies = [];
    for (let i = 0; i < 3; i++) subsidies.push(chain.connect(chain.build([], miner.address)).subsidy);
    expect(subsidies).toEqual([2n * COIN, 1n * COIN, 0n]);
    expect(decodeSupply(chain.state.get(SUPPLY_KEY)!).minted).toBe(capped.reward.maxSupply);
    expect(blockSubsidy(1, capped.reward.maxSupply, capped)).toBe(0n);
  });

  test('property: applying random blocks of transfers then undoing them restores the exact state', () => {
    const rng = new Rng(42);
    const chain = new MemChain(fundedParams);
    const keys = [dev, ...others];
    const nonces = new Map<HybridKeyPair, bigint>(keys.map((k) => [k, 0n]));
    const snapshots: Map<string, Uint8Array>[] = [new Map(chain.state)];
    const undos: Map<string, Uint8Array | null>[] = [];
    for (let b = 0; b < 25; b++) {
      const txs: Tx[] = [];
      for (let i = rng.int(4); i > 0; i--) {
        const from = rng.pick(keys);
        const to = rng.pick([...keys.map((k) => k.address), miner.address, rng.bytes(20)]);
        const n = nonces.get(from)!;
        txs.push(transferTx(from, n, to, BigInt(1 + rng.int(1_000_000)), n === 0n, BigInt(10_000 + rng.int(5000))));
        nonces.set(from, n + 1n);
      }
      undos.push(chain.connect(chain.build(txs, rng.pick([miner.address, dev.address]))).undo);
      snapshots.push(new Map(chain.state));
    }
    for (let b = undos.length - 1; b >= 0; b--) {
      chain.disconnect(undos[b]);
      expect(chain.state).toEqual(snapshots[b]);
    }
  });

  test('changes applied to a copy of the parent state equal the connected state', () => {
    const chain = new MemChain(fundedParams);
    const parent = new Map(chain.state);
    const b = chain.build([transferTx(dev, 0n, miner.address, 7n, true)], miner.address);
    const app = chain.connect(b);
    writeChanges(parent, app.changes);
    expect(parent).toEqual(chain.state);
    expect(encodeTx(b.txs[0]).length).toBeGreaterThan(7000);
  });
});
