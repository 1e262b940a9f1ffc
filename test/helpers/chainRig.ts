/**
 * Test set-up shared by the chain, template, miner, job-feed and mining-endpoint tests: a real
 * chain (LevelDB in a temp dir, signatures counted but not checked) with its started mempool,
 * signed transfers, a block from "another miner" on the tip, and cleanups run after each test;
 * for the refund tests, a payee transaction signed outside a node and the close of their world.
 */
import { afterEach, expect } from '@jest/globals';
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import type { ChainParams } from '../../consensus/params.js';
import { SUPPLY_KEY } from '../../consensus/state.js';
import { encodeTx, signTx, TxType, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import type { SettlementLedger } from '../../x402/ledger/ledger.js';
import type { RefundManager } from '../../x402/native/refunds.js';
import { CountingVerifier } from './verifier.js';
import { tmpDir } from './tmp.js';

/** The trivial-difficulty devnet the chain, template and miner tests mine on. */
export const trivialParams = createDevnetChainParams({ genesisBits: 0x207fffff });

/** A fixed clock (Unix seconds) well after `trivialParams`' genesis, for chains that must not depend on the wall clock. */
export const fixedNow = (): number => trivialParams.genesis.time + 1_000_000;

/** A transfer on `trivialParams` (see `transferTx`). */
export function trivialTransfer(from: HybridKeyPair, nonce: bigint, to: Uint8Array, amount: bigint, fee?: bigint): Tx {
  return transferTx(trivialParams, from, nonce, to, amount, fee);
}

/**
 * A payee transaction (a refund, a payout) signed outside any node's nonce allocator at `nonce`,
 * with its key on the first: what a node whose ledger was since lost had sent.
 */
export function payeeTxBytes(params: ChainParams, payee: HybridKeyPair, nonce: bigint, type: number, payload: Uint8Array): Uint8Array {
  return encodeTx(signTx({ version: TX_VERSION, chainId: params.chainId, type, nonce, fee: 100_000n, payload, ...(nonce === 0n ? { publicKey: payee.publicKey } : {}) }, payee));
}

/** A signed transfer; the sender's public keys travel with its first transaction (nonce 0). */
export function transferTx(params: ChainParams, from: HybridKeyPair, nonce: bigint, to: Uint8Array, amount: bigint, fee = 20_000n): Tx {
  return signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, nonce, fee, payload: transfer.encodePayload({ to, amount }), publicKey: nonce === 0n ? from.publicKey : undefined }, from);
}

/** A chain in a fresh temp dir and its started mempool; `close()` stops both. */
export async function openChainAndPool(params: ChainParams, opts: { now?: () => number } = {}): Promise<{ chain: Chain; pool: Mempool; verifier: CountingVerifier; close(): Promise<void> }> {
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: await tmpDir(), params, verifier, now: opts.now });
  const pool = createMempool(chain, verifier, params);
  pool.start();
  return {
    chain,
    pool,
    verifier,
    async close() {
      pool.stop();
      await chain.close();
    },
  };
}

/** Registers an afterEach that runs the cleanups pushed during the test, last first; returns the list to push to. */
export function cleanupsAfterEach(): (() => Promise<void>)[] {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return cleanups;
}

/** Mines an empty block on the tip from outside (another miner on the network, paying `miner`) and expects it connected. */
export async function mineEmptyBlock(chain: Chain, params: ChainParams, miner: Uint8Array, now = Math.floor(Date.now() / 1000)): Promise<void> {
  const tip = chain.tip;
  const state = await chain.getStateView([SUPPLY_KEY]);
  const b = assembleBlock({ parent: { hash: tip.hash, height: tip.height, time: tip.header.time }, medianTimePast: chain.medianTimePast(tip), now, txs: [], miner, state }, params);
  const header = grindHeader(b.header, params.powLimit, 10_000_000);
  if (!header) throw new Error('could not grind');
  expect((await chain.addBlock({ ...b, header })).status).toBe('connected');
}

/** Stops a test's refund manager, then closes its ledger, mempool and chain, in that order (what the refund tests open). */
export async function closeRefundsWorld(e: { refunds: RefundManager; ledger: SettlementLedger; pool: Mempool; chain: Chain }): Promise<void> {
  e.refunds.stop();
  await e.refunds.idle();
  await e.ledger.close();
  e.pool.stop();
  await e.chain.close();
}
