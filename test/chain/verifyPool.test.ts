/** The verification pool: ordered results, the verified-id cache, priorities, no check done twice, thread count, worker crashes, clean stop. */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Worker } from 'node:worker_threads';
import {
  createVerifyPool,
  createVerifyWorker,
  decodeVerifyJobs,
  encodeVerifyJobs,
  VerifyPoolErrorCode,
  type VerifyJob,
  type VerifyPool,
} from '../../chain/verifyPool.js';
import { createKeyPairFromSeed, signHybrid, type HybridKeyPair } from '../../consensus/keys.js';
import { sha256, toHex } from '../../consensus/hash.js';
import { isNodeError } from '../../consensus/errors.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Valid jobs for `n` distinct messages, each with the message's hash as id. */
function validJobs(kp: HybridKeyPair, n: number, tag: string): VerifyJob[] {
  return Array.from({ length: n }, (_, i) => {
    const msg = sha256(enc(`${tag}-${i}`));
    return { id: toHex(sha256(msg)), pub: kp.publicKey, msg, sig: signHybrid(kp, msg) };
  });
}

function corrupt(job: VerifyJob, tag: string): VerifyJob {
  const msg = job.msg.slice();
  msg[0] ^= 1;
  return { ...job, id: toHex(sha256(enc(tag))), msg };
}

/** A worker that says ready, then dies on its first job. */
function crashingWorker(): Worker {
  return new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.postMessage({ type: 'ready' });
     parentPort.on('message', () => process.exit(3));`,
    { eval: true },
  );
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('verify pool', () => {
  let kp: HybridKeyPair;
  let pool: VerifyPool;

  beforeAll(async () => {
    kp = createKeyPairFromSeed(sha256(enc('verify-pool-test')));
    pool = await createVerifyPool({ threads: 2 });
  });
  afterAll(async () => {
    await pool.stop();
  });

  test('the wire format round-trips, wrong lengths included', () => {
    const [job] = validJobs(kp, 1, 'wire');
    const odd: VerifyJob = { ...job, sig: { ...job.sig, ed25519: job.sig.ed25519.subarray(0, 10) }, msg: new Uint8Array(0) };
    const back = decodeVerifyJobs(encodeVerifyJobs([job, odd]), 2);
    expect(back.map((j) => [j.pub.mldsa, j.pub.ed25519, j.msg, j.sig.mldsa, j.sig.ed25519].map(toHex))).toEqual(
      [job, odd].map((j) => [j.pub.mldsa, j.pub.ed25519, j.msg, j.sig.mldsa, j.sig.ed25519].map(toHex)),
    );
    expect(() => decodeVerifyJobs(encodeVerifyJobs([job]).slice(0, 100), 1)).toThrow(RangeError);
  });

  test('verifies a mixed batch and returns results in job order', async () => {
    const valid = validJobs(kp, 12, 'order');
    const jobs = valid.map((j, i) => (i % 3 === 1 ? corrupt(j, `order-bad-${i}`) : j));
    const before = pool.stats().verified;
    const results = await pool.verifyBatch(jobs);
    expect(results).toEqual(jobs.map((_, i) => i % 3 !== 1));
    expect(pool.stats().verified - before).toBe(jobs.length);
    expect(await pool.verifyBatch([])).toEqual([]);
  });

  test('caches verified ids: a second call is answered from the cache without work', async () => {
    const valid = validJobs(kp, 6, 'cache');
    const bad = corrupt(valid[0], 'cache-bad');
    const jobs = [...valid, bad];
    const first = await pool.verifyBatch(jobs);
    expect(first).toEqual([true, true, true, true, true, true, false]);
    for (const j of valid) expect(pool.isVerified(j.id ?? '')).toBe(true);
    expect(pool.isVerified(bad.id ?? '')).toBe(false);
    expect(pool.isVerified(valid[0].id?.toUpperCase() ?? '')).toBe(true);

    const before = pool.stats();
    const second = await pool.verifyBatch(jobs);
    const after = pool.stats();
    expect(second).toEqual(first);
    expect(after.cacheHits - before.cacheHits).toBe(valid.length);
    expect(after.verified - before.verified).toBe(1); // only the invalid job went to a worker

    // Jobs without an id are never cached.
    const anonymous = valid.map(({ id: _id, ...rest }) => rest);
    const beforeAnon = pool.stats();
    expect(await pool.verifyBatch(anonymous)).toEqual(valid.map(() => true));
    expect(pool.stats().cacheHits).toBe(beforeAnon.cacheHits);
    expect(pool.stats().verified - beforeAnon.verified).toBe(valid.length);
  });

  test('rejects a job without byte fields with verify_bad_job', async () => {
    const [job] = validJobs(kp, 1, 'badjob');
    const broken = { ...job, msg: 'not bytes' } as unknown as VerifyJob;
    const err = await rejection(pool.verifyBatch([job, broken]));
    expect(isNodeError(err, VerifyPoolErrorCode.BAD_JOB)).toBe(true);
  });
});

describe('verify pool lifecycle', () => {
  let kp: HybridKeyPair;
  beforeAll(() => {
    kp = createKeyPairFromSeed(sha256(enc('verify-pool-lifecycle')));
  });

  test('the cache is a bounded LRU', async () => {
    const pool = await createVerifyPool({ threads: 1, cacheSize: 2 });
    try {
      const [a, b, c] = validJobs(kp, 3, 'lru');
      await pool.verifyBatch([a, b]);
      await pool.verifyBatch([a]); // a becomes the most recently used
      await pool.verifyBatch([c]); // evicts b
      expect([a, b, c].map((j) => pool.isVerified(j.id ?? ''))).toEqual([true, false, true]);
    } finally {
      await pool.stop();
    }
  });

  test('starts the requested number of worker threads and spreads a batch over them', async () => {
    const workers: Worker[] = [];
    const busy = new Set<number>();
    const pool = await createVerifyPool({
      threads: 3,
      createWorker: () => {
        const w = createVerifyWorker();
        w.on('message', (m: { type: string }) => {
          if (m.type === 'result') busy.add(w.threadId);
        });
        workers.push(w);
        return w;
      },
    });
    try {
      expect(workers).toHaveLength(3);
      expect(pool.stats().threads).toBe(3);
      const jobs = validJobs(kp, 24, 'spread');
      expect(await pool.verifyBatch(jobs)).toEqual(jobs.map(() => true));
      expect(busy.size).toBeGreaterThan(1);
    } finally {
      await pool.stop();
    }
  });

  test('a crashed worker is replaced and its jobs retried once', async () => {
    let started = 0;
    const pool = await createVerifyPool({
      threads: 1,
      createWorker: () => (++started === 1 ? crashingWorker() : createVerifyWorker()),
    });
    try {
      const jobs = validJobs(kp, 3, 'retry');
      expect(await pool.verifyBatch(jobs)).toEqual([true, true, true]);
      expect(started).toBe(2);
    } finally {
      await pool.stop();
    }
  });

  test('jobs that crash their worker twice are rejected with verify_worker_failed', async () => {
    let started = 0;
    const pool = await createVerifyPool({
      threads: 1,
      createWorker: () => {
        started++;
        return crashingWorker();
      },
    });
    try {
      const err = await rejection(pool.verifyBatch(validJobs(kp, 2, 'crash')));
      expect(isNodeError(err, VerifyPoolErrorCode.WORKER_FAILED)).toBe(true);
      expect(started).toBeGreaterThanOrEqual(2);
    } finally {
      await pool.stop();
    }
  });

  test('foreground batches overtake queued background work', async () => {
    const pool = await createVerifyPool({ threads: 1 });
    try {
      const order: string[] = [];
      const ahead = pool.verifyBatch(validJobs(kp, 40, 'bg'), { background: true }).then((r) => (order.push('background'), r));
      const urgent = pool.verifyBatch(validJobs(kp, 4, 'fg')).then((r) => (order.push('foreground'), r));
      const [a, u] = await Promise.all([ahead, urgent]);
      expect(order).toEqual(['foreground', 'background']);
      expect(a.every(Boolean) && u.every(Boolean)).toBe(true);
      expect(pool.stats().verified).toBe(44);
    } finally {
      await pool.stop();
    }
  });

  test('a check already queued is not done twice: a foreground batch joins it and moves it forward', async () => {
    const pool = await createVerifyPool({ threads: 1 });
    try {
      const jobs = validJobs(kp, 40, 'join');
      jobs[37] = corrupt(jobs[37], 'join-bad');
      const order: string[] = [];
      const ahead = pool.verifyBatch(jobs, { background: true }).then((r) => (order.push('background'), r));
      // The last chunk of the background batch, asked for by someone who waits for it.
      const tail = jobs.slice(30);
      const urgent = pool.verifyBatch(tail).then((r) => (order.push('foreground'), r));
      const [a, u] = await Promise.all([ahead, urgent]);
      expect(order).toEqual(['foreground', 'background']);
      expect(u).toEqual(tail.map((_, i) => i + 30 !== 37));
      expect(a).toEqual(jobs.map((_, i) => i !== 37));
      expect(pool.stats().verified).toBe(40); // each job checked once
      expect(pool.stats().cacheHits).toBe(0);
      expect(pool.stats().joined).toBe(10); // the foreground batch's ten jobs joined the background checks
    } finally {
      await pool.stop();
    }
  });

  test('the same id twice in one batch is checked once', async () => {
    const pool = await createVerifyPool({ threads: 2 });
    try {
      const [a, b] = validJobs(kp, 2, 'twice');
      expect(await pool.verifyBatch([a, a, b, a])).toEqual([true, true, true, true]);
      expect(pool.stats().verified).toBe(2);
      expect(pool.stats().joined).toBe(2);
    } finally {
      await pool.stop();
    }
  });

  test('a batch waiting on a check that fails for good is rejected too, never left hanging', async () => {
    const pool = await createVerifyPool({ threads: 1, createWorker: crashingWorker });
    try {
      const jobs = validJobs(kp, 4, 'follow-crash');
      const owner = rejection(pool.verifyBatch(jobs, { background: true }));
      const follower = rejection(pool.verifyBatch(jobs.slice(2)));
      expect(isNodeError(await owner, VerifyPoolErrorCode.WORKER_FAILED)).toBe(true);
      expect(isNodeError(await follower, VerifyPoolErrorCode.WORKER_FAILED)).toBe(true);
    } finally {
      await pool.stop();
    }
  });

  test('a chunk lost after its batch failed still answers the batches that wait on it (no hang, no id left in progress)', async () => {
    // Workers crash on every chunk: at once on chunk 0, a second later on chunk 1, so chunk 0
    // uses up its retry and fails its batch while chunk 1 is still on a worker.
    const slowCrash = () =>
      new Worker(
        `const { parentPort } = require('node:worker_threads');
         parentPort.postMessage({ type: 'ready' });
         parentPort.on('message', (m) => setTimeout(() => process.exit(3), m.task === 1 ? 1000 : 0));`,
        { eval: true },
      );
    const pool = await createVerifyPool({ threads: 2, createWorker: slowCrash });
    try {
      const jobs = validJobs(kp, 2, 'lost-chunk'); // two chunks of one job, one per worker
      const owner = rejection(pool.verifyBatch(jobs, { background: true }));
      const follower = rejection(pool.verifyBatch([jobs[1]]));
      expect(isNodeError(await owner, VerifyPoolErrorCode.WORKER_FAILED)).toBe(true);
      expect(isNodeError(await follower, VerifyPoolErrorCode.WORKER_FAILED)).toBe(true);
      // The ids are free again: a new batch is checked (and fails) on its own rather than waiting forever.
      expect(isNodeError(await rejection(pool.verifyBatch([jobs[1]])), VerifyPoolErrorCode.WORKER_FAILED)).toBe(true);
    } finally {
      await pool.stop();
    }
  }, 20_000);

  test('a pool whose workers cannot start fails at creation with verify_worker_failed', async () => {
    const err = await rejection(createVerifyPool({ threads: 2, createWorker: () => new Worker('process.exit(5)', { eval: true }) }));
    expect(isNodeError(err, VerifyPoolErrorCode.WORKER_FAILED)).toBe(true);
  });

  test('stop terminates every worker, rejects later batches and is idempotent', async () => {
    const workers: Worker[] = [];
    const pool = await createVerifyPool({
      threads: 2,
      createWorker: () => {
        const w = createVerifyWorker();
        workers.push(w);
        return w;
      },
    });
    const exited = workers.map((w) => new Promise<number>((resolve) => w.once('exit', resolve)));
    const inFlight = rejection(pool.verifyBatch(validJobs(kp, 8, 'stop')));
    await Promise.all([pool.stop(), pool.stop()]);
    await Promise.all(exited);
    expect(isNodeError(await inFlight, VerifyPoolErrorCode.STOPPED)).toBe(true);
    expect(isNodeError(await rejection(pool.verifyBatch([])), VerifyPoolErrorCode.STOPPED)).toBe(true);
  });
});
