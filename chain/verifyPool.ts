/**
 * The signature verification pool: hybrid (ML-DSA-87 + Ed25519) checks run on worker threads,
 * never on the caller's thread, and transaction ids that verified are remembered in a bounded LRU
 * cache so a transaction is verified once (mempool → block).
 *
 * A batch is split into chunks; each chunk travels to a worker as one transferred ArrayBuffer
 * (wire format below) and comes back as one byte per job. A worker that dies is replaced and its
 * chunk retried once on another worker; a second failure rejects the batch with
 * `verify_worker_failed`.
 *
 * Priorities: a batch is foreground (the chain connecting a block, the mempool admitting a
 * transaction: someone waits for it) unless the caller marks it `background` (checks made ahead
 * of need, e.g. the sync's look-ahead). Background chunks go to a worker only when no foreground
 * chunk waits, so speculative work never delays the block being connected.
 *
 * A job whose id is already queued or on a worker is not checked twice: the new batch waits for
 * that check's result, and a foreground batch that waits on a background chunk moves it to the
 * foreground queue.
 *
 * Chunk wire format, per job: five u32 little-endian lengths (ML-DSA public key, Ed25519 public
 * key, message, ML-DSA signature, Ed25519 signature), then those five byte strings in that order.
 * Lengths are carried as they are: a wrong length is the verifier's business (it answers false).
 *
 * Size (~500 lines): the pool's queues, its worker lifecycle, the verified-id cache and the chunk
 * codec serve one job, handing signatures to workers and back; the worker's side is
 * verifyWorker.ts.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { NodeError } from '../consensus/errors.js';
import type { HybridPublicKey, HybridSignature } from '../consensus/keys.js';
import { createTsWorker, siblingModuleUrl } from './tsWorker.js';

/** Codes of the verification pool's errors. */
export const VerifyPoolErrorCode = {
  WORKER_FAILED: 'verify_worker_failed',
  STOPPED: 'verify_pool_stopped',
  BAD_JOB: 'verify_bad_job',
} as const;
/** One of the verification pool's error codes. */
export type VerifyPoolErrorCode = (typeof VerifyPoolErrorCode)[keyof typeof VerifyPoolErrorCode];

/** One hybrid signature check; `id` (hex tx id, committing to keys, message and signatures) makes a positive result cached. */
export interface VerifyJob {
  /** Hex transaction id; when given, a positive result is cached under it (case-insensitive). */
  readonly id?: string;
  readonly pub: HybridPublicKey;
  readonly msg: Uint8Array;
  readonly sig: HybridSignature;
}

/** Counters of a pool: worker threads, jobs answered from the cache, jobs that joined a check of the same id in progress, jobs checked by workers (valid or not). */
export interface VerifyPoolStats {
  readonly threads: number;
  readonly cacheHits: number;
  readonly joined: number;
  readonly verified: number;
}

/** Options of one `verifyBatch` call. */
export interface VerifyBatchOptions {
  /** Checks made ahead of need: they run only while no foreground chunk waits (see module comment). */
  readonly background?: boolean;
}

/** A running verification pool. */
export interface VerifyPool {
  /** Verifies the jobs on the workers; results in job order (true = both signatures valid). */
  verifyBatch(jobs: readonly VerifyJob[], opts?: VerifyBatchOptions): Promise<boolean[]>;
  /** Whether `id` is in the cache of verified ids (does not refresh its recency). */
  isVerified(id: string): boolean;
  /** Current counters. */
  stats(): VerifyPoolStats;
  /** Rejects pending batches with `verify_pool_stopped` and terminates the workers; idempotent. */
  stop(): Promise<void>;
}

/** Options of `createVerifyPool`. */
export interface VerifyPoolOptions {
  /** Worker threads (≥ 1); defaults to the machine's available parallelism. */
  threads?: number;
  /** Maximum number of verified ids remembered (LRU); 0 disables the cache. */
  cacheSize?: number;
  /** Starts one worker speaking the verify protocol; tests inject failing ones. Defaults to `createVerifyWorker`. */
  createWorker?: () => Worker;
}

/** Defaults of `VerifyPoolOptions`: one thread per core, 100k cached ids. */
export const defaultVerifyPoolOptions = {
  threads: availableParallelism(),
  cacheSize: 100_000,
} as const;

/** Message from the pool to a worker: `count` jobs encoded in `buf` (transferred). */
export interface VerifyRequest {
  readonly task: number;
  readonly count: number;
  readonly buf: ArrayBuffer;
}

/** Message from a worker to the pool: ready after its verifier loaded, or one result byte (1 = valid) per job of a task. */
export type VerifyWorkerMessage = { readonly type: 'ready' } | { readonly type: 'result'; readonly task: number; readonly results: Uint8Array };

const FIELDS = 5;
const HEADER_SIZE = 4 * FIELDS;

function jobParts(job: VerifyJob): Uint8Array[] {
  return [job.pub.mldsa, job.pub.ed25519, job.msg, job.sig.mldsa, job.sig.ed25519];
}

/** Encodes jobs in the chunk wire format (ids are not sent). */
export function encodeVerifyJobs(jobs: readonly VerifyJob[]): ArrayBuffer {
  let size = 0;
  for (const job of jobs) for (const p of jobParts(job)) size += p.length;
  size += HEADER_SIZE * jobs.length;
  const buf = new ArrayBuffer(size);
  const bytes = new Uint8Array(buf);
  const dv = new DataView(buf);
  let o = 0;
  for (const job of jobs) {
    const parts = jobParts(job);
    for (let f = 0; f < FIELDS; f++) dv.setUint32(o + 4 * f, parts[f].length, true);
    o += HEADER_SIZE;
    for (const p of parts) {
      bytes.set(p, o);
      o += p.length;
    }
  }
  return buf;
}

/** Decodes `count` jobs of the chunk wire format; the byte strings are views into `buf`. */
export function decodeVerifyJobs(buf: ArrayBuffer, count: number): VerifyJob[] {
  const bytes = new Uint8Array(buf);
  const dv = new DataView(buf);
  const jobs: VerifyJob[] = [];
  let o = 0;
  for (let i = 0; i < count; i++) {
    if (o + HEADER_SIZE > bytes.length) throw new RangeError('verify chunk truncated');
    const lengths: number[] = [];
    for (let f = 0; f < FIELDS; f++) lengths.push(dv.getUint32(o + 4 * f, true));
    o += HEADER_SIZE;
    const parts: Uint8Array[] = [];
    for (const n of lengths) {
      if (o + n > bytes.length) throw new RangeError('verify chunk truncated');
      parts.push(bytes.subarray(o, o + n));
      o += n;
    }
    jobs.push({ pub: { mldsa: parts[0], ed25519: parts[1] }, msg: parts[2], sig: { mldsa: parts[3], ed25519: parts[4] } });
  }
  if (o !== bytes.length) throw new RangeError('verify chunk has trailing bytes');
  return jobs;
}

/** Starts one worker running `verifyWorker` (the fast verifier), compiled or under tsx. */
export function createVerifyWorker(): Worker {
  return createTsWorker(siblingModuleUrl('verifyWorker', import.meta.url));
}

/** A set of strings that forgets the least recently used one beyond `capacity`. */
class LruSet {
  private readonly items = new Map<string, true>();
  constructor(private readonly capacity: number) {}
  has(key: string): boolean {
    return this.items.has(key);
  }
  /** Whether `key` is present; refreshes it when it is. */
  touch(key: string): boolean {
    if (!this.items.delete(key)) return false;
    this.items.set(key, true);
    return true;
  }
  add(key: string): void {
    if (this.capacity <= 0) return;
    this.items.delete(key);
    this.items.set(key, true);
    if (this.items.size > this.capacity) {
      const oldest = this.items.keys().next();
      if (!oldest.done) this.items.delete(oldest.value);
    }
  }
}

interface Batch {
  readonly jobs: readonly VerifyJob[];
  readonly results: boolean[];
  /** Chunks of its own plus jobs it waits for in other batches' chunks. */
  remaining: number;
  settled: boolean;
  resolve(results: boolean[]): void;
  reject(err: Error): void;
}

interface Task {
  readonly id: number;
  readonly batch: Batch;
  readonly indexes: readonly number[];
  attempts: number;
  background: boolean;
}

/** A job of one batch waiting for the check of the same id in another batch's chunk. */
interface Follower {
  readonly batch: Batch;
  readonly index: number;
}

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  task?: Task;
  lastError?: Error;
}

/** Workers that die before they are ready this many times in a row mean the pool cannot work. */
const MAX_STARTUP_FAILURES = 3;
/** Chunks per thread for one batch: small enough to balance load, large enough to amortise messages. */
const CHUNKS_PER_THREAD = 4;
const MAX_CHUNK = 256;

function isByteArray(x: unknown): x is Uint8Array {
  return ArrayBuffer.isView(x) && (x as Uint8Array).BYTES_PER_ELEMENT === 1 && !(x instanceof DataView);
}

function assertJob(job: VerifyJob, index: number): void {
  const ok =
    typeof job === 'object' &&
    job !== null &&
    (job.id === undefined || typeof job.id === 'string') &&
    typeof job.pub === 'object' &&
    job.pub !== null &&
    typeof job.sig === 'object' &&
    job.sig !== null &&
    jobParts(job).every(isByteArray);
  if (!ok) throw new NodeError(VerifyPoolErrorCode.BAD_JOB, `verify job ${index} lacks a byte field`, { index });
}

/** Starts a pool of verification workers and resolves once every worker has loaded its verifier. */
export async function createVerifyPool(opts: VerifyPoolOptions = {}): Promise<VerifyPool> {
  const threads = opts.threads ?? defaultVerifyPoolOptions.threads;
  const cacheSize = opts.cacheSize ?? defaultVerifyPoolOptions.cacheSize;
  if (!Number.isInteger(threads) || threads < 1) throw new RangeError('threads must be an integer ≥ 1');
  if (!Number.isInteger(cacheSize) || cacheSize < 0) throw new RangeError('cacheSize must be an integer ≥ 0');
  const startWorker = opts.createWorker ?? createVerifyWorker;

  const cache = new LruSet(cacheSize);
  const slots = new Set<Slot>();
  const queue: Task[] = [];
  const backgroundQueue: Task[] = [];
  const batches = new Set<Batch>();
  /** Ids (lowercase) queued or on a worker, with the chunk that checks them. */
  const inProgress = new Map<string, Task>();
  /** Jobs of other batches waiting for an id in progress. */
  const followers = new Map<string, Follower[]>();
  let stopped = false;
  let broken: NodeError | undefined;
  let stopping: Promise<void> | undefined;
  let cacheHits = 0;
  let joined = 0;
  let verified = 0;
  let nextTaskId = 0;
  let startupFailures = 0;

  const idOf = (task: Task, jobIndex: number): string | undefined => task.batch.jobs[jobIndex].id?.toLowerCase();

  /** A chunk is finished (results) or dropped (no results): its ids leave `inProgress`, their followers get the result or the error. */
  const release = (task: Task, results?: Uint8Array, err?: Error): void => {
    task.indexes.forEach((jobIndex, k) => {
      const id = idOf(task, jobIndex);
      if (id === undefined || inProgress.get(id) !== task) return;
      inProgress.delete(id);
      const waiting = followers.get(id);
      if (!waiting) return;
      followers.delete(id);
      for (const f of waiting) {
        if (f.batch.settled) continue;
        if (!results) settle(f.batch, err ?? new NodeError(VerifyPoolErrorCode.WORKER_FAILED, 'the check this batch waited for was dropped'));
        else {
          f.batch.results[f.index] = results[k] === 1;
          if (--f.batch.remaining === 0) settle(f.batch);
        }
      }
    });
  };

  /** Whether another, still waiting batch follows one of the chunk's checks. */
  const hasLiveFollowers = (task: Task): boolean =>
    task.indexes.some((jobIndex) => {
      const id = idOf(task, jobIndex);
      return id !== undefined && inProgress.get(id) === task && (followers.get(id)?.some((f) => !f.batch.settled) ?? false);
    });

  const settle = (batch: Batch, err?: Error): void => {
    if (batch.settled) return;
    batch.settled = true;
    batches.delete(batch);
    if (err) {
      // Its queued chunks go, unless another batch waits on them: those still run, for it.
      for (const q of [queue, backgroundQueue]) {
        for (let i = q.length - 1; i >= 0; i--) {
          if (q[i].batch !== batch || hasLiveFollowers(q[i])) continue;
          const [dropped] = q.splice(i, 1);
          release(dropped, undefined, err);
        }
      }
      batch.reject(err);
    } else {
      batch.resolve(batch.results);
    }
  };

  /** Moves a queued background chunk to the end of the foreground queue. */
  const promote = (task: Task): void => {
    if (!task.background) return;
    task.background = false;
    const i = backgroundQueue.indexOf(task);
    if (i >= 0) {
      backgroundQueue.splice(i, 1);
      queue.push(task);
    }
  };

  const send = (slot: Slot, task: Task): void => {
    slot.task = task;
    const buf = encodeVerifyJobs(task.indexes.map((i) => task.batch.jobs[i]));
    const req: VerifyRequest = { task: task.id, count: task.indexes.length, buf };
    // A busy worker keeps the process alive; an idle one does not (see `onReady`, `onResult`).
    slot.worker.ref();
    slot.worker.postMessage(req, [buf]);
  };

  const dispatch = (): void => {
    for (const slot of slots) {
      if (queue.length === 0 && backgroundQueue.length === 0) return;
      if (!slot.ready || slot.task) continue;
      const task = queue.shift() ?? backgroundQueue.shift();
      if (task) send(slot, task);
    }
  };

  const onResult = (slot: Slot, msg: { task: number; results: Uint8Array }): void => {
    const task = slot.task;
    if (!task || task.id !== msg.task) return;
    slot.task = undefined;
    slot.worker.unref();
    verified += task.indexes.length;
    const { batch } = task;
    task.indexes.forEach((jobIndex, k) => {
      const ok = msg.results[k] === 1;
      batch.results[jobIndex] = ok;
      const id = batch.jobs[jobIndex].id;
      if (ok && id !== undefined) cache.add(id.toLowerCase());
    });
    release(task, msg.results);
    if (!batch.settled && --batch.remaining === 0) settle(batch);
    dispatch();
  };

  const spawn = (): Promise<void> => {
    const worker = startWorker();
    const slot: Slot = { worker, ready: false };
    slots.add(slot);
    let markReady: () => void = () => {};
    let markFailed: (err: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    // Replacements are not awaited: keep their failure from becoming an unhandled rejection.
    ready.catch(() => {});
    worker.on('message', (msg: VerifyWorkerMessage) => {
      if (msg.type === 'ready') {
        slot.ready = true;
        startupFailures = 0;
        if (!slot.task) worker.unref();
        markReady();
        dispatch();
      } else if (msg.type === 'result') {
        onResult(slot, msg);
      }
    });
    worker.on('error', (err: Error) => {
      slot.lastError = err;
    });
    worker.on('exit', (exitCode: number) => {
      slots.delete(slot);
      if (stopped) return;
      const err = new NodeError(VerifyPoolErrorCode.WORKER_FAILED, `verification worker exited with code ${exitCode}`, {
        exitCode,
        cause: slot.lastError?.message,
      });
      markFailed(err);
      if (!slot.ready) startupFailures++;
      const task = slot.task;
      slot.task = undefined;
      if (task) {
        task.attempts++;
        if (task.attempts > 1) {
          release(task, undefined, err);
          settle(task.batch, err);
        } else if (!task.batch.settled || hasLiveFollowers(task)) {
          (task.background ? backgroundQueue : queue).unshift(task);
        } else {
          release(task, undefined, err); // nobody waits for it: only its ids leave `inProgress`
        }
      }
      if (startupFailures >= MAX_STARTUP_FAILURES) {
        broken = err;
        for (const batch of [...batches]) settle(batch, err);
        // Nothing runs any more: drop what settling kept for batches settled after it.
        queue.length = 0;
        backgroundQueue.length = 0;
        inProgress.clear();
        followers.clear();
        return;
      }
      spawn();
      dispatch();
    });
    return ready;
  };

  const stop = (): Promise<void> => {
    if (stopping) return stopping;
    stopped = true;
    const err = new NodeError(VerifyPoolErrorCode.STOPPED, 'verification pool stopped');
    for (const batch of [...batches]) settle(batch, err);
    queue.length = 0;
    backgroundQueue.length = 0;
    inProgress.clear();
    followers.clear();
    stopping = Promise.all([...slots].map((s) => s.worker.terminate())).then(() => undefined);
    return stopping;
  };

  const readiness: Promise<void>[] = [];
  for (let i = 0; i < threads; i++) readiness.push(spawn());
  try {
    await Promise.all(readiness);
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    async verifyBatch(jobs: readonly VerifyJob[], opts: VerifyBatchOptions = {}): Promise<boolean[]> {
      if (stopped) throw new NodeError(VerifyPoolErrorCode.STOPPED, 'verification pool stopped');
      if (broken) throw broken;
      jobs.forEach(assertJob);
      const background = opts.background === true;
      const results = new Array<boolean>(jobs.length).fill(false);
      const pending: number[] = [];
      /** Jobs whose id another chunk is checking already. */
      const follow: [string, number][] = [];
      const seen = new Set<string>();
      jobs.forEach((job, i) => {
        const id = job.id?.toLowerCase();
        if (id !== undefined && cache.touch(id)) {
          results[i] = true;
          cacheHits++;
        } else if (id !== undefined && (inProgress.has(id) || seen.has(id))) {
          follow.push([id, i]);
          joined++;
        } else {
          if (id !== undefined) seen.add(id);
          pending.push(i);
        }
      });
      if (pending.length === 0 && follow.length === 0) return results;
      const chunk = Math.max(1, Math.min(MAX_CHUNK, Math.ceil(pending.length / (threads * CHUNKS_PER_THREAD))));
      return new Promise<boolean[]>((resolve, reject) => {
        // The caller may reuse its array: keep our own list (the bytes are encoded when a chunk is sent).
        const batch: Batch = { jobs: jobs.slice(), results, remaining: Math.ceil(pending.length / chunk) + follow.length, settled: false, resolve, reject };
        batches.add(batch);
        for (let o = 0; o < pending.length; o += chunk) {
          const task: Task = { id: nextTaskId++, batch, indexes: pending.slice(o, o + chunk), attempts: 0, background };
          for (const i of task.indexes) {
            const id = batch.jobs[i].id?.toLowerCase();
            if (id !== undefined) inProgress.set(id, task);
          }
          (background ? backgroundQueue : queue).push(task);
        }
        for (const [id, index] of follow) {
          const owner = inProgress.get(id)!;
          if (!background) promote(owner);
          let list = followers.get(id);
          if (!list) followers.set(id, (list = []));
          list.push({ batch, index });
        }
        dispatch();
      });
    },
    isVerified(id: string): boolean {
      return cache.has(id.toLowerCase());
    },
    stats(): VerifyPoolStats {
      return { threads, cacheHits, joined, verified };
    },
    stop,
  };
}
