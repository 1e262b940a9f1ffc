/**
 * The mempool on disk, as Bitcoin Core's mempool.dat: written at shutdown and, when it changed,
 * every `intervalMs`; read back at start, where every transaction is admitted again through the
 * mempool's full checks (signatures, nonces, balances on the current tip), so mined, expired or
 * no longer valid ones are dropped. A payment accepted with a 200 and saved survives a crash.
 *
 * Writes are atomic: the bytes go to `<file>.tmp`, are fsynced, and the temp file is renamed over
 * the file (then the directory is fsynced), so a crash leaves the old file or the new one, never
 * half of one. A file that fails its checksum (or is for another chain) is set aside as
 * `<file>.bad` and ignored.
 *
 * Format: "NMPL" ‖ u8 version (1) ‖ u32 chainId ‖ varint count ‖ count × (u64 addedAt ms ‖
 * bytes tx) ‖ sha256 of everything before (32). Entries are in (sender, nonce) order, so each
 * sender's transactions are admitted in sequence.
 */
import { open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Reader, Writer } from '../consensus/codec.js';
import { bytesEqual, sha256, toHex } from '../consensus/hash.js';
import { isNodeError } from '../consensus/errors.js';
import type { ChainParams } from '../consensus/params.js';
import { silentLogger, type Logger, type MempoolEntry } from './types.js';

/** File name of the saved mempool inside the data directory. */
export const MEMPOOL_FILE = 'mempool.dat';
const MAGIC = new TextEncoder().encode('NMPL');
const VERSION = 1;
/** Largest transaction a file may hold (a corrupt length must not allocate gigabytes). */
const MAX_TX_BYTES = 16 * 1024 * 1024;

/** What the store needs of the mempool. */
export interface PersistedMempool {
  list(): MempoolEntry[];
  add(bytes: Uint8Array, opts?: { addedAt?: number }): Promise<unknown>;
  on(event: 'added' | 'removed', fn: () => void): unknown;
  off(event: 'added' | 'removed', fn: () => void): unknown;
  /** Entries older than this are dropped, seconds. */
  readonly expirySeconds: number;
}

/** Options of the store. */
export interface MempoolStoreOptions {
  /** Path of the file. */
  readonly path: string;
  /** Save a changed mempool this often, ms (0: only at `stop`). */
  readonly intervalMs: number;
  readonly logger?: Logger;
  /** Unix ms (injected in tests). */
  readonly now?: () => number;
}

/** What a load did. */
export interface MempoolLoadResult {
  /** Admitted again. */
  readonly loaded: number;
  /** Refused by the mempool (mined meanwhile, invalid on this tip, duplicate). */
  readonly dropped: number;
  /** Older than the mempool's expiry. */
  readonly expired: number;
}

/** Error codes of the store (a bad file is never fatal: it is set aside and logged). */
export const MempoolStoreErrorCode = {
  BAD_FILE: 'mempool_file_bad',
} as const;

/** Encodes entries as a mempool file (see module comment). */
export function encodeMempoolFile(entries: readonly MempoolEntry[], chainId: number): Uint8Array {
  const sorted = [...entries].sort((a, b) => {
    const s = toHex(a.tx.from).localeCompare(toHex(b.tx.from));
    return s !== 0 ? s : a.tx.nonce < b.tx.nonce ? -1 : a.tx.nonce > b.tx.nonce ? 1 : 0;
  });
  const w = new Writer(64 + sorted.reduce((n, e) => n + e.size + 16, 0)).raw(MAGIC).u8(VERSION).u32(chainId).varint(sorted.length);
  for (const e of sorted) w.u64(BigInt(Math.max(0, Math.floor(e.addedAt)))).bytes(e.bytes);
  const body = w.finish();
  const out = new Uint8Array(body.length + 32);
  out.set(body);
  out.set(sha256(body), body.length);
  return out;
}

/** Decodes a mempool file; throws `mempool_file_bad` on a wrong magic, version, chain or checksum. */
export function decodeMempoolFile(bytes: Uint8Array, chainId: number): { addedAt: number; bytes: Uint8Array }[] {
  const bad = (why: string) => Object.assign(new Error(`mempool file: ${why}`), { code: MempoolStoreErrorCode.BAD_FILE });
  if (bytes.length < MAGIC.length + 1 + 4 + 1 + 32) throw bad('too short');
  const body = bytes.subarray(0, bytes.length - 32);
  if (!bytesEqual(sha256(body), bytes.subarray(bytes.length - 32))) throw bad('checksum mismatch');
  try {
    const r = new Reader(body);
    if (!bytesEqual(r.raw(MAGIC.length), MAGIC)) throw bad('not a mempool file');
    const version = r.u8();
    if (version !== VERSION) throw bad(`version ${version}`);
    const fileChain = r.u32();
    if (fileChain !== chainId) throw bad(`for chain ${fileChain}, not ${chainId}`);
    const count = r.varnum(10_000_000, 'entry count');
    const out: { addedAt: number; bytes: Uint8Array }[] = [];
    for (let i = 0; i < count; i++) out.push({ addedAt: Number(r.u64()), bytes: r.bytes(MAX_TX_BYTES, 'transaction').slice() });
    r.end();
    return out;
  } catch (e) {
    if ((e as { code?: string }).code === MempoolStoreErrorCode.BAD_FILE) throw e;
    throw bad((e as Error).message);
  }
}

/** Saves and restores one mempool (see module comment). */
export class MempoolStore {
  private readonly log: Logger;
  private readonly now: () => number;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Set once `load` read the file (or found none): before that, a save would overwrite what was not loaded. */
  private loaded = false;
  private readonly onChange = () => {
    this.dirty = true;
  };

  constructor(
    private readonly mempool: PersistedMempool,
    private readonly params: Pick<ChainParams, 'chainId'>,
    private readonly opts: MempoolStoreOptions,
  ) {
    this.log = opts.logger ?? silentLogger;
    this.now = opts.now ?? Date.now;
  }

  /** Admits the saved transactions again (each through the mempool's full checks). */
  async load(): Promise<MempoolLoadResult> {
    let raw: Uint8Array;
    try {
      raw = await readFile(this.opts.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      this.loaded = true;
      return { loaded: 0, dropped: 0, expired: 0 };
    }
    let entries: { addedAt: number; bytes: Uint8Array }[];
    try {
      entries = decodeMempoolFile(raw, this.params.chainId);
    } catch (e) {
      this.log.warn({ path: this.opts.path, err: (e as Error).message }, 'mempool file unusable: set aside');
      await rename(this.opts.path, `${this.opts.path}.bad`).catch(() => undefined);
      this.loaded = true;
      return { loaded: 0, dropped: 0, expired: 0 };
    }
    this.loaded = true;
    const cutoff = this.now() - this.mempool.expirySeconds * 1000;
    let loaded = 0;
    let dropped = 0;
    let expired = 0;
    for (const e of entries) {
      if (e.addedAt < cutoff) {
        expired++;
        continue;
      }
      try {
        await this.mempool.add(e.bytes, { addedAt: e.addedAt });
        loaded++;
      } catch (err) {
        dropped++;
        this.log.debug({ code: isNodeError(err) ? err.code : undefined, err: (err as Error).message }, 'saved transaction not admitted again');
      }
    }
    this.log.info({ loaded, dropped, expired, path: this.opts.path }, 'mempool loaded');
    return { loaded, dropped, expired };
  }

  /** Follows changes and saves a changed mempool every `intervalMs`. */
  start(): void {
    this.mempool.on('added', this.onChange);
    this.mempool.on('removed', this.onChange);
    if (this.opts.intervalMs > 0) {
      this.timer = setInterval(() => {
        if (this.dirty) void this.save().catch((e) => this.log.error({ err: e }, 'mempool save failed'));
      }, this.opts.intervalMs);
      this.timer.unref();
    }
  }

  /** Stops following and saves once more (shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.mempool.off('added', this.onChange);
    this.mempool.off('removed', this.onChange);
    if (this.loaded) await this.save();
  }

  /** Writes the current mempool atomically (saves never overlap). */
  save(): Promise<void> {
    const run = this.writing.then(() => this.write());
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async write(): Promise<void> {
    this.dirty = false;
    const entries = this.mempool.list();
    const bytes = encodeMempoolFile(entries, this.params.chainId);
    const tmp = `${this.opts.path}.tmp`;
    try {
      const fh = await open(tmp, 'w', 0o600);
      try {
        await fh.writeFile(bytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.opts.path);
      const dir = await open(dirname(this.opts.path), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch (e) {
      this.dirty = true;
      await rm(tmp, { force: true }).catch(() => undefined);
      throw e;
    }
    this.log.debug({ count: entries.length, bytes: bytes.length }, 'mempool saved');
  }
}

/** Creates the store of `mempool` (call `load()`, then `start()`). */
export function createMempoolStore(mempool: PersistedMempool, params: Pick<ChainParams, 'chainId'>, opts: MempoolStoreOptions): MempoolStore {
  return new MempoolStore(mempool, params, opts);
}
