/**
 * docs/decisions.md "Upstream failures after payment": a run whose upstream answered outside 2xx
 * fails with `upstream_http_error` naming the status (the paid-call core refunds a failed run),
 * the same in every service that fetches a caller's URL (web-fetch and url-meta once sold a
 * 404 page while rss-read refunded it).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createOutboundClient } from '../../services/outbound/client.js';
import { executeService, ServiceError } from '../../services/index.js';
import { FAKE_PUBLIC_IP, startFake, tableResolver, testPolicy, type Fake } from './outboundFakes.js';
import { localContext, registry } from './local.js';

let site: Fake;
const outbound = createOutboundClient({ userAgent: 'native-node/test', timeoutMs: 5000, connectTimeoutMs: 2000 }, { resolver: tableResolver({ 'site.test': [FAKE_PUBLIC_IP] }), addressPolicy: testPolicy });
const url = (path: string) => `http://site.test:${site.port}${path}`;
const PAGE = `<html><head><title>Page</title></head><body><article><p>${'A sentence with enough words to be read as content. '.repeat(20)}</p></article></body></html>`;

beforeAll(async () => {
  site = await startFake((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/ok') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(PAGE);
    }
    res.writeHead(path === '/broken' ? 500 : 404, { 'content-type': 'text/html' });
    res.end('<html><head><title>Not found</title></head><body><p>missing</p></body></html>');
  });
});
afterAll(async () => site.close());

const run = (id: string, request: string) => {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) throw new Error(v.error.message);
  return executeService(def, localContext({ outbound }), v.input);
};

describe('upstream failures after payment: one rule', () => {
  test.each([
    ['native-web-fetch', '/nothing', 404],
    ['native-url-meta', '/nothing', 404],
    ['native-rss-read', '/nothing', 404],
    ['native-summarize', '/nothing', 404],
    ['native-web-fetch', '/broken', 500],
    ['native-url-meta', '/broken', 500],
  ])('%s: %s (HTTP %d) fails with upstream_http_error, so it is refunded, not sold', async (id, path, status) => {
    const e = await run(id, url(path)).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as ServiceError).code).toBe('upstream_http_error');
    expect((e as ServiceError).message).toContain(`answered HTTP ${status}`);
  });

  test('a 200 page is still served', async () => {
    await expect(run('native-web-fetch', url('/ok'))).resolves.toMatchObject({ status: 200, title: 'Page' });
    await expect(run('native-url-meta', url('/ok'))).resolves.toMatchObject({ status: 200, title: 'Page' });
  });
});
