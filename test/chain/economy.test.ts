import { afterAll, describe, expect, test } from '@jest/globals';
import { Level } from 'level';
import { openChain, type Chain } from '../../chain/chain.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { blockTouchedKeys } from '../../consensus/apply.js';
import { encodeAddress } from '../../consensus/address.js';
import { COIN, createDevnetParams, BRIDGE_NETWORK_NAMES } from '../../consensus/params.js';
import { signTx, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { feeForRate } from '../../consensus/txBuilder.js';
import { TokenKind } from '../../consensus/economyState.js';
import { NATIVE } from '../../consensus/ledger.js';
import { tokenIssue } from '../../consensus/txTypes/tokenIssue.js';
import { tokenTransfer } from '../../consensus/txTypes/tokenTransfer.js';
import { stableMint } from '../../consensus/txTypes/stableMint.js';
import { poolCreate } from '../../consensus/txTypes/poolCreate.js';
import { poolAdd } from '../../consensus/txTypes/poolAdd.js';
import { swap } from '../../consensus/txTypes/swap.js';
import { stake } from '../../consensus/txTypes/stake.js';
import { bridgeRecord } from '../../consensus/txTypes/bridgeRecord.js';
import type { TxTypeModule } from '../../consensus/txTypes/types.js';
import { blockHash, type Block } from '../../consensus/block.js';
import { toHex } from '../../consensus/hash.js';
import type { ChainEntry } from '../../chain/types.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const [alice, bob, authority, miner] = ['econ-alice', 'econ-bob', 'econ-bridge', 'econ-miner'].map(testKey);
const params = createDevnetParams({
  genesisBits: 0x207fffff,
  allocations: [alice, bob, authority].map((k) => ({ address: encodeAddress(k.address, 'tnative'), amount: 100_000n * COIN })),
  bridgeAuthorities: [encodeAddress(authority.address, 'tnative')],
  economy: { bridgeNetworks: BRIDGE_NETWORK_NAMES.map((name) => ({ name, vault: `vault-${name}` })) },
});
const now = () => params.genesis.time + 1_000_000;

afterAll(cleanupTmp);

/** Signs economy transactions with per-key nonces (the first one of each key carries it). */
class Signer {
  private nonces = new Map<HybridKeyPair, bigint>();
  tx<P>(key: HybridKeyPair, mod: TxTypeModule<P>, p: P): Tx {
    const nonce = this.nonces.get(key) ?? 0n;
    this.nonces.set(key, nonce + 1n);
    const base = { version: TX_VERSION, chainId: params.chainId, type: mod.type, from: key.address, nonce, payload: mod.encodePayload(p), ...(nonce === 0n ? { publicKey: key.publicKey } : {}) };
    return signTx({ ...base, fee: feeForRate(base, 1n) }, key);
  }
}

async function mine(chain: Chain, parent: ChainEntry, txs: Tx[], tag = 0): Promise<Block> {
  const view = await chain.getStateView(blockTouchedKeys({ coinbase: { miner: miner.address }, txs } as unknown as Block));
  const draft = assembleBlock(
    { parent: { hash: parent.hash, height: parent.height, time: parent.header.time }, medianTimePast: parent.header.time, now: parent.header.time + 3, txs, miner: miner.address, state: view, tag: Uint8Array.of(tag) },
    params,
  );
  const block = { ...draft, header: grindHeader(draft.header, params.powLimit)! };
  await chain.addBlock(block);
  return block;
}

/** Every key of the given prefixes in a closed chain directory. */
async function dump(dir: string, prefixes: string[]): Promise<Map<string, string>> {
  const db = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
  const out = new Map<string, string>();
  for await (const [k, v] of db.iterator()) if (prefixes.some((p) => k.startsWith(p))) out.set(k, Buffer.from(v).toString('hex'));
  await db.close();
  return out;
}

const issueUsdn = { symbol: 'USDN', name: 'Native USD', decimals: 6, maxSupply: 10n ** 15n, initialSupply: 0n, kind: TokenKind.usdStable };
const issueGold = { symbol: 'GOLD', name: 'Gold', decimals: 2, maxSupply: 10n ** 12n, initialSupply: 10n ** 9n, kind: TokenKind.token };

describe('economy on a real chain', () => {
  test('indexes follow the blocks, and a reorg across economy blocks leaves state and indexes as a fresh chain of the winning branch', async () => {
    const s = new Signer();
    const b1 = [s.tx(alice, tokenIssue, issueUsdn), s.tx(alice, tokenIssue, issueGold), s.tx(bob, stake, { tier: 0, amount: 10n * COIN })];
    const b2 = [
      s.tx(alice, stableMint, { symbol: 'USDN', collateral: 3000n * COIN, amount: 1_000_000_000n }),
      s.tx(alice, poolCreate, { assetX: 'USDN', assetY: NATIVE, amountX: 500_000_000n, amountY: 1000n * COIN }),
      s.tx(alice, poolCreate, { assetX: NATIVE, assetY: 'GOLD', amountX: 100n * COIN, amountY: 1_000_000n }),
      s.tx(alice, tokenTransfer, { symbol: 'GOLD', to: bob.address, amount: 5000n }),
      s.tx(authority, bridgeRecord, { network: 3, direction: 'in', amount: 7n * COIN, fee: 1000n, ref: 'btc:0001', account: bob.address, cosignatures: [] }),
    ];
    const b3 = [
      s.tx(bob, swap, { path: [NATIVE, 'USDN'], amountIn: 10n * COIN, minOut: 1n, expiryHeight: 100 }),
      s.tx(bob, swap, { path: ['GOLD', NATIVE, 'USDN'], amountIn: 1000n, minOut: 1n, expiryHeight: 100 }),
      s.tx(alice, poolAdd, { assetX: NATIVE, assetY: 'USDN', desiredX: 10n * COIN, desiredY: 10n ** 9n, minShares: 0n }),
      s.tx(authority, bridgeRecord, { network: 3, direction: 'out', amount: 2n * COIN, fee: 0n, ref: 'btc:0002', account: bob.address, cosignatures: [] }),
    ];
    const dir = await tmpDir();
    const chain = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
    await mine(chain, chain.tip, b1);
    const fork = chain.tip;
    await mine(chain, chain.tip, b2);
    await mine(chain, chain.tip, b3);
    expect(chain.tip.height).toBe(3);

    const eco = chain.economy;
    expect((await eco.getToken('GOLD'))?.holders).toBe(2);
    expect(await eco.topHolders('GOLD', 5)).toEqual([
      { address: encodeAddress(alice.address, 'tnative'), balance: (10n ** 9n - 1_000_000n - 5000n).toString() },
      { address: encodeAddress(bob.address, 'tnative'), balance: '4000' },
    ]);
    // The running Σ balance² of the HHI: alice's and bob's balances squared, counting both holders.
    expect(await eco.holderSquares('GOLD', 2)).toBe((10n ** 9n - 1_000_000n - 5000n) ** 2n + 4000n ** 2n);
    expect(await eco.holderSquares('GOLD', 3)).toBeUndefined();
    expect((await eco.listPools()).map((p) => p.id)).toEqual(['NATIVE-USDN', 'GOLD-NATIVE']);
    expect(await eco.poolIdsByAsset(NATIVE)).toEqual(['GOLD-NATIVE', 'NATIVE-USDN']);
    const swaps = await eco.swaps({ pool: 'NATIVE-USDN', since: 0 });
    expect(swaps.map((x) => [x.assetIn, x.height])).toEqual([[NATIVE, 3], [NATIVE, 3]]);
    expect((await eco.swaps({ limit: 10 })).length).toBe(3);
    const candles = await eco.candles('NATIVE-USDN', 0, chain.tip.header.time);
    expect(candles).toHaveLength(1);
    expect(candles[0].n).toBe(2);
    const usd = await eco.nativeUsd();
    expect(usd).toMatchObject({ source: 'pool', pool: 'NATIVE-USDN', stablecoin: 'USDN' });
    expect(usd.price).toBeGreaterThan(0.4);
    expect(usd.price).toBeLessThan(0.5);
    const acct = await eco.account(bob.address);
    expect(acct.tokens.map((t) => t.symbol).sort()).toEqual(['GOLD', 'USDN']);
    expect(acct.stakes).toHaveLength(1);
    expect((await eco.account(alice.address)).lp.map((l) => l.pool).sort()).toEqual(['GOLD-NATIVE', 'NATIVE-USDN']);
    const bitcoin = (await eco.bridgeNetworks()).find((n) => n.name === 'bitcoin');
    expect(bitcoin).toMatchObject({ inAmount: (7n * COIN).toString(), outAmount: (2n * COIN).toString(), float: (5n * COIN).toString(), inCount: 1, outCount: 1 });
    expect((await eco.bridgeRecords('bitcoin')).map((r) => r.ref)).toEqual(['btc:0002', 'btc:0001']);
    expect((await eco.transfers({ fromHeight: 2 })).map((t) => [t.asset, t.amount, t.height])).toEqual([['GOLD', '5000', 2]]);
    expect((await eco.activity(bob.address)).map((a) => a.kind)).toEqual(['bridge_out', 'swap', 'swap', 'swap', 'bridge_in', 'transfer_in', 'stake']);
    expect(await eco.activity(bob.address, { limit: 2 })).toEqual((await eco.activity(bob.address)).slice(0, 2));

    // A heavier branch from height 1 with other economy transactions: the reorg undoes b2 and b3.
    const s2 = new Signer();
    [alice, alice, bob].forEach((k, i) => s2.tx(k, [tokenIssue, tokenIssue, stake][i] as TxTypeModule<never>, [issueUsdn, issueGold, { tier: 0, amount: 10n * COIN }][i] as never));
    const c2 = [s2.tx(alice, poolCreate, { assetX: NATIVE, assetY: 'GOLD', amountX: 50n * COIN, amountY: 2_000_000n }), s2.tx(alice, tokenTransfer, { symbol: 'GOLD', to: bob.address, amount: 77n })];
    const c3 = [s2.tx(bob, swap, { path: ['GOLD', NATIVE], amountIn: 77n, minOut: 1n, expiryHeight: 100 })];
    const branch: Block[] = [];
    let parent = fork;
    for (const [i, txs] of [c2, c3, []].entries()) {
      branch.push(await mine(chain, parent, txs, 10 + i));
      parent = chain.getEntryByHash(toHex(blockHash(branch[i].header)))!;
    }
    expect(chain.tip.height).toBe(4);
    expect((await eco.listPools()).map((p) => p.id)).toEqual(['GOLD-NATIVE']);
    expect((await eco.nativeUsd()).source).toBe('reference');
    // The transfers read (and cached per block) before the reorg are the winning branch's now.
    expect((await eco.transfers({ fromHeight: 1 })).map((t) => [t.asset, t.amount, t.height])).toEqual([['GOLD', '77', 2]]);
    // Bob's activity, read (and cached) before the reorg, is the winning branch's; a limit below it reads the newest.
    expect((await eco.activity(bob.address)).map((a) => [a.kind, a.height])).toEqual([['swap', 3], ['transfer_in', 2], ['stake', 1]]);
    expect((await eco.activity(bob.address, { limit: 1 })).map((a) => a.kind)).toEqual(['swap']);
    await chain.close();

    // The same winning branch on a fresh chain.
    const dir2 = await tmpDir();
    const fresh = await openChain({ dataDir: dir2, params, verifier: new CountingVerifier(), now });
    const blocks = [await (async () => {
      const c = await openChain({ dataDir: dir, params, verifier: new CountingVerifier(), now });
      const b = await c.getBlock(c.getEntryByHeight(1)!.hashHex);
      await c.close();
      return b!;
    })(), ...branch];
    for (const b of blocks) await fresh.addBlock(b);
    expect(fresh.tip.height).toBe(4);
    await fresh.close();
    const prefixes = ['s:', 'e', 'u:', 'v:', 't:', 'n:', 'm:tip'];
    const after = await dump(dir, prefixes);
    expect([...after.keys()].filter((k) => k.startsWith('es:') || k.startsWith('ec:') || k.startsWith('eh:')).length).toBe(3);
    expect(after).toEqual(await dump(dir2, prefixes));
  }, 60_000);
});
