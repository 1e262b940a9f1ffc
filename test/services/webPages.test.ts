/**
 * native-web-fetch, native-url-meta and native-rss-read as paid calls over HTTP against loopback
 * fakes (127.0.0.2 counts as public under the test-only address policy): the documented result
 * shapes, caller URLs refused with a coded 400 before any quote, and a page that turns private
 * after payment (a redirect, a second DNS answer) refunded on-chain exactly once.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { callTool } from '../../node/api/mcp.js';
import { readFeed } from '../../services/rss-read.js';
import { pageMetadata } from '../../services/url-meta.js';
import { extractReadable, loadHtmlParsers } from '../../services/web/readable.js';
import { cleanupTmp } from '../helpers/tmp.js';
import { FAKE_PUBLIC_IP, startFake, tableResolver, type Fake } from './outboundFakes.js';
import { startPaidHarness, type PaidHarness } from './paidHarness.js';

const ARTICLE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Rust and the Node | Example News</title>
<meta name="description" content="Why the node is written as it is.">
<meta property="og:title" content="Rust and the Node">
<meta property="og:site_name" content="Example News">
<meta property="og:image" content="/img/cover.png">
<meta property="og:type" content="article">
<meta name="twitter:card" content="summary_large_image">
<link rel="canonical" href="https://news.example/articles/rust-node">
<link rel="icon" href="/favicon.svg">
<script>window.tracking = "should never appear";</script><style>body{color:red}</style></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Rust and the Node</h1>
<p>The node sells paid calls to software agents. Every call is paid with x402 and settled on a chain of its own, which is mined with proof of work and signed with post-quantum keys.</p>
<p>Outbound requests go through one client that refuses private addresses, pins the address it checked and follows redirects only after checking them again. This paragraph is long enough for the readability heuristics to count it as content.</p>
<ul><li>first point</li><li>second point</li></ul>
</article><footer>© Example News</footer></body></html>`;

const RSS = `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>
<title>Example Feed</title><link>https://news.example/</link><description>News &amp; notes</description>
<item><title>First post</title><link>https://news.example/1</link><pubDate>Mon, 23 Nov 2026 10:00:00 GMT</pubDate><description>&lt;p&gt;Hello &lt;b&gt;world&lt;/b&gt;&lt;/p&gt;</description><guid>https://news.example/1</guid></item>
<item><title>Second post</title><link>/2</link><pubDate>Sun, 22 Nov 2026 09:30:00 +0100</pubDate><description>Plain summary</description></item>
</channel></rss>`;

const ATOM = `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Atom Example</title><link href="https://atom.example/"/><updated>2026-11-20T18:30:02Z</updated><id>urn:uuid:60a76c80</id>
<entry><title>Atom-Powered Robots Run Amok</title><link rel="alternate" href="https://atom.example/2026/11/20/robots"/><id>urn:uuid:1225c695</id><updated>2026-11-20T18:30:02Z</updated><published>2026-11-19T08:00:00Z</published><summary>Some text.</summary></entry></feed>`;

const RDF = `<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="https://rdf.example/"><title>RDF Site</title><link>https://rdf.example/</link><description>RSS 1.0</description></channel>
<item rdf:about="https://rdf.example/a"><title>RDF item</title><link>https://rdf.example/a</link><description>desc</description><dc:date>2026-11-18T10:00:00Z</dc:date></item></rdf:RDF>`;

const JSON_FEED = JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: 'JSON Feed', home_page_url: 'https://json.example/', items: [{ id: '1', url: 'https://json.example/1', title: 'One', content_html: '<p>Hi <i>there</i></p>', date_published: '2026-11-17T12:00:00Z' }] });

let site: Fake;
let secret: Fake;
let h: PaidHarness;
let rebind: string[][] = [];

beforeAll(async () => {
  secret = await startFake((_req, res) => res.end('internal'), '127.0.0.1');
  site = await startFake((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (type: string, body: string) => {
      res.writeHead(200, { 'content-type': type });
      res.end(body);
    };
    if (path === '/article') return send('text/html; charset=utf-8', ARTICLE);
    if (path === '/plain') return send('text/plain', 'just text\nline two');
    if (path === '/image') return send('image/png', '\x89PNG\r\n\x1a\n....');
    if (path === '/feed.rss') return send('application/rss+xml', RSS);
    if (path === '/feed.atom') return send('application/atom+xml', ATOM);
    if (path === '/not-a-feed') return send('text/html', '<html><body>nope</body></html>');
    if (path === '/to-private') {
      res.writeHead(302, { location: `http://127.0.0.1:${secret.port}/` });
      return res.end();
    }
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end('<html><head><title>Not found</title></head><body><p>missing</p></body></html>');
  });
  const resolver = tableResolver({ 'site.test': [FAKE_PUBLIC_IP], 'private.test': ['192.168.0.10'], localhost: ['127.0.0.1'], 'flip.test': () => rebind.shift() ?? ['127.0.0.1'] });
  h = await startPaidHarness({ resolver });
});

afterAll(async () => {
  await h.close();
  await Promise.all([site.close(), secret.close()]);
  await cleanupTmp();
});

const siteUrl = (path: string) => `http://site.test:${site.port}${path}`;

describe('native-web-fetch', () => {
  test('a paid call returns the readable text, status, content type and byte size', async () => {
    const out = await h.paidCall('native-web-fetch', siteUrl('/article'));
    expect(out.status).toBe(200);
    const r = out.body.result;
    expect(r).toMatchObject({ url: siteUrl('/article'), status: 200, contentType: 'text/html', bytes: Buffer.byteLength(ARTICLE), extraction: 'readability', truncated: false });
    expect(r.title).toContain('Rust and the Node');
    expect(r.text).toContain('The node sells paid calls to software agents.');
    expect(r.text).toContain('- first point');
    expect(r.text).not.toContain('tracking');
    expect(r.text).not.toContain('About');
    expect(out.body.receipt).toMatchObject({ serviceId: 'native-web-fetch', txId: out.txId });
  });

  test('plain text as is, binary without text', async () => {
    expect((await h.paidCall('native-web-fetch', siteUrl('/plain'))).body.result).toMatchObject({ status: 200, contentType: 'text/plain', text: 'just text\nline two', extraction: 'plain' });
    expect((await h.paidCall('native-web-fetch', siteUrl('/image'))).body.result).toMatchObject({ status: 200, contentType: 'image/png', text: null, extraction: 'none' });
  });


  test('a tiny page still gives its text, scripts left out', async () => {
    await loadHtmlParsers();
    const r = extractReadable('<html><head><title>T</title></head><body><div>Short <b>text</b></div><script>x()</script></body></html>');
    expect(r).toMatchObject({ title: 'T', text: 'Short text' });
  });
});

describe('native-summarize (URL input)', () => {
  test('a paid call summarises the page\'s readable text and names its source', async () => {
    const out = await h.paidCall('native-summarize', siteUrl('/article'));
    expect(out.status).toBe(200);
    const r = out.body.result;
    expect(r.source).toMatchObject({ url: siteUrl('/article'), status: 200, extraction: 'readability', truncated: false });
    expect(r.source.title).toContain('Rust and the Node');
    // Any of the page's sentences of substance (its sentences share no word, so the length prior picks among them), never the page chrome.
    expect(r.tldr).toMatch(/paid calls to software agents|Every call is paid with x402|Outbound requests go through one client/);
    expect(r.tldr).not.toContain('tracking');
    expect(r.characters).toBeGreaterThanOrEqual(80);
  });

  test('a private host is refused with 400 before any quote', async () => {
    const r = await h.post('/api/x402/native-summarize', { request: 'http://private.test/article' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('url_address_refused');
    expect(r.body.accepts).toBeUndefined();
  });

  test('a page with too little text, after payment: refunded once', async () => {
    const out = await h.paidCall('native-summarize', siteUrl('/plain'));
    expect(out.body).toMatchObject({ paid: true, refunded: true, error: { code: 'page_text_too_short' } });
    await h.mine();
    expect((await h.ledger.get(out.txId))?.status).toBe('refunded');
  });
});

describe('native-url-meta', () => {
  test('a paid call returns title, description, Open Graph image, canonical and site name (absolute URLs)', async () => {
    const out = await h.paidCall('native-url-meta', siteUrl('/article'));
    expect(out.status).toBe(200);
    expect(out.body.result).toMatchObject({
      url: siteUrl('/article'),
      status: 200,
      title: 'Rust and the Node | Example News',
      description: 'Why the node is written as it is.',
      image: siteUrl('/img/cover.png'),
      canonical: 'https://news.example/articles/rust-node',
      siteName: 'Example News',
      ogTitle: 'Rust and the Node',
      ogType: 'article',
      twitterCard: 'summary_large_image',
      lang: 'en',
      favicon: siteUrl('/favicon.svg'),
    });
  });

  test('absent tags are null, never guessed', async () => {
    const m = await pageMetadata('<html><head><title>Bare</title></head><body></body></html>', 'https://bare.example/x');
    expect(m).toMatchObject({ title: 'Bare', description: null, image: null, canonical: null, siteName: null, favicon: null });
  });

  test('tags written with name= as well as property=; the Twitter image when there is no og:image; og:title when there is no <title>', async () => {
    const html = `<html><head><meta name="og:title" content=" Only OG "><meta name="og:site_name" content="Site"><meta property="og:image" content="">
      <meta name="twitter:image:src" content="/t.png"><meta name="twitter:image:alt" content="A card"><meta property="twitter:card" content="summary"></head></html>`;
    expect(await pageMetadata(html, 'https://x.example/a/b')).toMatchObject({ title: 'Only OG', ogTitle: 'Only OG', siteName: 'Site', image: 'https://x.example/t.png', imageAlt: 'A card', twitterCard: 'summary', ogType: null });
  });
});

describe('native-rss-read', () => {
  test('a paid call reads an RSS 2.0 feed: items with title, absolute link, ISO date, plain summary', async () => {
    const out = await h.paidCall('native-rss-read', siteUrl('/feed.rss'));
    expect(out.status).toBe(200);
    expect(out.body.result).toMatchObject({ format: 'rss', title: 'Example Feed', link: 'https://news.example/', totalItems: 2 });
    expect(out.body.result.items).toEqual([
      { title: 'First post', link: 'https://news.example/1', date: '2026-11-23T10:00:00.000Z', summary: 'Hello world' },
      { title: 'Second post', link: siteUrl('/2'), date: '2026-11-22T08:30:00.000Z', summary: 'Plain summary' },
    ]);
  });

  test('a paid call reads an Atom feed', async () => {
    const out = await h.paidCall('native-rss-read', siteUrl('/feed.atom'));
    expect(out.body.result).toMatchObject({ format: 'atom', title: 'Atom Example', items: [{ title: 'Atom-Powered Robots Run Amok', link: 'https://atom.example/2026/11/20/robots', date: '2026-11-19T08:00:00.000Z', summary: 'Some text.' }] });
  });

  test('RDF and JSON Feed parse to the same item shape', async () => {
    expect((await readFeed(RDF, 'https://rdf.example/rss')).items).toEqual([{ title: 'RDF item', link: 'https://rdf.example/a', date: '2026-11-18T10:00:00.000Z', summary: 'desc' }]);
    expect((await readFeed(JSON_FEED, 'https://json.example/feed.json'))).toMatchObject({ format: 'json', title: 'JSON Feed', items: [{ title: 'One', link: 'https://json.example/1', date: '2026-11-17T12:00:00.000Z', summary: 'Hi there' }] });
  });

  test('a page that is not a feed, after payment: refunded', async () => {
    const out = await h.paidCall('native-rss-read', siteUrl('/not-a-feed'));
    expect(out.status).toBe(502);
    expect(out.body).toMatchObject({ paid: true, refunded: true, error: { code: 'feed_invalid' } });
    await h.mine();
    expect((await h.ledger.get(out.txId))?.status).toBe('refunded');
  });
});

describe('caller URLs refused before any payment', () => {
  test.each([
    ['native-web-fetch', () => `http://127.0.0.1:${secret.port}/`, 'url_address_refused'],
    ['native-web-fetch', () => `http://2130706433:${secret.port}/`, 'url_address_refused'],
    ['native-web-fetch', () => `http://localhost:${secret.port}/`, 'url_address_refused'],
    ['native-url-meta', () => 'http://169.254.169.254/latest/meta-data/', 'url_address_refused'],
    ['native-url-meta', () => 'http://private.test/', 'url_address_refused'],
    ['native-rss-read', () => 'http://[::ffff:127.0.0.1]/feed', 'url_address_refused'],
    ['native-rss-read', () => 'http://unknown.test/feed', 'dns_failed'],
    ['native-x402-validation', () => JSON.stringify({ url: `http://10.0.0.1:${secret.port}/`, mcp: true }), 'url_address_refused'],
  ])('%s %s → 400 %s, no quote', async (serviceId, request, code) => {
    const out = await h.post(`/api/x402/${serviceId}`, { request: request() });
    expect(out.status).toBe(400);
    expect(out.body.error.code).toBe(code);
    expect(out.body.accepts).toBeUndefined();
    expect(secret.hits).toBe(0);
  });

  test('the whole list of refused URLs, as paid calls of native-web-fetch: each a 400 before any quote', async () => {
    const p = secret.port;
    const urls = [
      `http://127.0.0.1:${p}/`, `http://localhost:${p}/`, `http://[::1]:${p}/`, `http://0.0.0.0:${p}/`, `http://10.1.2.3:${p}/`, `http://172.16.0.9:${p}/`,
      `http://192.168.1.1:${p}/`, 'http://169.254.169.254/latest/meta-data/', `http://100.64.0.1:${p}/`, `http://[::ffff:127.0.0.1]:${p}/`,
      `http://2130706433:${p}/`, `http://0x7f000001:${p}/`, `http://017700000001:${p}/`, `http://127.1:${p}/`, `http://private.test:${p}/`,
    ];
    for (const url of urls) {
      const out = await h.post('/api/x402/native-web-fetch', { request: url });
      expect([url, out.status, out.body.error?.code, out.body.accepts]).toEqual([url, 400, 'url_address_refused', undefined]);
    }
    expect(secret.hits).toBe(0);
  });

  test('over MCP too: the paid tool answers the refusal, with no payment requirements', async () => {
    const m = { registry: h.context.registry, paidCalls: h.core, params: h.context.params, nativeUsd: h.context.nativeUsd, version: 'test' } as unknown as Parameters<typeof callTool>[0];
    const out = await callTool(m, h.server.url, 'native-web-fetch', { request: `http://0x7f000001:${secret.port}/` }, undefined);
    expect(out.isError).toBe(true);
    expect(JSON.stringify(out)).toContain('url_address_refused');
    expect(JSON.stringify(out)).not.toContain('maxAmountRequired');
    expect(secret.hits).toBe(0);
  });

  test('a missing or non-http URL is a 400 too', async () => {
    expect((await h.post('/api/x402/native-web-fetch', {})).body.error).toMatchObject({ code: 'invalid_request' });
    expect((await h.post('/api/x402/native-web-fetch', { request: 'ftp://site.test/' })).status).toBe(400);
  });
});

describe('a URL that turns private after payment is refunded once', () => {
  test('a redirect to a private address', async () => {
    const before = await h.agentBalance();
    const out = await h.paidCall('native-web-fetch', siteUrl('/to-private'));
    expect(out.status).toBe(502);
    expect(out.body).toMatchObject({ paid: true, refunded: true, error: { code: 'url_address_refused' } });
    expect(h.pool.has(out.body.refundTxId)).toBe(true);
    await h.mine();
    expect((await h.ledger.get(out.txId))?.status).toBe('refunded');
    expect(secret.hits).toBe(0);
    // The price came back; only the invoke's fee is spent.
    expect(await h.agentBalance()).toBe(before - 30_000n);
  });

  test('a name whose answer is public when checked before payment (the quote) and private at run time', async () => {
    // The settle carries a native payment: no precheck there (x402/core/paidCall.ts), the run resolves next.
    rebind = [[FAKE_PUBLIC_IP], ['127.0.0.1']];
    const out = await h.paidCall('native-url-meta', `http://flip.test:${secret.port}/`);
    expect(out.status).toBe(502);
    expect(out.body).toMatchObject({ refunded: true, error: { code: 'url_address_refused' } });
    expect(secret.hits).toBe(0);
  });
});
