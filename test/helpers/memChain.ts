/** An in-memory chain for consensus tests: mines real blocks at trivial difficulty and applies them. */
import { applyBlock, writeChanges } from '../../consensus/apply.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { blockHash, type Block } from '../../consensus/block.js';
import { createGenesisBlock, createGenesisState } from '../../consensus/genesis.js';
import { medianTime, signatureJobs, validateBlockBody, validateHeader, verifySignatureJobs } from '../../consensus/validate.js';
import { verifyHybridReference } from '../../consensus/keys.js';
import type { ChainParams } from '../../consensus/params.js';
import type { StateView } from '../../consensus/state.js';
import type { Tx } from '../../consensus/tx.js';
import { BlockErrorCode, ValidationError } from '../../consensus/errors.js';

export interface MemEntry {
  block: Block;
  hash: Uint8Array;
  height: number;
}

export class MemChain {
  readonly state = new Map<string, Uint8Array>();
  readonly entries: MemEntry[] = [];
  constructor(readonly params: ChainParams) {
    const g = createGenesisBlock(params);
    writeChanges(this.state, createGenesisState(params));
    this.entries.push({ block: g, hash: blockHash(g.header), height: 0 });
  }
  get view(): StateView {
    return { get: (k) => this.state.get(k) };
  }
  get tip(): MemEntry {
    return this.entries[this.entries.length - 1];
  }
  mtp(): number {
    return medianTime(this.entries.slice(-this.params.medianTimeSpan).map((e) => e.block.header.time));
  }
  /** Assembles and grinds a block on the tip (not connected). */
  build(txs: Tx[], miner: Uint8Array, now = this.tip.block.header.time + this.params.targetSpacing): Block {
    const tip = this.tip;
    const b = assembleBlock({ parent: { hash: tip.hash, height: tip.height, time: tip.block.header.time }, medianTimePast: this.mtp(), now, txs, miner, state: this.view }, this.params);
    const header = grindHeader(b.header, this.params.powLimit, 1_000_000);
    if (!header) throw new Error('could not grind header');
    return { ...b, header };
  }
  /** Fully validates and connects a block; returns the undo changes. */
  connect(block: Block, now = block.header.time) {
    const tip = this.tip;
    const hash = validateHeader(block.header, { prevHash: tip.hash, prevHeight: tip.height, prevTime: tip.block.header.time, medianTimePast: this.mtp(), now }, this.params);
    const body = validateBlockBody(block, tip.height + 1, this.params);
    verifySignatureJobs(signatureJobs(block.txs, body.txIds, this.view), { verify: verifyHybridReference });
    const app = applyBlock(this.view, block, this.params, body.txIds);
    writeChanges(this.state, app.changes);
    this.entries.push({ block, hash, height: tip.height + 1 });
    return app;
  }
  /** Disconnects the tip with its undo data. */
  disconnect(undo: Map<string, Uint8Array | null>): void {
    writeChanges(this.state, undo);
    this.entries.pop();
  }
}

/** Builds and connects a block of `txs`; the failing transaction's code (or the block's), undefined when it connected. */
export function blockFailure(chain: MemChain, txs: Tx[], miner: Uint8Array): string | undefined {
  try {
    chain.connect(chain.build(txs, miner));
  } catch (e) {
    if (e instanceof ValidationError) return e.code === BlockErrorCode.BAD_TX ? String(e.payload.txCode) : e.code;
    throw e;
  }
  return undefined;
}
