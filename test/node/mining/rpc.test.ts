/**
 * getblocktemplate / submitblock at `POST /rpc` on the real HTTP server (127.0.0.1, port 0) over a
 * real chain and mempool at trivial difficulty. Templates are mined here the way a
 * getblocktemplate miner (cpuminer) does it from the BIP 22 fields alone: merkle leaves
 * SHA-256d(coinbasetxn.data) and SHA-256d(transactions[].data), header from version, the reversed
 * previousblockhash, curtime and bits, and the block sent back in Bitcoin's layout.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { encodeAddress } from '../../../consensus/address.js';
import { decodeBlock, encodeBlock } from '../../../consensus/block.js';
import { createDevnetChainParams, getDevKeyPair } from '../../../consensus/devnet.js';
import { toHex } from '../../../consensus/hash.js';
import type { ChainParams } from '../../../consensus/params.js';
import { type Chain } from '../../../chain/chain.js';
import { type Mempool } from '../../../chain/mempool.js';
import { createJobFeed, type JobFeed } from '../../../chain/jobFeed.js';
import { createConnection } from 'node:net';
import { createHttpServer, createRouterServer, type HttpServer } from '../../../node/api/http.js';
import { createMiningStats, type MiningStats } from '../../../node/mining/stats.js';
import { createRpcService, decodeSubmittedBlock, isLoopback, submitReason, type RpcOptions, type RpcService } from '../../../node/mining/rpc.js';
import { createMiningRouter } from '../../../node/mining/miningRoute.js';
import { createTransferTx } from '../../../consensus/txBuilder.js';
import { testKey } from '../../helpers/keys.js';
import { cleanupTmp } from '../../helpers/tmp.js';
import { cleanupsAfterEach, mineEmptyBlock, openChainAndPool } from '../../helpers/chainRig.js';

const payee = testKey('gbt-payee');
const other = testKey('gbt-other');
const dev = getDevKeyPair();
const AUTH = `Basic ${Buffer.from('miner:s3cret').toString('base64')}`;

interface Rig {
  params: ChainParams;
  chain: Chain;
  mempool: Mempool;
  stats: MiningStats;
  http: HttpServer;
  base: string;
  service: RpcService;
  feed: JobFeed;
}

const cleanups = cleanupsAfterEach();
afterAll(cleanupTmp);

async function rig(rpc: Partial<RpcOptions> = {}, isSyncing?: () => boolean): Promise<Rig> {
  const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: Math.floor(Date.now() / 1000) - 60 });
  const { chain, pool: mempool, close } = await openChainAndPool(params);
  const stats = createMiningStats();
  const feed = createJobFeed({ mempoolRefreshMs: 200, keepAliveMs: 25_000, tag: 'test' }, { chain, mempool, params });
  await feed.start();
  const service = createRpcService({ user: 'miner', password: 's3cret', payoutAddress: encodeAddress(payee.address, params.hrp), longPollMs: 5_000, ...rpc }, { chain, mempool, params, stats, isSyncing, feed });
  const http = createHttpServer({ host: '127.0.0.1', port: 0, bodyLimit: 1024 * 1024, timeoutMs: 15_000, version: 'test' }, { chain, mempool, params, routers: [service.router, createMiningRouter({ stats, rpc: service })] });
  await http.start();
  cleanups.push(async () => {
    await http.stop();
    feed.stop();
    await close();
  });
  return { params, chain, mempool, stats, http, base: http.url, service, feed };
}

async function rpc(r: Rig, body: unknown, auth: string | null = AUTH): Promise<{ status: number; json: any; headers: Headers }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (auth) headers.authorization = auth;
  const res = await fetch(`${r.base}/rpc`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

async function call(r: Rig, method: string, params: unknown[] = []): Promise<any> {
  const res = await rpc(r, { id: 1, method, params });
  expect(res.status).toBe(200);
  return res.json;
}

function sha256d(b: Buffer): Buffer {
  return createHash('sha256').update(createHash('sha256').update(b).digest()).digest();
}

function compactSize(n: number): Buffer {
  if (n < 0xfd) return Buffer.from([n]);
  const b = Buffer.alloc(3);
  b[0] = 0xfd;
  b.writeUInt16LE(n, 1);
  return b;
}

function le32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
}

/** Mines a BIP 22 template as a getblocktemplate miner does; returns the block hex in Bitcoin's layout. */
function mineTemplate(t: any, opts: { wantHigh?: boolean } = {}): string {
  const coinbase = Buffer.from(t.coinbasetxn.data, 'hex');
  const txs: Buffer[] = t.transactions.map((x: { data: string }) => Buffer.from(x.data, 'hex'));
  let level = [sha256d(coinbase), ...txs.map(sha256d)];
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha256d(Buffer.concat([level[i], level[i + 1] ?? level[i]])));
    level = next;
  }
  const target = BigInt(`0x${t.target}`);
  const header = Buffer.concat([le32(t.version), Buffer.from(t.previousblockhash, 'hex').reverse(), level[0], le32(t.curtime), le32(Number.parseInt(t.bits, 16)), le32(0)]);
  for (let nonce = 0; ; nonce++) {
    header.writeUInt32LE(nonce, 76);
    const value = BigInt(`0x${Buffer.from(sha256d(header)).reverse().toString('hex')}`);
    if (opts.wantHigh ? value > target : value <= target) break;
  }
  return Buffer.concat([header, compactSize(1 + txs.length), coinbase, ...txs]).toString('hex');
}

/** A block on the tip from elsewhere, paying `other`. */
/** Mines a block on the tip outside the RPC (another miner), paying `other`. */
const externalBlock = (r: Rig) => mineEmptyBlock(r.chain, r.params, other.address);

describe('access', () => {
  test('RPC is off without credentials: 403 rpc_disabled with a message naming the flags', async () => {
    const r = await rig({ user: undefined, password: undefined });
    const res = await rpc(r, { id: 1, method: 'getblockcount', params: [] });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('rpc_disabled');
    expect(res.json.error.message).toMatch(/--rpc-user and --rpc-password/);
  });

  test('missing or wrong HTTP Basic credentials: 401 rpc_unauthorized with WWW-Authenticate', async () => {
    const r = await rig();
    for (const auth of [null, `Basic ${Buffer.from('miner:wrong').toString('base64')}`, 'Bearer x']) {
      const res = await rpc(r, { id: 1, method: 'getblockcount', params: [] }, auth);
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe('rpc_unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
    }
    expect((await call(r, 'getblockcount')).result).toBe(0);
  });

  test('only loopback clients are answered unless --rpc-allow-remote', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopback('10.0.0.5')).toBe(false);
    expect(isLoopback('::ffff:192.168.1.2')).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
  });

  test('JSON-RPC errors: unknown method -32601, bad request -32600, batches answered in order', async () => {
    const r = await rig();
    expect((await call(r, 'getwork')).error.code).toBe(-32601);
    expect((await rpc(r, { id: 7, params: [] })).json).toMatchObject({ id: 7, result: null, error: { code: -32600 } });
    const batch = await rpc(r, [
      { id: 'a', method: 'getblockcount', params: [] },
      { id: 'b', method: 'getmininginfo', params: [] },
    ]);
    expect(batch.json).toMatchObject([
      { id: 'a', result: 0, error: null },
      { id: 'b', result: { blocks: 0, chain: 'native-devnet', pooledtx: 0 }, error: null },
    ]);
  });
});

describe('getblocktemplate', () => {
  test('BIP 22 fields in Bitcoin conventions, coinbasetxn of at least 60 bytes paying the node, transactions with data and txid', async () => {
    const r = await rig();
    const bob = testKey('bob');
    const t0 = createTransferTx({ key: dev, chainId: r.params.chainId, to: bob.address, amount: 5_000n, nonce: 0n, includeKey: true, feeRate: r.params.minFeeRate });
    await r.mempool.add(t0.bytes);
    const { result: t, error } = await call(r, 'getblocktemplate', [{ capabilities: ['coinbasetxn', 'workid', 'longpoll'], rules: ['segwit'] }]);
    expect(error).toBeNull();
    expect(t.previousblockhash).toBe(Buffer.from(r.chain.tip.hash).reverse().toString('hex'));
    expect(t.height).toBe(1);
    expect(t.version).toBe(1);
    expect(t.bits).toMatch(/^[0-9a-f]{8}$/);
    expect(t.target).toMatch(/^[0-9a-f]{64}$/);
    expect(t.curtime).toBeGreaterThanOrEqual(t.mintime);
    expect(t.mutable).toEqual(['time']);
    expect(t.rules).toEqual([]);
    expect(typeof t.longpollid).toBe('string');
    expect(t.coinbasetxn.data.length / 2).toBeGreaterThanOrEqual(60);
    expect(t.coinbasetxn.data.slice(18, 58)).toBe(toHex(payee.address));
    expect(t.payoutaddress).toBe(encodeAddress(payee.address, r.params.hrp));
    expect(t.transactions).toHaveLength(1);
    expect(t.transactions[0].data).toBe(toHex(t0.bytes));
    expect(t.transactions[0].txid).toBe(Buffer.from(sha256d(Buffer.from(t0.bytes))).reverse().toString('hex'));
    expect(t.coinbasevalue).toBe(Number(50n * 100_000_000n + (t0.tx.fee - t0.tx.fee / 2n)));
  });

  test('a template mined from its fields alone and sent back in Bitcoin layout is accepted (null), with its transaction', async () => {
    const r = await rig();
    const bob = testKey('bob');
    const t0 = createTransferTx({ key: dev, chainId: r.params.chainId, to: bob.address, amount: 5_000n, nonce: 0n, includeKey: true, feeRate: r.params.minFeeRate });
    await r.mempool.add(t0.bytes);
    const { result: t } = await call(r, 'getblocktemplate', [{}]);
    const hex = mineTemplate(t);
    const sub = await call(r, 'submitblock', [hex]);
    expect(sub).toMatchObject({ result: null, error: null });
    expect(r.chain.tip).toMatchObject({ height: 1, txCount: 1 });
    const block = await r.chain.getBlock(r.chain.tip.hashHex);
    expect(toHex(block!.coinbase.miner)).toBe(toHex(payee.address));
    // Again: duplicate.
    expect((await call(r, 'submitblock', [hex])).result).toBe('duplicate');
    const mining = (await (await fetch(`${r.base}/api/v1/mining`)).json()) as any;
    expect(mining.rpc).toMatchObject({ enabled: true, submitted: 2, accepted: 1, rejected: 1, lastRejectReason: 'duplicate' });
    expect(mining.blocks[0]).toMatchObject({ height: 1, source: 'rpc', address: encodeAddress(payee.address, r.params.hrp) });
  });

  test('submitblock reasons: high-hash, inconclusive (stale parent), prev-blk-not-found, decode failures', async () => {
    const r = await rig();
    const { result: t } = await call(r, 'getblocktemplate', []);
    expect((await call(r, 'submitblock', [mineTemplate(t, { wantHigh: true })])).result).toBe('high-hash');
    await externalBlock(r);
    // The old template still builds a valid block, on a parent that is no longer the tip.
    expect((await call(r, 'submitblock', [mineTemplate(t)])).result).toBe('inconclusive');
    const orphan = { ...t, previousblockhash: 'ab'.repeat(32) };
    expect((await call(r, 'submitblock', [mineTemplate(orphan)])).result).toBe('prev-blk-not-found');
    for (const bad of ['zz', 'abc', '00'.repeat(80), 42]) {
      const res = await call(r, 'submitblock', [bad]);
      expect(res.error.code).toBe(-22);
      expect(res.error.message).toMatch(/Block decode failed/);
    }
    expect(submitReason('block_bad_merkle_root')).toBe('bad-txnmrklroot');
    expect(submitReason('block_bad_prev')).toBe('bad-prevblk');
    expect(submitReason('tx_bad_signature')).toBe('bad-txns');
  });

  test('submitblock also takes the canonical block encoding', async () => {
    const r = await rig();
    const { result: t } = await call(r, 'getblocktemplate', []);
    const bitcoinLayout = Buffer.from(mineTemplate(t), 'hex');
    const { block } = decodeSubmittedBlock(bitcoinLayout);
    const canonical = encodeBlock(block);
    expect(decodeBlock(canonical).block.coinbase.height).toBe(1);
    expect((await call(r, 'submitblock', [toHex(canonical)])).result).toBeNull();
    expect(r.chain.tip.height).toBe(1);
  });

  test('payout: the request may name another address; an invalid one is -5; without any the answer is -1', async () => {
    const r = await rig();
    const { result: t } = await call(r, 'getblocktemplate', [{ payoutaddress: encodeAddress(other.address, r.params.hrp) }]);
    expect(t.coinbasetxn.data.slice(18, 58)).toBe(toHex(other.address));
    expect((await call(r, 'getblocktemplate', [{ payoutaddress: 'native1xyz' }])).error.code).toBe(-5);
    expect((await call(r, 'getblocktemplate', [{ mode: 'proposal' }])).error.code).toBe(-8);
    const none = await rig({ payoutAddress: undefined });
    const res = await call(none, 'getblocktemplate', []);
    expect(res.error.code).toBe(-1);
    expect(res.error.message).toMatch(/--miner-address/);
  });

  test('while the node syncs, getblocktemplate answers -10 (as Bitcoin Core in initial download); afterwards a template', async () => {
    let syncing = true;
    const r = await rig({}, () => syncing);
    const during = await call(r, 'getblocktemplate', [{ rules: ['segwit'] }]);
    expect(during.result).toBeNull();
    expect(during.error).toMatchObject({ code: -10, message: expect.stringMatching(/downloading blocks/) });
    expect((await call(r, 'getblockcount')).result).toBe(0); // other methods still answer
    syncing = false;
    const after = await call(r, 'getblocktemplate', [{ rules: ['segwit'] }]);
    expect(after.error).toBeNull();
    expect(after.result.height).toBe(1);
  });

  test('long polling: a request with the current longpollid waits until the tip changes', async () => {
    const r = await rig();
    const { result: t } = await call(r, 'getblocktemplate', []);
    const started = Date.now();
    const waiting = call(r, 'getblocktemplate', [{ longpollid: t.longpollid }]);
    await new Promise((res) => setTimeout(res, 300));
    await externalBlock(r);
    const { result: next } = await waiting;
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(next.height).toBe(2);
    expect(next.longpollid).not.toBe(t.longpollid);
    // A stale id answers at once.
    const quick = Date.now();
    await call(r, 'getblocktemplate', [{ longpollid: t.longpollid }]);
    expect(Date.now() - quick).toBeLessThan(10_000); // not held for the long poll
  });

  test('long polling ends after longPollMs with the unchanged template', async () => {
    const r = await rig({ longPollMs: 400 });
    const { result: t } = await call(r, 'getblocktemplate', []);
    const started = Date.now();
    const { result: again } = await call(r, 'getblocktemplate', [{ longpollid: t.longpollid }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(again.previousblockhash).toBe(t.previousblockhash);
  });

  test('a long poll whose client leaves stops waiting at once (no listener left on the job feed)', async () => {
    const r = await rig({ longPollMs: 30_000 });
    const { result: t } = await call(r, 'getblocktemplate', []);
    const baseline = r.feed.listenerCount('job');
    const abort = new AbortController();
    const gone = fetch(`${r.base}/rpc`, { method: 'POST', headers: { authorization: AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ id: 1, method: 'getblocktemplate', params: [{ longpollid: t.longpollid }] }), signal: abort.signal }).catch((e: Error) => e.name);
    for (let i = 0; i < 100 && r.feed.listenerCount('job') === baseline; i++) await new Promise((res) => setTimeout(res, 10));
    expect(r.feed.listenerCount('job')).toBe(baseline + 1);
    abort.abort();
    expect(await gone).toBe('AbortError');
    for (let i = 0; i < 100 && r.feed.listenerCount('job') > baseline; i++) await new Promise((res) => setTimeout(res, 10));
    expect(r.feed.listenerCount('job')).toBe(baseline);
  });

  test('stop answers pending long polls at once with -1 "stopping"', async () => {
    const r = await rig({ longPollMs: 30_000 });
    const { result: t } = await call(r, 'getblocktemplate', []);
    const baseline = r.chain.listenerCount('tip');
    const waiting = call(r, 'getblocktemplate', [{ longpollid: t.longpollid }]);
    for (let i = 0; i < 100 && r.chain.listenerCount('tip') === baseline; i++) await new Promise((res) => setTimeout(res, 10));
    const started = Date.now();
    r.service.stop();
    const answer = await waiting;
    expect(Date.now() - started).toBeLessThan(10_000); // not the 30 s long poll
    expect(answer.error).toMatchObject({ code: -1, message: expect.stringMatching(/stopping/) });
  });

  test('cpuminer 2.5.0 sends Transfer-Encoding and Content-Length together: the API port refuses it (400), the RPC port (--rpc-port) answers', async () => {
    const r = await rig();
    const dedicated = createRouterServer({ host: '127.0.0.1', port: 0, bodyLimit: 1024 * 1024, timeoutMs: 15_000, version: 'test', insecureParser: true }, [r.service.rootRouter]);
    await dedicated.start();
    cleanups.push(() => dedicated.stop());
    // The request exactly as cpuminer 2.5.0 with libcurl 7.88 writes it (a chunked body plus its own Content-Length).
    const body = JSON.stringify({ method: 'getblockcount', params: [], id: 0 });
    const raw = (path: string) =>
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH}\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nUser-Agent: cpuminer/2.5.0\r\nConnection: close\r\n\r\n` +
      `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const send = (url: string, path: string) =>
      new Promise<string>((resolve, reject) => {
        const { hostname, port } = new URL(url);
        const sock = createConnection({ host: hostname, port: Number(port) }, () => sock.write(raw(path)));
        let out = '';
        sock.on('data', (d) => (out += d));
        sock.on('end', () => resolve(out));
        sock.on('error', reject);
        sock.setTimeout(5_000, () => sock.destroy(new Error('no answer')));
      });
    expect(await send(r.base, '/rpc')).toMatch(/^HTTP\/1\.1 400/);
    for (const path of ['/', '/rpc']) {
      const answer = await send(dedicated.url, path);
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ result: 0, error: null, id: 0 });
    }
  });
});
