/**
 * A devnet chain of blocks full of mixed economy transactions, built in memory for the import
 * benchmark (`npm run bench -- import --economy`): `perBlock` funded senders; block 1 issues two
 * tokens and carries every sender's key (each sender's first transaction), block 2 opens the
 * NATIVE/TOKA, NATIVE/TOKB and TOKA/TOKB pools, and every later block has one transaction per
 * sender, chosen from what the sender holds: swaps (≈40%, one hop), token transfers (≈20%),
 * liquidity adds (≈10%), stakes (≈10%) and NATIVE transfers (the rest). Signed with liboqs.
 */
import { createMLDSA87 } from '@oqs/liboqs-js/sig';
import { ed25519 } from '@noble/curves/ed25519.js';
import { selectApplicable, writeChanges } from '../consensus/apply.js';
import { blockHash } from '../consensus/block.js';
import { createGenesisBlock, createGenesisState } from '../consensus/genesis.js';
import type { HybridKeyPair } from '../consensus/keys.js';
import { COIN } from '../consensus/params.js';
import { StateOverlay } from '../consensus/state.js';
import { balanceOf, NATIVE } from '../consensus/ledger.js';
import { TokenKind } from '../consensus/economyState.js';
import { encodeTx, txId, txSighash, TX_VERSION, type Tx, type UnsignedTx } from '../consensus/tx.js';
import { transfer } from '../consensus/txTypes/transfer.js';
import { tokenIssue } from '../consensus/txTypes/tokenIssue.js';
import { tokenTransfer } from '../consensus/txTypes/tokenTransfer.js';
import { poolCreate } from '../consensus/txTypes/poolCreate.js';
import { poolAdd } from '../consensus/txTypes/poolAdd.js';
import { swap } from '../consensus/txTypes/swap.js';
import { stake } from '../consensus/txTypes/stake.js';
import type { TxTypeModule } from '../consensus/txTypes/types.js';
import { createBenchSenders, sealBlock, type BenchParent, type TransferChain, type TransferChainOptions } from './transferChain.js';

/** Builds the chain (see module comment); `txs` counts every transaction, `mix` counts them by type. */
export async function buildEconomyChain(o: TransferChainOptions): Promise<TransferChain & { mix: Record<string, number> }> {
  const { keys, params } = createBenchSenders(o, 200_000n * COIN);
  const oqs = await createMLDSA87();
  const state = new Map<string, Uint8Array>();
  writeChanges(state, createGenesisState(params));
  const view = { get: (k: string) => state.get(k) };
  const nonces = new Map<HybridKeyPair, bigint>();
  const mix: Record<string, number> = {};
  const make = <P>(kp: HybridKeyPair, mod: TxTypeModule<P>, p: P): Tx => {
    const nonce = nonces.get(kp) ?? 0n;
    nonces.set(kp, nonce + 1n);
    const u: UnsignedTx = { version: TX_VERSION, chainId: params.chainId, type: mod.type, from: kp.address, nonce, fee: 30_000n, payload: mod.encodePayload(p), ...(nonce === 0n ? { publicKey: kp.publicKey } : {}) };
    const msg = txSighash(u);
    mix[mod.name] = (mix[mod.name] ?? 0) + 1;
    return { ...u, signature: { mldsa: oqs.sign(msg, kp.mldsaSecret), ed25519: ed25519.sign(msg, kp.ed25519Secret) } };
  };
  const genesis = createGenesisBlock(params);
  let parent: BenchParent = { hash: blockHash(genesis.header), height: 0, time: genesis.header.time };
  const blocks: Uint8Array[] = [];
  let txs = 0;
  let bytes = 0;
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  const [issuerA, issuerB] = [keys[0], keys[1 % keys.length]];
  for (let b = 0; b < o.blocks; b++) {
    const s = new StateOverlay(view);
    const list: Tx[] = [];
    for (const [i, kp] of keys.entries()) {
      if (b === 0) {
        if (kp === issuerA) list.push(make(kp, tokenIssue, { symbol: 'TOKA', name: 'Token A', decimals: 8, maxSupply: 10n ** 18n, initialSupply: 10n ** 17n, kind: TokenKind.token }));
        else if (kp === issuerB) list.push(make(kp, tokenIssue, { symbol: 'TOKB', name: 'Token B', decimals: 6, maxSupply: 10n ** 18n, initialSupply: 10n ** 17n, kind: TokenKind.token }));
        else list.push(make(kp, stake, { tier: i % 4, amount: 10n * COIN }));
        continue;
      }
      if (b === 1 && kp === issuerA) {
        list.push(make(kp, poolCreate, { assetX: NATIVE, assetY: 'TOKA', amountX: 50_000n * COIN, amountY: 10n ** 15n }));
        continue;
      }
      if (b === 1 && kp === issuerB) {
        list.push(make(kp, poolCreate, { assetX: NATIVE, assetY: 'TOKB', amountX: 50_000n * COIN, amountY: 10n ** 15n }));
        continue;
      }
      if (b === 2 && kp === issuerA) {
        list.push(make(kp, tokenTransfer, { symbol: 'TOKA', to: issuerB.address, amount: 10n ** 15n }));
        continue;
      }
      if (b === 3 && kp === issuerB) {
        list.push(make(kp, poolCreate, { assetX: 'TOKA', assetY: 'TOKB', amountX: 10n ** 14n, amountY: 10n ** 14n }));
        continue;
      }
      const r = rand();
      const tokA = balanceOf(s, kp.address, 'TOKA');
      const tokB = balanceOf(s, kp.address, 'TOKB');
      const peer = keys[(i + 1 + Math.floor(rand() * (keys.length - 1))) % keys.length].address;
      if (r < 0.4 || b < 3) {
        const sym = rand() < 0.5 ? 'TOKA' : 'TOKB';
        const held = sym === 'TOKA' ? tokA : tokB;
        if (held > 1000n && rand() < 0.4) list.push(make(kp, swap, { path: [sym, NATIVE], amountIn: held / 3n, minOut: 1n, expiryHeight: parent.height + 100 }));
        else if (tokA > 1000n && tokB === 0n && b > 4 && rand() < 0.3) list.push(make(kp, swap, { path: ['TOKA', 'TOKB'], amountIn: tokA / 2n, minOut: 1n, expiryHeight: parent.height + 100 }));
        else list.push(make(kp, swap, { path: [NATIVE, sym], amountIn: BigInt(1 + Math.floor(rand() * 50)) * COIN, minOut: 1n, expiryHeight: parent.height + 100 }));
      } else if (r < 0.6 && (tokA > 0n || tokB > 0n)) {
        const sym = tokA > 0n ? 'TOKA' : 'TOKB';
        list.push(make(kp, tokenTransfer, { symbol: sym, to: peer, amount: (sym === 'TOKA' ? tokA : tokB) / 4n + 1n }));
      } else if (r < 0.7) {
        list.push(make(kp, poolAdd, { assetX: NATIVE, assetY: tokA > 0n ? 'TOKA' : 'TOKB', desiredX: 5n * COIN, desiredY: (tokA > 0n ? tokA : tokB) / 2n + 1n, minShares: 0n }));
      } else if (r < 0.8) {
        list.push(make(kp, stake, { tier: Math.floor(rand() * 4), amount: BigInt(1 + Math.floor(rand() * 100)) * COIN }));
      } else list.push(make(kp, transfer, { to: peer, amount: BigInt(1 + Math.floor(rand() * 1000)) * 1000n }));
    }
    // Keep what applies in order (a deposit may find no token after all); later nonces stay contiguous.
    const ids = list.map((t) => txId(encodeTx(t)));
    const keep = selectApplicable(view, list, ids, parent.height + 1, params);
    if (keep.length !== list.length) {
      const kept = new Set(keep);
      for (const [j, t] of list.entries()) if (!kept.has(j)) for (const k of keys) if (k.address === t.from) nonces.set(k, t.nonce);
    }
    const chosen = keep.map((j) => list[j]);
    const sealed = sealBlock(parent, chosen, keys[0].address, state, params, keep.map((j) => ids[j]));
    blocks.push(sealed.raw);
    bytes += sealed.raw.length;
    txs += chosen.length;
    parent = sealed.parent;
  }
  return { params, blocks, txs, bytes, tipTime: parent.time, mix };
}
