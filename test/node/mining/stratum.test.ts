/**
 * The Stratum v1 server against a real chain (LevelDB in a temp dir) and a real mempool, on
 * 127.0.0.1 port 0, driven by the in-repo test client (test/helpers/stratumClient.ts), which is
 * written from the protocol and hashes for real.
 *
 * Two test chains: "easy" (genesis bits 0x207fffff: every other hash is a block) and "share"
 * (0x1f00ffff: about 65,000 hashes a block, so shares at difficulty 6e-8, about 256 hashes, are
 * mostly not blocks).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { encodeAddress } from '../../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../../consensus/devnet.js';
import { toHex } from '../../../consensus/hash.js';
import type { ChainParams } from '../../../consensus/params.js';
import { type Chain } from '../../../chain/chain.js';
import { type Mempool } from '../../../chain/mempool.js';
import { createMiningStats, type MiningStats } from '../../../node/mining/stats.js';
import { createStratumServer, VERSION_ROLLING_MASK, type StratumOptions, type StratumServer } from '../../../node/mining/stratum.js';
import { createTransferTx } from '../../../consensus/txBuilder.js';
import { testKey } from '../../helpers/keys.js';
import { cleanupTmp } from '../../helpers/tmp.js';
import { cleanupsAfterEach, mineEmptyBlock, openChainAndPool } from '../../helpers/chainRig.js';
import { findWeakNonce, grind, hashValue, jobHeader, sha256d, swapWords, StratumTestClient, type Job } from '../../helpers/stratumClient.js';

const EASY_BITS = 0x207fffff;
const SHARE_BITS = 0x1f00ffff;
/** Share difficulty of the "share" chain: about 256 hashes a share. */
const SHARE_DIFF = 6e-8;

const worker = testKey('stratum-worker');
const workerAddr = () => encodeAddress(worker.address, 'tnative');
const other = testKey('stratum-other');
const dev = getDevKeyPair();

interface Rig {
  params: ChainParams;
  chain: Chain;
  mempool: Mempool;
  stats: MiningStats;
  server: StratumServer;
  port: number;
}

const cleanups = cleanupsAfterEach();
afterAll(cleanupTmp);

async function rig(bits: number, stratum: Partial<StratumOptions> = {}): Promise<Rig> {
  const params = createDevnetChainParams({ genesisBits: bits, genesisTime: Math.floor(Date.now() / 1000) - 60 });
  const { chain, pool: mempool, close } = await openChainAndPool(params);
  const stats = createMiningStats();
  // Variable difficulty is off unless a test turns it on: shares come as fast as the client hashes.
  const server = createStratumServer({ host: '127.0.0.1', port: 0, retargetShares: 1e9, retargetMs: 1e9, ...stratum }, { chain, mempool, params, stats });
  await server.start();
  cleanups.push(async () => {
    await server.stop();
    await close();
  });
  return { params, chain, mempool, stats, server, port: server.port! };
}

async function client(r: Rig): Promise<StratumTestClient> {
  const c = await StratumTestClient.connect(r.port);
  cleanups.push(() => c.close());
  return c;
}

/** Mines a block on the tip outside Stratum (another miner), paying `other`. */
const externalBlock = (r: Rig) => mineEmptyBlock(r.chain, r.params, other.address);

/** A valid share of `job` (not necessarily a block), found by hashing. */
async function share(c: StratumTestClient, job: Job, en2: number, opts: { blockOnly?: boolean; notBlock?: boolean; version?: number } = {}) {
  const s = await grind(job, { extranonce1: c.extranonce1, extranonce2: en2.toString(16).padStart(8, '0'), ...opts });
  if (!s) throw new Error('no share found');
  return s;
}

function errorOf(a: { error: unknown }): [number, string] {
  const e = a.error as [number, string, unknown];
  return [e[0], e[1]];
}

describe('subscribe and authorize', () => {
  test('subscribe answers both subscriptions, a 4-byte extranonce1 unique per connection and extranonce2 size 4', async () => {
    const r = await rig(SHARE_BITS);
    const a = await client(r);
    const b = await client(r);
    const ra = await a.subscribe();
    const rb = await b.subscribe();
    expect(ra.error).toBeNull();
    const [subs, en1, size] = ra.result as [[string, string][], string, number];
    expect(subs.map((s) => s[0])).toEqual(['mining.set_difficulty', 'mining.notify']);
    expect(en1).toMatch(/^[0-9a-f]{8}$/);
    expect(size).toBe(4);
    expect((rb.result as unknown[])[1]).not.toBe(en1);
  });

  test('authorize address.worker: set_difficulty comes before the first notify, which builds on the tip and pays the address', async () => {
    const r = await rig(SHARE_BITS);
    const c = await client(r);
    await c.subscribe();
    const auth = await c.authorize(`${workerAddr()}.rig1`, `d=${SHARE_DIFF}`);
    expect(auth).toMatchObject({ result: true, error: null });
    const job = await c.nextJob({ after: 0 });
    const kinds = c.lines.map((l) => (l as { method?: string }).method).filter(Boolean);
    expect(kinds.slice(0, 2)).toEqual(['mining.set_difficulty', 'mining.notify']);
    expect(c.difficulty).toBeCloseTo(SHARE_DIFF, 12);
    // prevhash is the tip hash in header order with each 4-byte word swapped.
    expect(swapWords(Buffer.from(job.prevhash, 'hex')).toString('hex')).toBe(r.chain.tip.hashHex);
    expect(job.version).toBe('00000001');
    expect(job.nbits).toMatch(/^[0-9a-f]{8}$/);
    expect(job.clean).toBe(true);
    expect(job.branch).toEqual([]);
    // coinb1 is the coinbase up to the extranonce slot (45 bytes); the payee sits at bytes 9..29.
    expect(job.coinb1.length).toBe(90);
    expect(job.coinb1.slice(18, 58)).toBe(toHex(worker.address));
    expect(r.stats.worker(`${workerAddr()}.rig1`)).toMatchObject({ connections: 1, worker: 'rig1', address: workerAddr() });
  });

  test('an invalid payout address is refused with code 24 and a message naming the expected address form', async () => {
    const r = await rig(SHARE_BITS);
    const c = await client(r);
    await c.subscribe();
    for (const user of ['bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', 'native1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.rig', '']) {
      const a = await c.authorize(user);
      expect(a.result).toBe(false);
      const [code, msg] = errorOf(a);
      expect(code).toBe(24);
      expect(msg).toMatch(/tnative1/);
    }
    // One payout address per connection.
    expect((await c.authorize(workerAddr())).result).toBe(true);
    const second = await c.authorize(encodeAddress(other.address, 'tnative'));
    expect(second.result).toBe(false);
    expect(errorOf(second)[0]).toBe(24);
    // The same address under another worker name is fine.
    expect((await c.authorize(`${workerAddr()}.gpu2`)).result).toBe(true);
  });
});

describe('mining through Stratum', () => {
  test('trivial difficulty: each share found by real hashing is a block the chain connects, and a clean job follows', async () => {
    const r = await rig(EASY_BITS);
    const c = await client(r);
    const first = await c.start(workerAddr());
    // The share difficulty never exceeds the block's: here it is the block's own.
    expect(c.difficulty).toBeLessThan(1e-9);
    let job = first;
    for (let height = 1; height <= 3; height++) {
      const s = await share(c, job, height);
      expect(s.isBlock).toBe(true);
      // The new tip's job may arrive before the answer to the submit.
      const before = c.jobs.length;
      const a = await c.submit(workerAddr(), job, s);
      expect(a).toMatchObject({ result: true, error: null });
      expect(r.chain.tip.height).toBe(height);
      job = await c.nextJob({ after: before, pred: (j) => j.clean && swapWords(Buffer.from(j.prevhash, 'hex')).toString('hex') === r.chain.tip.hashHex });
    }
    const block = await r.chain.getBlock(r.chain.tip.hashHex);
    expect(toHex(block!.coinbase.miner)).toBe(toHex(worker.address));
    expect(toHex(block!.coinbase.extranonce)).toBe(`${c.extranonce1}00000003`);
    const snap = r.stats.snapshot();
    expect(snap.totals).toMatchObject({ accepted: 3, rejected: 0, stale: 0, blocksFound: 3 });
    expect(snap.blocks[0]).toMatchObject({ height: 3, source: 'stratum', worker: workerAddr() });
  });

  test('shares below the block target are accepted and counted; the one meeting it becomes a block paying the worker', async () => {
    const r = await rig(SHARE_BITS);
    const c = await client(r);
    const job = await c.start(`${workerAddr()}.rig1`, `d=${SHARE_DIFF}`);
    let en2 = 1;
    let plain = 0;
    let found = false;
    const tipBefore = r.chain.tip.height;
    // Ordinary shares first (one may happen to be a block: about 0.5 % each)…
    while (plain < 5 && !found) {
      const s = await share(c, job, en2++);
      expect((await c.submit(`${workerAddr()}.rig1`, job, s)).result).toBe(true);
      if (s.isBlock) found = true;
      else plain++;
    }
    // …then grind on to a block.
    if (!found) {
      const s = await share(c, job, en2++, { blockOnly: true });
      expect((await c.submit(`${workerAddr()}.rig1`, job, s)).result).toBe(true);
    }
    expect(r.chain.tip.height).toBe(tipBefore + 1);
    const block = await r.chain.getBlock(r.chain.tip.hashHex);
    expect(toHex(block!.coinbase.miner)).toBe(toHex(worker.address));
    const w = r.stats.worker(`${workerAddr()}.rig1`)!;
    expect(w.accepted).toBe(plain + 1);
    expect(w.blocksFound).toBe(1);
    expect(w.rejected + w.stale).toBe(0);
    expect(w.hashrate).toBeGreaterThan(0);
    expect(w.difficulty).toBeCloseTo(SHARE_DIFF, 12);
    await c.nextJob({ after: 0, pred: (j) => j.clean && j !== job });
  });

  test('version rolling (mining.configure): shares with rolled version bits are accepted and blocks carry them', async () => {
    const r = await rig(EASY_BITS);
    const c = await client(r);
    const conf = await c.request('mining.configure', [
      ['version-rolling', 'minimum-difficulty', 'subscribe-extranonce'],
      { 'version-rolling.mask': 'ffffffff', 'version-rolling.min-bit-count': 2, 'minimum-difficulty.value': 1e-12 },
    ]);
    expect(conf.result).toEqual({ 'version-rolling': true, 'version-rolling.mask': VERSION_ROLLING_MASK.toString(16).padStart(8, '0'), 'minimum-difficulty': true, 'subscribe-extranonce': false });
    const job = await c.start(workerAddr());
    const bits = 0x00006000;
    const s = await share(c, job, 7, { version: (Number.parseInt(job.version, 16) & ~VERSION_ROLLING_MASK) | bits });
    expect((await c.submit(workerAddr(), job, s, bits.toString(16).padStart(8, '0'))).result).toBe(true);
    const block = await r.chain.getBlock(r.chain.tip.hashHex);
    expect(block!.header.version).toBe(1 | bits);
  });
});

describe('submit errors', () => {
  test('job not found (21), duplicate (22), low difficulty (23), unauthorised worker (24), not subscribed (25), bad fields (20)', async () => {
    const r = await rig(SHARE_BITS);
    const c = await client(r);
    const user = workerAddr();
    const job = await c.start(user, `d=${SHARE_DIFF}`);
    const good = await share(c, job, 1);

    const notFound = await c.submit(user, 'deadbeef', good);
    expect(notFound.result).toBe(false);
    expect(errorOf(notFound)).toEqual([21, 'job not found']);

    expect((await c.submit(user, job, good)).result).toBe(true);
    const dup = await c.submit(user, job, good);
    expect(dup.result).toBe(false);
    expect(errorOf(dup)).toEqual([22, 'duplicate share']);

    const weak = { extranonce2: '00000002', ntime: job.ntime, nonce: findWeakNonce(job, c.extranonce1, '00000002', job.difficulty) };
    expect(errorOf(await c.submit(user, job, weak))).toEqual([23, 'low difficulty share']);

    expect(errorOf(await c.submit(encodeAddress(other.address, 'tnative'), job, good))[0]).toBe(24);

    const cases: [unknown[], RegExp][] = [
      [[user, job.jobId, '000003', job.ntime, '00000000'], /extranonce2/],
      [[user, job.jobId, '0000000300', job.ntime, '00000000'], /extranonce2/],
      [[user, job.jobId, '00000003', (Math.floor(Date.now() / 1000) + 3600).toString(16), '00000000'], /ntime out of range/],
      [[user, job.jobId, '00000003', '00000001', '00000000'], /ntime out of range/],
      [[user, job.jobId, '00000003', 'zz', '00000000'], /ntime/],
      [[user, job.jobId, '00000003', job.ntime, 'xyz'], /nonce/],
      [[user, job.jobId, '00000003', job.ntime], /takes/],
      [[user, job.jobId, '00000003', job.ntime, 5], /takes/],
      [[user, job.jobId, '00000003', job.ntime, '00000000', '00002000'], /version bits .* outside the negotiated mask 00000000/],
    ];
    for (const [params, msg] of cases) {
      const a = await c.request('mining.submit', params);
      expect(a.result).toBe(false);
      const [code, m] = errorOf(a);
      expect(code).toBe(20);
      expect(m).toMatch(msg);
    }

    // Not subscribed: authorised on a fresh connection without mining.subscribe.
    const lone = await client(r);
    expect((await lone.authorize(user)).result).toBe(true);
    expect(errorOf(await lone.submit(user, job, good))[0]).toBe(25);

    const w = r.stats.worker(user)!;
    expect(w.accepted).toBe(1);
    expect(w.rejected).toBe(cases.length + 3);
    expect(w.lastRejectReason).toMatch(/version bits/);
  });

  test('a share for a job of the previous tip is stale (21) and counted as stale, not rejected', async () => {
    const r = await rig(EASY_BITS);
    const c = await client(r);
    const job = await c.start(workerAddr());
    const s = await share(c, job, 1);
    await externalBlock(r);
    await c.nextJob({ pred: (j) => j.clean });
    const a = await c.submit(workerAddr(), job, s);
    expect(a.result).toBe(false);
    expect(errorOf(a)[0]).toBe(21);
    expect(errorOf(a)[1]).toMatch(/stale/);
    expect(r.stats.worker(workerAddr())).toMatchObject({ stale: 1, rejected: 0, accepted: 0 });
  });

  test('two blocks found on one job and sent back to back: the first is connected, the second is stale (21), not a side branch', async () => {
    const r = await rig(EASY_BITS);
    const c = await client(r);
    const job = await c.start(workerAddr());
    const s1 = await share(c, job, 1, { blockOnly: true });
    const s2 = await share(c, job, 2, { blockOnly: true });
    // Both leave before either answer or the next notify arrives, as a fast miner does.
    const [a1, a2] = await Promise.all([c.submit(workerAddr(), job, s1), c.submit(workerAddr(), job, s2)]);
    expect(a1).toMatchObject({ result: true, error: null });
    expect(a2.result).toBe(false);
    expect(errorOf(a2)[0]).toBe(21);
    expect(errorOf(a2)[1]).toMatch(/stale/);
    expect(r.chain.tip.height).toBe(1);
    expect(r.stats.worker(workerAddr())).toMatchObject({ accepted: 1, stale: 1, rejected: 0, blocksFound: 1 });
  });

  test('malformed lines are answered with code 20; an overlong line or too many bad lines close the connection', async () => {
    const r = await rig(SHARE_BITS, { maxLineBytes: 1024 });
    const c = await client(r);
    c.sendRaw('this is not json\n');
    c.sendRaw('[1,2,3]\n');
    c.sendRaw('{"id": 9, "method": "mining.subscribe", "params": {"a": 1}}\n');
    c.sendRaw('{"id": 10, "params": []}\n');
    await c.waitFor(() => c.lines.length >= 4, 5_000, 'four answers');
    for (const l of c.lines.slice(0, 4)) expect(((l as { error: unknown[] }).error)[0]).toBe(20);
    const unknown = await c.request('mining.frobnicate', []);
    expect(errorOf(unknown)).toEqual([20, 'unknown method mining.frobnicate']);
    expect(c.closed).toBe(false);
    // Still usable after errors.
    expect((await c.subscribe()).error).toBeNull();
    c.sendRaw(`{"id": 1, "method": "mining.subscribe", "params": ["${'x'.repeat(2000)}"]}\n`);
    await c.waitClosed();

    const d = await client(r);
    for (let i = 0; i < 12; i++) d.sendRaw('nope\n');
    await d.waitClosed();
  });
});

describe('abuse limits', () => {
  /** A client from another loopback address: another client address to the server. */
  async function clientFrom(r: Rig, localAddress: string): Promise<StratumTestClient> {
    const c = await StratumTestClient.connect(r.port, '127.0.0.1', localAddress);
    cleanups.push(() => c.close());
    return c;
  }

  /** Opens `n` raw connections from `localAddress` and waits until the server has judged each (kept or closed). */
  async function flood(r: Rig, localAddress: string, n: number): Promise<StratumTestClient[]> {
    const out: StratumTestClient[] = [];
    for (let i = 0; i < n; i++) out.push(await clientFrom(r, localAddress));
    // A refused connection is closed at once; give the server a moment to close the last ones.
    await new Promise((res) => setTimeout(res, 300));
    return out;
  }

  test('a junk share is checked for difficulty before it is remembered: sent twice, it is low difficulty (23) twice, never duplicate (22)', async () => {
    const r = await rig(SHARE_BITS);
    const c = await client(r);
    const job = await c.start(workerAddr(), `d=${SHARE_DIFF}`);
    const weak = { extranonce2: '00000009', ntime: job.ntime, nonce: findWeakNonce(job, c.extranonce1, '00000009', job.difficulty) };
    expect(errorOf(await c.submit(workerAddr(), job, weak))[0]).toBe(23);
    expect(errorOf(await c.submit(workerAddr(), job, weak))[0]).toBe(23);
    // A good share is still remembered: its repeat is a duplicate.
    const good = await share(c, job, 10);
    expect((await c.submit(workerAddr(), job, good)).result).toBe(true);
    expect(errorOf(await c.submit(workerAddr(), job, good))[0]).toBe(22);
  });

  test('per-address cap and reserved slots: one address holding every slot it can get leaves room for a new address, whose connection is served', async () => {
    const r = await rig(SHARE_BITS, { maxConnections: 12, maxConnectionsPerAddress: 10, reservedConnections: 4 });
    const squatters = await flood(r, '127.0.0.1', 15);
    // Capped at 12 − 4 reserved = 8 for an address already holding connections (below its own cap of 10).
    expect(squatters.filter((c) => !c.closed)).toHaveLength(8);
    expect(r.server.info().connections).toBe(8);
    const honest = await clientFrom(r, '127.0.0.2');
    await honest.start(workerAddr(), `d=${SHARE_DIFF}`);
    expect(r.server.info().refused.full).toBe(7);

    // The per-address cap on its own: 10 of 20 from one address when the server has room.
    const r2 = await rig(SHARE_BITS, { maxConnections: 100, maxConnectionsPerAddress: 10, reservedConnections: 4 });
    const many = await flood(r2, '127.0.0.1', 20);
    expect(many.filter((c) => !c.closed)).toHaveLength(10);
    expect(r2.server.info().refused.perAddress).toBe(10);
  });

  test('a full server evicts a connection still in its handshake from the address holding the most, to admit a new address', async () => {
    const r = await rig(SHARE_BITS, { maxConnections: 6, maxConnectionsPerAddress: 10, reservedConnections: 2 });
    const squatters = await flood(r, '127.0.0.1', 4); // 4 of 6 − 2 reserved
    await flood(r, '127.0.0.3', 1);
    await flood(r, '127.0.0.4', 1); // the reserved slots are taken: the server is full
    expect(r.server.info().connections).toBe(6);
    const honest = await clientFrom(r, '127.0.0.2');
    await honest.start(workerAddr(), `d=${SHARE_DIFF}`);
    await squatters[0].waitFor(() => squatters.some((c) => c.closed), 2_000, 'one squatter evicted');
    expect(squatters.filter((c) => c.closed)).toHaveLength(1);
    expect(r.server.info().refused.evicted).toBe(1);
  });

  test('a connection that does not subscribe and authorize within the handshake deadline is closed', async () => {
    const r = await rig(SHARE_BITS, { handshakeTimeoutMs: 1_000 });
    const idle = await client(r);
    const half = await client(r);
    await half.subscribe();
    const done = await client(r);
    await done.start(workerAddr(), `d=${SHARE_DIFF}`);
    await idle.waitClosed(4_000);
    // The deadline is enforced by a once-a-second sweep: `half`, opened a few ms after `idle`, may
    // still be within its second at the sweep that closed `idle`, and then goes at the next one.
    await half.waitClosed(2_500);
    expect(done.closed).toBe(false);
    expect(r.server.info().refused.handshakeTimeouts).toBe(2);
  });

  test('a submit over the per-connection rate is refused unchecked (20, rate limited) and the connection is not read for 1 s', async () => {
    const r = await rig(SHARE_BITS, { submitsPerSecond: 1, submitBurst: 10 });
    const c = await client(r);
    const job = await c.start(workerAddr(), `d=${SHARE_DIFF}`);
    // 30 distinct shares that surely miss the target: every one the server checks is refused as low
    // difficulty (23), so an answer is either that or the rate refusal (20), never chance.
    const weak: { extranonce2: string; ntime: string; nonce: string }[] = [];
    for (let start = 0; weak.length < 30; ) {
      const s = await grind(job, { extranonce1: c.extranonce1, extranonce2: '00000001', startNonce: start, misses: true });
      if (!s) throw new Error('no weak share found');
      weak.push(s);
      start = Number.parseInt(s.nonce, 16) + 1;
    }
    const answers: { id: number; error: unknown; at: number }[] = [];
    const sentAt = performance.now();
    const submits = weak.map((s, i) =>
      c
        .submit(workerAddr(), job, s)
        .then((a) => answers.push({ id: i, error: a.error, at: performance.now() }))
        // The submits still unanswered when the connection closes below fail then: not an outcome.
        .catch(() => undefined),
    );
    await c.waitFor(() => answers.some((a) => a.id > 10 && (a.error as unknown[])[0] === 23), 10_000, 'a share checked again after the pause');
    // The burst's 10 were checked (low difficulty, 23), the 11th refused unchecked…
    expect(answers.slice(0, 10).every((a) => (a.error as unknown[])[0] === 23)).toBe(true);
    expect(answers[10].id).toBe(10);
    expect((answers[10].error as [number, string])[0]).toBe(20);
    expect((answers[10].error as [number, string])[1]).toMatch(/rate limited/);
    // …and nothing after it was read for a second: the next answer came later, and a later share
    // was checked again once a token had refilled (the refill is 1/s, so under load the first one
    // read after the pause may still find the bucket a hair short and be refused again).
    expect(answers[11].id).toBe(11);
    expect(answers[11].at - sentAt).toBeGreaterThanOrEqual(1_000);
    const checkedAgain = answers.find((a) => a.id > 10 && (a.error as unknown[])[0] === 23)!;
    expect(checkedAgain.at - sentAt).toBeGreaterThanOrEqual(1_000);
    expect(r.server.info().refused.rateLimitedShares).toBeGreaterThanOrEqual(1);
    await c.close();
    await Promise.all(submits);
  });

  test('a connection whose shares are overwhelmingly invalid is closed and its address banned (listed in info), another address is still served', async () => {
    const r = await rig(SHARE_BITS, { banMinShares: 20, banInvalidPercent: 90, banSeconds: 60 });
    const bad = await client(r);
    const job = await bad.start(workerAddr(), `d=${SHARE_DIFF}`);
    const sibling = await client(r);
    for (let i = 0; i < 20; i++) {
      const en2 = (100 + i).toString(16).padStart(8, '0');
      const nonce = findWeakNonce(job, bad.extranonce1, en2, job.difficulty);
      // Sent without waiting for answers: the last one is never answered, the connection closes.
      bad.sendRaw(`${JSON.stringify({ id: 1000 + i, method: 'mining.submit', params: [workerAddr(), job.jobId, en2, job.ntime, nonce] })}\n`);
    }
    await bad.waitClosed(2_000);
    // Every connection of the address goes, and a new one is refused.
    await sibling.waitClosed(2_000);
    const again = await client(r);
    await again.waitClosed(2_000);
    const info = r.server.info();
    expect(info.bans).toEqual([expect.objectContaining({ address: '127.0.0.1', reason: '20 of 20 shares invalid' })]);
    expect(info.bans[0].until).toBeGreaterThan(Date.now() + 50_000);
    expect(info.refused).toMatchObject({ bans: 1, banned: 1 });
    const honest = await clientFrom(r, '127.0.0.2');
    const hjob = await honest.start(workerAddr(), `d=${SHARE_DIFF}`);
    const s = await grind(hjob, { extranonce1: honest.extranonce1, extranonce2: '00000001' });
    expect((await honest.submit(workerAddr(), hjob, s!)).result).toBe(true);
  });

  test('a miner with a few invalid shares among valid ones is not banned', async () => {
    const r = await rig(SHARE_BITS, { banMinShares: 20, banInvalidPercent: 90, banSeconds: 60 });
    const c = await client(r);
    const job = await c.start(workerAddr(), `d=${SHARE_DIFF}`);
    for (let i = 0; i < 30; i++) {
      const en2 = (200 + i).toString(16).padStart(8, '0');
      const s = i % 3 === 0 ? { extranonce2: en2, ntime: job.ntime, nonce: findWeakNonce(job, c.extranonce1, en2, job.difficulty) } : await share(c, job, 200 + i);
      await c.submit(workerAddr(), job, s);
    }
    expect(c.closed).toBe(false);
    expect(r.server.info().bans).toEqual([]);
  });
});

describe('difficulty', () => {
  test('mining.suggest_difficulty and the password d= set the difficulty, capped at the block difficulty', async () => {
    const r = await rig(SHARE_BITS);
    const c = await client(r);
    const first = await c.start(workerAddr(), 'x,d=1e-7');
    expect(first.difficulty).toBeCloseTo(1e-7, 15);
    const n = c.jobs.length;
    expect((await c.request('mining.suggest_difficulty', [2e-7])).result).toBe(true);
    const next = await c.nextJob({ after: n });
    expect(next.difficulty).toBeCloseTo(2e-7, 15);
    expect(next.clean).toBe(false);
    expect(next.jobId).not.toBe(first.jobId);
    // Above the block's own difficulty (about 2^-16 here) the share difficulty stops at it.
    await c.request('mining.suggest_difficulty', [1000]);
    const capped = await c.nextJob({ after: n + 1 });
    expect(capped.difficulty).toBeLessThan(1e-4);
    expect(capped.difficulty).toBeGreaterThan(1e-6);
    expect(errorOf(await c.request('mining.suggest_difficulty', ['lots']))[0]).toBe(20);
  });

  test('variable difficulty raises the difficulty of a connection whose shares come too fast, with a fresh job', async () => {
    // Four shares aimed at one per 5 s: unless they took over 14 s, the next difficulty is higher.
    const r = await rig(SHARE_BITS, { retargetShares: 4, targetShareSeconds: 5 });
    const c = await client(r);
    const job = await c.start(workerAddr(), `d=${SHARE_DIFF}`);
    const startDiff = c.difficulty;
    const n = c.jobs.length;
    for (let i = 1; i <= 4; i++) {
      // Not a block as well (1 in 256 would be): the block would make the job stale for the next share.
      const s = await share(c, job, i, { notBlock: true });
      expect((await c.submit(workerAddr(), job, s)).result).toBe(true);
    }
    // The new difficulty and its job follow the answer to the fourth share, possibly in the same packet.
    const next = await c.nextJob({ after: n, pred: (j) => j.difficulty > startDiff });
    expect(next.clean).toBe(false);
    expect(next.jobId).not.toBe(job.jobId);
    expect(r.stats.worker(workerAddr())!.difficulty).toBe(next.difficulty);
  });

  test('variable difficulty eases the difficulty of a connection that sends no shares', async () => {
    const r = await rig(SHARE_BITS, { retargetMs: 300, targetShareSeconds: 0.05 });
    const c = await client(r);
    const first = await c.start(workerAddr(), 'd=0.000001');
    const eased = await c.nextJob({ pred: (j) => j.difficulty < first.difficulty, timeoutMs: 5_000 });
    expect(eased.difficulty).toBeGreaterThanOrEqual(first.difficulty / 4);
  });
});

describe('jobs', () => {
  test('a keep-alive job with a fresh id goes out when nothing changes', async () => {
    const r = await rig(SHARE_BITS, { keepAliveMs: 300 });
    const c = await client(r);
    const first = await c.start(workerAddr());
    const next = await c.nextJob({ after: 1, timeoutMs: 3_000 });
    expect(next.jobId).not.toBe(first.jobId);
    expect(next.clean).toBe(false);
    expect(next.prevhash).toBe(first.prevhash);
    // Both jobs stay valid while they build on the tip.
    expect(r.server.info().job?.height).toBe(1);
  });

  test('a mempool change sends new work (rate limited), and a block mined through Stratum carries the transactions', async () => {
    const r = await rig(SHARE_BITS, { mempoolRefreshMs: 800 });
    const c = await client(r);
    await c.start(workerAddr(), `d=${SHARE_DIFF}`);
    const n = c.jobs.length;
    const bob = testKey('bob');
    const txs = [0n, 1n, 2n].map((nonce) => createTransferTx({ key: dev, chainId: r.params.chainId, to: bob.address, amount: 1_000n + nonce, nonce, includeKey: nonce === 0n, feeRate: r.params.minFeeRate }));
    const t0 = Date.now();
    for (const t of txs) await r.mempool.add(t.bytes);
    const withTxs = await c.nextJob({ after: n, pred: (j) => j.branch.length > 0, timeoutMs: 5_000 });
    expect(withTxs.clean).toBe(false);
    await new Promise((res) => setTimeout(res, 1_000));
    // Three additions within a few ms: at most two jobs (one at once, one after the interval).
    const mempoolJobs = c.jobs.slice(n).filter((j) => j.receivedAt >= t0);
    expect(mempoolJobs.length).toBeLessThanOrEqual(2);
    // The last of them carries all three transactions (coinbase + 3 txs, a branch of 2 levels; so
    // does coinbase + 2, so the job is picked by the server's count of its transactions, not by
    // its branch, which on a loaded machine matched the first job, sent with two).
    const deadline = Date.now() + 10_000;
    while (r.server.info().job?.transactions !== 3 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
    const full = r.server.info().job;
    expect(full?.transactions).toBe(3);
    const job = await c.nextJob({ after: n, pred: (j) => j.jobId === full!.id, timeoutMs: 10_000 });
    expect(job.branch.length).toBe(2);
    const s = await share(c, job, 99, { blockOnly: true });
    expect((await c.submit(workerAddr(), job, s)).result).toBe(true);
    expect(r.chain.tip).toMatchObject({ height: 1, txCount: 3 });
    const block = await r.chain.getBlock(r.chain.tip.hashHex);
    expect(block!.coinbase.fees).toBeGreaterThan(0n);
    expect(r.mempool.count).toBe(0);
  });

  // The latency itself is the Stratum bench's to judge (`npm run bench -- stratum`, docs/benchmarks.md):
  // a bound in ms here judged the machine, not the server (106 ms once under the soak's CPU hog).
  test('job latency: each new tip reaches every connected miner as a clean job on that tip, pushed by the server (latency reported)', async () => {
    const r = await rig(EASY_BITS);
    const clients = [await client(r), await client(r), await client(r)];
    for (const c of clients) await c.start(workerAddr());
    const samples: number[] = [];
    for (let i = 0; i < 10; i++) {
      const counts = clients.map((c) => c.jobs.length);
      let tipAt = 0;
      r.chain.once('tip', () => (tipAt = performance.timeOrigin + performance.now()));
      await externalBlock(r);
      const jobs = await Promise.all(clients.map((c, k) => c.nextJob({ after: counts[k], pred: (j) => j.clean })));
      for (const j of jobs) expect(swapWords(Buffer.from(j.prevhash, 'hex')).toString('hex')).toBe(r.chain.tip.hashHex);
      samples.push(Math.max(...jobs.map((j) => j.receivedAt)) - tipAt);
    }
    samples.sort((a, b) => a - b);
    const serverSide = r.server.info().notifyLatencyMs;
    // Reported in the test output: tip event → last of 3 clients holding the new job.
    console.log(`stratum notify latency over 10 tips, 3 miners: median ${samples[5].toFixed(2)} ms, max ${samples[9].toFixed(2)} ms (server: tip → last write, max ${Math.max(...serverSide).toFixed(2)} ms)`);
    // The server measured each of the 10 pushes itself (tip event → last socket write): the jobs
    // came from its tip notification, not from a periodic refresh or a client's request.
    expect(serverSide).toHaveLength(10);
    for (const ms of serverSide) expect(ms).toBeGreaterThanOrEqual(0);
  });
});

describe('the test client agrees with the chain', () => {
  test('its header for a job equals the template header the server would build', async () => {
    const r = await rig(EASY_BITS);
    const c = await client(r);
    const job = await c.start(workerAddr());
    const s = await share(c, job, 5);
    await c.submit(workerAddr(), job, s);
    const block = await r.chain.getBlock(r.chain.tip.hashHex);
    const header = jobHeader(job, c.extranonce1, '00000005', job.ntime, Number.parseInt(s.nonce, 16));
    expect(hashValue(sha256d(header))).toBe(s.value);
    expect(header.subarray(36, 68).toString('hex')).toBe(toHex(block!.header.merkleRoot));
  });
});
