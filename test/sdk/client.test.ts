/**
 * The agent SDK (`sdk/client.ts`) against a small fake node on 127.0.0.1 that speaks the native
 * rail's wire contract: the 402 quote, status and account, broadcast (decoding the real signed
 * agent_invoke), and settle with its 200 / 202 / 502-refund / coded-error answers. Every branch of
 * the client: quote parsing, the price limit, the pending loop and its time bound, refunds,
 * server error codes, retries after a dropped connection, nonces and the carried key.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeAddress } from '../../consensus/address.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import { decodeTx, txId as computeTxId, TxType, type Tx } from '../../consensus/tx.js';
import { agentInvoke, type AgentInvokePayload } from '../../consensus/txTypes/agentInvoke.js';
import { signedSize } from '../../consensus/txBuilder.js';
import { AgentErrorCode, COMMITMENT_SCHEME, createAgentClient, isAgentClientError, parseQuote, requestCommitment, usdcBinding, type AgentClient, type AgentEvent } from '../../sdk/client.js';
import { sellerOfNonce, usdcCommitmentNonce } from '../../x402/usdc/commitment.js';
import { testKey } from '../helpers/keys.js';
import { createFilePaymentStore, createMemoryPaymentStore } from '../../sdk/pendingPayments.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const HRP = 'tnative';
const CHAIN_ID = 1337;
const agent = testKey('x402-agent');
const agentAddr = encodeAddress(agent.address, HRP);
const provider = testKey('x402-provider');
const providerAddr = encodeAddress(provider.address, HRP);
const PRICE = 200_000n; // 0.002 NATIVE
/** The fake node's seller (ledger) id. */
const SELLER = '0123456789abcdef';

/** How the fake node answers settles of one service. */
type SettleMode =
  | { kind: 'ok' }
  /** 202 for the first `n` settles of each tx, then as `ok`. */
  | { kind: 'pending'; n: number }
  /** 202 forever. */
  | { kind: 'never' }
  | { kind: 'refund' }
  | { kind: 'refundPending' }
  /** 409 settlement_in_progress for the first `n` settles, then ok. */
  | { kind: 'busy'; n: number }
  /** 503 node_syncing for the first `n` settles, then ok. */
  | { kind: 'syncing'; n: number }
  /** Drops the connection of the first `n` settles, then ok. */
  | { kind: 'drop'; n: number }
  /** A coded error for every settle. */
  | { kind: 'error'; status: number; code: string };

interface Fake {
  server: Server;
  url: string;
  /** Decoded broadcasts, in order. */
  txs: { id: string; tx: Tx; payload: AgentInvokePayload; size: number }[];
  settles: { path: string; body: Record<string, unknown> }[];
  quotes: { path: string; body: Record<string, unknown> }[];
  account: { pendingNonce: number; publicKeyKnown: boolean; balanceBase: string };
  minFeeRate: string;
  chainId: number;
  modes: Map<string, SettleMode>;
  /** Per tx: settles seen, and the stored final answer (idempotent repeat). */
  seen: Map<string, number>;
  stored: Map<string, { status: number; body: unknown }>;
  /** Rewrites the quote body (to test malformed quotes). */
  quoteHook?: (body: Record<string, unknown>) => unknown;
  broadcastError?: { status: number; code: string };
  /** With `broadcastError`: the refused tx is mined anyway (its nonce was used by this very payment, mined meanwhile). */
  minedOnRefusal?: boolean;
  /** The next `lose` broadcasts are answered 200 and forgotten (a crash before the block, mempool file lost). */
  lose?: number;
  /** The next `dropBroadcast` broadcasts are forgotten and their connection cut before any answer (a crash mid-request). */
  dropBroadcast?: number;
  /** Raw hex of every broadcast, lost ones included. */
  broadcasts?: string[];
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      try {
        resolve(text ? JSON.parse(text) : {});
      } catch (e) {
        reject(e);
      }
    });
  });
}

const KNOWN = new Set(['native-syncing', 'native-world-clock', 'native-fails', 'native-fails-owed', 'native-slow', 'native-busy', 'native-flaky', 'native-never', 'native-bad']);

function nativeOption(f: Fake, serviceId: string, request: string | undefined): Record<string, unknown> {
  return {
    scheme: 'native-x402',
    network: 'native-devnet',
    maxAmountRequired: PRICE.toString(),
    resource: `${f.url}/api/x402/${serviceId}`,
    description: `${serviceId} (test)`,
    mimeType: 'application/json',
    payTo: providerAddr,
    maxTimeoutSeconds: 300,
    asset: 'NATIVE',
    extra: {
      txType: 'agent_invoke',
      chainId: f.chainId,
      serviceId,
      priceAman: 0.002,
      priceNative: '0.002',
      decimals: 8,
      broadcast: '/api/v1/tx',
      sellerId: SELLER,
      commitment: COMMITMENT_SCHEME,
      confirmations: 1,
    },
  };
}

/** The settle path: the ARCHITECTURE.md checks from the fake's "chain", then the mode's answer. */
function settleAnswer(f: Fake, serviceId: string, request: string | undefined, txIdHex: string, salt: unknown): { status: number; body: unknown } | 'drop' {
  const stored = f.stored.get(txIdHex);
  if (stored) return stored;
  const entry = f.txs.find((t) => t.id === txIdHex);
  if (!entry) return { status: 404, body: { error: { code: 'payment_not_found', message: `no transaction ${txIdHex}` } } };
  if (entry.tx.type !== TxType.agent_invoke) return { status: 400, body: { error: { code: 'payment_not_invoke', message: 'not an agent_invoke' } } };
  const p = entry.payload;
  if (p.serviceId !== serviceId) return { status: 400, body: { error: { code: 'wrong_service', message: `paid for ${p.serviceId}` } } };
  if (encodeAddress(p.payTo, HRP) !== providerAddr) return { status: 400, body: { error: { code: 'wrong_payee', message: 'wrong payee' } } };
  if (p.amount !== PRICE) return { status: 400, body: { error: { code: 'amount_mismatch', message: 'wrong amount' } } };
  if (typeof salt !== 'string' || !/^[0-9a-f]{64}$/.test(salt)) return { status: 400, body: { error: { code: 'invalid_payment', message: 'payment.salt is required' } } };
  if (!p.requestHash || toHex(p.requestHash) !== requestCommitment({ sellerId: SELLER, serviceId, request, salt })) return { status: 402, body: { error: { code: 'request_mismatch', message: 'commitment differs' } } };
  const mode = f.modes.get(serviceId) ?? { kind: 'ok' };
  const n = (f.seen.get(txIdHex) ?? 0) + 1;
  f.seen.set(txIdHex, n);
  if (mode.kind === 'error') return { status: mode.status, body: { error: { code: mode.code, message: `test ${mode.code}`, extraField: 7, ...(mode.code === 'payment_refunded' ? { refundTxId: 'ef'.repeat(32) } : {}) } } };
  if (mode.kind === 'never' || (mode.kind === 'pending' && n <= mode.n)) {
    return { status: 202, body: { paid: false, status: 'payment_pending', txId: txIdHex, retryAfter: 2 } };
  }
  if (mode.kind === 'busy' && n <= mode.n) return { status: 409, body: { error: { code: 'settlement_in_progress', message: 'busy' } } };
  if (mode.kind === 'syncing' && n <= mode.n) return { status: 503, body: { error: { code: 'node_syncing', message: 'catching up' } } };
  if (mode.kind === 'drop' && n <= mode.n) return 'drop';
  const final =
    mode.kind === 'refund'
      ? { status: 502, body: { paid: true, refunded: true, refundTxId: 'ab'.repeat(32), error: { code: 'service_failed', message: 'upstream down' } } }
      : mode.kind === 'refundPending'
      ? { status: 502, body: { paid: true, refunded: false, refund: 'pending', reason: 'the fleet’s signing node sends it', refundTxId: null, error: { code: 'service_failed', message: 'upstream down' } } }
      : {
          status: 200,
          body: {
            paid: true,
            result: { serviceId, echo: request ?? null },
            receipt: { serviceId, caller: agentAddr, amount: 0.002, amountBase: PRICE.toString(), txId: txIdHex, blockHash: 'cd'.repeat(32), height: 12, network: 'native-devnet' },
          },
        };
  f.stored.set(txIdHex, final);
  return final;
}

async function handle(f: Fake, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', f.url);
  if (req.method === 'GET' && url.pathname === '/api/v1/status') {
    return send(res, 200, { network: 'native-devnet', chainId: f.chainId, hrp: HRP, height: 11, minFeeRate: f.minFeeRate });
  }
  if (req.method === 'GET' && url.pathname.startsWith('/api/v1/account/')) {
    const addr = decodeURIComponent(url.pathname.slice('/api/v1/account/'.length));
    if (addr !== agentAddr) return send(res, 200, { address: addr, balance: '0', balanceBase: '0', nonce: 0, pendingNonce: 0, publicKeyKnown: false });
    return send(res, 200, { address: addr, balance: 'x', nonce: f.account.pendingNonce, ...f.account });
  }
  const body = await readBody(req);
  if (req.method === 'POST' && url.pathname === '/api/v1/tx') {
    if (f.broadcastError && f.minedOnRefusal) {
      const bytes = fromHex(String(body.tx));
      const tx = decodeTx(bytes);
      const id = toHex(computeTxId(bytes));
      if (!f.txs.some((t) => t.id === id)) f.txs.push({ id, tx, payload: agentInvoke.decodePayload(tx.payload), size: bytes.length });
    }
    if (f.broadcastError) return send(res, f.broadcastError.status, { error: { code: f.broadcastError.code, message: 'refused by the test' } });
    const bytes = fromHex(String(body.tx));
    const tx = decodeTx(bytes);
    const id = toHex(computeTxId(bytes));
    f.broadcasts?.push(String(body.tx));
    if (f.dropBroadcast) {
      f.dropBroadcast--;
      req.socket.destroy();
      return;
    }
    if (f.lose) {
      f.lose--;
      return send(res, 200, { txId: id, status: 'accepted' });
    }
    if (f.txs.some((t) => t.id === id)) return send(res, 409, { error: { code: 'mempool_duplicate', message: 'already in the mempool' } });
    f.txs.push({ id, tx, payload: agentInvoke.decodePayload(tx.payload), size: bytes.length });
    f.account.pendingNonce += 1;
    return send(res, 200, { txId: id, status: 'accepted' });
  }
  const m = /^\/api\/x402\/([^/]+)$/.exec(url.pathname);
  if (req.method === 'POST' && m) {
    const serviceId = decodeURIComponent(m[1]);
    const request = typeof body.request === 'string' ? body.request : undefined;
    const payment = body.payment as { txId?: unknown; salt?: unknown } | undefined;
    if (!KNOWN.has(serviceId)) return send(res, 404, { error: { code: 'unknown_service', message: `no service ${serviceId}` } });
    if (serviceId === 'native-slow') return send(res, 503, { error: { code: 'service_unavailable', message: 'down' } });
    if (request === 'bad input') return send(res, 400, { error: { code: 'invalid_request', message: 'request must be an IANA zone' } });
    if (!payment) {
      f.quotes.push({ path: url.pathname + url.search, body });
      const q = {
        x402: true,
        x402Version: 1,
        error: 'Payment Required',
        accepts: [
          { scheme: 'exact', network: 'base', maxAmountRequired: '2000', payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' },
          nativeOption(f, serviceId, request),
        ],
      };
      return send(res, 402, f.quoteHook ? f.quoteHook(q) : q);
    }
    f.settles.push({ path: url.pathname + url.search, body });
    const a = settleAnswer(f, serviceId, request, String(payment.txId), payment.salt);
    if (a === 'drop') {
      req.socket.destroy();
      return;
    }
    return send(res, a.status, a.body);
  }
  send(res, 404, { error: { code: 'not_found', message: 'no route' } });
}

let fake: Fake;

function reset(): void {
  Object.assign(fake, {
    txs: [],
    settles: [],
    quotes: [],
    account: { pendingNonce: 0, publicKeyKnown: false, balanceBase: (1000n * 100_000_000n).toString() },
    minFeeRate: '1',
    chainId: CHAIN_ID,
    modes: new Map<string, SettleMode>([
      ['native-fails', { kind: 'refund' }],
      ['native-fails-owed', { kind: 'refundPending' }],
      ['native-busy', { kind: 'busy', n: 2 }],
      ['native-flaky', { kind: 'drop', n: 1 }],
      ['native-never', { kind: 'never' }],
      ['native-syncing', { kind: 'syncing', n: 1 }],
    ]),
    seen: new Map(),
    stored: new Map(),
    quoteHook: undefined,
    broadcastError: undefined,
    lose: 0,
    dropBroadcast: 0,
    broadcasts: [],
  });
}

beforeAll(async () => {
  const server = createServer((req, res) => void handle(fake, req, res).catch((e) => send(res, 500, { error: { code: 'internal_error', message: String(e) } })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } as Fake;
  reset();
});
beforeEach(reset);
afterAll(async () => {
  fake.server.closeAllConnections();
  await new Promise((r) => fake.server.close(r));
});

/** A client with a fake clock: sleeping advances it instantly, so time bounds are tested exactly. */
function client(): { c: AgentClient; sleeps: number[]; clock: { t: number } } {
  const clock = { t: 1_700_000_000_000 };
  const sleeps: number[] = [];
  const c = createAgentClient({
    nodeUrl: `${fake.url}/`,
    key: agent,
    now: () => clock.t,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.t += ms;
    },
  });
  return { c, sleeps, clock };
}

async function codeOf(p: Promise<unknown>): Promise<{ code: string; payload: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    if (isAgentClientError(e)) return { code: e.code, payload: { ...e.payload } };
    throw e;
  }
  throw new Error('expected a coded error');
}

describe('quote', () => {
  test('parses the native option of the 402 and ignores the USDC one for paying', async () => {
    const { c } = client();
    const q = await c.quote('native-world-clock', 'Europe/Berlin');
    expect(q).toMatchObject({
      serviceId: 'native-world-clock',
      request: 'Europe/Berlin',
      amount: PRICE,
      priceNative: '0.002',
      priceAman: 0.002,
      payTo: providerAddr,
      network: 'native-devnet',
      chainId: CHAIN_ID,
      sellerId: SELLER,
      confirmations: 1,
      endpoint: `${fake.url}/api/x402/native-world-clock`,
      usdc: { maxAmountRequired: '2000', network: 'base' },
    });
    expect(q.salt).toMatch(/^[0-9a-f]{64}$/);
    expect(q.requestHash).toBe(requestCommitment({ sellerId: SELLER, serviceId: 'native-world-clock', request: 'Europe/Berlin', salt: q.salt }));
    // A fresh secret for every quote.
    expect((await c.quote('native-world-clock', 'Europe/Berlin')).salt).not.toBe(q.salt);
    expect(q.requirement.scheme).toBe('native-x402');
    expect(q.requirement.extra.broadcast).toBe('/api/v1/tx');
    expect(fake.quotes[0]).toEqual({ path: '/api/x402/native-world-clock', body: { request: 'Europe/Berlin' } });
  });

  test('without a request: empty body, the payment commits to the empty request', async () => {
    const { c } = client();
    const q = await c.quote('native-world-clock');
    expect(q.request).toBeUndefined();
    expect(q.requestHash).toBe(requestCommitment({ sellerId: SELLER, serviceId: 'native-world-clock', request: '', salt: q.salt }));
    expect(fake.quotes[0].body).toEqual({});
  });

  test.each([
    [400, 'invalid_request', 'native-world-clock', 'bad input'],
    [404, 'unknown_service', 'native-nope', 'x'],
    [503, 'service_unavailable', 'native-slow', 'x'],
  ])('%d %s before any quote keeps the server code and status', async (status, code, serviceId, request) => {
    const { c } = client();
    const e = await codeOf(c.quote(serviceId, request));
    expect(e.code).toBe(code);
    expect(e.payload.status).toBe(status);
  });

  test('no native option → no_native_option', async () => {
    fake.quoteHook = (b) => ({ ...b, accepts: (b.accepts as Record<string, unknown>[]).filter((o) => o.scheme !== 'native-x402') });
    expect((await codeOf(client().c.quote('native-world-clock', 'UTC'))).code).toBe(AgentErrorCode.NO_NATIVE_OPTION);
  });

  test.each<[string, (o: Record<string, unknown>, extra: Record<string, unknown>) => void]>([
    ['a quote for another service', (_o, x) => (x.serviceId = 'native-weather')],
    ['another commitment scheme', (_o, x) => (x.commitment = 'native-x402/request-commitment/v0')],
    ['no seller id', (_o, x) => delete x.sellerId],
    ['a seller id that is not 16 hex characters', (_o, x) => (x.sellerId = 'ABCDEF')],
    ['a float amount', (o) => (o.maxAmountRequired = '0.002')],
    ['a zero amount', (o) => (o.maxAmountRequired = '0')],
    ['priceNative disagreeing with maxAmountRequired', (_o, x) => (x.priceNative = '0.02')],
    ['another asset', (o) => (o.asset = 'USDC')],
    ['another tx type', (_o, x) => (x.txType = 'transfer')],
  ])('%s → bad_quote', async (_name, mutate) => {
    fake.quoteHook = (b) => {
      const o = (b.accepts as Record<string, unknown>[]).find((a) => a.scheme === 'native-x402')!;
      mutate(o, o.extra as Record<string, unknown>);
      return b;
    };
    expect((await codeOf(client().c.quote('native-world-clock', 'UTC'))).code).toBe(AgentErrorCode.BAD_QUOTE);
  });

  test('an accepts that is not an array → bad_quote; a bad service id never leaves the client', async () => {
    fake.quoteHook = () => ({ x402: true, accepts: 'nope' });
    expect((await codeOf(client().c.quote('native-world-clock', 'UTC'))).code).toBe(AgentErrorCode.BAD_QUOTE);
    expect((await codeOf(client().c.quote('../api/v1/tx'))).code).toBe(AgentErrorCode.INVALID_ARGUMENT);
    expect(fake.quotes).toHaveLength(1);
  });

  test('parseQuote is usable on its own (endpoint 1 bodies, other transports)', () => {
    const body = { x402: true, x402Version: 1, error: 'Payment Required', accepts: [nativeOption(fake, 'native-world-clock', 'UTC')] };
    const q = parseQuote(body, 'native-world-clock', 'UTC', 'http://x/api/x402/native-world-clock', 0);
    expect(q.amount).toBe(PRICE);
    expect(q.validUntil).toBe(300_000);
  });

  test('usdcBinding: the EIP-3009 nonce that binds a USDC authorization to the quote\'s seller, service and request, and the salt extension', () => {
    const usdcOption = { scheme: 'exact', network: 'base', maxAmountRequired: '2000', payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', extra: { name: 'USD Coin', version: '2', sellerId: SELLER, commitment: 'native-x402/usdc-commitment/v1' } };
    const body = { x402: true, x402Version: 1, error: 'Payment Required', accepts: [nativeOption(fake, 'native-world-clock', 'UTC'), usdcOption] };
    const q = parseQuote(body, 'native-world-clock', 'UTC', 'http://x/api/x402/native-world-clock', 0);
    expect(q.usdc).toMatchObject({ sellerId: SELLER, commitment: 'native-x402/usdc-commitment/v1' });
    const salt = 'ab'.repeat(32);
    const bound = usdcBinding(q, salt)!;
    expect(bound.nonce).toBe(usdcCommitmentNonce({ sellerId: SELLER, serviceId: 'native-world-clock', request: 'UTC', salt }));
    expect(sellerOfNonce(bound.nonce)).toBe(SELLER);
    expect(bound.extensions).toEqual({ 'request-commitment': { info: { scheme: 'native-x402/usdc-commitment/v1', salt } } });
    // A fresh salt each time; none without a seller in the option.
    expect(usdcBinding(q)!.nonce).not.toBe(usdcBinding(q)!.nonce);
    const unnamed = parseQuote({ ...body, accepts: [body.accepts[0], { ...usdcOption, extra: { name: 'USD Coin', version: '2' } }] }, 'native-world-clock', 'UTC', 'http://x/api/x402/native-world-clock', 0);
    expect(usdcBinding(unnamed)).toBeUndefined();
  });
});

describe('call', () => {
  test('pays exactly the quote (amount, payTo, serviceId, requestHash, nonce, key, fee) and returns result and receipt', async () => {
    const { c } = client();
    const events: AgentEvent['type'][] = [];
    const r = await c.call('native-world-clock', 'Europe/Berlin', { onEvent: (e) => events.push(e.type) });
    expect(fake.txs).toHaveLength(1);
    const [{ tx, payload, id, size }] = fake.txs;
    expect(tx.type).toBe(TxType.agent_invoke);
    expect(tx.chainId).toBe(CHAIN_ID);
    expect(tx.nonce).toBe(0n);
    expect(tx.publicKey).toBeDefined(); // the chain does not know the key yet
    expect(tx.fee).toBe(BigInt(size)); // minFeeRate 1 × signed size, exactly
    expect(payload.serviceId).toBe('native-world-clock');
    expect(payload.amount).toBe(PRICE);
    expect(encodeAddress(payload.payTo, HRP)).toBe(providerAddr);
    expect(toHex(payload.requestHash!)).toBe(requestCommitment({ sellerId: SELLER, serviceId: 'native-world-clock', request: 'Europe/Berlin', salt: r.salt }));
    expect(r.txId).toBe(id);
    expect(r.feeBase).toBe(tx.fee);
    expect(r.result).toEqual({ serviceId: 'native-world-clock', echo: 'Europe/Berlin' });
    expect(r.receipt).toEqual({ serviceId: 'native-world-clock', caller: agentAddr, amount: 0.002, amountBase: '200000', txId: id, blockHash: 'cd'.repeat(32), height: 12, network: 'native-devnet' });
    expect(fake.settles).toEqual([{ path: '/api/x402/native-world-clock?wait=10', body: { request: 'Europe/Berlin', payment: { txId: id, salt: r.salt } } }]);
    expect(events).toEqual(['quoted', 'paid']);
  });

  test('a known key is not carried again; the fee follows minFeeRate × signed size', async () => {
    Object.assign(fake.account, { pendingNonce: 5, publicKeyKnown: true });
    fake.minFeeRate = '3';
    await client().c.call('native-world-clock');
    const [{ tx, payload, size }] = fake.txs;
    expect(tx.publicKey).toBeUndefined();
    expect(tx.nonce).toBe(5n);
    expect(payload.requestHash).toBeDefined(); // a commitment to the empty request, never none
    expect(size).toBe(signedSize(tx));
    expect(tx.fee).toBe(3n * BigInt(size));
  });

  test('concurrent calls of one client use consecutive nonces', async () => {
    Object.assign(fake.account, { publicKeyKnown: true });
    const { c } = client();
    // The fake counts a broadcast in pendingNonce; make it lag so only the client's own count helps.
    const realAccount = fake.account;
    let frozen = 0;
    Object.defineProperty(fake, 'account', { configurable: true, get: () => ({ ...realAccount, pendingNonce: frozen }), set: () => undefined });
    try {
      const rs = await Promise.all([c.call('native-world-clock', 'UTC'), c.call('native-world-clock', 'Asia/Tokyo'), c.call('native-world-clock', 'Europe/Paris')]);
      expect(new Set(rs.map((r) => r.txId)).size).toBe(3);
      expect(fake.txs.map((t) => t.tx.nonce)).toEqual([0n, 1n, 2n]);
      frozen = 7; // the node knows more than the client (another wallet user): the node wins
      await c.call('native-world-clock', 'UTC');
      expect(fake.txs[3].tx.nonce).toBe(7n);
    } finally {
      Object.defineProperty(fake, 'account', { configurable: true, writable: true, value: realAccount });
    }
  });

  test('price_above_limit before paying: nothing broadcast', async () => {
    const e = await codeOf(client().c.call('native-world-clock', 'UTC', { maxPriceBase: PRICE - 1n }));
    expect(e.code).toBe(AgentErrorCode.PRICE_ABOVE_LIMIT);
    expect(e.payload).toMatchObject({ priceBase: '200000', limitBase: '199999', serviceId: 'native-world-clock' });
    expect(fake.txs).toHaveLength(0);
    // At the limit exactly it pays.
    await client().c.call('native-world-clock', 'UTC', { maxPriceBase: PRICE });
    expect(fake.txs).toHaveLength(1);
  });

  test('a pending payment (202) is settled again after retryAfter until it is mined', async () => {
    fake.modes.set('native-world-clock', { kind: 'pending', n: 2 });
    const { c, sleeps } = client();
    const pending: number[] = [];
    const r = await c.call('native-world-clock', 'UTC', { onEvent: (e) => e.type === 'pending' && pending.push(e.retryAfter) });
    expect(r.receipt.txId).toBe(fake.txs[0].id);
    expect(fake.settles).toHaveLength(3);
    expect(new Set(fake.settles.map((s) => JSON.stringify(s)))).toEqual(new Set([JSON.stringify(fake.settles[0])])); // the same settle each time
    expect(pending).toEqual([2, 2]);
    expect(sleeps).toEqual([2000, 2000]);
  });

  test('never mined within the budget → settle_timeout carrying the tx id; the loop is bounded', async () => {
    const { c, clock } = client();
    const start = clock.t;
    const e = await codeOf(c.call('native-never', 'UTC', { timeoutMs: 9_000, waitSeconds: 3 }));
    expect(e.code).toBe(AgentErrorCode.SETTLE_TIMEOUT);
    expect(e.payload.txId).toBe(fake.txs[0].id);
    expect(clock.t - start).toBeLessThanOrEqual(9_000);
    expect(fake.settles.length).toBeGreaterThanOrEqual(4);
    expect(fake.settles.length).toBeLessThanOrEqual(6);
    expect(fake.settles[0].path).toBe('/api/x402/native-never?wait=3');
    // The same payment settles later with the same tx id (no second payment).
    fake.modes.set('native-never', { kind: 'ok' });
    const q = await c.quote('native-never', 'UTC');
    const r = await c.settle(q, String(e.payload.txId));
    expect(r.receipt.txId).toBe(e.payload.txId);
    expect(r.feeBase).toBe(0n);
    expect(fake.txs).toHaveLength(1);
  });

  test('502 refund → service_refunded with refundTxId and the cause', async () => {
    const e = await codeOf(client().c.call('native-fails', 'UTC'));
    expect(e.code).toBe(AgentErrorCode.SERVICE_REFUNDED);
    expect(e.payload).toMatchObject({ status: 502, txId: fake.txs[0].id, refundTxId: 'ab'.repeat(32), cause: { code: 'service_failed', message: 'upstream down' } });
  });

  test('502 with the refund owed and not sent yet (refund: "pending") → service_refunded with refundPending, no refundTxId, and the cause', async () => {
    const e = await codeOf(client().c.call('native-fails-owed', 'UTC'));
    expect(e.code).toBe(AgentErrorCode.SERVICE_REFUNDED);
    expect(e.payload).toMatchObject({ status: 502, txId: fake.txs[0].id, refundPending: true, cause: { code: 'service_failed', message: 'upstream down' } });
    expect(e.payload.refundTxId).toBeUndefined();
  });

  test('settlement_in_progress (409) and node_syncing (503) are waited out; a dropped connection is retried with the same tx id', async () => {
    const busy = await client().c.call('native-busy', 'UTC');
    expect(busy.receipt.serviceId).toBe('native-busy');
    expect(fake.settles).toHaveLength(3);
    const flaky = await client().c.call('native-flaky', 'UTC');
    expect(flaky.receipt.serviceId).toBe('native-flaky');
    const { c, sleeps } = client();
    const syncing = await c.call('native-syncing', 'UTC');
    expect(syncing.receipt.serviceId).toBe('native-syncing');
    expect(sleeps).toEqual([2000]);
    expect(fake.txs).toHaveLength(3); // one payment each, whatever the retries
  });

  test('a repeated settle of a settled payment returns the same stored answer', async () => {
    const { c } = client();
    const r1 = await c.call('native-world-clock', 'UTC');
    const r2 = await c.settle(r1.quote, r1.txId);
    expect(r2.receipt).toEqual(r1.receipt);
    expect(r2.result).toEqual(r1.result);
    expect(fake.txs).toHaveLength(1);
  });

  test.each([
    [409, 'payment_already_used'],
    [402, 'amount_mismatch'],
    [402, 'request_mismatch'],
    [402, 'wrong_service'],
    [402, 'wrong_payee'],
    [402, 'payment_not_invoke'],
    [400, 'invalid_payment'],
  ])('settle answered %d %s → that code, with the tx id and the extra fields', async (status, code) => {
    fake.modes.set('native-world-clock', { kind: 'error', status, code });
    const e = await codeOf(client().c.call('native-world-clock', 'UTC'));
    expect(e.code).toBe(code);
    expect(e.payload).toMatchObject({ status, txId: fake.txs[0].id, details: { extraField: 7 } });
  });

  test('settling an unknown tx → payment_not_found (404)', async () => {
    const { c } = client();
    const q = await c.quote('native-world-clock', 'UTC');
    const e = await codeOf(c.settle(q, '00'.repeat(32)));
    expect(e).toMatchObject({ code: 'payment_not_found', payload: { status: 404 } });
    expect((await codeOf(c.settle(q, 'not-a-tx-id'))).code).toBe(AgentErrorCode.INVALID_ARGUMENT);
  });

  test('insufficient_funds and chain_mismatch are refused before broadcasting; a refused broadcast keeps the node code', async () => {
    fake.account.balanceBase = (PRICE + 100n).toString();
    expect((await codeOf(client().c.call('native-world-clock', 'UTC'))).code).toBe(AgentErrorCode.INSUFFICIENT_FUNDS);
    reset();
    fake.quoteHook = (b) => {
      ((b.accepts as Record<string, unknown>[])[1].extra as Record<string, unknown>).chainId = 1;
      return b;
    };
    expect((await codeOf(client().c.call('native-world-clock', 'UTC'))).code).toBe(AgentErrorCode.CHAIN_MISMATCH);
    reset();
    fake.broadcastError = { status: 422, code: 'tx_bad_nonce' };
    expect(await codeOf(client().c.call('native-world-clock', 'UTC'))).toMatchObject({ code: 'tx_bad_nonce', payload: { status: 422 } });
    expect(fake.txs).toHaveLength(0);
    expect(fake.settles).toHaveLength(0);
  });

  test('an expired quote is not paid', async () => {
    const { c, clock } = client();
    const q = await c.quote('native-world-clock', 'UTC');
    clock.t += 301_000;
    expect((await codeOf(c.pay(q))).code).toBe(AgentErrorCode.BAD_QUOTE);
    expect(fake.txs).toHaveLength(0);
  });

  test('an unreachable node → node_unreachable', async () => {
    const c = createAgentClient({ nodeUrl: 'http://127.0.0.1:9', key: agent });
    expect((await codeOf(c.quote('native-world-clock'))).code).toBe(AgentErrorCode.UNREACHABLE);
  });
});

describe('payments the node lost (re-broadcast)', () => {
  test('a settle answered payment_not_found broadcasts the same signed payment again and completes', async () => {
    const { c } = client();
    fake.lose = 1;
    const events: AgentEvent[] = [];
    const r = await c.call('native-world-clock', 'UTC', { onEvent: (e) => events.push(e) });
    expect(r.result).toEqual({ serviceId: 'native-world-clock', echo: 'UTC' });
    // Two broadcasts of the very same bytes: one payment, one tx id.
    expect(fake.broadcasts).toHaveLength(2);
    expect(fake.broadcasts![0]).toBe(fake.broadcasts![1]);
    expect(fake.txs.map((t) => t.id)).toEqual([r.txId]);
    expect(events.filter((e) => e.type === 'rebroadcast')).toEqual([{ type: 'rebroadcast', txId: r.txId }]);
  });

  test('with a file store, a later process without the key settles --tx style and broadcasts the stored payment', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'native-pending-'));
    try {
      const store = createFilePaymentStore(dir);
      const payer = createAgentClient({ nodeUrl: fake.url, key: agent, pendingPayments: store });
      const q = await payer.quote('native-world-clock', 'UTC');
      fake.lose = 1;
      const txId = await payer.pay(q);
      expect((await store.list()).map((p) => p.txId)).toEqual([txId]);
      const later = createAgentClient({ nodeUrl: fake.url, pendingPayments: createFilePaymentStore(dir) });
      const r = await later.settle(await later.quote('native-world-clock', 'UTC'), txId, { timeoutMs: 5_000 });
      expect(r.receipt.txId).toBe(txId);
      expect(await store.list()).toEqual([]); // mined and settled: nothing kept
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a payment whose broadcast again is refused ends as payment_not_found with the refusal; nothing is paid anew', async () => {
    const { c } = client();
    const q = await c.quote('native-world-clock', 'UTC');
    fake.lose = 1;
    const txId = await c.pay(q);
    fake.broadcastError = { status: 422, code: 'tx_bad_nonce' };
    const e = await codeOf(c.settle(q, txId, { timeoutMs: 5_000 }));
    expect(e).toMatchObject({ code: 'payment_not_found', payload: { txId, details: { rebroadcast: { code: 'tx_bad_nonce' } } } });
    expect(fake.txs).toHaveLength(0);
    // Forgotten: a second settle does not broadcast it again.
    fake.broadcastError = undefined;
    expect((await codeOf(c.settle(q, txId, { timeoutMs: 5_000 }))).code).toBe('payment_not_found');
    expect(fake.broadcasts).toHaveLength(1);
  });

  test('a payment mined between the node\'s payment_not_found and the broadcast again (nonce used) is looked for again, not reported lost', async () => {
    const { c } = client();
    const q = await c.quote('native-world-clock', 'UTC');
    fake.lose = 1;
    const txId = await c.pay(q);
    fake.broadcastError = { status: 422, code: 'tx_bad_nonce' };
    fake.minedOnRefusal = true;
    const r = await c.settle(q, txId, { timeoutMs: 10_000 });
    expect(r.txId).toBe(txId);
    expect(r.result).toEqual({ serviceId: 'native-world-clock', echo: 'UTC' });
  });

  test('a lost earlier payment is broadcast again before a new one, so nonces have no gap', async () => {
    const { c } = client();
    const q1 = await c.quote('native-world-clock', 'a');
    fake.lose = 1;
    const first = await c.pay(q1);
    const second = await c.call('native-world-clock', 'b');
    expect(fake.txs.map((t) => [t.id, t.tx.nonce])).toEqual([
      [first, 0n],
      [second.txId, 1n],
    ]);
    expect((await c.settle(q1, first)).receipt.txId).toBe(first);
  });

  test('a payment accepted at a nonce forgets the stored one it took the place of (an answer lost with the payment), so it is never broadcast again in its place', async () => {
    const store = createMemoryPaymentStore();
    const c = createAgentClient({ nodeUrl: fake.url, key: agent, pendingPayments: store, requestTimeoutMs: 2_000 });
    const q = await c.quote('native-world-clock', 'a');
    fake.dropBroadcast = 1;
    await expect(c.pay(q)).rejects.toBeDefined();
    const [lost] = await store.list();
    expect(lost.nonce).toBe('0');
    const second = await c.pay(await c.quote('native-world-clock', 'b'));
    expect(fake.txs.map((t) => [t.id, t.tx.nonce])).toEqual([[second, 0n]]);
    // Only the payment the node took at nonce 0 is kept: the lost one, broadcast again before it
    // by a later settle, would have taken its nonce.
    expect((await store.list()).map((p) => p.txId)).toEqual([second]);
  });

  test('payment_refunded carries refundTxId in the payload, and the payment is no longer kept', async () => {
    fake.modes.set('native-world-clock', { kind: 'error', status: 409, code: 'payment_refunded' });
    const store = createMemoryPaymentStore();
    const c = createAgentClient({ nodeUrl: fake.url, key: agent, pendingPayments: store });
    const e = await codeOf(c.call('native-world-clock', 'UTC'));
    expect(e).toMatchObject({ code: 'payment_refunded', payload: { status: 409, refundTxId: 'ef'.repeat(32), txId: fake.txs[0].id } });
    expect(await store.list()).toEqual([]);
  });
});
