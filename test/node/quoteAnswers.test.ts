/**
 * The kept 402 answers of plain quotes (node/api/quoteAnswers.ts) against fresh ones: over HTTP
 * in-process, a router that keeps its answers and a reference router whose every call goes
 * through a new paid-call core (nothing kept anywhere: no quote memo, no rendering kept) answer
 * the same calls at the same injected time, byte for byte (status, every header but Date, in
 * order, body), for several services, requests, option choices and base URLs; across
 * milliseconds, seconds, a change of the NATIVE price, of a service's price, of the offer window
 * and of the base URL, a kept answer is never served stale. The kept answers stay within their
 * limits and the counters count.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { ChainReader, MempoolReader } from '../../chain/types.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevPayeeKeyPair } from '../../consensus/devnet.js';
import { createHttpServer, type HttpServer, type TxSubmitter } from '../../node/api/http.js';
import { PaymentAuth } from '../../node/api/paymentDialects.js';
import { QuoteAnswers } from '../../node/api/quoteAnswers.js';
import { createX402Router } from '../../node/api/x402Routes.js';
import type { ServiceDefinition } from '../../services/types.js';
import { PAYMENT_HTTP_STATUS } from '../../x402/core/errors.js';
import { createOfferSigner, createSellerIdentity, OFFER_WINDOW_SECONDS } from '../../x402/core/offers.js';
import { createPaidCallCore, decorateCall, type PaidCallModules } from '../../x402/core/paidCall.js';
import type { NativeRail, ServiceCatalog, UsdcRail } from '../../x402/core/ports.js';
import { SiwxChallenges } from '../../x402/usdc/siwx.js';
import { stubService } from '../helpers/stubService.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff });
const SELLER = '0123456789abcdef';
const USDC_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
// A time inside an offer window, away from its ends: 2026-11-28 12:00:00.250 UTC.
const T0 = Date.UTC(2026, 10, 28, 12, 0, 0, 250);

let now = T0;
let microUsd = 2_000n;
let baseUrl = 'http://127.0.0.1:8402';
const services = new Map<string, ServiceDefinition>([
  ['native-echo', stubService('native-echo', async (_c, i) => ({ echo: i }))],
  ['native-cheap', stubService('native-cheap', async () => ({}), 1_000n)],
  ['native-json', { ...stubService('native-json', async () => ({}), 50_000n), inputIsJson: true, inputSchema: { type: 'object' } }],
]);
const catalog: ServiceCatalog = { get: (id) => services.get(id), validateInput: (_d, request) => ({ ok: true, input: request }), isAvailable: () => true };
const native: NativeRail = { payTo: encodeAddress(getDevPayeeKeyPair().address, params.hrp), sellerId: SELLER, requiredConfirmations: 1, settle: () => Promise.reject(new Error('no payments here')) };
const usdc: UsdcRail = { payTo: USDC_PAY_TO, settle: () => Promise.reject(new Error('no payments here')) };
const offers = createOfferSigner(createSellerIdentity({ payee: getDevPayeeKeyPair(), hrp: params.hrp, chainId: params.chainId, sellerId: SELLER }), () => now);
const modules = (withUsdc: boolean): PaidCallModules => ({ catalog, native, usdc: withUsdc ? usdc : undefined, params, nativeUsd: { get: () => ({ microUsd, source: 'test', live: false }) }, requestBudgetMs: 10_000, offers });
const auth = new PaymentAuth(new Uint8Array(32).fill(7));
const siwx = new SiwxChallenges(new Uint8Array(32).fill(9));

const chainStub = {} as unknown as ChainReader;
const mempoolStub = {} as unknown as MempoolReader & TxSubmitter;
const servers: HttpServer[] = [];
async function serve(router: ReturnType<typeof createX402Router>): Promise<HttpServer> {
  const s = createHttpServer({ host: '127.0.0.1', port: 0, bodyLimit: 64 * 1024, timeoutMs: 10_000, version: 'test' }, { chain: chainStub, mempool: mempoolStub, params, routers: [router], errorStatuses: PAYMENT_HTTP_STATUS });
  await s.start();
  servers.push(s);
  return s;
}

interface Raw {
  readonly status: number;
  /** Every header but Date, in the order sent. */
  readonly headers: readonly string[];
  readonly body: string;
}

/** One POST, read raw: status, headers in order (without Date), body. */
function post(server: HttpServer, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Raw> {
  const data = JSON.stringify(body);
  const url = new URL(server.url + path);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i].toLowerCase() !== 'date') h.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        resolve({ status: res.statusCode!, headers: h, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** A kept-answers server and its fresh reference, for the USDC rail on or off. */
interface Pair {
  readonly kept: HttpServer;
  readonly fresh: HttpServer;
  readonly answers: QuoteAnswers;
}
async function pair(withUsdc: boolean, answers = new QuoteAnswers(auth, siwx)): Promise<Pair> {
  const core = createPaidCallCore(modules(withUsdc));
  const kept = await serve(createX402Router(core, auth, siwx, () => baseUrl, { answers, now: () => now }));
  // Every call through a core of its own: no quote memo, and no rendering kept.
  const freshCore = decorateCall(core, (c) => createPaidCallCore(modules(withUsdc)).call(c));
  const fresh = await serve(createX402Router(freshCore, auth, siwx, () => baseUrl, { answers: null, now: () => now }));
  return { kept, fresh, answers };
}

type Call = readonly [path: string, body: unknown, headers?: Record<string, string>];
const CALLS: readonly Call[] = [
  ['/api/x402/native-echo', { request: 'Europe/Berlin' }],
  ['/api/x402/native-echo', { request: 'Asia/Tokyo' }],
  ['/api/x402/native-echo', { request: '' }],
  ['/api/x402/native-echo', {}],
  ['/api/x402/native-echo', { request: 'Zürich, ünïcödé ✓' }],
  ['/api/x402/native-echo', { request: 'x'.repeat(3000) }],
  // Each length modulo 3 before the sign-in declaration (the kept base64 pieces are cut at 3 bytes).
  ['/api/x402/native-echo', { request: 'a' }],
  ['/api/x402/native-echo', { request: 'ab' }],
  ['/api/x402/native-echo', { request: 'abc' }],
  ['/api/x402/native-echo?rail=usdc', { request: 'Europe/Berlin' }],
  ['/api/x402/native-echo', { request: 'Europe/Berlin' }, { prefer: 'rail=usdc' }],
  ['/api/x402', { serviceId: 'native-cheap', request: 'UTC' }],
  ['/api/x402/native-json', { request: { a: 1, b: [true, null] } }],
  ['/api/x402/native-json', { request: '{"a":1}' }],
];

/** Each call twice on the kept server (the second from the kept answer) and once fresh: all three the same. */
async function expectSame(p: Pair, calls: readonly Call[] = CALLS): Promise<Raw[]> {
  const out: Raw[] = [];
  for (const c of calls) {
    const first = await post(p.kept, ...c);
    const again = await post(p.kept, ...c);
    const fresh = await post(p.fresh, ...c);
    expect(first.status).toBe(402);
    expect(first).toEqual(fresh);
    expect(again).toEqual(fresh);
    out.push(fresh);
  }
  return out;
}

let withRail: Pair;
let withoutRail: Pair;
beforeAll(async () => {
  withRail = await pair(true);
  withoutRail = await pair(false);
});
afterAll(async () => {
  for (const s of servers) await s.stop();
});

describe('kept 402 answers', () => {
  test('are byte for byte the fresh answers, for every service, request, option choice and base URL, with the USDC rail on and off', async () => {
    for (const url of ['http://127.0.0.1:8402', 'https://node.example', 'http://[::1]:9000/sub']) {
      baseUrl = url;
      now += 1;
      const answers = await expectSame(withRail);
      expect(answers[0].headers.some((h) => h.startsWith('PAYMENT-REQUIRED: '))).toBe(true);
      expect(answers[0].headers.filter((h) => h.startsWith('WWW-Authenticate: Payment ')).length).toBe(2);
      expect(answers[0].body).toContain(`"resource":"${url}/api/x402/native-echo"`);
      await expectSame(withoutRail);
    }
    const s = withRail.answers.stats();
    // Every call but the one too large to keep hit once per round; the first of each round missed.
    expect(s.hits).toBeGreaterThanOrEqual(3 * (CALLS.length - 1));
    expect(s.misses).toBeGreaterThanOrEqual(3 * CALLS.length);
    expect(s.entries).toBeGreaterThan(0);
  });

  test('follow the time: the sign-in declaration per millisecond, the challenges per second', async () => {
    baseUrl = 'http://127.0.0.1:8402';
    const calls = CALLS.slice(0, 2);
    let last = await expectSame(withRail, calls);
    for (const step of [1, 1, 998, 1, 1000, 61_000]) {
      now += step;
      const next = await expectSame(withRail, calls);
      // The sign-in declaration names the millisecond: the header changed with the time.
      const pr = (r: Raw) => r.headers.find((h) => h.startsWith('PAYMENT-REQUIRED: '));
      expect(pr(next[0])).not.toEqual(pr(last[0]));
      last = next;
    }
  });

  test('a new NATIVE price, service price or offer window is never served stale', async () => {
    baseUrl = 'http://127.0.0.1:8402';
    const before = await expectSame(withRail);
    // The USD rate moves: the USDC amount does.
    microUsd = 4_000n;
    const dearer = await expectSame(withRail);
    expect(dearer[0].body).not.toEqual(before[0].body);
    // A service's price changes (a provider's new definition under the same id).
    const old = services.get('native-echo')!;
    services.set('native-echo', { ...old, priceBase: old.priceBase * 2n });
    const repriced = await expectSame(withRail);
    expect(repriced[0].body).toContain(`"maxAmountRequired":"${old.priceBase * 2n}"`);
    services.set('native-echo', old);
    await expectSame(withRail);
    // The next offer window: offers signed anew, valid until later.
    const offerOf = (r: Raw) => (JSON.parse(r.body) as { extensions: { 'offer-receipt': { info: { offers: { signature: string }[] } } } }).extensions['offer-receipt'].info.offers[0].signature;
    const inWindow = await expectSame(withRail);
    now += OFFER_WINDOW_SECONDS * 1000;
    const nextWindow = await expectSame(withRail);
    expect(offerOf(nextWindow[0])).not.toEqual(offerOf(inWindow[0]));
    microUsd = 2_000n;
    await expectSame(withRail);
  });

  test('services asked in turn with the same request each keep their own answer', async () => {
    baseUrl = 'http://127.0.0.1:7402';
    const turns: Call[] = [];
    for (let i = 0; i < 5; i++) turns.push(['/api/x402/native-echo', { request: 'UTC' }], ['/api/x402/native-cheap', { request: 'UTC' }], ['/api/x402/native-echo', {}], ['/api/x402/native-cheap', {}]);
    const before = withRail.answers.stats();
    for (const c of turns) expect(await post(withRail.kept, ...c)).toEqual(await post(withRail.fresh, ...c));
    const after = withRail.answers.stats();
    // The first round renders four answers; every later call is a kept one.
    expect(after.misses - before.misses).toBe(4);
    expect(after.hits - before.hits).toBe(turns.length - 4);
  });

  test('stay within their limits of entries and bytes', async () => {
    const few = new QuoteAnswers(auth, siwx, { maxEntries: 3, maxBytes: 1 << 20, maxRequestBytes: 2048 });
    const p = await pair(true, few);
    const many: Call[] = ['a', 'b', 'c', 'd', 'e'].map((r) => ['/api/x402/native-echo', { request: r }] as const);
    await expectSame(p, many);
    expect(few.stats().entries).toBe(3);
    // Room for one answer only (a little over 10 kB each with both rails).
    const small = new QuoteAnswers(auth, siwx, { maxEntries: 100, maxBytes: 20_000, maxRequestBytes: 2048 });
    const q = await pair(true, small);
    await expectSame(q, many);
    expect(small.stats().entries).toBe(1);
    expect(small.stats().bytes).toBeLessThanOrEqual(20_000);
    // Nothing kept at all: every answer rendered, still the same.
    const none = new QuoteAnswers(auth, siwx, { maxEntries: 0, maxBytes: 0, maxRequestBytes: 0 });
    await expectSame(await pair(true, none), many);
    expect(none.stats()).toEqual({ hits: 0, misses: 10, entries: 0, bytes: 0 });
  });
});
