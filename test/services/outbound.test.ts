/**
 * The outbound client over real sockets: the SSRF refusals (each through the real
 * `fetchPublic` path, with a listener on the refused address that must never be hit), redirects,
 * DNS pinning against rebinding, timeouts, size caps, decoding, content types, the User-Agent,
 * per-host concurrency, the cache, and provider mode.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { brotliCompressSync, gzipSync } from 'node:zlib';

/** 20 MiB of zeros gzipped (~20 kB), compressed once: the server answers at once, whatever the load. */
const BOMB = gzipSync(Buffer.alloc(20 * 1024 * 1024));
import { isPublicAddress } from '../../services/outbound/addressPolicy.js';
import { createOutboundClient, type Outbound } from '../../services/outbound/client.js';
import { OutboundError } from '../../services/outbound/types.js';
import { FAKE_PUBLIC_IP, startFake, tableResolver, testPolicy, type Fake } from './outboundFakes.js';

async function codeOf(p: Promise<unknown>): Promise<{ code: string; callerFault: boolean } | undefined> {
  try {
    await p;
  } catch (e) {
    if (e instanceof OutboundError) return { code: e.code, callerFault: e.callerFault };
    throw e;
  }
  return undefined;
}

let secret: Fake; // on 127.0.0.1: what an attacker wants to reach
let secret6: Fake; // on ::1
let pub: Fake; // on 127.0.0.2, "public" under the test policy
let rebindAnswers: string[][];
let resolver: ReturnType<typeof tableResolver>;
let client: Outbound;

beforeAll(async () => {
  secret = await startFake((_req, res) => res.end('internal secret'), '127.0.0.1');
  secret6 = await startFake((_req, res) => res.end('internal secret v6'), '::1');
  pub = await startFake((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/to-private') {
      res.writeHead(302, { location: `http://127.0.0.1:${secret.port}/` });
      return res.end();
    }
    if (u.pathname === '/to-private-name') {
      res.writeHead(301, { location: `http://private.test:${secret.port}/` });
      return res.end();
    }
    if (u.pathname === '/loop') {
      const n = Number(u.searchParams.get('n') ?? 0);
      res.writeHead(302, { location: `/loop?n=${n + 1}` });
      return res.end();
    }
    if (u.pathname === '/hello') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      return res.end(`hello ${req.headers['user-agent']}`);
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body>public page</body></html>');
  });
  rebindAnswers = [[FAKE_PUBLIC_IP], ['127.0.0.1']];
  resolver = tableResolver({
    'public.test': [FAKE_PUBLIC_IP],
    'private.test': ['10.0.0.5'],
    'private2.test': ['127.0.0.1'],
    'mixed.test': [FAKE_PUBLIC_IP, '192.168.1.10'],
    localhost: ['127.0.0.1'],
    'rebind.test': () => rebindAnswers.shift() ?? ['127.0.0.1'],
  });
  // A total timeout far above any answer here, so a loaded machine never turns a size-cap or decoding check into a timeout (the timeout test sets its own 300 ms).
  client = createOutboundClient({ timeoutMs: 20_000, connectTimeoutMs: 5_000, userAgent: 'native-node/test' }, { resolver, addressPolicy: testPolicy });
});

afterAll(async () => {
  await Promise.all([secret.close(), secret6.close(), pub.close()]);
});

describe('address policy', () => {
  test('public unicast passes, special-purpose ranges do not', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e']) expect(isPublicAddress(a)).toBe(true);
    for (const a of ['127.0.0.1', '0.0.0.0', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1', '100.100.100.200', '224.0.0.1', '240.0.0.1', '255.255.255.255', '198.18.0.1', '192.0.2.1', '::1', '::', '::ffff:127.0.0.1', '::ffff:8.8.8.8', '64:ff9b::a00:1', 'fc00::1', 'fd00:ec2::254', 'fe80::1', 'ff02::1', '2001:db8::1', '2002:7f00:1::1', '2001::1', 'not-an-ip']) {
      expect([a, isPublicAddress(a)]).toEqual([a, false]);
    }
  });
});

describe('fetchPublic refuses, before any connection', () => {
  const refused = (port: () => number): [string, () => string][] => [
    ['127.0.0.1', () => `http://127.0.0.1:${port()}/`],
    ['localhost', () => `http://localhost:${port()}/`],
    ['[::1]', () => `http://[::1]:${secret6.port}/`],
    ['0.0.0.0', () => `http://0.0.0.0:${port()}/`],
    ['10/8', () => `http://10.0.0.1:${port()}/`],
    ['172.16/12', () => `http://172.16.5.4:${port()}/`],
    ['192.168/16', () => `http://192.168.1.1:${port()}/`],
    ['169.254.169.254 (metadata)', () => 'http://169.254.169.254/latest/meta-data/'],
    ['100.64/10 (CGNAT)', () => `http://100.64.0.1:${port()}/`],
    ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${port()}/`],
    ['2130706433 (decimal)', () => `http://2130706433:${port()}/`],
    ['0x7f000001 (hex)', () => `http://0x7f000001:${port()}/`],
    ['017700000001 (octal)', () => `http://017700000001:${port()}/`],
    ['127.1 (short form)', () => `http://127.1:${port()}/`],
    ['a name resolving to a private address', () => `http://private.test:${port()}/`],
    ['a name with one private answer among public ones', () => `http://mixed.test:${pub.port}/`],
  ];

  test.each(refused(() => secret.port))('%s', async (_name, url) => {
    const before = secret.hits + secret6.hits;
    expect(await codeOf(client.fetchPublic({ url: url() }))).toEqual({ code: 'url_address_refused', callerFault: true });
    await expect(client.checkPublicUrl(url())).rejects.toMatchObject({ code: 'url_address_refused', callerFault: true });
    expect(secret.hits + secret6.hits).toBe(before);
  });

  test('a public URL redirecting to a private one (IP literal and name)', async () => {
    expect(await codeOf(client.fetchPublic({ url: `${pub.url.replace(FAKE_PUBLIC_IP, 'public.test')}/to-private` }))).toEqual({ code: 'url_address_refused', callerFault: true });
    expect(await codeOf(client.fetchPublic({ url: `${pub.url}/to-private-name` }))).toEqual({ code: 'url_address_refused', callerFault: true });
    expect(secret.hits).toBe(0);
  });

  test('a name whose first answer is public and second private: resolved once, pinned', async () => {
    rebindAnswers = [[FAKE_PUBLIC_IP], ['127.0.0.1']];
    resolver.calls.delete('rebind.test');
    const res = await client.fetchPublic({ url: `http://rebind.test:${pub.port}/hello` });
    // One lookup, one connection, to the address that was checked.
    expect(resolver.calls.get('rebind.test')).toBe(1);
    expect(res.remoteAddress).toBe(FAKE_PUBLIC_IP);
    expect(res.text()).toBe('hello native-node/test');
    expect(res.url).toBe(`http://rebind.test:${pub.port}/hello`);
    // The next lookup answers private: that request is refused, nothing reaches the private listener.
    expect(await codeOf(client.fetchPublic({ url: `http://rebind.test:${secret.port}/` }))).toEqual({ code: 'url_address_refused', callerFault: true });
    expect(secret.hits).toBe(0);
  });

  test('schemes other than http/https, and malformed URLs', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://public.test/', 'gopher://public.test/', 'javascript:alert(1)', 'data:text/plain,hi']) {
      expect(await codeOf(client.fetchPublic({ url }))).toEqual({ code: 'url_scheme_refused', callerFault: true });
    }
    expect(await codeOf(client.fetchPublic({ url: 'not a url' }))).toEqual({ code: 'url_invalid', callerFault: true });
    expect(await codeOf(client.fetchPublic({ url: 'http://unknown.test/' }))).toEqual({ code: 'dns_failed', callerFault: true });
  });

  test('redirect hops are capped', async () => {
    expect(await codeOf(client.fetchPublic({ url: `${pub.url}/loop`, maxRedirects: 3 }))).toEqual({ code: 'too_many_redirects', callerFault: true });
    const raw = await client.fetchPublic({ url: `${pub.url}/loop`, maxRedirects: 0 });
    expect(raw.status).toBe(302);
    expect(raw.headers.location).toBe('/loop?n=1');
  });
});

describe('responses', () => {
  let f: Fake;
  let inFlight = 0;
  let maxInFlight = 0;
  beforeAll(async () => {
    f = await startFake((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      switch (u.pathname) {
        case '/gzip':
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
          return res.end(gzipSync(JSON.stringify({ enc: 'gzip' })));
        case '/br':
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-encoding': 'br' });
          return res.end(brotliCompressSync(JSON.stringify({ enc: 'br', text: 'grüße' })));
        case '/big': {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const chunk = Buffer.alloc(64 * 1024, 97);
          let sent = 0;
          const pump = () => {
            while (sent < 4 * 1024 * 1024) {
              sent += chunk.length;
              if (!res.write(chunk)) return res.once('drain', pump);
            }
            res.end();
          };
          return pump();
        }
        case '/bomb':
          res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
          return res.end(BOMB);
        case '/slow':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
          return; // never ends
        case '/hold':
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          setTimeout(() => {
            inFlight--;
            res.end('held');
          }, 150);
          return;
        case '/count':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ hits: f.hits }));
        case '/notjson':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('{oops');
        case '/redirect-away':
          res.writeHead(307, { location: `http://public.test:${f.port}/echo-headers` });
          return res.end();
        case '/echo-headers':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify(req.headers));
        default:
          res.writeHead(404, { 'content-type': 'text/html' });
          return res.end('<h1>not found</h1>');
      }
    });
  });
  afterAll(() => f.close());

  test('gzip and br bodies are decoded; charset honoured; json() parses', async () => {
    expect((await client.fetchPublic({ url: `${f.url}/gzip` })).json()).toEqual({ enc: 'gzip' });
    const br = await client.fetchPublic({ url: `${f.url}/br`, accept: ['application/json'] });
    expect(br.contentType).toBe('application/json');
    expect(br.json()).toEqual({ enc: 'br', text: 'grüße' });
    expect(await codeOf(Promise.resolve().then(async () => (await client.fetchPublic({ url: `${f.url}/notjson` })).json()))).toEqual({ code: 'invalid_json', callerFault: false });
  });

  test('the streamed size cap aborts a large body and a decompression bomb', async () => {
    expect(await codeOf(client.fetchPublic({ url: `${f.url}/big`, maxBytes: 1024 * 1024 }))).toEqual({ code: 'response_too_large', callerFault: false });
    expect(await codeOf(client.fetchPublic({ url: `${f.url}/bomb`, maxBytes: 1024 * 1024 }))).toEqual({ code: 'response_too_large', callerFault: false });
    const ok = await client.fetchPublic({ url: `${f.url}/big`, maxBytes: 8 * 1024 * 1024 });
    expect(ok.body.byteLength).toBe(4 * 1024 * 1024);
  });

  test('the total timeout ends a response that never finishes', async () => {
    const t0 = Date.now();
    expect(await codeOf(client.fetchPublic({ url: `${f.url}/slow`, timeoutMs: 300 }))).toEqual({ code: 'timeout', callerFault: false });
    // The response never finishes: without the timeout this would hang until jest's own (60 s).
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  test('a caller signal aborts', async () => {
    const c = new AbortController();
    setTimeout(() => c.abort(), 50);
    expect(await codeOf(client.fetchPublic({ url: `${f.url}/slow`, signal: c.signal }))).toEqual({ code: 'aborted', callerFault: false });
  });

  test('content types are checked on success; errors come back with their status', async () => {
    expect(await codeOf(client.fetchPublic({ url: `${f.url}/gzip`, accept: ['text/html'] }))).toEqual({ code: 'unexpected_content_type', callerFault: false });
    const missing = await client.fetchPublic({ url: `${f.url}/nope`, accept: ['application/json'] });
    expect(missing.status).toBe(404);
    expect(missing.text()).toContain('not found');
  });

  test('per-host concurrency: requests beyond the limit wait', async () => {
    const limited = createOutboundClient({ hostConcurrency: 2 }, { resolver, addressPolicy: testPolicy });
    maxInFlight = 0;
    const all = await Promise.all(Array.from({ length: 6 }, () => limited.fetchPublic({ url: `${f.url}/hold` })));
    expect(all.every((r) => r.text() === 'held')).toBe(true);
    expect(maxInFlight).toBe(2);
  });

  test('the cache serves a young GET without a request', async () => {
    let t = 1_000;
    const cached = createOutboundClient({}, { resolver, addressPolicy: testPolicy, now: () => t });
    const a = (await cached.fetchPublic({ url: `${f.url}/count`, cacheTtlMs: 60_000 })).json();
    const b = (await cached.fetchPublic({ url: `${f.url}/count`, cacheTtlMs: 60_000 })).json();
    expect(b).toEqual(a);
    t += 61_000;
    const c = (await cached.fetchPublic({ url: `${f.url}/count`, cacheTtlMs: 60_000 })).json() as { hits: number };
    expect(c.hits).toBe((a as { hits: number }).hits + 1);
  });

  test('provider mode reaches loopback providers (no address filter) and drops credentials on a cross-origin redirect', async () => {
    expect((await client.fetchProvider({ url: `http://127.0.0.1:${secret.port}/` })).text()).toBe('internal secret');
    const local = await client.fetchProvider({ url: `${f.url}/echo-headers`, headers: { Authorization: 'Bearer k', 'X-Subscription-Token': 't' } });
    const same = local.json() as Record<string, string>;
    expect(same.authorization).toBe('Bearer k');
    expect(same['user-agent']).toBe('native-node/test');
    expect(same['accept-encoding']).toContain('br');
    const moved = await client.fetchProvider({ url: `${f.url}/redirect-away`, headers: { Authorization: 'Bearer k', 'X-Subscription-Token': 't' } });
    const h = moved.json() as Record<string, string>;
    expect(h.authorization).toBeUndefined();
    expect(h['x-subscription-token']).toBeUndefined();
    expect(h.host).toBe(`public.test:${f.port}`);
  });

  test('a refused connection is connect_failed', async () => {
    const closed = await startFake(() => undefined);
    const port = closed.port;
    await closed.close();
    expect(await codeOf(client.fetchPublic({ url: `http://${FAKE_PUBLIC_IP}:${port}/` }))).toEqual({ code: 'connect_failed', callerFault: false });
  });
});

describe('https', () => {
  // A self-signed certificate for site.test only (test/fixtures/tls), trusted by this client alone.
  const cert = readFileSync(new URL('../fixtures/tls/cert.pem', import.meta.url));
  const key = readFileSync(new URL('../fixtures/tls/key.pem', import.meta.url));
  let server: TlsServer;
  let port: number;
  const sni: (string | false | null)[] = [];
  beforeAll(async () => {
    server = createTlsServer({ cert, key }, (req, res) => {
      sni.push((req.socket as TLSSocket).servername);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`tls ok for ${req.headers.host}`);
    });
    await new Promise<void>((resolve) => server.listen(0, FAKE_PUBLIC_IP, resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('connects to the pinned address with the name as SNI and checks the certificate against the name', async () => {
    const tls = createOutboundClient({ timeoutMs: 3000 }, { resolver: tableResolver({ 'site.test': [FAKE_PUBLIC_IP], 'other.test': [FAKE_PUBLIC_IP] }), addressPolicy: testPolicy, ca: cert });
    const res = await tls.fetchPublic({ url: `https://site.test:${port}/` });
    expect(res.text()).toBe(`tls ok for site.test:${port}`);
    expect(res.remoteAddress).toBe(FAKE_PUBLIC_IP);
    expect(sni.at(-1)).toBe('site.test');
    // Same address, another name: the certificate does not match it.
    const other = await codeOf(tls.fetchPublic({ url: `https://other.test:${port}/` }));
    expect(other).toEqual({ code: 'connect_failed', callerFault: false });
    // Without the test CA, the self-signed certificate is refused.
    const strict = createOutboundClient({ timeoutMs: 3000 }, { resolver: tableResolver({ 'site.test': [FAKE_PUBLIC_IP] }), addressPolicy: testPolicy });
    expect(await codeOf(strict.fetchPublic({ url: `https://site.test:${port}/` }))).toEqual({ code: 'connect_failed', callerFault: false });
  });
});
