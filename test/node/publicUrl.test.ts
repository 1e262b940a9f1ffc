/**
 * The public base URL and the allowed hosts, in-process: the flags and variables of
 * the option table (`--public-url`, `--allowed-hosts`, `--mcp-max-batch`), their refusals with
 * `config_invalid`, and the Host check of node/api/publicUrl.ts (421 `misdirected_request`,
 * names with and without ports, the base URL's own host, `/health` exempt) over a koa app.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { loadConfig } from '../../node/config.js';
import { createHostPolicy, normalisePublicUrl } from '../../node/api/publicUrl.js';

const devAddress = () => 'tnative1fq5h86uq8gu52f0elvehyfel7428h33q4pgmde';
const load = (argv: string[], env: Record<string, string> = {}) => loadConfig(['--dev', '--no-mine', ...argv], env, { cwd: '/tmp', devAddress });

describe('configuration', () => {
  test('defaults: no public URL (the listening address), every Host, batches of 20', () => {
    const c = load([]);
    expect([c.publicUrl, c.allowedHosts, c.mcpMaxBatch]).toEqual([undefined, [], 20]);
  });

  test('flags and environment variables', () => {
    const c = load(['--public-url', 'https://Node.Example.org/x402/', '--allowed-hosts', 'node.example.org,10.0.0.5:8402', '--allowed-hosts', 'B.example', '--mcp-max-batch', '5']);
    expect(c.publicUrl).toBe('https://node.example.org/x402');
    expect(c.allowedHosts).toEqual(['node.example.org', '10.0.0.5:8402', 'b.example']);
    expect(c.mcpMaxBatch).toBe(5);
    const e = load([], { NATIVE_PUBLIC_URL: 'http://127.0.0.1:9000', NATIVE_ALLOWED_HOSTS: 'a.example, b.example', NATIVE_MCP_MAX_BATCH: '7' });
    expect([e.publicUrl, e.allowedHosts, e.mcpMaxBatch]).toEqual(['http://127.0.0.1:9000', ['a.example', 'b.example'], 7]);
  });

  test('bad values are config_invalid naming the option', () => {
    for (const [argv, option] of [
      [['--public-url', 'node.example.org'], 'publicUrl'],
      [['--public-url', 'ftp://node.example.org'], 'publicUrl'],
      [['--public-url', 'https://node.example.org/?a=1'], 'publicUrl'],
      [['--allowed-hosts', 'evil.example/path'], 'allowedHosts/0'],
      [['--mcp-max-batch', '0'], 'mcpMaxBatch'],
      [['--mcp-max-batch', '101'], 'mcpMaxBatch'],
    ] as const) {
      let err: unknown;
      try {
        load([...argv]);
      } catch (e) {
        err = e;
      }
      expect([argv, (err as { code?: string }).code, (err as { payload?: { option?: string } }).payload?.option]).toEqual([argv, 'config_invalid', option]);
    }
  });

  test('normalisePublicUrl', () => {
    expect(normalisePublicUrl('https://a.example')).toBe('https://a.example');
    expect(normalisePublicUrl('https://a.example:443/')).toBe('https://a.example');
    expect(normalisePublicUrl('http://[::1]:8402/p/')).toBe('http://[::1]:8402/p');
    expect(normalisePublicUrl('https://user:pw@a.example')).toBeUndefined();
    expect(normalisePublicUrl('https://a.example/#x')).toBeUndefined();
  });
});

describe('the Host check', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    const policy = createHostPolicy({ publicUrl: 'https://node.example.org', allowedHosts: ['a.example', 'b.example:8080'] });
    const app = new Koa();
    app.use(policy.middleware);
    app.use((ctx) => {
      ctx.body = { base: policy.baseUrl() };
    });
    server = createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const get = (host: string, path = '/') =>
    new Promise<{ status: number; body: Record<string, any> }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end();
    });

  test('listed hosts (a name on any port, a name:port exactly) and the public URL pass; others are 421 misdirected_request', async () => {
    for (const host of ['a.example', 'A.EXAMPLE:9999', 'b.example:8080', 'node.example.org']) expect([host, (await get(host)).status]).toEqual([host, 200]);
    for (const host of ['evil.example', 'b.example', 'b.example:8081', 'a.example.evil', 'node.example.org:8443']) {
      const r = await get(host);
      expect([host, r.status, r.body.error.code]).toEqual([host, 421, 'misdirected_request']);
      expect(JSON.stringify(r.body)).not.toContain(host.split(':')[0] === 'evil.example' ? 'evil' : '\u0000');
    }
    expect((await get('evil.example', '/health')).status).toBe(200);
    expect((await get('a.example')).body.base).toBe('https://node.example.org');
  });
});
