/**
 * The chain manager: stores blocks (bodies in flat files, blockFiles.ts; everything else in
 * LevelDB), keeps every known header in memory, connects
 * blocks to the best chain, keeps side branches, reorganises to the branch with the most
 * cumulative work (disconnect with undo data, reconnect with full validation) and holds a
 * bounded pool of orphans. Each connect and each disconnect is one atomic batch (block
 * location, undo, state changes, indexes, tip), and memory changes only after it is written.
 *
 * Size (~500 lines): one class whose connect, disconnect, reorganisation and orphan handling
 * share the in-memory header index and the one write lane; the pure parts live in consensus/,
 * the key layout in layout.ts, the economy indexes in economyIndex.ts.
 */
import { EventEmitter } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { Level } from 'level';
import { applyBlock, blockTouchedKeys } from '../consensus/apply.js';
import { blockHash, decodeBlock, encodeBlock, type Block } from '../consensus/block.js';
import { BlockErrorCode, NodeError, TxErrorCode, ValidationError } from '../consensus/errors.js';
import { createGenesisBlock, createGenesisState } from '../consensus/genesis.js';
import { toHex } from '../consensus/hash.js';
import { blockWork } from '../consensus/pow.js';
import { decodeAccount, decodeSupply, decodeChanges, encodeChanges, accountKey, SUPPLY_KEY, EMPTY_ACCOUNT, type Account, type StateChanges, type StateView, type Supply } from '../consensus/state.js';
import { decodeTx, txId as computeTxId } from '../consensus/tx.js';
import { medianTime, signatureJobs, validateBlockBody, validateHeader } from '../consensus/validate.js';
import type { ChainParams } from '../consensus/params.js';
import { buildIndexBatch } from './economyIndex.js';
import { backfillPaymentsIndex, PAYMENTS_INDEX, PAYMENTS_INDEX_VERSION, u32Bytes, type BackfillOptions, type BackfillResult } from './indexBackfill.js';
import { EconomyReader } from './economyReader.js';
import { areIdsCommitted, BlockQueue, isPreparedBlock, txOffsets, txSlices, type BlockInput, type PreparedBlock, type QueuedBlock } from './blockQueue.js';
import { SignatureLookahead } from './signatureLookahead.js';
import { BlockFiles, decodeBlockLocation, encodeBlockLocation } from './blockFiles.js';
import { decodeEntryRecord, decodeTxLocation, encodeEntryRecord, encodeTxLocation, layout, SCHEMA_VERSION } from './layout.js';
import { silentLogger, type AddBlockResult, type ChainEntry, type ChainEvents, type ChainReader, type Logger, type SignatureVerifier, type StoredTx } from './types.js';

/** Error codes of the chain store itself (consensus failures use the consensus codes). */
export const ChainErrorCode = {
  CORRUPT: 'chain_corrupt',
  WRONG_NETWORK: 'chain_wrong_network',
  INVALID_BLOCK_KNOWN: 'block_known_invalid',
  CLOSED: 'chain_closed',
} as const;

/** Options of `openChain`. */
export interface ChainOptions {
  /** Directory of the LevelDB database. */
  dataDir: string;
  params: ChainParams;
  verifier: SignatureVerifier;
  /** Clock in Unix seconds (injected in tests). */
  now?: () => number;
  /** Orphans kept while their parent is missing. */
  maxOrphans?: number;
  /** Blocks waiting in `addBlock`'s queue whose signatures are checked ahead (blockQueue.ts; 0: none). */
  lookaheadBlocks?: number;
  logger?: Logger;
  /** Batch bounds of the payments index rebuild a data directory from before that index gets at start (indexBackfill.ts). */
  indexBackfill?: BackfillOptions;
}

/** Defaults of ChainOptions. */
export const defaultChainOptions = { maxOrphans: 200, blockCacheSize: 32, lookaheadBlocks: 4 } as const;

type Batch = ({ type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string })[];

/** The chain manager (see module comment). */
export class Chain extends EventEmitter<ChainEvents> implements ChainReader {
  readonly params: ChainParams;
  private readonly db: Level<string, Uint8Array>;
  private readonly files: BlockFiles;
  private readonly verifier: SignatureVerifier;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly maxOrphans: number;
  /** Every block with a stored body, by hash hex. */
  private readonly entries = new Map<string, ChainEntry>();
  /** The best chain, by height. */
  private readonly main: ChainEntry[] = [];
  private readonly orphans = new Map<string, { block: Block; bytes: Uint8Array; addedAt: number }>();
  private readonly invalid = new Set<string>();
  private readonly blockCache = new Map<string, Uint8Array>();
  private queue: Promise<unknown> = Promise.resolve();
  /** Blocks handed to `addBlock` that wait for their turn. */
  private readonly waiting: BlockQueue;
  private closed = false;
  /** Blocks disconnected since the chain opened (the economy reader's per-block caches check it). */
  private disconnects = 0;
  /** Reads of the economy (tokens, pools, swaps, stakes, bridge) at the tip. */
  readonly economy: EconomyReader;
  /** The rebuild of read indexes behind this version, started by `open` (indexBackfill.ts). */
  private backfill: Promise<BackfillResult | undefined> = Promise.resolve(undefined);

  private constructor(db: Level<string, Uint8Array>, files: BlockFiles, opts: ChainOptions) {
    super();
    this.db = db;
    this.files = files;
    this.params = opts.params;
    this.verifier = opts.verifier;
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
    this.log = opts.logger ?? silentLogger;
    this.maxOrphans = opts.maxOrphans ?? defaultChainOptions.maxOrphans;
    this.waiting = new BlockQueue(new SignatureLookahead(this.verifier, (keys) => this.getStateView(keys)), opts.lookaheadBlocks ?? defaultChainOptions.lookaheadBlocks);
    this.economy = new EconomyReader(db, opts.params, () => ({ height: this.tip.height, time: this.tip.header.time }), {
      hashAt: (height) => this.main[height]?.hashHex,
      disconnects: () => this.disconnects,
    });
  }

  /** Opens (or creates with genesis) the chain database in `opts.dataDir`. */
  static async open(opts: ChainOptions): Promise<Chain> {
    await mkdir(opts.dataDir, { recursive: true });
    // A 64 MiB write buffer (LevelDB's default is 4 MiB): a full block is 8 MB, so the default
    // flushed a memtable to level 0 for every block and compacted the same bytes again and again;
    // with it, the background threads' CPU during an import fell from ~2.2 to ~1.5 s per 20,000
    // transfers (`npm run bench -- import`, docs/benchmarks.md). Costs up to twice that in RSS
    // while blocks are written (the memtable being filled and the one being flushed).
    const db = new Level<string, Uint8Array>(opts.dataDir, { keyEncoding: 'utf8', valueEncoding: 'view', writeBufferSize: 64 * 1024 * 1024 });
    await db.open();
    let files: BlockFiles;
    try {
      files = await BlockFiles.open(opts.dataDir);
    } catch (e) {
      await db.close();
      throw e;
    }
    const chain = new Chain(db, files, opts);
    try {
      await chain.load();
    } catch (e) {
      await db.close();
      await files.close();
      throw e;
    }
    chain.backfill = backfillPaymentsIndex(
      { db, blockBytes: (hex) => chain.storedBlock(hex), hashAt: (h) => chain.main[h]?.hashHex, tipHeight: () => chain.tip.height, inLane: (fn) => chain.inLane(fn), isClosed: () => chain.closed, log: chain.log },
      opts.indexBackfill,
    ).catch((e: unknown) => {
      chain.log.warn({ err: (e as Error).message }, 'payments index rebuild failed; it is tried again at the next start');
      return undefined;
    });
    return chain;
  }

  /** Resolves when the index rebuild started at open has ended (done, nothing to do, stopped or failed). */
  indexesRebuilt(): Promise<BackfillResult | undefined> {
    return this.backfill;
  }

  /** Runs `fn` in the write lane: after the blocks queued before it, before those queued after. */
  private inLane<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async load(): Promise<void> {
    const genesis = createGenesisBlock(this.params);
    const genesisHash = toHex(blockHash(genesis.header));
    const tipRaw = await this.db.get(layout.tip);
    if (!tipRaw) {
      await this.writeGenesis(genesis, genesisHash);
    } else if (!(await this.db.get(layout.height(0))) || toHex((await this.db.get(layout.height(0)))!) !== genesisHash) {
      throw new NodeError(ChainErrorCode.WRONG_NETWORK, `database in this directory belongs to another network than ${this.params.network}`);
    }
    for await (const [key, value] of this.db.iterator({ gte: layout.entryPrefix, lt: 'h;' })) {
      const rec = decodeEntryRecord(value);
      const hash = blockHash(rec.header);
      const hex = key.slice(2);
      this.entries.set(hex, { hash, hashHex: hex, ...rec });
    }
    const tipHex = toHex((await this.db.get(layout.tip))!);
    let cur = this.entries.get(tipHex);
    if (!cur) throw new NodeError(ChainErrorCode.CORRUPT, `tip ${tipHex} has no entry`);
    this.main.length = cur.height + 1;
    while (cur) {
      this.main[cur.height] = cur;
      if (cur.height === 0) break;
      cur = this.entries.get(toHex(cur.header.prevHash));
    }
    if (this.main.some((e) => e === undefined)) throw new NodeError(ChainErrorCode.CORRUPT, 'best chain has a gap');
    // The best block's body read back now: a chain directory whose block files are missing or damaged (copied
    // without chain/blocks/) is refused at start, not at the first peer or explorer asking for a block.
    if (!(await this.storedBlock(tipHex))) throw new NodeError(ChainErrorCode.CORRUPT, `the best block ${tipHex} has no stored body`);
    this.log.info({ height: this.tip.height, tip: this.tip.hashHex, network: this.params.network }, 'chain opened');
  }

  private async writeGenesis(genesis: Block, hex: string): Promise<void> {
    const bytes = encodeBlock(genesis);
    const entry = { header: genesis.header, height: 0, chainWork: blockWork(genesis.header.bits), txCount: 0, size: bytes.length };
    const loc = await this.files.append(bytes);
    const batch: Batch = [
      { type: 'put', key: layout.schema, value: Uint8Array.of(SCHEMA_VERSION, 0, 0, 0) },
      { type: 'put', key: layout.indexVersion(PAYMENTS_INDEX), value: u32Bytes(PAYMENTS_INDEX_VERSION) },
      { type: 'put', key: layout.entry(hex), value: encodeEntryRecord(entry) },
      { type: 'put', key: layout.blockFile(hex), value: encodeBlockLocation(loc) },
      { type: 'put', key: layout.height(0), value: blockHash(genesis.header) },
      { type: 'put', key: layout.tip, value: blockHash(genesis.header) },
    ];
    for (const [k, v] of createGenesisState(this.params)) if (v) batch.push({ type: 'put', key: layout.state(k), value: v });
    await this.db.batch(batch);
  }

  /** Whether the database is open (false once `close()` was called). */
  get isOpen(): boolean {
    return !this.closed;
  }

  /** The best block. */
  get tip(): ChainEntry {
    return this.main[this.main.length - 1];
  }

  /** Number of orphans held. */
  get orphanCount(): number {
    return this.orphans.size;
  }

  getEntryByHeight(height: number): ChainEntry | undefined {
    return this.main[height];
  }

  getEntryByHash(hashHex: string): ChainEntry | undefined {
    return this.entries.get(hashHex.toLowerCase());
  }

  /** Whether the block is on the best chain. */
  isMain(entry: ChainEntry): boolean {
    return this.main[entry.height]?.hashHex === entry.hashHex;
  }

  medianTimePast(entry: ChainEntry): number {
    const times: number[] = [];
    let cur: ChainEntry | undefined = entry;
    while (cur && times.length < this.params.medianTimeSpan) {
      times.push(cur.header.time);
      cur = cur.height === 0 ? undefined : this.entries.get(toHex(cur.header.prevHash));
    }
    return medianTime(times);
  }

  /** Raw bytes of a stored block. */
  async getBlockBytes(hashHex: string): Promise<Uint8Array | undefined> {
    const hex = hashHex.toLowerCase();
    const cached = this.blockCache.get(hex);
    if (cached) return cached;
    const raw = await this.storedBlock(hex);
    if (raw) this.cacheBlock(hex, raw);
    return raw;
  }

  /** A stored body as read from disk (not cached): from the block files, or from LevelDB where a data directory from before them keeps it (`b:`). */
  private async storedBlock(hex: string): Promise<Uint8Array | undefined> {
    const [loc, inDb] = await this.db.getMany([layout.blockFile(hex), layout.block(hex)]);
    return loc ? this.files.read(decodeBlockLocation(loc)) : inDb;
  }

  private cacheBlock(hex: string, raw: Uint8Array): void {
    this.blockCache.set(hex, raw);
    if (this.blockCache.size > defaultChainOptions.blockCacheSize) this.blockCache.delete(this.blockCache.keys().next().value!);
  }

  async getBlock(hashHex: string): Promise<Block | undefined> {
    const raw = await this.getBlockBytes(hashHex);
    return raw ? decodeBlock(raw).block : undefined;
  }

  async getTx(idHex: string): Promise<StoredTx | undefined> {
    const loc = await this.db.get(layout.tx(idHex.toLowerCase()));
    if (!loc) return undefined;
    const l = decodeTxLocation(loc);
    const blockHex = toHex(l.blockHash);
    const bytes = await this.txBytes(blockHex, l.offset, l.length);
    if (!bytes) throw new NodeError(ChainErrorCode.CORRUPT, `tx ${idHex} points at missing block ${blockHex}`);
    return { tx: decodeTx(bytes), bytes, id: idHex.toLowerCase(), blockHash: blockHex, height: l.height, index: l.index };
  }

  /** A transaction's bytes inside a stored block: from the cache, else read alone from the block files (not the whole block). */
  private async txBytes(blockHex: string, offset: number, length: number): Promise<Uint8Array | undefined> {
    const cached = this.blockCache.get(blockHex);
    if (cached) return cached.slice(offset, offset + length);
    const loc = await this.db.get(layout.blockFile(blockHex));
    if (loc) return this.files.readRange(decodeBlockLocation(loc), offset, length);
    return (await this.getBlockBytes(blockHex))?.slice(offset, offset + length);
  }

  async getAccount(id: Uint8Array): Promise<Account> {
    const raw = await this.db.get(layout.state(accountKey(id)));
    return raw ? decodeAccount(raw) : EMPTY_ACCOUNT;
  }

  async getSupply(): Promise<Supply> {
    const raw = await this.db.get(layout.state(SUPPLY_KEY));
    return raw ? decodeSupply(raw) : { minted: 0n, burned: 0n };
  }

  /** A snapshot of the given state keys at the current tip; other keys read as absent. */
  async getStateView(keys: readonly string[]): Promise<StateView> {
    const unique = [...new Set(keys)];
    const values = await this.db.getMany(unique.map(layout.state));
    const map = new Map<string, Uint8Array>();
    unique.forEach((k, i) => {
      const v = values[i];
      if (v) map.set(k, v);
    });
    return { get: (k) => map.get(k) };
  }

  /** The state keys starting with `prefix` and their values at the tip (the provider registry's scans). */
  async scanState(prefix: string): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    const gte = layout.state(prefix);
    for await (const [k, v] of this.db.iterator({ gte, lt: `${gte}\uffff` })) out.set(k.slice(2), v);
    return out;
  }

  /** Every state key and value at the tip (audits and replay checks; reads the whole state). */
  async exportState(): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    for await (const [k, v] of this.db.iterator({ gte: 's:', lt: 's;' })) out.set(k.slice(2), v);
    return out;
  }

  /**
   * Adds a block from anywhere (miner, peer, RPC). Validates what can be validated, stores it,
   * and connects or reorganises when it makes the best chain heavier. Serialised: one at a time;
   * blocks handed over before the previous ones are done have their signatures checked ahead
   * (blockQueue.ts). `input` may be the bytes as `prepareBlock` decoded them. Throws
   * ValidationError/CodecError (coded) for invalid blocks.
   */
  addBlock(input: BlockInput): Promise<AddBlockResult> {
    const q = this.waiting.push(input);
    const run = this.queue.then(() => {
      this.waiting.take(q);
      return this.addBlockNow(q);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async addBlockNow(q: QueuedBlock): Promise<AddBlockResult> {
    if (this.closed) throw new NodeError(ChainErrorCode.CLOSED, 'chain is closed');
    const input = q.input;
    const prepared = await q.prepared;
    const { block, bytes } = prepared ?? (input instanceof Uint8Array ? { block: decodeBlock(input).block, bytes: input } : isPreparedBlock(input) ? input : { block: input, bytes: encodeBlock(input) });
    const hash = blockHash(block.header);
    const hex = toHex(hash);
    if (this.entries.has(hex)) return { status: 'duplicate', hash: hex, height: this.entries.get(hex)!.height };
    if (this.invalid.has(hex)) throw new ValidationError(ChainErrorCode.INVALID_BLOCK_KNOWN, `block ${hex} was already found invalid`);
    const parent = this.entries.get(toHex(block.header.prevHash));
    if (!parent) {
      if (this.invalid.has(toHex(block.header.prevHash))) {
        this.invalid.add(hex);
        throw new ValidationError(BlockErrorCode.BAD_PREV, `block ${hex} builds on an invalid block`);
      }
      this.addOrphan(hex, block, bytes);
      return { status: 'orphan', hash: hex };
    }
    const result = await this.acceptBlock(block, bytes, hash, parent, prepared);
    await this.resolveOrphans(hex);
    return result;
  }

  private addOrphan(hex: string, block: Block, bytes: Uint8Array): void {
    if (this.orphans.has(hex)) return;
    if (this.orphans.size >= this.maxOrphans) this.orphans.delete(this.orphans.keys().next().value!);
    this.orphans.set(hex, { block, bytes, addedAt: Date.now() });
    this.log.debug({ hash: hex, orphans: this.orphans.size }, 'orphan block held');
  }

  private async resolveOrphans(parentHex: string): Promise<void> {
    const pending = [parentHex];
    while (pending.length) {
      const p = pending.pop()!;
      for (const [hex, o] of this.orphans) {
        if (toHex(o.block.header.prevHash) !== p) continue;
        this.orphans.delete(hex);
        const parent = this.entries.get(p);
        if (!parent) continue;
        try {
          await this.acceptBlock(o.block, o.bytes, blockHash(o.block.header), parent);
          pending.push(hex);
        } catch (e) {
          this.log.warn({ hash: hex, err: (e as Error).message }, 'orphan block rejected');
        }
      }
    }
  }

  /** Contextual checks, storage, then connect / reorganise / keep as side branch. */
  private async acceptBlock(block: Block, bytes: Uint8Array, hash: Uint8Array, parent: ChainEntry, prepared?: PreparedBlock): Promise<AddBlockResult> {
    const hex = toHex(hash);
    const height = parent.height + 1;
    let txIds: Uint8Array[];
    try {
      validateHeader(
        block.header,
        { prevHash: parent.hash, prevHeight: parent.height, prevTime: parent.header.time, medianTimePast: this.medianTimePast(parent), now: this.now() },
        this.params,
      );
      txIds = validateBlockBody(block, height, this.params, txSlices(bytes), prepared?.txIds, areIdsCommitted(prepared)).txIds;
    } catch (e) {
      // A block too far in the future may become valid later: do not remember it as invalid.
      if (e instanceof ValidationError && e.code !== BlockErrorCode.TIME_TOO_NEW) this.invalid.add(hex);
      throw e;
    }
    const entry: ChainEntry = { hash, hashHex: hex, height, header: block.header, chainWork: parent.chainWork + blockWork(block.header.bits), txCount: block.txs.length, size: bytes.length };
    // The body on disk first: the entry naming it is written only once it is there.
    const loc = await this.files.append(bytes);
    await this.db.batch([
      { type: 'put', key: layout.entry(hex), value: encodeEntryRecord(entry) },
      { type: 'put', key: layout.blockFile(hex), value: encodeBlockLocation(loc) },
    ]);
    this.entries.set(hex, entry);
    this.cacheBlock(hex, bytes);

    if (parent.hashHex === this.tip.hashHex) {
      try {
        await this.connect(entry, block, bytes, txIds, prepared?.sighashes);
      } catch (e) {
        await this.markInvalid(entry);
        throw e;
      }
      this.emit('tip', entry);
      return { status: 'connected', hash: hex, height };
    }
    if (entry.chainWork > this.tip.chainWork) {
      await this.reorganize(entry);
      const onMain = this.isMain(entry);
      if (!onMain) throw new ValidationError(BlockErrorCode.BAD_TX, `block ${hex} or an ancestor failed to connect`);
      return { status: 'reorganized', hash: hex, height };
    }
    this.log.info({ hash: hex, height }, 'side-branch block stored');
    return { status: 'side', hash: hex, height };
  }

  /** Forgets an invalid block and its stored descendants. */
  private async markInvalid(entry: ChainEntry): Promise<void> {
    const bad = new Set([entry.hashHex]);
    let grew = true;
    while (grew) {
      grew = false;
      for (const e of this.entries.values()) {
        if (!bad.has(e.hashHex) && bad.has(toHex(e.header.prevHash))) {
          bad.add(e.hashHex);
          grew = true;
        }
      }
    }
    const batch: Batch = [];
    for (const h of bad) {
      this.invalid.add(h);
      this.entries.delete(h);
      this.blockCache.delete(h);
      batch.push({ type: 'del', key: layout.entry(h) }, { type: 'del', key: layout.blockFile(h) }, { type: 'del', key: layout.block(h) });
    }
    await this.db.batch(batch);
  }

  /** Switches the best chain to end at `target` (more work than the tip). */
  private async reorganize(target: ChainEntry): Promise<void> {
    const branch: ChainEntry[] = [];
    let cur: ChainEntry | undefined = target;
    while (cur && !this.isMain(cur)) {
      branch.push(cur);
      cur = this.entries.get(toHex(cur.header.prevHash));
    }
    if (!cur) throw new NodeError(ChainErrorCode.CORRUPT, `branch of ${target.hashHex} does not reach the best chain`);
    const fork = cur;
    const oldTip = this.tip;
    this.log.warn({ from: oldTip.hashHex, fromHeight: oldTip.height, to: target.hashHex, toHeight: target.height, fork: fork.height }, 'reorganizing');
    while (this.tip.hashHex !== fork.hashHex) await this.disconnectTip();
    branch.reverse();
    for (const e of branch) {
      const bytes = await this.getBlockBytes(e.hashHex);
      if (!bytes) throw new NodeError(ChainErrorCode.CORRUPT, `missing body of ${e.hashHex}`);
      try {
        await this.connect(e, decodeBlock(bytes).block, bytes);
      } catch (err) {
        this.log.warn({ hash: e.hashHex, err: (err as Error).message }, 'block failed to connect during reorganization');
        await this.markInvalid(e);
        // Go back to the heaviest valid chain we know, which may be the old one.
        if (oldTip.chainWork > this.tip.chainWork && this.entries.has(oldTip.hashHex)) await this.reorganize(oldTip);
        this.emit('tip', this.tip);
        return;
      }
    }
    this.emit('tip', this.tip);
  }

  /** Validates (state and signatures) and commits a block on top of the tip, in one batch. */
  private async connect(entry: ChainEntry, block: Block, bytes: Uint8Array, knownTxIds?: Uint8Array[], sighashes?: Uint8Array[]): Promise<void> {
    const offsets = txOffsets(bytes);
    const txIds = knownTxIds ?? offsets.map((o) => computeTxId(bytes.subarray(o.offset, o.offset + o.length)));
    const view = await this.getStateView(blockTouchedKeys(block));
    // Signatures are checked on the pool while this thread applies the block; nothing is written
    // unless both succeed.
    const jobs = signatureJobs(block.txs, txIds, view, sighashes);
    const verified = jobs.length ? this.verifier.verifyBatch(jobs) : Promise.resolve([]);
    let app: ReturnType<typeof applyBlock>;
    try {
      app = applyBlock(view, block, this.params, txIds);
      this.waiting.lookAhead(block.txs);
    } catch (e) {
      await verified.catch(() => undefined);
      throw e;
    }
    const bad = (await verified).indexOf(false);
    if (bad >= 0) throw new ValidationError(TxErrorCode.BAD_SIGNATURE, `tx ${bad} (${jobs[bad].id}): signature does not verify`);
    const batch: Batch = [];
    pushState(batch, app.changes);
    batch.push({ type: 'put', key: layout.undo(entry.hashHex), value: encodeChanges(app.undo) });
    const index = await buildIndexBatch(block, entry.height, txIds, app, this.params, (keys) => this.db.getMany(keys));
    if (index.writes.size) {
      pushRaw(batch, index.writes);
      batch.push({ type: 'put', key: layout.indexUndo(entry.hashHex), value: encodeChanges(index.priors) });
    }
    batch.push({ type: 'put', key: layout.height(entry.height), value: entry.hash });
    txIds.forEach((id, i) => {
      batch.push({ type: 'put', key: layout.tx(toHex(id)), value: encodeTxLocation({ blockHash: entry.hash, height: entry.height, index: i, ...offsets[i] }) });
    });
    batch.push({ type: 'put', key: layout.tip, value: entry.hash });
    await this.db.batch(batch);
    this.main.push(entry);
    this.log.info({ height: entry.height, hash: entry.hashHex, txs: block.txs.length }, 'block connected');
    this.emit('connect', entry, block, txIds);
  }

  /** Undoes the tip block, in one batch. */
  private async disconnectTip(): Promise<void> {
    const entry = this.tip;
    if (entry.height === 0) throw new NodeError(ChainErrorCode.CORRUPT, 'cannot disconnect genesis');
    const [undoRaw, bytes, indexUndo] = await Promise.all([this.db.get(layout.undo(entry.hashHex)), this.getBlockBytes(entry.hashHex), this.db.get(layout.indexUndo(entry.hashHex))]);
    if (!undoRaw || !bytes) throw new NodeError(ChainErrorCode.CORRUPT, `missing undo or body of ${entry.hashHex}`);
    const block = decodeBlock(bytes).block;
    const batch: Batch = [];
    pushState(batch, decodeChanges(undoRaw));
    if (indexUndo) {
      pushRaw(batch, decodeChanges(indexUndo));
      batch.push({ type: 'del', key: layout.indexUndo(entry.hashHex) });
    }
    batch.push({ type: 'del', key: layout.undo(entry.hashHex) }, { type: 'del', key: layout.height(entry.height) });
    for (const raw of txSlices(bytes)) batch.push({ type: 'del', key: layout.tx(toHex(computeTxId(raw))) });
    batch.push({ type: 'put', key: layout.tip, value: entry.header.prevHash });
    await this.db.batch(batch);
    this.main.pop();
    this.disconnects++;
    this.log.info({ height: entry.height, hash: entry.hashHex }, 'block disconnected');
    this.emit('disconnect', entry, block);
  }

  /** Waits for queued work and closes the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    await this.db.close();
    await this.files.close();
  }
}

function pushRaw(batch: Batch, writes: StateChanges): void {
  for (const [k, v] of writes) {
    if (v === null) batch.push({ type: 'del', key: k });
    else batch.push({ type: 'put', key: k, value: v });
  }
}

function pushState(batch: Batch, changes: StateChanges): void {
  for (const [k, v] of changes) {
    if (v === null) batch.push({ type: 'del', key: layout.state(k) });
    else batch.push({ type: 'put', key: layout.state(k), value: v });
  }
}

/** Opens the chain (see `Chain.open`). */
export function openChain(opts: ChainOptions): Promise<Chain> {
  return Chain.open(opts);
}
