/**
 * One public base URL and MCP at the cost of one request per message, against real
 * devnet node processes:
 *
 *   - node A (defaults: the public URL is the listening address, every Host answered, USDC rail
 *     on so the 402 carries every dialect): a request with `Host: evil.example` to every
 *     discovery document, the 402 quote (body, PAYMENT-REQUIRED, WWW-Authenticate) and every MCP
 *     answer (initialize, tools/list, search_services, get_quote, a paid tool's quote) names the
 *     listening address and never evil.example; a bazaar read with a random Host is the very
 *     document a normal read gets; an MCP batch over `--mcp-max-batch` (default 20) is refused
 *     400 with JSON-RPC -32600 and `data.code` `mcp_batch_too_large`, a batch at the cap is
 *     answered message by message;
 *   - node B (`--public-url https://node.example --allowed-hosts node.example,127.0.0.1`, the
 *     expensive-endpoint limit at burst 12, rate 1/s, `--mcp-max-batch 5`): another Host gets 421
 *     `misdirected_request` (documents, status, quotes, MCP; `/health` still answers), the allowed
 *     ones get documents naming https://node.example; batches of 5 take 5 tokens each: two pass,
 *     the third is 429 `rate_limited` with Retry-After (counted per request, 12 would pass).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const USDC_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const EVIL = 'evil.example';
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

let a: NodeProc;
let b: NodeProc;

beforeAll(async () => {
  const dir = await tmpDir('native-public-host-');
  const common = ['--dev', '--block-time', '1', '--http-port', '0', '--no-stratum'];
  [a, b] = await Promise.all([
    startNode([...common, '--data-dir', join(dir, 'a'), '--usdc-pay-to', USDC_PAY_TO, '--facilitator-url', 'http://127.0.0.1:9'], { cwd: dir }),
    startNode([...common, '--data-dir', join(dir, 'b'), '--public-url', 'https://node.example/', '--allowed-hosts', 'node.example,127.0.0.1', '--http-expensive-rate', '1', '--http-expensive-burst', '12', '--mcp-max-batch', '5'], { cwd: dir }),
  ]);
}, 90_000);

afterAll(async () => {
  await Promise.all([a && stopProcess(a), b && stopProcess(b)]);
  await cleanupTmp();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request with a chosen Host header (fetch does not let a caller set Host). */
function send(base: string, method: string, path: string, opts: { host?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const u = new URL(base);
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, method, path, headers: { ...(opts.host ? { host: opts.host } : {}), ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}), ...opts.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Everything an answer says: its body and every header, base64 JSON headers (PAYMENT-REQUIRED) decoded too. */
function everything(r: Answer): string {
  const parts = [r.text];
  for (const [k, v] of Object.entries(r.headers)) {
    for (const one of Array.isArray(v) ? v : [v ?? '']) {
      parts.push(`${k}: ${one}`);
      if (/^[A-Za-z0-9+/=_-]{16,}$/.test(one)) parts.push(Buffer.from(one, 'base64').toString('utf8'));
    }
  }
  return parts.join('\n');
}

const rpc = (id: number, method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
const INIT = rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'host-test', version: '1' } });

const DOCUMENTS = ['/api/x402/bazaar', '/api/x402/bazaar?q=clock', '/api/x402', '/.well-known/x402', '/.well-known/x402.json', '/x402/discovery', '/services.json', '/.well-known/agent.json', '/.well-known/agent-card.json', '/llms.txt', '/openapi.json', '/marketplace', '/agents', '/join'];

describe('one public base URL: the Host header names nothing', () => {
  test('every discovery document read with Host: evil.example names the listening address, never the Host', async () => {
    for (const path of DOCUMENTS) {
      const r = await send(a.url, 'GET', path, { host: EVIL });
      expect([path, r.status]).toEqual([path, 200]);
      expect([path, everything(r).includes(EVIL)]).toEqual([path, false]);
    }
    for (const path of ['/api/x402/bazaar', '/.well-known/x402', '/x402/discovery', '/services.json', '/.well-known/agent-card.json', '/llms.txt', '/openapi.json']) {
      expect([path, (await send(a.url, 'GET', path, { host: EVIL })).text.includes(a.url)]).toEqual([path, true]);
    }
  });

  test('a random Host gets the very document a normal read gets (one cached document, no Host in its key)', async () => {
    // Within one document lifetime (1 s) both reads are served from the same kept document.
    let same = false;
    for (let i = 0; i < 5 && !same; i++) {
      const plain = await send(a.url, 'GET', '/api/x402/bazaar');
      const random = await send(a.url, 'GET', '/api/x402/bazaar', { host: `h${i}-${Math.random().toString(36).slice(2)}.example:1234` });
      same = plain.text === random.text;
    }
    expect(same).toBe(true);
  });

  test('the 402 quote (body, PAYMENT-REQUIRED, WWW-Authenticate) names the listening address whatever the Host', async () => {
    for (const [path, body] of [
      ['/api/x402/native-world-clock', { request: 'Europe/Berlin' }],
      ['/api/x402', { serviceId: 'native-world-clock', request: 'Europe/Berlin' }],
    ] as const) {
      const r = await send(a.url, 'POST', path, { host: EVIL, body });
      expect(r.status).toBe(402);
      expect(everything(r).includes(EVIL)).toBe(false);
      const quote = JSON.parse(r.text) as { accepts: { scheme: string; resource: string }[] };
      expect(quote.accepts.map((x) => x.scheme)).toEqual(['native-x402', 'exact']);
      for (const option of quote.accepts) expect(option.resource).toBe(`${a.url}/api/x402/native-world-clock`);
      expect(r.headers['payment-required']).toBeDefined();
      expect(String(r.headers['www-authenticate'])).toContain(`realm="${new URL(a.url).host}"`);
    }
  });

  test('MCP answers (initialize, tools/list, search, quotes) name the listening address, never the Host', async () => {
    const batch = [
      INIT,
      rpc(2, 'tools/list'),
      rpc(3, 'tools/call', { name: 'search_services', arguments: { q: 'clock' } }),
      rpc(4, 'tools/call', { name: 'get_quote', arguments: { serviceId: 'native-world-clock', request: 'Asia/Tokyo' } }),
      rpc(5, 'tools/call', { name: 'native-world-clock', arguments: { request: 'Asia/Tokyo' } }),
    ];
    // initialize must travel alone; the rest as one batch.
    const init = await send(a.url, 'POST', '/api/mcp', { host: EVIL, body: INIT, headers: MCP_HEADERS });
    expect(init.status).toBe(200);
    expect(JSON.parse(init.text).result.instructions).toContain(`${a.url}/api/v1/tx`);
    expect(everything(init).includes(EVIL)).toBe(false);
    const r = await send(a.url, 'POST', '/api/mcp', { host: EVIL, body: batch.slice(1), headers: MCP_HEADERS });
    expect(r.status).toBe(200);
    expect(everything(r).includes(EVIL)).toBe(false);
    const out = JSON.parse(r.text) as { id: number; result: Record<string, any> }[];
    expect(out.map((m) => m.id).sort()).toEqual([2, 3, 4, 5]);
    const byId = new Map(out.map((m) => [m.id, m.result]));
    expect(byId.get(2)!.tools.length).toBeGreaterThan(50);
    expect(byId.get(3)!.structuredContent.services[0].endpoint).toBe(`${a.url}/api/x402/native-world-clock`);
    expect(byId.get(4)!.structuredContent.accepts[0].resource).toBe(`${a.url}/api/x402/native-world-clock`);
    expect(byId.get(5)!.isError).toBe(true);
    expect(byId.get(5)!.structuredContent.accepts[1].resource).toBe(`${a.url}/api/x402/native-world-clock`);
  });
});

describe('MCP batches', () => {
  test('a batch over --mcp-max-batch (default 20) is refused with a stable code; one at the cap is answered message by message', async () => {
    const over = await send(a.url, 'POST', '/api/mcp', { body: Array.from({ length: 21 }, (_, i) => rpc(i + 1, 'tools/list')), headers: MCP_HEADERS });
    expect(over.status).toBe(400);
    expect(JSON.parse(over.text)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('at most 20'), data: { code: 'mcp_batch_too_large', maxBatch: 20, received: 21 } } });
    const at = await send(a.url, 'POST', '/api/mcp', { body: Array.from({ length: 20 }, (_, i) => rpc(i + 1, i % 2 ? 'tools/list' : 'ping')), headers: MCP_HEADERS });
    expect(at.status).toBe(200);
    const out = JSON.parse(at.text) as { id: number; result: { tools?: unknown[] } }[];
    expect(out.map((m) => m.id).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (const m of out) {
      if (m.id % 2 === 0) expect(m.result.tools!.length).toBeGreaterThan(50);
      else expect(m.result).toEqual({});
    }
  });

  test('each message of a batch counts against the per-address limit (burst 12: two batches of 5 pass, the third is 429)', async () => {
    const batch = Array.from({ length: 5 }, (_, i) => rpc(i + 1, 'tools/list'));
    const first = await send(b.url, 'POST', '/api/mcp', { body: batch, headers: MCP_HEADERS });
    const second = await send(b.url, 'POST', '/api/mcp', { body: batch, headers: MCP_HEADERS });
    const third = await send(b.url, 'POST', '/api/mcp', { body: batch, headers: MCP_HEADERS });
    expect([first.status, second.status, third.status]).toEqual([200, 200, 429]);
    expect(JSON.parse(third.text).error).toMatchObject({ code: 'rate_limited' });
    expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The answers that passed name the operator's public URL.
    expect(JSON.parse(first.text)).toHaveLength(5);
    const over = await send(b.url, 'POST', '/api/mcp', { body: [...batch, rpc(6, 'ping')], headers: MCP_HEADERS });
    expect(JSON.parse(over.text).error.data).toEqual({ code: 'mcp_batch_too_large', maxBatch: 5, received: 6 });
  });
});

describe('--public-url and --allowed-hosts', () => {
  test('another Host is refused 421 misdirected_request (documents, status, quotes, MCP); /health still answers', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/x402/bazaar', undefined],
      ['GET', '/api/v1/status', undefined],
      ['GET', '/.well-known/x402', undefined],
      ['POST', '/api/x402/native-world-clock', { request: 'Europe/Berlin' }],
      ['POST', '/api/mcp', rpc(1, 'tools/list')],
    ] as const) {
      const r = await send(b.url, method, path, { host: EVIL, body, headers: method === 'POST' ? MCP_HEADERS : {} });
      expect([path, r.status]).toEqual([path, 421]);
      expect(JSON.parse(r.text).error.code).toBe('misdirected_request');
      expect(everything(r).includes(EVIL)).toBe(false);
      expect(JSON.parse(r.text).error.message).toContain('https://node.example');
    }
    expect((await send(b.url, 'GET', '/health', { host: EVIL })).status).toBe(200);
  });

  test('the allowed hosts get documents and quotes naming the public URL only', async () => {
    for (const host of ['node.example', 'NODE.example:443', new URL(b.url).host]) {
      const doc = await send(b.url, 'GET', '/api/x402/bazaar?q=clock', { host });
      expect([host, doc.status]).toEqual([host, 200]);
      const resources = (JSON.parse(doc.text) as { resources: { endpoint: string }[] }).resources;
      expect(resources.map((r) => r.endpoint)).toEqual(['https://node.example/api/x402/native-world-clock']);
      expect(doc.text.includes('127.0.0.1')).toBe(false);
      const llms = await send(b.url, 'GET', '/llms.txt', { host });
      expect(llms.text).toContain('https://node.example/');
      expect(llms.text.includes('127.0.0.1')).toBe(false);
    }
  });
});
