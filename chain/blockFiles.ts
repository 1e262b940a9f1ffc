/**
 * Block bodies in flat files beside the chain's LevelDB, as Bitcoin Core keeps them
 * (`<chain dir>/blocks/blk00000.dat`, `blk00001.dat`, …): each body is appended once and read by
 * its location, which the chain stores in LevelDB (`f:<hash>`, chain/layout.ts). In LevelDB the
 * bodies (4–5 MB a second at 800 paid calls a second) were logged, flushed and compacted again and
 * again with everything else; out of it, a block import runs about 10 % faster and a transaction
 * is read alone (docs/decisions.md, Storage).
 *
 * A record is `magic(4) ‖ u32 length ‖ body`; a location names the body (file, offset, length), and
 * a read checks the record's header before it trusts the bytes. A body is written and flushed to
 * disk (fdatasync) before `append` resolves, so the LevelDB batch that names it never names bytes a
 * power cut could lose. A crash between the two leaves bytes no location names at a file's end:
 * never read, and the next append writes after them. Files are never rewritten or shortened;
 * bodies of blocks forgotten (found invalid) stay where they are.
 */
import { constants } from 'node:fs';
import { mkdir, open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Reader, Writer, decodeAll } from '../consensus/codec.js';
import { NodeError } from '../consensus/errors.js';

/** Error code of a location that does not name a stored body (a damaged or foreign blocks directory). */
export const BLOCK_FILE_CORRUPT = 'chain_corrupt';

/** `NBLK`: the first four bytes of every record. */
const MAGIC = 0x4b4c424e;
const HEADER = 8;
/** A new file once the current one holds this much (Bitcoin Core's 128 MiB). */
export const DEFAULT_MAX_FILE_BYTES = 128 * 1024 * 1024;

/** Where a block body is: file number, offset of its first byte, its length. */
export interface BlockLocation {
  readonly file: number;
  readonly offset: number;
  readonly length: number;
}

/** Encodes an `f:` record (u32 file ‖ u32 offset ‖ u32 length). */
export function encodeBlockLocation(l: BlockLocation): Uint8Array {
  return new Writer(12).u32(l.file).u32(l.offset).u32(l.length).finish();
}

/** Decodes an `f:` record. */
export function decodeBlockLocation(bytes: Uint8Array): BlockLocation {
  return decodeAll(bytes, (r: Reader) => ({ file: r.u32(), offset: r.u32(), length: r.u32() }));
}

const fileName = (n: number) => `blk${n.toString().padStart(5, '0')}.dat`;

/** The append-only block files of one chain directory (see module comment). */
export class BlockFiles {
  private readonly handles = new Map<number, Promise<FileHandle>>();
  /** Appends, one at a time. */
  private lane: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly dir: string,
    private readonly maxFileBytes: number,
    private current: number,
    private size: number,
  ) {}

  /** Opens (or creates) the `blocks` directory under `chainDir`; appends continue at the end of its last file. */
  static async open(chainDir: string, opts: { maxFileBytes?: number } = {}): Promise<BlockFiles> {
    const dir = join(chainDir, 'blocks');
    await mkdir(dir, { recursive: true });
    const numbers = (await readdir(dir)).map((f) => /^blk(\d{5})\.dat$/.exec(f)?.[1]).filter((n): n is string => n !== undefined).map(Number);
    const current = numbers.length ? Math.max(...numbers) : 0;
    const files = new BlockFiles(dir, opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES, current, 0);
    files.size = (await (await files.handle(current, true)).stat()).size;
    return files;
  }

  /** The open file `n`; created only for an append (a read of a file that is not there is a damaged location). */
  private handle(n: number, create = false): Promise<FileHandle> {
    let h = this.handles.get(n);
    if (!h) {
      h = open(join(this.dir, fileName(n)), constants.O_RDWR | (create ? constants.O_CREAT : 0), 0o644).catch((e: unknown) => {
        this.handles.delete(n);
        if ((e as { code?: string }).code === 'ENOENT') throw new NodeError(BLOCK_FILE_CORRUPT, `block file ${fileName(n)} is missing`);
        throw e;
      });
      this.handles.set(n, h);
    }
    return h;
  }

  /** Appends a body and flushes it to disk; resolves to its location. */
  append(body: Uint8Array): Promise<BlockLocation> {
    const run = this.lane.then(() => this.appendNow(body));
    this.lane = run.catch(() => undefined);
    return run;
  }

  private async appendNow(body: Uint8Array): Promise<BlockLocation> {
    if (this.closed) throw new NodeError('chain_closed', 'block files are closed');
    if (this.size > 0 && this.size + HEADER + body.length > this.maxFileBytes) {
      this.current++;
      this.size = 0;
    }
    const h = await this.handle(this.current, true);
    const start = this.size;
    const header = new Writer(HEADER).u32(MAGIC).u32(body.length).finish();
    await writeAll(h, header, start);
    await writeAll(h, body, start + HEADER);
    await h.datasync();
    // A failed write leaves `size` where it was: the next append writes over what it left.
    this.size = start + HEADER + body.length;
    return { file: this.current, offset: start + HEADER, length: body.length };
  }

  /** The whole body at `loc`, its record header checked. */
  async read(loc: BlockLocation): Promise<Uint8Array> {
    const buf = await this.readAt(loc.file, loc.offset - HEADER, loc.length + HEADER);
    const r = new Reader(buf.subarray(0, HEADER));
    if (r.u32() !== MAGIC || r.u32() !== loc.length) throw new NodeError(BLOCK_FILE_CORRUPT, `no block record at ${fileName(loc.file)}:${loc.offset}`);
    return buf.subarray(HEADER);
  }

  /** `length` bytes from `start` within the body at `loc` (one transaction of a stored block). */
  async readRange(loc: BlockLocation, start: number, length: number): Promise<Uint8Array> {
    if (start < 0 || length < 0 || start + length > loc.length) throw new NodeError(BLOCK_FILE_CORRUPT, `range ${start}+${length} outside the block at ${fileName(loc.file)}:${loc.offset}`);
    return this.readAt(loc.file, loc.offset + start, length);
  }

  private async readAt(file: number, position: number, length: number): Promise<Uint8Array> {
    if (position < 0) throw new NodeError(BLOCK_FILE_CORRUPT, `bad block location ${fileName(file)}:${position}`);
    const h = await this.handle(file);
    const buf = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await h.read(buf, done, length - done, position + done);
      if (bytesRead === 0) throw new NodeError(BLOCK_FILE_CORRUPT, `${fileName(file)} ends before the block at ${position} (${done} of ${length} bytes)`);
      done += bytesRead;
    }
    return buf;
  }

  /** Waits for appends under way and closes every file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.lane;
    const hs = [...this.handles.values()];
    this.handles.clear();
    await Promise.all(hs.map(async (h) => (await h.catch(() => undefined))?.close()));
  }
}

async function writeAll(h: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await h.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}
