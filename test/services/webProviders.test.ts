/**
 * native-web-search, native-domain-info and native-x402-validation as paid calls over HTTP
 * against loopback fakes speaking the providers' wire formats (fixtures written from the
 * published documentation: SearXNG `/search?format=json`, Brave Search API `web.results`, RDAP
 * JSON per RFC 9083, x402 v1 402 bodies and v2 PAYMENT-REQUIRED headers, MCP Streamable HTTP):
 * results, `down` and 503 before payment without a provider, one refund when the provider fails
 * after payment, and the validator's probes (exactly four GETs, no payment header, 6 s limit).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
// Loaded up front: jest's ESM loader fails on concurrent first dynamic imports of the SDK (the validator imports its client lazily).
import '@modelcontextprotocol/sdk/client/index.js';
import '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { domainInfo } from '../../services/domain-info.js';
import { webSearch } from '../../services/web-search.js';
import type { ServiceContext } from '../../services/types.js';
import { checkChallenge, correlate } from '../../services/web/x402Probe.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { FAKE_PUBLIC_IP, startFake, tableResolver, type Fake } from './outboundFakes.js';
import { startPaidHarness, type PaidHarness } from './paidHarness.js';

const ctxOf = (h: PaidHarness): ServiceContext => ({ ...h.context, signal: new AbortController().signal });

// ---------------------------------------------------------------- web search

/** SearXNG's JSON answer (searx/webapp.py `format=json`: query, number_of_results, results[], answers, suggestions…). */
const SEARXNG_ANSWER = {
  query: 'x402 payments',
  number_of_results: 0,
  results: [
    { url: 'https://www.x402.org/', title: 'x402 - payments over HTTP', content: 'An open standard for <b>internet-native</b> payments.', engine: 'duckduckgo', engines: ['duckduckgo', 'brave'], parsed_url: ['https', 'www.x402.org', '/', '', '', ''], score: 2.5, category: 'general', publishedDate: null, positions: [1] },
    { url: 'https://github.com/coinbase/x402', title: 'coinbase/x402', content: 'A payments protocol for the internet.', engine: 'google', engines: ['google'], score: 1.2, category: 'general', publishedDate: '2026-10-02T00:00:00', positions: [2] },
  ],
  answers: [],
  corrections: [],
  infoboxes: [],
  suggestions: ['x402 protocol'],
  unresponsive_engines: [],
};

/** Brave Search API web search answer (`type: search`, `web.results[]` with title, url, description, page_age, meta_url). */
const BRAVE_ANSWER = {
  type: 'search',
  query: { original: 'x402 payments', more_results_available: true },
  web: {
    type: 'search',
    family_friendly: true,
    results: [
      { type: 'search_result', title: 'x402 - payments over HTTP', url: 'https://www.x402.org/', description: 'An open standard for <strong>internet-native</strong> payments.', page_age: '2026-09-30T12:00:00', age: 'September 30, 2026', language: 'en', family_friendly: true, meta_url: { scheme: 'https', netloc: 'www.x402.org', hostname: 'www.x402.org', favicon: 'https://imgs.search.brave.com/x.png', path: '' } },
    ],
  },
};

describe('native-web-search', () => {
  let searx: Fake;
  let brave: Fake;
  let searxMode: 'ok' | 'error' | 'malformed' = 'ok';
  let h: PaidHarness;
  beforeAll(async () => {
    searx = await startFake((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/searxng/healthz') return res.end('OK');
      if (u.pathname !== '/searxng/search' || u.searchParams.get('format') !== 'json') return void res.writeHead(404).end();
      if (searxMode === 'error') return void res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(searxMode === 'malformed' ? '{"results": [' : JSON.stringify({ ...SEARXNG_ANSWER, query: u.searchParams.get('q') }));
    }, '127.0.0.1');
    brave = await startFake((req, res) => {
      if (req.headers['x-subscription-token'] !== 'brave-key') {
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ type: 'ErrorResponse', error: { id: 'x', status: 401, code: 'SUBSCRIPTION_TOKEN_INVALID', detail: 'The provided subscription token is invalid.' } }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(BRAVE_ANSWER));
    }, '127.0.0.1');
    h = await startPaidHarness({ resolver: tableResolver({}) });
  });
  afterAll(async () => {
    await h.close();
    await Promise.all([searx.close(), brave.close()]);
  });

  test('no provider configured: down, and 503 before any quote', async () => {
    expect(await webSearch.health!(ctxOf(h))).toEqual({ status: 'down', latencyMs: 0, reason: { code: 'provider_not_configured', message: 'no web search provider is configured on this node' } });
    const out = await h.post('/api/x402/native-web-search', { request: 'x402 payments' });
    expect(out.status).toBe(503);
    expect(out.body.error.code).toBe('service_unavailable');
    expect(out.body.accepts).toBeUndefined();
  });

  test('SearXNG: health from its /healthz, paid call returns title, URL, snippet, host, date', async () => {
    h.providers.searxngUrl = `${searx.url}/searxng`;
    const health = (await webSearch.health!(ctxOf(h))) as { status: string; latencyMs: number };
    expect(health.status).toBe('active');
    const out = await h.paidCall('native-web-search', 'x402 payments');
    expect(out.status).toBe(200);
    expect(out.body.result).toEqual({
      query: 'x402 payments',
      provider: 'searxng',
      results: [
        { title: 'x402 - payments over HTTP', url: 'https://www.x402.org/', snippet: 'An open standard for internet-native payments.', host: 'www.x402.org', date: null },
        { title: 'coinbase/x402', url: 'https://github.com/coinbase/x402', snippet: 'A payments protocol for the internet.', host: 'github.com', date: new Date('2026-10-02T00:00:00').toISOString() },
      ],
    });
    const searches = searx.requests.filter((r) => r.url?.startsWith('/searxng/search'));
    expect(searches.at(-1)!.headers['user-agent']).toBe('native-node/test');
  });

  test('the provider failing after payment: one refund, then down and 503 before payment', async () => {
    h.providers.searxngUrl = `${searx.url}/searxng`;
    // The quote is given while the provider is fine; it fails when the paid call runs.
    const quote = await h.post('/api/x402/native-web-search', { request: 'q1' });
    expect(quote.status).toBe(402);
    searxMode = 'error';
    const out = await h.paidCall('native-web-search', 'q2');
    expect(out.status).toBe(502);
    expect(out.body).toMatchObject({ paid: true, refunded: true, error: { code: 'provider_error' } });
    await h.mine();
    expect((await h.ledger.get(out.txId))?.status).toBe('refunded');
    expect(h.refunds.pendingIds()).toEqual([]);
    expect((await webSearch.health!(ctxOf(h))) as { status: string }).toMatchObject({ status: 'down' });
    const refused = await h.post('/api/x402/native-web-search', { request: 'q3' });
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 503, code: 'service_unavailable' });
    searxMode = 'ok';
  });

  test('Brave Search (key header), when no SearXNG is set', async () => {
    const b = await startPaidHarness({ resolver: tableResolver({}), providers: { braveSearchKey: 'brave-key', braveSearchUrl: `${brave.url}/res/v1/web/search` } });
    try {
      const out = await b.paidCall('native-web-search', 'x402 payments');
      expect(out.status).toBe(200);
      expect(out.body.result).toEqual({ query: 'x402 payments', provider: 'brave', results: [{ title: 'x402 - payments over HTTP', url: 'https://www.x402.org/', snippet: 'An open standard for internet-native payments.', host: 'www.x402.org', date: new Date('2026-09-30T12:00:00').toISOString() }] });
      const req = brave.requests.at(-1)!;
      expect(new URL(req.url!, 'http://x').searchParams.get('q')).toBe('x402 payments');
      // A wrong key: the provider's 401 after payment is refunded.
      b.providers.braveSearchKey = 'wrong';
      const bad = await b.paidCall('native-web-search', 'again');
      expect(bad.body).toMatchObject({ refunded: true, error: { code: 'provider_error', message: expect.stringContaining('subscription token is invalid') } });
    } finally {
      await b.close();
    }
  });

  test('a malformed provider body after payment is refunded', async () => {
    const m = await startPaidHarness({ resolver: tableResolver({}), providers: { searxngUrl: `${searx.url}/searxng` } });
    try {
      searxMode = 'malformed';
      const out = await m.paidCall('native-web-search', 'x');
      expect(out.body).toMatchObject({ refunded: true, error: { code: 'invalid_json' } });
    } finally {
      searxMode = 'ok';
      await m.close();
    }
  });
});

// ---------------------------------------------------------------- domain info (RDAP)

/** An RDAP domain object as RFC 9083 §5.3 shows it (with a registrar entity carrying a jCard). */
const RDAP_EXAMPLE = {
  rdapConformance: ['rdap_level_0', 'icann_rdap_response_profile_1', 'icann_rdap_technical_implementation_guide_1'],
  objectClassName: 'domain',
  handle: '2336799_DOMAIN_COM-VRSN',
  ldhName: 'EXAMPLE.COM',
  links: [{ value: 'https://rdap.example/domain/EXAMPLE.COM', rel: 'self', href: 'https://rdap.example/domain/EXAMPLE.COM', type: 'application/rdap+json' }],
  status: ['client delete prohibited', 'client transfer prohibited', 'client update prohibited'],
  entities: [
    {
      objectClassName: 'entity',
      handle: '376',
      roles: ['registrar'],
      publicIds: [{ type: 'IANA Registrar ID', identifier: '376' }],
      vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'RESERVED-Internet Assigned Numbers Authority']]],
      links: [{ href: 'http://res-dom.iana.org', rel: 'about', type: 'text/html', value: 'https://rdap.example/domain/EXAMPLE.COM' }],
    },
  ],
  events: [
    { eventAction: 'registration', eventDate: '1995-08-14T04:00:00Z' },
    { eventAction: 'expiration', eventDate: '2027-08-13T04:00:00Z' },
    { eventAction: 'last changed', eventDate: '2026-08-14T07:01:34Z' },
    { eventAction: 'last update of RDAP database', eventDate: '2026-11-24T05:00:00Z' },
  ],
  secureDNS: { delegationSigned: true, dsData: [{ keyTag: 370, algorithm: 13, digestType: 2, digest: 'BE74359954660069D5C63D200C39F5603827D7DD02B56F120EE9F3A86764247C' }] },
  nameservers: [
    { objectClassName: 'nameserver', ldhName: 'A.IANA-SERVERS.NET' },
    { objectClassName: 'nameserver', ldhName: 'B.IANA-SERVERS.NET' },
  ],
};

describe('native-domain-info', () => {
  let rdap: Fake;
  let rdapMode: 'ok' | 'error' = 'ok';
  let h: PaidHarness;
  beforeAll(async () => {
    rdap = await startFake((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/rdap+json' });
        res.end(JSON.stringify(body));
      };
      if (path === '/rdap/help') return json(200, { rdapConformance: ['rdap_level_0'], notices: [{ title: 'Help', description: ['RDAP service'] }] });
      if (rdapMode === 'error') return json(500, { errorCode: 500, title: 'Internal error' });
      if (path === '/rdap/domain/example.com') return json(200, RDAP_EXAMPLE);
      json(404, { rdapConformance: ['rdap_level_0'], errorCode: 404, title: 'Not Found', description: ['The object was not found'] });
    }, '127.0.0.1');
    const dir = await tmpDir('native-rdap-');
    const file = join(dir, 'dns.json');
    writeFileSync(file, JSON.stringify({ description: 'RDAP bootstrap file for Domain Name System registrations', publication: '2026-06-26T18:00:02Z', services: [[['com', 'net'], [`${rdap.url}/rdap/`]]], version: '1.0' }));
    h = await startPaidHarness({ resolver: tableResolver({}), providers: { rdapBootstrapFile: file } });
  });
  afterAll(async () => {
    await h.close();
    await rdap.close();
  });

  test('a paid call returns registrar, dates, nameservers, status, DNSSEC', async () => {
    expect(((await domainInfo.health!(ctxOf(h))) as { status: string }).status).toBe('active');
    const out = await h.paidCall('native-domain-info', 'Example.COM.');
    expect(out.status).toBe(200);
    expect(out.body.result).toEqual({
      domain: 'example.com',
      registered: true,
      unicodeName: null,
      handle: '2336799_DOMAIN_COM-VRSN',
      registrar: { name: 'RESERVED-Internet Assigned Numbers Authority', ianaId: '376', url: 'http://res-dom.iana.org' },
      created: '1995-08-14T04:00:00.000Z',
      updated: '2026-08-14T07:01:34.000Z',
      expires: '2027-08-13T04:00:00.000Z',
      nameservers: ['a.iana-servers.net', 'b.iana-servers.net'],
      status: ['client delete prohibited', 'client transfer prohibited', 'client update prohibited'],
      dnssec: true,
      rdapServer: `${rdap.url}/rdap/`,
      bootstrapPublication: '2026-06-26T18:00:02Z',
    });
  });

  test('a name the registry does not have is a result: registered false', async () => {
    const out = await h.paidCall('native-domain-info', 'surely-unregistered-name.net');
    expect(out.body.result).toMatchObject({ domain: 'surely-unregistered-name.net', registered: false, registrar: null, nameservers: [] });
  });

  test('a TLD without an RDAP server: 400 before any quote', async () => {
    const out = await h.post('/api/x402/native-domain-info', { request: 'example.de' });
    expect(out.status).toBe(400);
    expect(out.body.error).toMatchObject({ code: 'invalid_request', reason: 'tld_not_supported' });
  });

  test('the registry failing after payment: one refund', async () => {
    rdapMode = 'error';
    try {
      const out = await h.paidCall('native-domain-info', 'another-example.com');
      expect(out.body).toMatchObject({ paid: true, refunded: true, error: { code: 'provider_error' } });
      await h.mine();
      expect((await h.ledger.get(out.txId))?.status).toBe('refunded');
    } finally {
      rdapMode = 'ok';
    }
  });

  test('an unreadable bootstrap registry: down and 503', async () => {
    const b = await startPaidHarness({ resolver: tableResolver({}), providers: { rdapBootstrapFile: '/nonexistent/dns.json' } });
    try {
      expect(await domainInfo.health!(ctxOf(b))).toEqual({ status: 'down', latencyMs: 0, reason: { code: 'provider_not_configured', message: 'RDAP is not configured on this node' } });
      expect((await b.post('/api/x402/native-domain-info', { request: 'example.com' })).status).toBe(503);
    } finally {
      await b.close();
    }
  });
});

// ---------------------------------------------------------------- x402 validation

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = '0x1111111111111111111111111111111111111111';

describe('native-x402-validation', () => {
  let x: Fake;
  let h: PaidHarness;
  let discoveryPayTo = PAY_TO;
  let hangReady = false;
  const base = () => `http://x402.test:${x.port}`;
  const v1Body = () => ({
    x402Version: 1,
    error: 'X-PAYMENT header is required',
    accepts: [{ scheme: 'exact', network: 'base', maxAmountRequired: '10000', resource: `${base()}/`, description: 'Weather report', mimeType: 'application/json', payTo: PAY_TO, maxTimeoutSeconds: 60, asset: USDC, extra: { name: 'USD Coin', version: '2' } }],
  });
  const v2Header = () =>
    Buffer.from(JSON.stringify({ x402Version: 2, error: 'Payment required', resource: { url: `${base()}/`, description: 'Weather report', mimeType: 'application/json' }, accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '10000', asset: USDC, payTo: PAY_TO, maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' } }] })).toString('base64');

  async function mcpHandler(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const server = new McpServer({ name: 'fake-x402-mcp', version: '0.1.0' });
    server.registerTool('weather', { description: 'paid weather' }, async () => ({ content: [{ type: 'text', text: 'sunny' }] }));
    server.registerTool('echo', { description: 'echo' }, async () => ({ content: [{ type: 'text', text: 'echo' }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')));
  }

  beforeAll(async () => {
    x = await startFake((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (req.method === 'POST' && path === '/') return void mcpHandler(req, res).catch(() => res.writeHead(500).end());
      if (req.method !== 'GET') return void res.writeHead(405).end();
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      if (path === '/') return json(402, v1Body(), { 'payment-required': v2Header() });
      if (path === '/health') return json(200, { status: 'ok' });
      if (path === '/ready') {
        if (hangReady) return; // never answers
        return json(200, { ready: true });
      }
      if (path === '/.well-known/x402.json') return json(200, { x402Version: 1, items: [{ resource: `${base()}/`, type: 'http', accepts: [{ scheme: 'exact', network: 'base', asset: USDC, payTo: discoveryPayTo, maxAmountRequired: '10000' }, { scheme: 'exact', network: 'eip155:8453', asset: USDC, payTo: discoveryPayTo }] }] });
      json(404, { error: 'not found' });
    });
    h = await startPaidHarness({ resolver: tableResolver({ 'x402.test': [FAKE_PUBLIC_IP] }) });
  });
  afterAll(async () => {
    await h.close();
    await x.close();
    await cleanupTmp();
  });

  test('a paid validation: 4 GET probes, the 402 well-formed in v1 and v2, MCP tools, discovery agreeing; nothing paid', async () => {
    const before = x.requests.length;
    const out = await h.paidCall('native-x402-validation', JSON.stringify({ url: `${base()}/`, mcp: true, correlation: true, includeBody: true }));
    expect([out.status, out.body.error]).toEqual([200, undefined]);
    const r = out.body.result;
    expect(r).toMatchObject({ url: `${base()}/`, passed: true, problems: [], challenges: 1, checks: { reachable: true, root: true, health: true, ready: true, discovery: true, challenges: true }, spend: { signed: 0, paid: 0 } });
    expect(r.probes.map((p: { path: string; status: number }) => [p.path, p.status])).toEqual([['/', 402], ['/health', 200], ['/ready', 200], ['/.well-known/x402.json', 200]]);
    expect(r.probes[1]).toMatchObject({ contentType: 'application/json', body: '{"status":"ok"}' });
    expect(r.probes[0].x402).toMatchObject({ wellFormed: true, v1: { present: true, valid: true, x402Version: 1 }, v2: { present: true, valid: true, x402Version: 2 }, networks: ['base', 'eip155:8453'], assets: [USDC], payTo: [PAY_TO] });
    expect(r.mcp).toMatchObject({ ok: true, server: { name: 'fake-x402-mcp', version: '0.1.0' }, tools: 2, toolNames: ['weather', 'echo'] });
    expect(r.correlation).toMatchObject({ status: 'agree', mismatches: [] });
    const seen = x.requests.slice(before);
    // Four GETs (the quote's and the settle's prechecks resolve names only), plus the MCP POSTs; never a payment header.
    expect(seen.filter((q) => q.method === 'GET').map((q) => q.url).sort()).toEqual(['/', '/.well-known/x402.json', '/health', '/ready']);
    expect(seen.every((q) => q.headers['x-payment'] === undefined && q.headers['payment-signature'] === undefined)).toBe(true);
  });

  test('plain URL input; the discovery document disagreeing with the 402 is reported', async () => {
    discoveryPayTo = '0x2222222222222222222222222222222222222222';
    try {
      const out = await h.paidCall('native-x402-validation', JSON.stringify({ url: `${base()}/`, correlation: true }));
      expect(out.body.result.passed).toBe(false);
      expect(out.body.result.correlation.status).toBe('disagree');
      expect(out.body.result.problems).toContain(`payTo ${PAY_TO} of the 402 is not in the discovery document`);
      const plain = await h.paidCall('native-x402-validation', `${base()}/`);
      expect(plain.body.result.passed).toBe(true);
      expect(plain.body.result.correlation).toBeUndefined();
      expect(plain.body.result.probes[0].body).toBeUndefined();
    } finally {
      discoveryPayTo = PAY_TO;
    }
  });

  test('a probe that never answers is cut at 6 s and reported, without retry', async () => {
    hangReady = true;
    try {
      const before = x.requests.filter((q) => q.url === '/ready').length;
      const out = await h.paidCall('native-x402-validation', `${base()}/`);
      const ready = out.body.result.probes[2];
      expect(ready).toMatchObject({ path: '/ready', status: null, error: { code: 'timeout' } });
      expect(ready.latencyMs).toBeGreaterThanOrEqual(5900);
      expect(ready.latencyMs).toBeLessThan(9000);
      expect(out.body.result.passed).toBe(false);
      expect(x.requests.filter((q) => q.url === '/ready').length).toBe(before + 1);
    } finally {
      hangReady = false;
    }
  });

  test('malformed challenges are named', () => {
    const bad = checkChallenge({
      headers: { 'payment-required': 'not base64 json!' },
      text: () => JSON.stringify({ x402Version: 1, accepts: [{ scheme: 'exact', network: 'base', maxAmountRequired: 10000, resource: '/relative', payTo: 'nobody', asset: 'USDC', maxTimeoutSeconds: 60, description: '', mimeType: '', outputSchema: null }] }),
    });
    expect(bad.wellFormed).toBe(false);
    expect(bad.v2.problems).toEqual(['PAYMENT-REQUIRED is not base64-encoded JSON']);
    expect(bad.v1.accepts[0].problems).toEqual(
      expect.arrayContaining([
        'accepts[0].maxAmountRequired must be a string of atomic units (digits only)',
        'accepts[0].resource must be an absolute http(s) URL',
        'accepts[0].outputSchema must be an object or absent (null breaks clients)',
        'accepts[0].payTo must be an EVM address for scheme exact',
        'accepts[0].extra must carry the EIP-712 domain name and version for scheme exact',
      ]),
    );
    expect(checkChallenge({ headers: {}, text: () => '' }).wellFormed).toBe(false);
    expect(correlate(undefined, []).status).toBe('no_discovery');
    expect(correlate({ services: [] }, []).status).toBe('no_challenge');
  });
});
