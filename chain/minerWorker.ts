/**
 * The CPU miner's worker thread: grinds header nonces with SHA-256d and reports solutions.
 *
 * Hashing uses a SHA-256 midstate: the first 64 header bytes are the same for every nonce, so
 * their compression is done once per job and each nonce costs two compressions (the header's
 * last 16 bytes, then the second SHA-256) in plain Int32 arithmetic. On Node 20 this is about
 * 2.5× faster than calling `node:crypto` twice per nonce (whose cost is call overhead, not the
 * compression); the worker checks itself against `node:crypto` at start and falls back to it if
 * the two ever disagree. The main thread re-verifies every solution with the consensus hash.
 *
 * Protocol (structured-clone messages, plus a shared Int32 generation counter):
 *   main → worker  `job`  {gen, jobId, header(80), nonceStart, nonceEnd (inclusive), target (32 bytes LE)}
 *                  `stop`
 *   worker → main  `ready` {hasher, priority}, `ack` {gen, jobId, at}, `found` {gen, jobId, nonce},
 *                  `exhausted` {gen, jobId}
 * The worker works on a job while the shared generation equals the job's; it checks every
 * `CHECK_INTERVAL` hashes and yields to its event loop in between, so a bumped generation stops
 * stale work within a few milliseconds and the next job message is read at once. Hash counts go
 * to a shared BigInt64 slot per worker (the main thread derives the hashrate from them).
 *
 * Priority: on Linux each worker lowers its own thread to nice 19 (HASHING_NICE) before it hashes,
 * so on busy cores the node's other threads (HTTP, settlement, signature checks) run first and
 * the hashing gets what they leave, while an idle machine's spare CPU still all goes to hashing.
 * Elsewhere (or without /proc) the thread keeps the process's priority; the 'ready' message says
 * which.
 */
import { createHash } from 'node:crypto';
import * as nodeCrypto from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';

/** Marker in `workerData` that this module runs as a miner worker. */
export const MINER_WORKER_KIND = 'native-node-miner';
/** Hashes between two checks of the generation counter. */
export const CHECK_INTERVAL = 2048;
/** Index of the job generation in the shared control array. */
export const CTL_GENERATION = 0;

/** `workerData` of a miner worker. */
export interface MinerWorkerData {
  readonly kind: typeof MINER_WORKER_KIND;
  readonly index: number;
  /** Int32Array view: [CTL_GENERATION] = current job generation. */
  readonly control: SharedArrayBuffer;
  /** BigInt64Array view: [index] = hashes done by worker `index`. */
  readonly counters: SharedArrayBuffer;
  /** Force the `node:crypto` hasher (benchmarks, fallback tests). */
  readonly hasher?: HasherKind;
}

/**
 * Nice value each hashing thread gives itself (Linux): the lowest scheduling priority. Node
 * cannot reach SCHED_IDLE; at nice 19 a thread gets about 1/68 of the CPU of a nice-0 thread it
 * competes with (the kernel's weights 15 against 1,024), and all of a core nobody else wants.
 */
export const HASHING_NICE = 19;

/** The outcome of lowerThreadPriority: this thread's id and nice value, or why it kept its priority. */
export type ThreadPriority = { readonly tid: number; readonly nice: number } | { readonly error: string };

/** What lowerThreadPriority uses from the system (tests stub it). */
export interface ThreadPrioritySystem {
  readonly platform: NodeJS.Platform;
  readonly pid: number;
  /** readlink(2); `/proc/thread-self` links to `<pid>/task/<tid>`. */
  readlink(path: string): string;
  /** setpriority(PRIO_PROCESS, tid, nice): on Linux it sets that one thread's nice value. */
  setPriority(tid: number, nice: number): void;
  getPriority(tid: number): number;
}

const nodeSystem: ThreadPrioritySystem = { platform: process.platform, pid: process.pid, readlink: (p) => readlinkSync(p), setPriority, getPriority };

/**
 * Sets the calling thread's nice value to `nice` (Linux only: the nice value is per thread there,
 * so the process's other threads keep theirs). Never throws and never touches the main thread
 * (whose thread id is the process id): where that is impossible it returns the reason.
 */
export function lowerThreadPriority(nice: number, sys: ThreadPrioritySystem = nodeSystem): ThreadPriority {
  if (sys.platform !== 'linux') return { error: `per-thread priority needs Linux (platform ${sys.platform})` };
  try {
    const m = /^(\d+)\/task\/(\d+)$/.exec(sys.readlink('/proc/thread-self'));
    if (!m || Number(m[1]) !== sys.pid) return { error: 'unexpected /proc/thread-self link' };
    const tid = Number(m[2]);
    if (tid === sys.pid) return { error: 'called on the main thread' };
    sys.setPriority(tid, nice);
    return { tid, nice: sys.getPriority(tid) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Which SHA-256d implementation grinds. */
export type HasherKind = 'midstate' | 'node';

/** A unit of work for one worker. */
export interface MinerJobMessage {
  readonly type: 'job';
  readonly gen: number;
  readonly jobId: number;
  /** 80 header bytes (the nonce field is overwritten). */
  readonly header: Uint8Array;
  readonly nonceStart: number;
  /** Inclusive. */
  readonly nonceEnd: number;
  /** Target as 32 little-endian bytes. */
  readonly target: Uint8Array;
}

/** Messages the main thread sends. */
export type MainToWorker = MinerJobMessage | { readonly type: 'stop' };

/** Messages a worker sends. */
export type WorkerToMain =
  | { readonly type: 'ready'; readonly hasher: HasherKind; readonly priority: ThreadPriority }
  | { readonly type: 'ack'; readonly gen: number; readonly jobId: number; /** performance.timeOrigin + now(), ms. */ readonly at: number }
  | { readonly type: 'found'; readonly gen: number; readonly jobId: number; readonly nonce: number }
  | { readonly type: 'exhausted'; readonly gen: number; readonly jobId: number };

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const IV = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/** One SHA-256 compression of the 16 words in `w[0..15]` (expanded in place) over `state`, into `out`. */
function compress(state: Int32Array, w: Int32Array, out: Int32Array): void {
  for (let i = 16; i < 64; i++) {
    const w15 = w[i - 15];
    const w2 = w[i - 2];
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
  }
  let a = state[0];
  let b = state[1];
  let c = state[2];
  let d = state[3];
  let e = state[4];
  let f = state[5];
  let g = state[6];
  let h = state[7];
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  out[0] = (state[0] + a) | 0;
  out[1] = (state[1] + b) | 0;
  out[2] = (state[2] + c) | 0;
  out[3] = (state[3] + d) | 0;
  out[4] = (state[4] + e) | 0;
  out[5] = (state[5] + f) | 0;
  out[6] = (state[6] + g) | 0;
  out[7] = (state[7] + h) | 0;
}

function bswap32(x: number): number {
  return ((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24);
}

/** Hashes one header for many nonces: SHA-256d(header with nonce), as 8 big-endian state words. */
export interface HeaderHasher {
  readonly kind: HasherKind;
  /** SHA-256d of the header with `nonce`; the returned array is reused by the next call. */
  hashWords(nonce: number): Int32Array;
}

/** A midstate SHA-256d hasher over an 80-byte header. */
export function createMidstateHasher(header: Uint8Array): HeaderHasher {
  const dv = new DataView(header.buffer, header.byteOffset, 80);
  const w = new Int32Array(64);
  const mid = new Int32Array(8);
  for (let i = 0; i < 16; i++) w[i] = dv.getInt32(i * 4, false);
  compress(IV, w, mid);
  const w16 = dv.getInt32(64, false);
  const w17 = dv.getInt32(68, false);
  const w18 = dv.getInt32(72, false);
  const first = new Int32Array(8);
  const out = new Int32Array(8);
  return {
    kind: 'midstate',
    hashWords(nonce: number): Int32Array {
      // Second block of the header: 16 bytes, then SHA-256 padding for 640 bits.
      w[0] = w16;
      w[1] = w17;
      w[2] = w18;
      w[3] = bswap32(nonce);
      w[4] = 0x80000000 | 0;
      for (let i = 5; i < 15; i++) w[i] = 0;
      w[15] = 640;
      compress(mid, w, first);
      // Second SHA-256 over the 32-byte digest, padded for 256 bits.
      for (let i = 0; i < 8; i++) w[i] = first[i];
      w[8] = 0x80000000 | 0;
      for (let i = 9; i < 15; i++) w[i] = 0;
      w[15] = 256;
      compress(IV, w, out);
      return out;
    },
  };
}

type HashFn = (data: Uint8Array) => Buffer;
const cryptoHash = (nodeCrypto as { hash?: (alg: string, data: Uint8Array, enc: 'buffer') => Buffer }).hash;
/** SHA-256 through node:crypto: `crypto.hash` where available (Node ≥ 20.12), else `createHash`. */
const sha256Node: HashFn = cryptoHash ? (d) => cryptoHash('sha256', d, 'buffer') : (d) => createHash('sha256').update(d).digest();

/** A hasher calling node:crypto twice per nonce. */
export function createNodeHasher(header: Uint8Array): HeaderHasher {
  const buf = Buffer.from(header);
  const out = new Int32Array(8);
  return {
    kind: 'node',
    hashWords(nonce: number): Int32Array {
      buf.writeUInt32LE(nonce >>> 0, 76);
      const h = sha256Node(sha256Node(buf));
      for (let i = 0; i < 8; i++) out[i] = h.readInt32BE(i * 4);
      return out;
    },
  };
}

/** Hash bytes (internal byte order, as consensus `blockHash` returns them) from the state words. */
export function wordsToHash(words: Int32Array): Uint8Array {
  const out = new Uint8Array(32);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) dv.setInt32(i * 4, words[i], false);
  return out;
}

/** The target as 8 unsigned 32-bit little-endian limbs (limb 7 most significant). */
export function targetLimbs(targetLE: Uint8Array): Uint32Array {
  const dv = new DataView(targetLE.buffer, targetLE.byteOffset, 32);
  const limbs = new Uint32Array(8);
  for (let i = 0; i < 8; i++) limbs[i] = dv.getUint32(i * 4, true);
  return limbs;
}

/** Whether the hash (state words) read as a little-endian 256-bit integer is ≤ the target. */
export function meetsTarget(words: Int32Array, limbs: Uint32Array): boolean {
  // Bytes 4i..4i+3 of the hash are word i big-endian; read little-endian they are bswap(word i).
  for (let i = 7; i >= 0; i--) {
    const h = bswap32(words[i]) >>> 0;
    const t = limbs[i];
    if (h < t) return true;
    if (h > t) return false;
  }
  return true;
}

/** Whether the midstate hasher agrees with node:crypto on a few headers and nonces. */
export function selfTest(): boolean {
  const header = new Uint8Array(80);
  for (let i = 0; i < 80; i++) header[i] = (i * 151 + 7) & 0xff;
  const a = createMidstateHasher(header);
  const b = createNodeHasher(header);
  for (const nonce of [0, 1, 0x7fffffff, 0x80000000, 0xdeadbeef, 0xffffffff]) {
    const x = a.hashWords(nonce);
    const y = b.hashWords(nonce);
    for (let i = 0; i < 8; i++) if (x[i] !== y[i]) return false;
  }
  return true;
}

/** Result of scanning a nonce range. */
export interface ScanResult {
  /** The first nonce meeting the target, if any. */
  readonly nonce?: number;
  /** Nonces hashed. */
  readonly hashes: number;
}

/** Hashes nonces `start..min(end, start + count - 1)` and stops at the first meeting the target. */
export function scanNonces(hasher: HeaderHasher, limbs: Uint32Array, start: number, end: number, count: number): ScanResult {
  const last = Math.min(end, start + count - 1);
  for (let n = start; n <= last; n++) {
    if (meetsTarget(hasher.hashWords(n >>> 0), limbs)) return { nonce: n >>> 0, hashes: n - start + 1 };
  }
  return { hashes: Math.max(0, last - start + 1) };
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** The worker's main loop (only when started by the miner). */
function runWorker(data: MinerWorkerData): void {
  const port = parentPort!;
  // First, before the self-test hashes: from here on the node's other threads come first.
  const priority = lowerThreadPriority(HASHING_NICE);
  const control = new Int32Array(data.control);
  const counters = new BigInt64Array(data.counters);
  const useMidstate = data.hasher !== 'node' && selfTest();
  const makeHasher = useMidstate ? createMidstateHasher : createNodeHasher;

  interface Active {
    readonly gen: number;
    readonly jobId: number;
    readonly hasher: HeaderHasher;
    readonly limbs: Uint32Array;
    next: number;
    readonly end: number;
  }
  let job: Active | undefined;
  let scheduled = false;

  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(step);
    }
  };

  function step(): void {
    scheduled = false;
    const j = job;
    if (!j) return;
    // A newer generation exists: drop this job and wait for the next message.
    if (Atomics.load(control, CTL_GENERATION) !== j.gen) {
      job = undefined;
      return;
    }
    const r = scanNonces(j.hasher, j.limbs, j.next, j.end, CHECK_INTERVAL);
    Atomics.add(counters, data.index, BigInt(r.hashes));
    if (r.nonce !== undefined) {
      job = undefined;
      post({ type: 'found', gen: j.gen, jobId: j.jobId, nonce: r.nonce });
      return;
    }
    j.next += r.hashes;
    if (j.next > j.end) {
      job = undefined;
      post({ type: 'exhausted', gen: j.gen, jobId: j.jobId });
      return;
    }
    schedule();
  }

  function post(msg: WorkerToMain): void {
    port.postMessage(msg);
  }

  port.on('message', (msg: MainToWorker) => {
    if (msg.type === 'stop') {
      job = undefined;
      port.close();
      return;
    }
    if (msg.type === 'job') {
      job = {
        gen: msg.gen,
        jobId: msg.jobId,
        hasher: makeHasher(msg.header),
        limbs: targetLimbs(msg.target),
        next: msg.nonceStart >>> 0,
        end: msg.nonceEnd >>> 0,
      };
      post({ type: 'ack', gen: msg.gen, jobId: msg.jobId, at: now() });
      schedule();
    }
  });
  post({ type: 'ready', hasher: useMidstate ? 'midstate' : 'node', priority });
}

const data = workerData as Partial<MinerWorkerData> | undefined;
if (!isMainThread && parentPort && data?.kind === MINER_WORKER_KIND) runWorker(data as MinerWorkerData);
