/**
 * A real chain for the service tests: LevelDB in a temp dir, devnet parameters at trivial
 * difficulty, a real mempool, a few mined blocks with transfers (dev → alice, alice → bob, so
 * both a key-carrying and a key-less transaction exist), and one transfer left pending.
 */
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { silentLogger } from '../../chain/types.js';
import { blockTouchedKeys } from '../../consensus/apply.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import type { Block } from '../../consensus/block.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { toHex } from '../../consensus/hash.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { COIN, type ChainParams } from '../../consensus/params.js';
import { encodeTx, signTx, txId, TxType, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import type { ServiceContext, ServiceRegistryReader } from '../../services/types.js';
import { testKey } from '../helpers/keys.js';
import { tmpDir } from '../helpers/tmp.js';
import { CountingVerifier } from '../helpers/verifier.js';

export const params: ChainParams = createDevnetChainParams({ genesisBits: 0x207fffff });
export const dev = getDevKeyPair();
export const alice = testKey('alice');
export const bob = testKey('bob');
export const miner = testKey('miner');
/** Fixed clock of the tests (Unix ms), well after the mined blocks. */
export const NOW_MS = (params.genesis.time + 1_000_000) * 1000;

export interface Fixture {
  chain: Chain;
  pool: Mempool;
  params: ChainParams;
  /** Ids (hex) of mined transactions: [dev → alice (carries dev's key), dev → bob (no key), alice → bob (carries alice's key)]. */
  mined: string[];
  /** Id of a transaction still in the mempool. */
  pending: string;
  /** Hashes of the mined blocks, by height (index 0 = genesis). */
  blockHashes: string[];
  close(): Promise<void>;
}

export function pay(from: HybridKeyPair, nonce: bigint, to: Uint8Array, amount: bigint, fee = 20_000n, withKey = nonce === 0n): Tx {
  return signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, nonce, fee, payload: transfer.encodePayload({ to, amount }), publicKey: withKey ? from.publicKey : undefined }, from);
}

async function mine(chain: Chain, pool: Mempool, txs: Tx[]): Promise<Block> {
  const tip = chain.tip;
  const state = await chain.getStateView(blockTouchedKeys({ coinbase: { miner: miner.address }, txs } as unknown as Block));
  const draft = assembleBlock({ parent: { hash: tip.hash, height: tip.height, time: tip.header.time }, medianTimePast: chain.medianTimePast(tip), now: tip.header.time + 3, txs, miner: miner.address, state }, params);
  const block = { ...draft, header: grindHeader(draft.header, params.powLimit)! };
  const res = await chain.addBlock(block);
  if (res.status !== 'connected') throw new Error(`block not connected: ${res.status}`);
  await pool.idle();
  return block;
}

/** Opens the chain, mines 4 blocks (2 with transfers) and leaves one transfer pending. */
export async function createFixture(): Promise<Fixture> {
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: await tmpDir('native-services-'), params, verifier, now: () => Math.floor(NOW_MS / 1000) });
  const pool = createMempool(chain, verifier, params, { now: () => NOW_MS });
  pool.start();
  const t1 = pay(dev, 0n, alice.address, 100n * COIN, 40_000n);
  const t2 = pay(dev, 1n, bob.address, 5n * COIN, 30_000n);
  await mine(chain, pool, [t1, t2]);
  await mine(chain, pool, []);
  const t3 = pay(alice, 0n, bob.address, 2n * COIN, 50_000n);
  await mine(chain, pool, [t3]);
  await mine(chain, pool, []);
  const t4 = pay(bob, 0n, alice.address, COIN, 60_000n);
  await pool.add(encodeTx(t4));
  const blockHashes: string[] = [];
  for (let h = 0; h <= chain.tip.height; h++) blockHashes.push(chain.getEntryByHeight(h)!.hashHex);
  return {
    chain,
    pool,
    params,
    mined: [t1, t2, t3].map((t) => toHex(txId(encodeTx(t)))),
    pending: toHex(txId(encodeTx(t4))),
    blockHashes,
    async close() {
      pool.stop();
      await chain.close();
    },
  };
}

/** A service context over the fixture, clock fixed at NOW_MS, NATIVE at $0.50. */
export function contextOf(f: Fixture, registry: ServiceRegistryReader): ServiceContext {
  return {
    chain: f.chain,
    mempool: f.pool,
    params: f.params,
    now: () => NOW_MS,
    log: silentLogger,
    registry,
    nativeUsd: { get: () => ({ microUsd: 500_000n, source: 'reference', live: false }) },
    signal: new AbortController().signal,
  };
}
