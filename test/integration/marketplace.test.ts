/**
 * The free discovery surfaces of a real devnet node process over HTTP, and the marketplace page
 * in headless Chromium.
 *
 * HTTP: every document validates against the schemas written from the spec's tables, the
 * catalog filters answer 400 naming the bad parameter, every free surface allows cross-origin
 * reads (preflight included), the prober's health reaches the catalog, /agents negotiates HTML
 * or JSON, and the pages are served as HTML.
 *
 * Browser (Debian's `chromium`, driven by playwright-core with JavaScript disabled, so the page
 * is proven to work without it): the page lists every service by category with prices, health
 * and example calls; a search and a category filter go through the GET form; screenshots are
 * kept in tmp/artifacts/ (ARTIFACTS_DIR overrides). Skipped, with a message, only when /usr/bin/chromium is absent.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CATALOG } from '../../services/index.js';
import { startNode, type NodeProc } from '../helpers/nodeProcess.js';
import { DEVNET, specValidators } from '../discovery/schemas.js';
import { ARTIFACTS_DIR as ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, hasChromium } from '../helpers/chromium.js';

if (!hasChromium) console.warn(`marketplace browser test skipped: ${CHROMIUM} not found (install the Debian package: apt-get install -y chromium; .ci/run does it)`);

const validate = specValidators(DEVNET);
let dir: string;
let node: NodeProc;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-market-'));
  node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--no-mine', '--no-stratum'], { cwd: dir });
  url = node.url;
  // The prober's first round runs at start; wait (bounded) until it is done.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const c = (await (await fetch(`${url}/api/x402/bazaar?limit=1`)).json()) as { health: { checkedAt: number } };
    if (c.health.checkedAt > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);

afterAll(async () => {
  node?.child.kill('SIGTERM');
  await node?.exited;
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string; json: () => any }> {
  const res = await fetch(`${url}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

describe('discovery surfaces over HTTP (real node)', () => {
  test('the catalog matches the spec and carries live health', async () => {
    const r = await get('/api/x402/bazaar');
    expect(r.status).toBe(200);
    const doc = r.json();
    expect(validate.catalog(doc)).toEqual([]);
    expect(doc.resources).toHaveLength(58);
    expect(doc.network).toBe('native-devnet');
    expect(doc.chainId).toBe(1337);
    const runnable = CATALOG.filter((d) => d.run).length;
    // Provider-backed services are down too: test nodes reach nothing beyond 127.0.0.1 (test/helpers/nodeProcess.ts).
    expect(doc.health).toMatchObject({ total: 58, unknown: 0 });
    expect(doc.health.active + doc.health.down).toBe(58);
    expect(doc.health.down).toBeGreaterThanOrEqual(58 - runnable);
    expect(doc.resources.find((s: { serviceId: string }) => s.serviceId === 'native-weather')).toMatchObject({ healthStatus: 'down' });
    expect(doc.health.checkedAt).toBeGreaterThan(0);
    const clock = doc.resources.find((s: { serviceId: string }) => s.serviceId === 'native-world-clock');
    expect(clock).toMatchObject({ healthStatus: 'active', endpoint: `${url}/api/x402/native-world-clock` });
    expect(clock.lastVerifiedAt).toBeGreaterThan(0);
    expect(doc.resources.find((s: { serviceId: string }) => s.serviceId === 'native-image-gen').healthStatus).toBe('down');
  });

  test('catalog filters over HTTP, and a 400 naming the bad parameter', async () => {
    const clock = (await get('/api/x402/bazaar?q=clock')).json();
    expect(clock.resources.map((s: { serviceId: string }) => s.serviceId)).toEqual(['native-world-clock']);
    const explorer = (await get('/api/x402/bazaar?category=explorer&maxPrice=0.01&network=native-devnet&limit=2&offset=1')).json();
    expect(explorer.filters).toMatchObject({ applied: { category: 'explorer', maxPrice: '0.01', network: 'native-devnet' }, limit: 2, offset: 1 });
    expect(explorer.resources.every((s: { category: string }) => s.category === 'explorer')).toBe(true);
    expect((await get('/api/x402/bazaar?network=base')).json().resources).toEqual([]); // USDC rail off on this node
    for (const [query, param] of [
      ['category=food', 'category'],
      ['maxPrice=abc', 'maxPrice'],
      ['network=solana', 'network'],
      ['limit=1000', 'limit'],
      ['offset=x', 'offset'],
      ['q=a&q=b', 'q'],
    ]) {
      const r = await get(`/api/x402/bazaar?${query}`);
      expect({ query, status: r.status }).toEqual({ query, status: 400 });
      expect(r.json().error).toMatchObject({ code: 'invalid_query', param });
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  test('protocol descriptor, discovery list, services.json, agent cards, llms.txt, OpenAPI', async () => {
    for (const path of ['/api/x402', '/.well-known/x402']) {
      const d = (await get(path)).json();
      expect(validate.descriptor(d)).toEqual([]);
      expect(d).toMatchObject({ network: 'devnet', chainId: 1337, nodeOperatedCount: 58 });
    }
    const list = (await get('/x402/discovery?type=http&limit=10&offset=5')).json();
    expect(validate.discoveryList(list)).toEqual([]);
    expect(list.pagination).toEqual({ limit: 10, offset: 5, total: 58 });
    expect(list.items[0].resource).toBe(`${url}/api/x402/${CATALOG[5].id}`);
    expect((await get('/x402/discovery?type=ws')).status).toBe(400);
    expect((await get('/x402/discovery?limit=0')).json().error.param).toBe('limit');
    expect(validate.servicesJson((await get('/services.json')).json())).toEqual([]);
    for (const path of ['/.well-known/agent.json', '/.well-known/agent-card.json']) {
      const card = (await get(path)).json();
      expect(validate.agentCard(card)).toEqual([]);
      expect(card.skills).toHaveLength(58);
    }
    const llms = await get('/llms.txt');
    expect(llms.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(llms.text).toMatch(/^# .+\n\n> /);
    const api = (await get('/openapi.json')).json();
    expect(api.openapi).toBe('3.1.0');
    expect(Object.keys(api.paths)).toEqual(expect.arrayContaining(['/api/x402/bazaar', '/api/mcp', '/marketplace', '/api/x402/native-world-clock']));
    expect(api.servers).toEqual([{ url }]);
  });

  test('cross-origin reads on every free surface', async () => {
    for (const path of ['/api/x402/bazaar', '/api/x402', '/.well-known/x402', '/x402/discovery', '/services.json', '/.well-known/agent.json', '/.well-known/agent-card.json', '/llms.txt', '/openapi.json', '/marketplace', '/agents', '/join']) {
      const r = await fetch(`${url}${path}`, { headers: { origin: 'https://agent.example' } });
      expect({ path, status: r.status, cors: r.headers.get('access-control-allow-origin') }).toEqual({ path, status: 200, cors: '*' });
      const pre = await fetch(`${url}${path}`, { method: 'OPTIONS', headers: { origin: 'https://agent.example', 'access-control-request-method': 'GET' } });
      expect({ path, status: pre.status, methods: pre.headers.get('access-control-allow-methods') }).toEqual({ path, status: 204, methods: 'GET, HEAD, OPTIONS' });
    }
  });

  test('pages: /marketplace, /agents (HTML or JSON by Accept), /join', async () => {
    const page = await get('/marketplace');
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).not.toMatch(/<script/i);
    expect(page.text).toContain(`npx native-node call --node ${url} native-world-clock Europe/Berlin`);
    const bad = await get('/marketplace?category=nope');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('role="alert"');
    const html = await get('/agents', { accept: 'text/html' });
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.text).toContain('native-node');
    const json = await get('/agents', { accept: 'application/json' });
    expect(json.json()).toMatchObject({ network: 'native-devnet', agentCount: 1, agents: [{ agentId: 'native-node', serviceCount: 58, nodeOperated: true }] });
    const join = await get('/join');
    expect(join.text).toContain('<h1>Sell a service</h1>');
    expect(join.text).toContain('native-node agent serve --service my-agent-upper --exec');
  });
});

describe('marketplace page in headless Chromium', () => {
  (hasChromium ? test : test.skip)(
    'works without JavaScript: lists, searches and filters; screenshots kept',
    async () => {
      const { chromium } = await import('playwright-core');
      mkdirSync(ARTIFACTS, { recursive: true });
      const profile = mkdtempSync(join(tmpdir(), 'native-chromium-'));
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_FLAGS,
        javaScriptEnabled: false,
        viewport: { width: 1280, height: 900 },
        timeout: 30_000,
      });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        page.setDefaultTimeout(15_000);
        await page.goto(`${url}/marketplace`);
        expect(await page.getAttribute('html', 'lang')).toBe('en');
        await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Marketplace');
        expect(await page.locator('article.service').count()).toBe(58);
        expect(await page.locator('section.category').count()).toBe(17);
        const clock = page.locator('#svc-native-world-clock');
        await expect(clock.locator('dd').first().textContent()).resolves.toContain('0.002 NATIVE');
        await expect(clock.locator('.health').textContent()).resolves.toBe('active');
        await expect(clock.locator('pre.cli').textContent()).resolves.toBe(`npx native-node call --node ${url} native-world-clock Europe/Berlin`);
        await page.screenshot({ path: join(ARTIFACTS, 'marketplace.png'), fullPage: false });

        // Search: the form is a plain GET, so the browser navigates without any script.
        const search = page.getByRole('search');
        await search.getByLabel('Search').fill('clock');
        await Promise.all([page.waitForURL(/q=clock/), search.getByRole('button', { name: 'Search' }).click()]);
        expect(await page.locator('article.service').count()).toBe(1);
        await expect(page.locator('#result-count').textContent()).resolves.toContain('1 service');
        await expect(page.locator('article.service h3').textContent()).resolves.toBe('World Clock');
        await page.screenshot({ path: join(ARTIFACTS, 'marketplace-search.png'), fullPage: true });

        // Category filter (search cleared).
        await search.getByLabel('Search').fill('');
        await search.getByLabel('Category').selectOption('explorer');
        await Promise.all([page.waitForURL(/category=explorer/), search.getByRole('button', { name: 'Search' }).click()]);
        const explorer = CATALOG.filter((d) => d.category === 'explorer').map((d) => d.name).sort();
        expect((await page.locator('article.service h3').allTextContents()).sort()).toEqual(explorer);
        expect(await page.locator('section.category').count()).toBe(1);
        expect(await page.getByLabel('Category').inputValue()).toBe('explorer');
        await page.screenshot({ path: join(ARTIFACTS, 'marketplace-category.png'), fullPage: true });

        // Nothing found.
        await page.goto(`${url}/marketplace?q=zzzz-nothing`);
        expect(await page.locator('article.service').count()).toBe(0);
        await expect(page.locator('#result-count').textContent()).resolves.toContain('0 services');
      } finally {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
