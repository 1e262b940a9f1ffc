/**
 * Interval mining (`--block-time S`, devnet only): the built-in miner's paced mode, like anvil's
 * `--block-time` or Hardhat's interval mining. Regular blocks with no hashing load, so a developer
 * (or a benchmark) sees what the node itself adds, not a proof-of-work lottery.
 *
 * At each slot boundary (genesis time + k·S, wall clock; chain/pacing.ts) it builds a fresh
 * template from everything in the mempool at that instant (its own build, not the job feed's
 * 500 ms refresh) and from the transactions whose admission is under way then (their signature
 * being checked: waited for, at most `ADMISSION_WAIT_MS`, so a payment sent just before the
 * boundary is not left for the next slot), with the slot's start as the block time, grinds it on the main thread (the
 * genesis of a paced devnet is at the easiest target, about 2 hashes per block; the grinding goes
 * in slices and gives up at the next slot, should a peer have raised the difficulty) and submits
 * it with `chain.addBlock`, like the CPU miner. Between slots it does no work at all. When a slot's
 * work runs past the next boundary (a busy node), that slot is handled as soon as it is done, still
 * with its own time; only a slot passed entirely gets no block (logged as missed). A slot the
 * tip already has (a peer's block), one the median-time-past rule forbids and one ahead of the
 * ASERT schedule are skipped (chain/pacing.ts says why the last keeps difficulty at the floor).
 *
 * As the CPU miner does, after one of its blocks was refused it mines coinbase-only on that
 * parent, so a bad mempool candidate cannot make it produce invalid blocks forever.
 */
import { EventEmitter } from 'node:events';
import { tryDecodeAddress } from '../consensus/address.js';
import { blockHash, encodeBlock, EXTRANONCE_SIZE } from '../consensus/block.js';
import { NodeError } from '../consensus/errors.js';
import { sha256d, toHex } from '../consensus/hash.js';
import { ADDRESS_SIZE } from '../consensus/keys.js';
import { checkProofOfWork } from '../consensus/pow.js';
import type { ChainParams } from '../consensus/params.js';
import { createBlockTemplate, encodeCoinbaseTag, templateBlock, templateHeaderBytes, type BlockTemplate } from './template.js';
import { MinerErrorCode, type Miner, type MinerChain, type MinerEvents, type MinerMempool, type MinerStats } from './minerTypes.js';
import { msToNextSlot, pacedSlotDecision, slotIndexAt, slotTime } from './pacing.js';
import { silentLogger, type Logger } from './types.js';

/** Options of `createPacedMiner`. */
export interface PacedMinerOptions {
  /** Seconds between slots: the chain's target spacing (a paced devnet's genesis has it). */
  readonly blockTime: number;
  /** Address (bech32m, the chain's hrp) or 20-byte account id paid by the coinbase. */
  readonly address: string | Uint8Array;
  /** Coinbase tag, UTF-8, at most 40 bytes. */
  readonly tag?: string;
  readonly logger?: Logger;
  /** Wall clock in ms (slot boundaries); default `Date.now`. */
  readonly clockMs?: () => number;
}

/**
 * At most this long (ms, and a tenth of the slot) a slot's template waits for the admissions under
 * way at its boundary. At 500 paid calls a second, 6 % of the calls arrived in the few ms before a
 * boundary while their signature was checked, missed that block and waited a whole slot more
 * (docs/benchmarks/paid.md). Under saturation the admission queue never empties: the wait is capped.
 */
export const ADMISSION_WAIT_MS = 100;

/** Hashes between yields to the event loop while grinding. */
const GRIND_SLICE = 4096;
const NONCE_SPACE = 0x1_0000_0000;

/** The paced miner (see module comment). */
class PacedMiner extends EventEmitter<MinerEvents> implements Miner {
  private readonly log: Logger;
  private readonly minerId: Uint8Array;
  private readonly clockMs: () => number;
  private running = false;
  private timer?: NodeJS.Timeout;
  /** The slot handler in progress (stop waits for it). */
  private current: Promise<void> = Promise.resolve();
  /** The last slot handled (mined or skipped). */
  private lastSlot = -Infinity;
  /** Parents on which an own block was refused: the next block on them carries no transactions. */
  private readonly emptyParents = new Set<string>();
  private extranonceCounter = 0;
  private hashes = 0;
  private blocksFound = 0;
  private slots = 0;
  private height = 0;
  private startedAt = 0;
  private hashesAtStart = 0;

  constructor(
    private readonly chain: MinerChain,
    private readonly mempool: MinerMempool,
    private readonly params: ChainParams,
    private readonly opts: PacedMinerOptions,
  ) {
    super();
    if (!Number.isInteger(opts.blockTime) || opts.blockTime < 1) throw new NodeError(MinerErrorCode.BAD_OPTIONS, `blockTime must be an integer ≥ 1, got ${opts.blockTime}`);
    if (opts.blockTime !== params.targetSpacing) {
      throw new NodeError(MinerErrorCode.BAD_OPTIONS, `blockTime ${opts.blockTime} s differs from the chain's target spacing ${params.targetSpacing} s`);
    }
    const id = typeof opts.address === 'string' ? tryDecodeAddress(opts.address, params.hrp) : opts.address;
    if (!id || id.length !== ADDRESS_SIZE) throw new NodeError(MinerErrorCode.BAD_ADDRESS, `miner address is not a valid ${params.hrp} address`);
    this.minerId = id;
    encodeCoinbaseTag(opts.tag);
    this.log = opts.logger ?? silentLogger;
    this.clockMs = opts.clockMs ?? Date.now;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.lastSlot = -Infinity;
    this.startedAt = this.clockMs();
    this.hashesAtStart = this.hashes;
    this.schedule();
    this.log.info({ blockTime: this.opts.blockTime, genesisTime: this.params.genesis.time, height: this.chain.tip.height }, 'paced miner started');
  }

  async stop(): Promise<void> {
    if (!this.running) {
      await this.current;
      return;
    }
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
    this.log.info({ blocksFound: this.blocksFound }, 'paced miner stopped');
  }

  stats(): MinerStats {
    const seconds = (this.clockMs() - this.startedAt) / 1000;
    return {
      running: this.running,
      threads: 0,
      hashrate: this.running && seconds > 0 ? (this.hashes - this.hashesAtStart) / seconds : 0,
      blocksFound: this.blocksFound,
      height: this.height,
      hashes: this.hashes,
      generation: this.slots,
      hashers: [],
      blockTime: this.opts.blockTime,
    };
  }

  /**
   * Arms the timer for the next slot boundary, or for now when the current slot has not been
   * handled yet (at start, or when the previous slot's work ran past the boundary: the block still
   * gets this slot's time).
   */
  private schedule(): void {
    if (!this.running) return;
    const { time: genesisTime } = this.params.genesis;
    const now = this.clockMs();
    const delay = slotIndexAt(now, genesisTime, this.opts.blockTime) > this.lastSlot ? 0 : msToNextSlot(now, genesisTime, this.opts.blockTime);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.current = this.onSlot()
        .catch((e: Error) => this.log.error({ err: e.message }, 'paced miner slot failed'))
        .finally(() => this.schedule());
    }, delay);
  }

  /** One slot: decide, build from the mempool as it is now, grind, submit. Never throws. */
  private async onSlot(): Promise<void> {
    const spacing = this.opts.blockTime;
    const genesisTime = this.params.genesis.time;
    const k = slotIndexAt(this.clockMs(), genesisTime, spacing);
    // A timer a millisecond early (the timer clock is monotonic, slots are wall clock): the next arming waits for the boundary.
    if (k <= this.lastSlot || !this.running) return;
    if (k > this.lastSlot + 1 && Number.isFinite(this.lastSlot)) {
      // The previous slot's work or a busy event loop took us past a whole slot: those slots get no block.
      const missedFrom = slotTime(this.lastSlot + 1, genesisTime, spacing);
      this.log.warn({ missedFrom, missedTo: slotTime(k - 1, genesisTime, spacing), lateMs: this.clockMs() - missedFrom * 1000 }, 'paced miner missed slots (the node was busy)');
    }
    this.lastSlot = k;
    this.slots++;
    const time = slotTime(k, genesisTime, spacing);
    const tip = this.chain.tip;
    const decision = pacedSlotDecision(time, { height: tip.height, time: tip.header.time }, this.chain.medianTimePast(tip) + 1, genesisTime, spacing);
    if (!decision.mine) {
      this.log.debug({ slot: k, time, height: tip.height + 1, reason: decision.reason }, 'slot skipped');
      return;
    }
    await this.admissionsUnderWay(Math.min(ADMISSION_WAIT_MS, spacing * 100));
    if (!this.running || this.chain.tip.hashHex !== tip.hashHex) return;
    let tpl: BlockTemplate;
    try {
      const includeTxs = !this.emptyParents.has(tip.hashHex);
      tpl = await createBlockTemplate(this.chain, this.mempool, this.params, { miner: this.minerId, tag: this.opts.tag, now: () => time, includeTxs });
    } catch (e) {
      this.log.error({ err: (e as Error).message, code: e instanceof NodeError ? e.code : undefined, slot: k }, 'block template failed; next slot');
      return;
    }
    // A block arrived while building, or the time rules moved the block off its slot: wait for the next slot.
    if (!this.running || tpl.parentHash !== this.chain.tip.hashHex || tpl.block.header.time !== time) return;
    this.height = tpl.height;
    this.emit('template', tpl);
    const found = await this.grind(tpl, time, slotTime(k + 1, genesisTime, spacing) * 1000);
    if (!found || !this.running || tpl.parentHash !== this.chain.tip.hashHex) return;
    await this.submit(tpl, found);
  }

  /** Resolves when the admissions queued now are done (`mempool.idle`), or after `ms`. */
  private async admissionsUnderWay(ms: number): Promise<void> {
    if (!this.mempool.idle) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.mempool.idle().catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  /** Finds a nonce meeting the template's target, in slices; undefined at `deadlineMs` or when the tip moved. */
  private async grind(tpl: BlockTemplate, time: number, deadlineMs: number): Promise<{ extranonce: Uint8Array; nonce: number } | undefined> {
    for (;;) {
      const extranonce = this.freshExtranonce();
      const header = templateHeaderBytes(tpl, { extranonce, time });
      const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
      for (let nonce = 0; nonce < NONCE_SPACE; ) {
        const end = Math.min(NONCE_SPACE, nonce + GRIND_SLICE);
        for (; nonce < end; nonce++) {
          view.setUint32(76, nonce, true);
          this.hashes++;
          if (checkProofOfWork(sha256d(header), tpl.bits, this.params.powLimit)) return { extranonce, nonce };
        }
        await new Promise<void>((r) => setImmediate(r));
        if (!this.running || tpl.parentHash !== this.chain.tip.hashHex || this.clockMs() >= deadlineMs) return undefined;
      }
    }
  }

  private freshExtranonce(): Uint8Array {
    const e = new Uint8Array(EXTRANONCE_SIZE);
    new DataView(e.buffer).setUint32(0, this.extranonceCounter, true);
    this.extranonceCounter = (this.extranonceCounter + 1) >>> 0;
    return e;
  }

  private async submit(tpl: BlockTemplate, at: { extranonce: Uint8Array; nonce: number }): Promise<void> {
    const block = templateBlock(tpl, { extranonce: at.extranonce, time: tpl.block.header.time, nonce: at.nonce });
    const hashHex = toHex(blockHash(block.header));
    try {
      const res = await this.chain.addBlock(encodeBlock(block, tpl.txBytes));
      if (res.status === 'connected' || res.status === 'reorganized') this.blocksFound++;
      this.log.info({ hash: hashHex, height: tpl.height, blockTime: block.header.time, txs: tpl.txIds.length, status: res.status }, 'paced block mined');
      this.emit('block', { hash: hashHex, height: tpl.height, status: res.status, txCount: tpl.txIds.length });
    } catch (e) {
      const code = e instanceof NodeError ? e.code : undefined;
      const message = (e as Error).message;
      this.log.error({ hash: hashHex, height: tpl.height, code, err: message }, 'mined block rejected');
      if (tpl.txIds.length > 0) this.emptyParents.add(tpl.parentHash);
      this.emit('rejected', { hash: hashHex, height: tpl.height, code, message });
    }
    for (const p of this.emptyParents) if (p !== this.chain.tip.hashHex) this.emptyParents.delete(p);
  }
}

/** Creates the paced (interval) miner (call `start()`); its `blockTime` must be the chain's target spacing. */
export function createPacedMiner(chain: MinerChain, mempool: MinerMempool, params: ChainParams, opts: PacedMinerOptions): Miner {
  return new PacedMiner(chain, mempool, params, opts);
}
