/**
 * A Stratum v1 mining client for tests, written from the protocol as real miners (cpuminer,
 * cgminer) implement it — not from the server's code: it imports nothing from the repository.
 *
 * It speaks newline-delimited JSON-RPC over TCP and hashes for real: for a job it builds
 * `coinbase = coinb1 ‖ extranonce1 ‖ extranonce2 ‖ coinb2`, folds the merkle branch, assembles the
 * 80-byte header (version, the prevhash with its 4-byte words swapped back, root, ntime, nbits,
 * nonce; integers little-endian) and grinds nonces with SHA-256d, comparing the hash read as a
 * little-endian integer with the share target computed the way cpuminer does (floating point,
 * `0xFFFF0000 / difficulty` in the top words).
 */
import { createConnection, type Socket } from 'node:net';
import { createHash } from 'node:crypto';

/** A `mining.notify` as received. */
export interface Job {
  readonly jobId: string;
  readonly prevhash: string;
  readonly coinb1: string;
  readonly coinb2: string;
  readonly branch: readonly string[];
  readonly version: string;
  readonly nbits: string;
  readonly ntime: string;
  readonly clean: boolean;
  /** The difficulty last set before this job arrived. */
  readonly difficulty: number;
  /** `performance.timeOrigin + performance.now()` when the line was read. */
  readonly receivedAt: number;
}

/** A JSON-RPC answer. */
export interface Answer {
  readonly id: unknown;
  readonly result: unknown;
  readonly error: unknown;
}

/** A share found by `grind`. */
export interface Share {
  readonly extranonce2: string;
  readonly ntime: string;
  readonly nonce: string;
  /** The header hash read as a little-endian integer. */
  readonly value: bigint;
  /** It also meets the block target of the job's nbits. */
  readonly isBlock: boolean;
  readonly hashes: number;
}

export function sha256d(data: Buffer): Buffer {
  return createHash('sha256').update(createHash('sha256').update(data).digest()).digest();
}

/** Reverses the bytes of each 4-byte word (Stratum's prevhash ↔ header order). */
export function swapWords(buf: Buffer): Buffer {
  const out = Buffer.alloc(buf.length);
  for (let i = 0; i < buf.length; i += 4) for (let j = 0; j < 4; j++) out[i + j] = buf[i + 3 - j];
  return out;
}

/** The share target a miner derives from a difficulty, as cpuminer's `diff_to_target` does. */
export function minerShareTarget(difficulty: number): bigint {
  let diff = difficulty;
  let k = 6;
  for (; k > 0 && diff > 1; k--) diff /= 4294967296;
  const m = BigInt(Math.floor(4294901760 / diff));
  if (m === 0n && k === 6) return (1n << 256n) - 1n;
  return m << BigInt(32 * k);
}

/** Target of compact bits (Bitcoin's SetCompact, positive values only). */
export function compactTarget(nbitsHex: string): bigint {
  const bits = Number.parseInt(nbitsHex, 16);
  const size = bits >>> 24;
  const mant = BigInt(bits & 0x007fffff);
  return size <= 3 ? mant >> BigInt(8 * (3 - size)) : mant << BigInt(8 * (size - 3));
}

function le32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
}

/** The 80-byte header of a job at (extranonce1, extranonce2, ntime, nonce[, version]). */
export function jobHeader(job: Job, extranonce1: string, extranonce2: string, ntime: string, nonce: number, version?: number): Buffer {
  let root = sha256d(Buffer.from(job.coinb1 + extranonce1 + extranonce2 + job.coinb2, 'hex'));
  for (const b of job.branch) root = sha256d(Buffer.concat([root, Buffer.from(b, 'hex')]));
  return Buffer.concat([
    le32(version ?? Number.parseInt(job.version, 16)),
    swapWords(Buffer.from(job.prevhash, 'hex')),
    root,
    le32(Number.parseInt(ntime, 16)),
    le32(Number.parseInt(job.nbits, 16)),
    le32(nonce),
  ]);
}

/** A hash read as a little-endian 256-bit integer. */
export function hashValue(hash: Buffer): bigint {
  return BigInt(`0x${Buffer.from(hash).reverse().toString('hex')}`);
}

/**
 * The lowest hash value that surely misses the share target of `difficulty` at any pool: twice the
 * miner's target, since pools accept a hash a little above it (floating-point targets; 1 % is usual).
 */
export function weakShareBound(difficulty: number): bigint {
  return 2n * minerShareTarget(difficulty);
}

/**
 * Grinds nonces from `startNonce` until a hash meets the share target of `difficulty` (or, with
 * `blockOnly`, the job's block target; with `misses`, until one surely misses both: at least
 * `weakShareBound`, so the pool must refuse it as low difficulty, 23); yields to the event loop every
 * 2,000 hashes so a server in the same process keeps running. Undefined after `maxHashes`.
 */
export async function grind(
  job: Job,
  opts: { extranonce1: string; extranonce2: string; difficulty?: number; ntime?: string; startNonce?: number; maxHashes?: number; blockOnly?: boolean; notBlock?: boolean; misses?: boolean; version?: number },
): Promise<Share | undefined> {
  const ntime = opts.ntime ?? job.ntime;
  const blockTarget = compactTarget(job.nbits);
  const shareTarget = opts.blockOnly ? blockTarget : minerShareTarget(opts.difficulty ?? job.difficulty);
  const missBound = weakShareBound(opts.difficulty ?? job.difficulty);
  const max = opts.maxHashes ?? 5_000_000;
  const base = jobHeader(job, opts.extranonce1, opts.extranonce2, ntime, 0, opts.version);
  for (let i = 0; i < max; i++) {
    const nonce = ((opts.startNonce ?? 0) + i) >>> 0;
    base.writeUInt32LE(nonce, 76);
    const value = hashValue(sha256d(base));
    const isBlock = value <= blockTarget;
    // `notBlock`: a share that is not also a block (a block moves the tip and makes the job stale).
    const found = opts.misses ? value >= missBound && !isBlock : (value <= shareTarget || isBlock) && !(opts.notBlock && isBlock);
    if (found) {
      return { extranonce2: opts.extranonce2, ntime, nonce: nonce.toString(16).padStart(8, '0'), value, isBlock, hashes: i + 1 };
    }
    if (i % 2_000 === 1_999) await new Promise((r) => setImmediate(r));
  }
  return undefined;
}

/** A nonce whose hash surely misses the share target (at least `weakShareBound`) and the block target (for low-difficulty tests). */
export function findWeakNonce(job: Job, extranonce1: string, extranonce2: string, difficulty: number): string {
  const bound = weakShareBound(difficulty);
  const blockTarget = compactTarget(job.nbits);
  const header = jobHeader(job, extranonce1, extranonce2, job.ntime, 0);
  for (let nonce = 0; ; nonce++) {
    header.writeUInt32LE(nonce, 76);
    const value = hashValue(sha256d(header));
    if (value >= bound && value > blockTarget) return nonce.toString(16).padStart(8, '0');
  }
}

function perfNow(): number {
  return performance.timeOrigin + performance.now();
}

/** One Stratum connection (see module comment). */
export class StratumTestClient {
  readonly jobs: Job[] = [];
  readonly difficulties: number[] = [];
  readonly lines: unknown[] = [];
  difficulty = 1;
  extranonce1 = '';
  extranonce2Size = 0;
  closed = false;
  private buffer = '';
  private nextId = 1;
  /** Requests awaiting their answer: settled by the answer, or rejected when the connection closes. */
  private readonly waiting = new Map<unknown, { done: (a: Answer) => void; fail: (e: Error) => void }>();
  private listeners: (() => void)[] = [];
  private closedPromise: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.setNoDelay(true);
    socket.on('data', (chunk: string) => this.onData(chunk));
    this.closedPromise = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.once('close', () => {
      this.closed = true;
      // No answer can come any more: the requests still waiting fail now, not at their timeouts.
      for (const w of this.waiting.values()) w.fail(new Error('connection closed before the answer'));
      this.waiting.clear();
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  /** Connects; `localAddress` picks the source address (another loopback address, 127.0.0.2…, is another client to the server). */
  static connect(port: number, host = '127.0.0.1', localAddress?: string): Promise<StratumTestClient> {
    return new Promise((resolve, reject) => {
      const s = createConnection({ port, host, localAddress }, () => {
        s.off('error', reject);
        resolve(new StratumTestClient(s));
      });
      s.once('error', reject);
    });
  }

  private wake(): void {
    const l = this.listeners;
    this.listeners = [];
    for (const f of l) f();
  }

  private onData(chunk: string): void {
    const at = perfNow();
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      if (!line.trim()) continue;
      const msg = JSON.parse(line) as { id?: unknown; method?: string; params?: unknown[]; result?: unknown; error?: unknown };
      this.lines.push(msg);
      if (msg.method === 'mining.set_difficulty') {
        this.difficulty = Number(msg.params![0]);
        this.difficulties.push(this.difficulty);
      } else if (msg.method === 'mining.notify') {
        const p = msg.params as [string, string, string, string, string[], string, string, string, boolean];
        this.jobs.push({ jobId: p[0], prevhash: p[1], coinb1: p[2], coinb2: p[3], branch: p[4], version: p[5], nbits: p[6], ntime: p[7], clean: p[8], difficulty: this.difficulty, receivedAt: at });
      } else if (msg.id !== undefined && msg.id !== null && this.waiting.has(msg.id)) {
        const w = this.waiting.get(msg.id)!;
        this.waiting.delete(msg.id);
        w.done({ id: msg.id, result: msg.result, error: msg.error });
      }
    }
    this.wake();
  }

  /** Resolves when `pred()` holds (checked after every received chunk), or rejects after `timeoutMs`. */
  waitFor(pred: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
      const check = () => {
        if (pred()) {
          clearTimeout(timer);
          resolve();
        } else if (this.closed && what !== 'close') {
          clearTimeout(timer);
          reject(new Error(`connection closed while waiting for ${what}`));
        } else this.listeners.push(check);
      };
      check();
    });
  }

  /** The next job after the `after`-th one (default: after those received so far). */
  async nextJob(opts: { after?: number; timeoutMs?: number; pred?: (j: Job) => boolean } = {}): Promise<Job> {
    const after = opts.after ?? this.jobs.length;
    const pred = opts.pred ?? (() => true);
    let found: Job | undefined;
    await this.waitFor(() => (found = this.jobs.slice(after).find(pred)) !== undefined, opts.timeoutMs ?? 10_000, 'mining.notify');
    return found!;
  }

  /** The latest job received. */
  get job(): Job {
    const j = this.jobs[this.jobs.length - 1];
    if (!j) throw new Error('no job yet');
    return j;
  }

  /** Sends a raw line (no newline added). */
  sendRaw(text: string): void {
    this.socket.write(text);
  }

  /** Sends a request and resolves with its answer; rejects after `timeoutMs`, or when the connection closes first. */
  request(method: string, params: unknown[], timeoutMs = 10_000): Promise<Answer> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('connection closed before the request'));
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`no answer to ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, {
        done: (a) => {
          clearTimeout(timer);
          resolve(a);
        },
        fail: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.socket.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  async subscribe(agent = 'native-test-miner/1.0'): Promise<Answer> {
    const a = await this.request('mining.subscribe', [agent]);
    if (Array.isArray(a.result)) {
      this.extranonce1 = String(a.result[1]);
      this.extranonce2Size = Number(a.result[2]);
    }
    return a;
  }

  authorize(user: string, password = 'x'): Promise<Answer> {
    return this.request('mining.authorize', [user, password]);
  }

  submit(worker: string, job: Job | string, share: { extranonce2: string; ntime: string; nonce: string }, versionBits?: string): Promise<Answer> {
    const params = [worker, typeof job === 'string' ? job : job.jobId, share.extranonce2, share.ntime, share.nonce];
    if (versionBits !== undefined) params.push(versionBits);
    return this.request('mining.submit', params);
  }

  /** Subscribes, authorises and waits for the first job. */
  async start(user: string, password = 'x'): Promise<Job> {
    await this.subscribe();
    const a = await this.authorize(user, password);
    if (a.result !== true) throw new Error(`authorize refused: ${JSON.stringify(a.error)}`);
    return this.nextJob({ after: 0 });
  }

  close(): Promise<void> {
    this.socket.destroy();
    return this.closedPromise;
  }

  /** Resolves when the server closes the connection. */
  waitClosed(timeoutMs = 5_000): Promise<void> {
    return this.waitFor(() => this.closed, timeoutMs, 'close');
  }
}
