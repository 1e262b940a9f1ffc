/**
 * The HTTP API against a real chain (LevelDB in a temp dir) and a real mempool, on 127.0.0.1
 * port 0. Blocks are mined in-test at trivial difficulty; signatures are checked with the
 * reference verifier on the test thread (the worker pool is exercised by the integration test).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { toHex } from '../../consensus/hash.js';
import { verifyHybridReference } from '../../consensus/keys.js';
import { COIN } from '../../consensus/params.js';
import { SUPPLY_KEY } from '../../consensus/state.js';
import type { Tx } from '../../consensus/tx.js';
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import type { ChainReader, MempoolReader, SignatureVerifier } from '../../chain/types.js';
import { createHttpServer, httpStatusOf, type HttpServer, type TxSubmitter } from '../../node/api/http.js';
import { createTransferTx } from '../../consensus/txBuilder.js';
import { testKey } from '../helpers/keys.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: Math.floor(Date.now() / 1000) - 3600 });
const dev = getDevKeyPair();
const devAddr = encodeAddress(dev.address, params.hrp);
const bob = testKey('bob');
const bobAddr = encodeAddress(bob.address, params.hrp);
const minerKey = testKey('miner');
const verifier: SignatureVerifier = { verifyBatch: async (jobs) => jobs.map((j) => verifyHybridReference(j.pub, j.msg, j.sig)) };

let dir: string;
let chain: Chain;
let mempool: Mempool;
let server: HttpServer;
let base: string;

async function mineBlock(txs: readonly Tx[] = []): Promise<void> {
  const tip = chain.tip;
  const state = await chain.getStateView([SUPPLY_KEY]);
  const b = assembleBlock({ parent: { hash: tip.hash, height: tip.height, time: tip.header.time }, medianTimePast: chain.medianTimePast(tip), now: tip.header.time + 3, txs, miner: minerKey.address, state }, params);
  const header = grindHeader(b.header, params.powLimit, 1_000_000);
  if (!header) throw new Error('could not grind');
  const res = await chain.addBlock({ ...b, header });
  expect(res.status).toBe('connected');
}

function transfer(nonce: bigint, amount: bigint, over: { fee?: bigint; includeKey?: boolean } = {}) {
  return createTransferTx({ key: dev, chainId: params.chainId, to: bob.address, amount, nonce, includeKey: over.includeKey ?? nonce === 0n, fee: over.fee, feeRate: params.minFeeRate });
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** Raw request with node:http (for bodies fetch would refuse, and to read the answer of an oversized upload). */
function rawPost(path: string, body: Buffer, headers: Record<string, string | number>): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method: 'POST', headers }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: data ? JSON.parse(data) : undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function expectError(r: { status: number; json: any }, status: number, code: string): void {
  expect({ status: r.status, code: r.json?.error?.code }).toEqual({ status, code });
  expect(typeof r.json.error.message).toBe('string');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-http-'));
  chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier });
  mempool = createMempool(chain, verifier, params);
  mempool.start();
  server = createHttpServer(
    { host: '127.0.0.1', port: 0, bodyLimit: 256 * 1024, timeoutMs: 5_000, version: '9.9.9-test' },
    { chain, mempool, params, miner: { stats: () => ({ running: true, threads: 1, hashrate: 1234, blocksFound: 2 }) } },
  );
  await server.start();
  base = server.url;
  await mineBlock();
  await mineBlock();
});

afterAll(async () => {
  await server?.stop();
  mempool?.stop();
  await chain?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('POST /api/v1/tx', () => {
  let first: ReturnType<typeof transfer>;

  test('a valid transfer is accepted: 200 {txId, status}', async () => {
    first = transfer(0n, 2n * COIN);
    const r = await call('POST', '/api/v1/tx', { tx: toHex(first.bytes) });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ txId: first.id, status: 'accepted' });
  });

  test('GET /api/v1/tx/:id shows it pending, decoded', async () => {
    const r = await call('GET', `/api/v1/tx/${first.id}`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      txId: first.id,
      status: 'pending',
      height: null,
      blockHash: null,
      confirmations: 0,
      type: 'transfer',
      from: devAddr,
      to: bobAddr,
      amount: '2',
      amountBase: '200000000',
      fee: (Number(first.tx.fee) / 1e8).toString(),
      feeBase: first.tx.fee.toString(),
      nonce: 0,
      publicKeyIncluded: true,
    });
  });

  test('the same transaction again → 409 mempool_duplicate', async () => {
    expectError(await call('POST', '/api/v1/tx', { tx: toHex(first.bytes) }), 409, 'mempool_duplicate');
  });

  test('account shows the pending nonce', async () => {
    const r = await call('GET', `/api/v1/account/${devAddr}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ address: devAddr, balance: '1000000', balanceBase: (1_000_000n * COIN).toString(), nonce: 0, pendingNonce: 1, publicKeyKnown: false, tokens: [], stakes: [], lpPositions: [] });
  });

  test('GET /api/v1/mempool lists it', async () => {
    const r = await call('GET', '/api/v1/mempool');
    expect(r.status).toBe(200);
    expect(r.json.count).toBe(1);
    expect(r.json.bytes).toBe(first.bytes.length);
    expect(r.json.entries[0]).toMatchObject({ txId: first.id, type: 'transfer', from: devAddr, nonce: 0, size: first.bytes.length, feeBase: first.tx.fee.toString() });
  });

  test('once mined: status mined, height, block hash, confirmations; balances moved', async () => {
    await mineBlock([first.tx]);
    const r = await call('GET', `/api/v1/tx/${first.id}`);
    expect(r.json).toMatchObject({ status: 'mined', height: 3, blockHash: chain.tip.hashHex, confirmations: 1, amount: '2' });
    await mineBlock();
    expect((await call('GET', `/api/v1/tx/${first.id}`)).json.confirmations).toBe(2);
    const bobAcc = await call('GET', `/api/v1/account/${bobAddr}`);
    expect(bobAcc.json).toMatchObject({ balance: '2', balanceBase: '200000000', nonce: 0, pendingNonce: 0 });
    const devAcc = await call('GET', `/api/v1/account/${devAddr}`);
    expect(devAcc.json).toMatchObject({ nonce: 1, pendingNonce: 1, publicKeyKnown: true, balanceBase: (1_000_000n * COIN - 2n * COIN - first.tx.fee).toString() });
    expect((await call('GET', '/api/v1/mempool')).json.count).toBe(0);
  });

  test('the alias POST /api/tx accepts too (key already on chain, so no key carried)', async () => {
    const t = transfer(1n, COIN, { includeKey: false });
    const r = await call('POST', '/api/tx', { tx: toHex(t.bytes) });
    expect(r.json).toEqual({ txId: t.id, status: 'accepted' });
  });

  test('a used nonce → 422 tx_bad_nonce', async () => {
    const t = transfer(0n, 5n, { includeKey: false });
    expectError(await call('POST', '/api/v1/tx', { tx: toHex(t.bytes) }), 422, 'tx_bad_nonce');
  });

  test('a fee below size × minFeeRate → 422 tx_fee_too_low with the minimum', async () => {
    const t = transfer(2n, 5n, { fee: 10n });
    const r = await call('POST', '/api/v1/tx', { tx: toHex(t.bytes) });
    expectError(r, 422, 'tx_fee_too_low');
    expect(r.json.error.minFee).toBe(BigInt(t.bytes.length).toString());
  });

  test('a broken signature → 422 tx_bad_signature', async () => {
    const t = transfer(2n, 5n);
    const bytes = t.bytes.slice();
    bytes[bytes.length - 1] ^= 1;
    expectError(await call('POST', '/api/v1/tx', { tx: toHex(bytes) }), 422, 'tx_bad_signature');
  });

  test('more than the balance → 422 tx_insufficient_funds', async () => {
    const t = transfer(2n, 2_000_000n * COIN);
    expectError(await call('POST', '/api/v1/tx', { tx: toHex(t.bytes) }), 422, 'tx_insufficient_funds');
  });

  test('truncated bytes → 400 with the codec code', async () => {
    expectError(await call('POST', '/api/v1/tx', { tx: '01' }), 400, 'codec_truncated');
    const t = transfer(2n, 5n);
    expectError(await call('POST', '/api/v1/tx', { tx: `${toHex(t.bytes)}00` }), 400, 'codec_trailing_bytes');
  });

  test.each([
    ['not hex', 'zz'],
    ['odd length', 'abc'],
    ['empty', ''],
  ])('%s → 400 invalid_tx_hex', async (_name, tx) => {
    expectError(await call('POST', '/api/v1/tx', { tx }), 400, 'invalid_tx_hex');
  });

  test.each([
    ['no tx field', { hex: '00' }],
    ['tx not a string', { tx: 12 }],
    ['an array', [1, 2]],
  ])('%s → 400 invalid_request', async (_name, body) => {
    expectError(await call('POST', '/api/v1/tx', body), 400, 'invalid_request');
  });

  test('malformed JSON → 400 invalid_json', async () => {
    expectError(await call('POST', '/api/v1/tx', '{"tx": '), 400, 'invalid_json');
    expectError(await call('POST', '/api/v1/tx', '"just a string"'), 400, 'invalid_json');
  });

  test('JSON is parsed whatever the content type says', async () => {
    const r = await call('POST', '/api/v1/tx', '{"tx":"zz"}', { 'content-type': 'text/plain' });
    expectError(r, 400, 'invalid_tx_hex');
  });

  test('a body over the limit → 413 body_too_large', async () => {
    const big = Buffer.from(JSON.stringify({ tx: 'ab'.repeat(150 * 1024) }));
    expectError(await rawPost('/api/v1/tx', big, { 'content-type': 'application/json', 'content-length': big.length }), 413, 'body_too_large');
  });

  test('an oversized chunked body (no Content-Length) → 413 body_too_large', async () => {
    const big = Buffer.from(JSON.stringify({ tx: 'ab'.repeat(150 * 1024) }));
    expectError(await rawPost('/api/v1/tx', big, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }), 413, 'body_too_large');
  });
});

describe('GET /api/v1/tx/:id errors', () => {
  test('unknown id → 404 tx_not_found', async () => {
    expectError(await call('GET', `/api/v1/tx/${'00'.repeat(32)}`), 404, 'tx_not_found');
  });
  test('not 64 hex characters → 400 invalid_tx_id', async () => {
    expectError(await call('GET', '/api/v1/tx/1234'), 400, 'invalid_tx_id');
  });
});

describe('blocks', () => {
  test('GET /api/v1/block/:height: header, coinbase, tx ids, confirmations', async () => {
    const r = await call('GET', '/api/v1/block/3');
    expect(r.status).toBe(200);
    const e = chain.getEntryByHeight(3)!;
    expect(r.json).toMatchObject({
      hash: e.hashHex,
      height: 3,
      mainChain: true,
      confirmations: chain.tip.height - 2,
      prevHash: chain.getEntryByHeight(2)!.hashHex,
      nextHash: chain.getEntryByHeight(4)!.hashHex,
      time: e.header.time,
      bits: e.header.bits.toString(16).padStart(8, '0'),
      nonce: e.header.nonce,
      txCount: 1,
      coinbase: { miner: encodeAddress(minerKey.address, params.hrp), reward: '50', rewardBase: (50n * COIN).toString() },
    });
    expect(r.json.txIds).toHaveLength(1);
    expect(r.json.merkleRoot).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof r.json.difficulty).toBe('number');
  });
  test('by hash gives the same block; genesis has no confirmations problem', async () => {
    const byHash = await call('GET', `/api/v1/block/${chain.getEntryByHeight(3)!.hashHex.toUpperCase()}`);
    expect(byHash.json.height).toBe(3);
    const g = await call('GET', '/api/v1/block/0');
    expect(g.json).toMatchObject({ height: 0, prevHash: '00'.repeat(32), confirmations: chain.tip.height + 1, coinbase: { tag: 'native devnet' } });
  });
  test('unknown height or hash → 404 block_not_found; garbage → 400 invalid_block_id', async () => {
    expectError(await call('GET', '/api/v1/block/99999'), 404, 'block_not_found');
    expectError(await call('GET', `/api/v1/block/${'ab'.repeat(32)}`), 404, 'block_not_found');
    expectError(await call('GET', '/api/v1/block/tip'), 400, 'invalid_block_id');
  });
  test('GET /api/v1/blocks: newest first from the tip, limit honoured', async () => {
    const r = await call('GET', '/api/v1/blocks?limit=3');
    expect(r.status).toBe(200);
    expect(r.json.blocks.map((b: { height: number }) => b.height)).toEqual([chain.tip.height, chain.tip.height - 1, chain.tip.height - 2]);
    expect(r.json.blocks[0]).toMatchObject({ hash: chain.tip.hashHex, txCount: expect.any(Number), size: expect.any(Number) });
    const from = await call('GET', '/api/v1/blocks?from=1&limit=100');
    expect(from.json.blocks.map((b: { height: number }) => b.height)).toEqual([1, 0]);
  });
  test.each([
    ['limit above 100', '?limit=101', 'limit'],
    ['limit zero', '?limit=0', 'limit'],
    ['limit not a number', '?limit=ten', 'limit'],
    ['negative from', '?from=-1', 'from'],
  ])('%s → 400 invalid_query', async (_name, q, param) => {
    const r = await call('GET', `/api/v1/blocks${q}`);
    expectError(r, 400, 'invalid_query');
    expect(r.json.error.param).toBe(param);
  });
});

describe('accounts', () => {
  test('an unknown account is empty', async () => {
    const addr = encodeAddress(new Uint8Array(20).fill(9), params.hrp);
    expect((await call('GET', `/api/v1/account/${addr}`)).json).toEqual({ address: addr, balance: '0', balanceBase: '0', nonce: 0, pendingNonce: 0, publicKeyKnown: false, tokens: [], stakes: [], lpPositions: [] });
  });
  test.each([
    ['garbage', 'hello'],
    ['a mainnet address on the devnet', encodeAddress(bob.address, 'native')],
    ['a broken checksum', `${bobAddr.slice(0, -1)}${bobAddr.endsWith('q') ? 'p' : 'q'}`],
  ])('%s → 400 invalid_address', async (_name, addr) => {
    expectError(await call('GET', `/api/v1/account/${encodeURIComponent(addr)}`), 400, 'invalid_address');
  });
});

describe('status', () => {
  test('GET /api/v1/status has the documented fields', async () => {
    const r = await call('GET', '/api/v1/status');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      network: 'native-devnet',
      chainId: 1337,
      height: chain.tip.height,
      tip: chain.tip.hashHex,
      mempool: { count: mempool.count, bytes: mempool.bytes },
      peers: 0,
      syncing: false,
      version: '9.9.9-test',
      peerId: null,
      listen: [],
      mining: { running: true, threads: 1, hashrate: 1234, blocksFound: 2 },
      minFeeRate: '1',
    });
    expect(typeof r.json.difficulty).toBe('number');
    // Blocks 3 s apart at the easiest target: work per block / 3 s.
    expect(r.json.hashrate).toBeGreaterThan(0);
  });
});

describe('routing and error mapping', () => {
  test('unknown route → 404 not_found', async () => {
    expectError(await call('GET', '/api/v1/nothing'), 404, 'not_found');
    expectError(await call('GET', '/'), 404, 'not_found');
  });
  test('wrong method on a route → 405 method_not_allowed', async () => {
    expectError(await call('GET', '/api/v1/tx'), 405, 'method_not_allowed');
  });
  test('status table', () => {
    expect(httpStatusOf('codec_truncated')).toBe(400);
    expect(httpStatusOf('tx_bad_signature')).toBe(422);
    expect(httpStatusOf('mempool_nonce_too_far')).toBe(422);
    expect(httpStatusOf('mempool_full')).toBe(503);
    expect(httpStatusOf('request_timeout')).toBe(503);
    expect(httpStatusOf('chain_corrupt')).toBeUndefined();
  });
});

describe('failures inside handlers (stubbed interfaces)', () => {
  let stubServer: HttpServer;
  let stubBase: string;
  const logged: { obj: object; msg?: string }[] = [];
  beforeAll(async () => {
    const brokenChain = new Proxy(chain as ChainReader, {
      get(target, prop, receiver) {
        if (prop === 'getTx') return async () => { throw new Error('disk on fire'); };
        return Reflect.get(target, prop, receiver);
      },
    });
    const slowMempool: MempoolReader & TxSubmitter = Object.assign(Object.create(mempool) as MempoolReader, {
      get: () => undefined,
      add: () => new Promise<never>(() => undefined),
    });
    const logger = { debug() {}, info() {}, warn() {}, error: (obj: object, msg?: string) => void logged.push({ obj, msg }) };
    // 2 s: the hanging handler waits it out; the quick answers of the other tests never reach it on a loaded machine.
    stubServer = createHttpServer({ host: '127.0.0.1', port: 0, bodyLimit: 1024, timeoutMs: 2_000, version: 'x' }, { chain: brokenChain, mempool: slowMempool, params, logger });
    await stubServer.start();
    stubBase = stubServer.url;
  });
  afterAll(async () => stubServer?.stop());

  test('an unexpected exception → 500 internal_error, generic message, stack logged', async () => {
    const res = await fetch(`${stubBase}/api/v1/tx/${'11'.repeat(32)}`);
    const json = await res.json();
    expect(res.status).toBe(500);
    expect(json).toEqual({ error: { code: 'internal_error', message: 'internal error' } });
    expect(JSON.stringify(json)).not.toContain('disk on fire');
    expect(logged.some((l) => (l.obj as { err?: Error }).err?.message === 'disk on fire')).toBe(true);
  });
  test('a handler slower than the limit → 503 request_timeout', async () => {
    const res = await fetch(`${stubBase}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: '00' }) });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("request_timeout");
  });
  test('the body limit is configurable', async () => {
    const res = await fetch(`${stubBase}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: 'ab'.repeat(1024) }) });
    expect(res.status).toBe(413);
  });
});
