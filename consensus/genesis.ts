/** The genesis block and genesis state of a network, derived from its chain parameters. */
import { tryDecodeAddress } from './address.js';
import { COINBASE_VERSION, EXTRANONCE_SIZE, coinbaseId, encodeCoinbase, merkleRoot, type Block } from './block.js';
import { StateOverlay, type StateChanges } from './state.js';
import type { ChainParams } from './params.js';

/** The genesis block: no transactions, a coinbase paying nothing that carries the network's message. */
export function createGenesisBlock(params: ChainParams): Block {
  const coinbase = {
    version: COINBASE_VERSION,
    chainId: params.chainId,
    height: 0,
    miner: new Uint8Array(20),
    reward: 0n,
    fees: 0n,
    extranonce: new Uint8Array(EXTRANONCE_SIZE),
    tag: new TextEncoder().encode(params.genesis.message),
  };
  return {
    header: {
      version: params.genesis.version,
      prevHash: new Uint8Array(32),
      merkleRoot: merkleRoot([coinbaseId(encodeCoinbase(coinbase))]),
      time: params.genesis.time,
      bits: params.genesis.bits,
      nonce: params.genesis.nonce,
    },
    coinbase,
    txs: [],
  };
}

/** The genesis state: the initial allocations, counted as minted supply. */
export function createGenesisState(params: ChainParams): StateChanges {
  const state = new StateOverlay({ get: () => undefined });
  let minted = 0n;
  for (const a of params.allocations) {
    const id = tryDecodeAddress(a.address, params.hrp);
    if (!id) throw new RangeError(`bad allocation address ${a.address}`);
    const acc = state.getAccount(id);
    state.setAccount(id, { ...acc, balance: acc.balance + a.amount });
    minted += a.amount;
  }
  state.setSupply({ minted, burned: 0n });
  return state.changes();
}
