/**
 * The node's MCP side built once, in-process over the real registry and the official
 * SDK's transport: many requests reuse one prepared server (requests in flight at once get one
 * each, then return them), the `tools/list` result is built and serialised once per catalog
 * version (again when the price, the catalog key or what is for sale changes), and the answer
 * spliced from the cached JSON is exactly the list the tools describe, with each message's own id.
 */
import { describe, expect, test } from '@jest/globals';
// The SDK's modules, loaded here first: jest's ESM loader fails the endpoint's parallel dynamic imports otherwise ('not in cache').
import '@modelcontextprotocol/sdk/server/index.js';
import '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import '@modelcontextprotocol/sdk/types.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { callTool, McpEndpoint, type McpModules } from '../../node/api/mcp.js';
import { createServiceRegistry } from '../../services/index.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';
import { createPaidCallCore } from '../../x402/core/paidCall.js';

const params = createDevnetChainParams({ genesisTime: 1_700_000_000 });
const registry = createServiceRegistry();
const reference = createReferencePriceSource(params);
let microUsd = reference.get().microUsd;
const nativeUsd = { get: () => ({ ...reference.get(), microUsd }) };
let forSale = true;
const core = createPaidCallCore({
  catalog: registry,
  params,
  nativeUsd,
  requestBudgetMs: 1000,
  native: { payTo: 'tnative1fq5h86uq8gu52f0elvehyfel7428h33q4pgmde', sellerId: '0123456789abcdef', requiredConfirmations: 1, settle: () => Promise.reject(new Error('not paid here')) },
});
let catalogVersion = 'v1';
const m: McpModules = {
  registry,
  paidCalls: { ...core, isForSale: (d) => forSale && core.isForSale(d) } as McpModules['paidCalls'],
  params,
  nativeUsd,
  catalog: () => {
    throw new Error('not used here');
  },
  catalogKey: () => catalogVersion,
  version: 'test',
};
const BASE = 'http://127.0.0.1:8402';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const list = (ids: number[]) => ids.map((id) => ({ jsonrpc: '2.0', id, method: 'tools/list' }));

type ListAnswer = { id: number; result: { tools: { name: string; description: string; _meta?: Record<string, unknown> }[] } };

describe('McpEndpoint', () => {
  test('one prepared server for sequential requests; one per request in flight at once', async () => {
    const ep = new McpEndpoint(m, () => BASE);
    for (let i = 0; i < 30; i++) expect((await ep.handle(`${BASE}/api/mcp`, HEADERS, { jsonrpc: '2.0', id: i, method: 'ping' })).status).toBe(200);
    expect(ep.serversMade).toBe(1);
    await Promise.all(Array.from({ length: 4 }, (_, i) => ep.handle(`${BASE}/api/mcp`, HEADERS, list([i]))));
    expect(ep.serversMade).toBeLessThanOrEqual(4);
    const made = ep.serversMade;
    for (let i = 0; i < 10; i++) await ep.handle(`${BASE}/api/mcp`, HEADERS, list([i]));
    expect(ep.serversMade).toBe(made);
  });

  test('the tool list is built and serialised once per catalog version, and spliced whole into each answer', async () => {
    const ep = new McpEndpoint(m, () => BASE);
    const answers: ListAnswer[][] = [];
    for (let i = 0; i < 5; i++) {
      const r = await ep.handle(`${BASE}/api/mcp`, HEADERS, list([10 * i + 1, 10 * i + 2, 10 * i + 3]));
      expect(r.status).toBe(200);
      answers.push(JSON.parse(r.text) as ListAnswer[]);
    }
    expect(ep.listsBuilt).toBe(1);
    const first = answers[0][0].result;
    expect(first.tools.map((t) => t.name).slice(0, 2)).toEqual(['search_services', 'get_quote']);
    expect(first.tools.length).toBe(registry.list().length + 2);
    for (const batch of answers) for (const a of batch) expect(a.result).toEqual(first);
    expect(answers[4].map((a) => a.id).sort()).toEqual([41, 42, 43]);
    // No stand-in token left anywhere.
    expect(JSON.stringify(answers)).not.toContain('native-mcp-tools-');

    // A new catalog version, a new price, another for-sale state: built again, once each.
    catalogVersion = 'v2';
    await ep.handle(`${BASE}/api/mcp`, HEADERS, list([1, 2]));
    expect(ep.listsBuilt).toBe(2);
    microUsd *= 2n;
    const repriced = JSON.parse((await ep.handle(`${BASE}/api/mcp`, HEADERS, list([1, 2]))).text) as ListAnswer[];
    expect(ep.listsBuilt).toBe(3);
    const clock = (a: ListAnswer) => a.result.tools.find((t) => t.name === 'native-world-clock')!;
    expect(clock(repriced[0])._meta!.priceUsd).toBe(2 * (clock(answers[0][0])._meta!.priceUsd as number));
    forSale = false;
    const closed = JSON.parse((await ep.handle(`${BASE}/api/mcp`, HEADERS, list([1, 2]))).text) as ListAnswer[];
    expect(ep.listsBuilt).toBe(4);
    expect(clock(closed[0]).description).toContain('Currently unavailable on this node.');
    forSale = true;
  });

  test('a request id that looks like a stand-in is echoed as sent', async () => {
    const ep = new McpEndpoint(m, () => BASE);
    const r = JSON.parse((await ep.handle(`${BASE}/api/mcp`, HEADERS, { jsonrpc: '2.0', id: 'native-mcp-tools-00000000000000000000000000000000', method: 'tools/list' })).text) as { id: string; result: { tools: unknown[] } };
    expect(r.id).toBe('native-mcp-tools-00000000000000000000000000000000');
    expect(r.result.tools.length).toBeGreaterThan(50);
  });

  test('search_services and get_quote refuse an argument their input schema does not name, before reading the catalog', async () => {
    // m.catalog throws when read: an unknown argument must be refused before any search, never ignored.
    for (const args of [{ query: 'clock' }, { q: 'clock', categry: 'utility' }]) {
      const r = await callTool(m, BASE, 'search_services', args, undefined);
      expect(r).toMatchObject({ isError: true, structuredContent: { error: { code: 'invalid_query', param: Object.keys(args).find((k) => k !== 'q'), message: expect.stringContaining('unknown argument') } } });
    }
    const q = await callTool(m, BASE, 'get_quote', { serviceId: 'native-world-clock', reqest: 'x' }, undefined);
    expect(q).toMatchObject({ isError: true, structuredContent: { error: { code: 'invalid_request', param: 'reqest' } } });
  });
});
