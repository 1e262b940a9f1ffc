/**
 * The mining job feed (chain/jobFeed.ts) over a real chain (LevelDB in a temp dir) and mempool:
 * the first job at start, a 'tip' event then a clean job for every new tip (delivered, with the
 * time the tip was announced), keep-alive jobs on the same parent, and nothing after stop.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { type Chain } from '../../chain/chain.js';
import { createJobFeed, type JobFeed, type MiningJob } from '../../chain/jobFeed.js';
import type { Mempool } from '../../chain/mempool.js';
import type { ChainParams } from '../../consensus/params.js';
import { testKey } from '../helpers/keys.js';
import { cleanupTmp } from '../helpers/tmp.js';
import { mineEmptyBlock, openChainAndPool, transferTx } from '../helpers/chainRig.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { encodeTx } from '../../consensus/tx.js';

afterAll(cleanupTmp);

const other = testKey('job-feed-other');

const mineExternal = (chain: Chain, params: ReturnType<typeof createDevnetChainParams>) => mineEmptyBlock(chain, params, other.address);

function next(jobs: MiningJob[], after: number, pred: (j: MiningJob) => boolean, timeoutMs = 5_000): Promise<MiningJob> {
  const end = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => {
      const j = jobs.slice(after).find(pred);
      if (j) resolve(j);
      else if (Date.now() > end) reject(new Error('no such job'));
      else setTimeout(check, 5);
    };
    check();
  });
}

describe('the mining job feed', () => {
  /** A started feed with no listener over a fresh chain and mempool; stopped and closed after `fn`. */
  async function unheardFeed(timing: { mempoolRefreshMs: number; keepAliveMs: number }, fn: (rig: { feed: JobFeed; chain: Chain; mempool: Mempool; params: ChainParams }) => Promise<void>): Promise<void> {
    const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: Math.floor(Date.now() / 1000) - 60 });
    const { chain, pool: mempool, close } = await openChainAndPool(params);
    const feed = createJobFeed({ ...timing, tag: 'test' }, { chain, mempool, params });
    try {
      await feed.start();
      await fn({ feed, chain, mempool, params });
    } finally {
      feed.stop();
      await close();
    }
  }

  test('with no job listener it builds nothing after its first job, and the first listener gets a fresh job at once', () =>
    unheardFeed({ mempoolRefreshMs: 50, keepAliveMs: 100 }, async ({ feed, chain, params }) => {
      // The start builds once, listener or not.
      expect(feed.current?.template.parentHash).toBe(chain.tip.hashHex);
      const first = feed.current;
      await new Promise((r) => setTimeout(r, 250)); // two keep-alive periods: nothing is built for nobody
      expect(feed.current).toBe(first);
      await mineExternal(chain, params);
      await new Promise((r) => setTimeout(r, 150));
      expect(feed.current).toBeUndefined(); // the job for the old tip is stale and no new one was built
      const jobs: MiningJob[] = [];
      feed.on('job', (j) => jobs.push(j));
      const job = await next(jobs, 0, () => true);
      expect(job.template.parentHash).toBe(chain.tip.hashHex);
      expect(job.clean).toBe(true);
      expect(feed.current).toBe(job);
    }));

  test('work that arrived while nobody listened reaches the first listener as a mempool job (a getblocktemplate long poll ends on it)', () =>
    unheardFeed({ mempoolRefreshMs: 20, keepAliveMs: 60_000 }, async ({ feed, mempool, params }) => {
      expect(feed.current?.template.txIds).toHaveLength(0);
      await mempool.add(encodeTx(transferTx(params, getDevKeyPair(), 0n, other.address, 1n)));
      await new Promise((r) => setTimeout(r, 100)); // past the mempool refresh: skipped, nobody listens
      expect(feed.current).toBeUndefined();
      const jobs: MiningJob[] = [];
      feed.on('job', (j) => jobs.push(j));
      const job = await next(jobs, 0, () => true);
      expect(job).toMatchObject({ clean: false, reason: 'mempool' });
      expect(job.template.txIds).toHaveLength(1);
    }));

  test('a first job at start, a clean job for each new tip, keep-alives on the same parent, silence after stop', async () => {
    const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: Math.floor(Date.now() / 1000) - 60 });
    const { chain, pool: mempool, close } = await openChainAndPool(params);
    const feed = createJobFeed({ mempoolRefreshMs: 100, keepAliveMs: 300, tag: 'test' }, { chain, mempool, params });
    const jobs: MiningJob[] = [];
    feed.on('job', (j) => jobs.push(j));
    // The 'tip' event comes first, synchronously, before the job for that tip is built.
    const tips: { hash: string; jobsBefore: number; at: number }[] = [];
    feed.on('tip', (e, at) => tips.push({ hash: e.hashHex, jobsBefore: jobs.length, at }));
    try {
      await feed.start();
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({ clean: true, reason: 'tip' });
      expect(jobs[0].template.parentHash).toBe(chain.tip.hashHex);
      for (let i = 0; i < 3; i++) {
        const before = jobs.length;
        await mineExternal(chain, params);
        const job = await next(jobs, before, (j) => j.clean);
        expect(job.template.parentHash).toBe(chain.tip.hashHex);
        expect(job.template.height).toBe(chain.tip.height + 1);
        expect(job.reason).toBe('tip');
        expect(job.tipSeenAt).toEqual(expect.any(Number));
        expect(tips[tips.length - 1]).toEqual({ hash: chain.tip.hashHex, jobsBefore: before, at: job.tipSeenAt });
      }
      expect(tips).toHaveLength(3);
      const before = jobs.length;
      const keep = await next(jobs, before, (j) => j.reason === 'keepalive', 5_000);
      expect(keep.clean).toBe(false);
      expect(keep.template.parentHash).toBe(chain.tip.hashHex);
      expect(feed.current).toBe(jobs[jobs.length - 1]);
    } finally {
      feed.stop();
    }
    const after = jobs.length;
    await new Promise((r) => setTimeout(r, 700));
    expect(jobs.length).toBe(after);
    await close();
  });
});
