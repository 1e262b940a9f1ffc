/**
 * A devnet chain of blocks full of signed transfers, built in memory for the import and sync
 * benchmarks: `perBlock` funded senders each send one transfer per block (nonce = block index;
 * a sender's first transfer carries its public keys), blocks 3 s apart at trivial difficulty,
 * each applied to an in-memory state so the next one builds on it.
 */
import { createMLDSA87 } from '@oqs/liboqs-js/sig';
import { ed25519 } from '@noble/curves/ed25519.js';
import { applyBlock, writeChanges } from '../consensus/apply.js';
import { assembleBlock, grindHeader } from '../consensus/assemble.js';
import { blockHash, encodeBlock } from '../consensus/block.js';
import { encodeAddress } from '../consensus/address.js';
import { createDevnetChainParams } from '../consensus/devnet.js';
import { createGenesisBlock, createGenesisState } from '../consensus/genesis.js';
import { createKeyPairFromSeed, type HybridKeyPair } from '../consensus/keys.js';
import { sha256 } from '../consensus/hash.js';
import { COIN, type ChainParams, type DevnetOptions } from '../consensus/params.js';
import { encodeTx, txSighash, TxType, TX_VERSION, type Tx, type UnsignedTx } from '../consensus/tx.js';
import { transfer } from '../consensus/txTypes/transfer.js';

/** What to build. */
export interface TransferChainOptions {
  readonly blocks: number;
  /** Transfers per block, one per sender. */
  readonly perBlock: number;
  /** Seeds of the senders' keys: `${seedPrefix}${i}`. */
  readonly seedPrefix: string;
  /** Unix seconds of the genesis block (default: now). */
  readonly genesisTime?: number;
  /** Consensus limits to raise for big blocks. */
  readonly limits?: DevnetOptions['limits'];
}

/** The built chain: its parameters and raw blocks (heights 1…n). */
export interface TransferChain {
  readonly params: ChainParams;
  readonly blocks: Uint8Array[];
  readonly txs: number;
  readonly bytes: number;
  /** Timestamp of the last block, Unix seconds. */
  readonly tipTime: number;
}

/** The `perBlock` sender keys (seeds `${seedPrefix}${i}`) and devnet parameters funding each with `funds`. */
export function createBenchSenders(o: TransferChainOptions, funds: bigint): { keys: HybridKeyPair[]; params: ChainParams } {
  const keys: HybridKeyPair[] = [];
  for (let i = 0; i < o.perBlock; i++) keys.push(createKeyPairFromSeed(sha256(new TextEncoder().encode(`${o.seedPrefix}${i}`))));
  const params = createDevnetChainParams({
    genesisBits: 0x207fffff,
    ...(o.genesisTime === undefined ? {} : { genesisTime: o.genesisTime }),
    allocations: keys.map((k) => ({ address: encodeAddress(k.address, 'tnative'), amount: funds })),
    ...(o.limits ? { limits: o.limits } : {}),
  });
  return { keys, params };
}

/** A parent block as the next one needs it. */
export interface BenchParent {
  readonly hash: Uint8Array;
  readonly height: number;
  readonly time: number;
}

/** Assembles the block of `txs` 3 s after `parent`, grinds it, applies it to `state`; returns its bytes and the new parent. */
export function sealBlock(parent: BenchParent, txs: Tx[], miner: Uint8Array, state: Map<string, Uint8Array>, params: ChainParams, txIds?: Uint8Array[]): { raw: Uint8Array; parent: BenchParent } {
  const view = { get: (k: string) => state.get(k) };
  const draft = assembleBlock({ parent, medianTimePast: parent.time, now: parent.time + 3, txs, ...(txIds ? { txIds } : {}), miner, state: view }, params);
  const block = { ...draft, header: grindHeader(draft.header, params.powLimit)! };
  writeChanges(state, applyBlock(view, block, params, txIds).changes);
  return { raw: encodeBlock(block, txs.map(encodeTx)), parent: { hash: blockHash(block.header), height: parent.height + 1, time: block.header.time } };
}

/** Builds the chain (see module comment). */
export async function buildTransferChain(o: TransferChainOptions): Promise<TransferChain> {
  const { keys, params } = createBenchSenders(o, 1000n * COIN);
  const oqs = await createMLDSA87();
  const sign = (u: UnsignedTx, kp: HybridKeyPair): Tx => {
    const msg = txSighash(u);
    return { ...u, signature: { mldsa: oqs.sign(msg, kp.mldsaSecret), ed25519: ed25519.sign(msg, kp.ed25519Secret) } };
  };
  const state = new Map<string, Uint8Array>();
  writeChanges(state, createGenesisState(params));
  const genesis = createGenesisBlock(params);
  let parent = { hash: blockHash(genesis.header), height: 0, time: genesis.header.time };
  const recipient = createKeyPairFromSeed(new Uint8Array(32).fill(9)).address;
  const blocks: Uint8Array[] = [];
  let txs = 0;
  let bytes = 0;
  for (let b = 0; b < o.blocks; b++) {
    const list: Tx[] = [];
    for (const kp of keys) {
      const nonce = BigInt(b);
      list.push(sign({ version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, from: kp.address, nonce, fee: 20_000n, payload: transfer.encodePayload({ to: recipient, amount: 1000n }), publicKey: nonce === 0n ? kp.publicKey : undefined }, kp));
    }
    const sealed = sealBlock(parent, list, recipient, state, params);
    blocks.push(sealed.raw);
    bytes += sealed.raw.length;
    txs += list.length;
    parent = sealed.parent;
  }
  return { params, blocks, txs, bytes, tipTime: parent.time };
}
