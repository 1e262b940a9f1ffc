/**
 * The discovery documents as pure functions: every document validates against the schemas
 * written from the spec's tables (mainnet and devnet naming, with and without the USDC rail),
 * the proven* fields come from the ledger's totals, the catalog filters (each parameter, the
 * documented defaults and maximum, a 400 reason naming the parameter), every example request
 * passes the registry's own input check, and the OpenAPI document is 3.1 with a path per
 * endpoint whose request schemas are the registry's.
 */
import { describe, expect, test } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CATALOG, createServiceRegistry } from '../../services/index.js';
import { inputKeywords } from '../../services/inputs.js';
import { requestIsRequired, type ServiceDefinition, type ServiceUsage } from '../../services/types.js';
import { CATALOG_LIMITS, SERVICE_CATEGORIES, buildResources, parseCatalogQuery, type CatalogFilters, type CatalogSnapshot } from '../../discovery/catalog.js';
import { buildCatalog, buildDiscoveryList, buildProtocolDescriptor, buildServicesJson } from '../../discovery/documents.js';
import { TX_ID_PLACEHOLDER, exampleCalls, exampleRequest } from '../../discovery/examples.js';
import type { HealthReader, ServiceHealth } from '../../services/prober.js';
import { buildAgentCard, buildLlmsTxt, buildOpenApi } from '../../discovery/agentDocs.js';
import { DEVNET, MAINNET, SPEC_CATEGORIES, specValidators, type NetworkNames } from './schemas.js';
import { silentLogger } from '../../chain/types.js';
import { toolInputSchema } from '../../node/api/mcp.js';
import { precheckRefusal } from '../../x402/core/paidCall.js';
import type { ServiceRunContext } from '../../x402/core/ports.js';

const registry = createServiceRegistry();
const NOW = 1_800_000_000_000;
const PAY_TO = 'tnative1fq5h86uq8gu52f0elvehyfel7428h33q4pgmde';

/** Ledger totals: native-world-clock has 3 native calls and 2 USDC calls. */
const usage: ServiceUsage = {
  volume: (id) => (id === 'native-world-clock' ? { calls: 3, callsUsdc: 2, volumeBase: 600_000n, volumeUsdcAtomic: 2_000n } : { calls: 0, callsUsdc: 0, volumeBase: 0n, volumeUsdcAtomic: 0n }),
};

/** Health: services with `run` active (latency 3 ms), the others down. */
const health: HealthReader = {
  rounds: 1,
  get: (id): ServiceHealth => (registry.get(id)?.run ? { status: 'active', lastVerifiedAt: NOW - 1000, latencyMs: 3 } : { status: 'down', lastVerifiedAt: NOW - 1000, latencyMs: 0 }),
  summary: (now) => {
    const active = CATALOG.filter((d) => d.run).length;
    return { total: CATALOG.length, active, degraded: 0, down: CATALOG.length - active, unknown: 0, checkedAt: NOW - 1000, ageMs: now - (NOW - 1000) };
  },
};

function snapshot(n: NetworkNames, usdc: boolean): CatalogSnapshot {
  return {
    baseUrl: 'http://127.0.0.1:8402',
    network: n.network,
    chainId: n.chainId,
    services: CATALOG,
    nativeUsd: { microUsd: 500_000n, source: 'chain-parameters reference price', live: false },
    usage,
    health,
    now: NOW,
    payTo: PAY_TO,
    usdc: usdc ? { payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', facilitatorUrl: 'https://x402.org/facilitator', authVerified: false } : undefined,
    nodeVersion: '0.1.0',
  };
}

function filters(query: Record<string, string>, network = DEVNET.network): CatalogFilters {
  const r = parseCatalogQuery(query, network);
  if (!r.ok) throw new Error(`${r.param}: ${r.message}`);
  return r.filters;
}

describe.each([
  ['mainnet', MAINNET],
  ['devnet', DEVNET],
] as const)('documents on %s', (_label, n) => {
  const v = specValidators(n);
  for (const usdc of [false, true]) {
    test(`every document matches the spec's fields (USDC rail ${usdc ? 'on' : 'off'})`, () => {
      const snap = snapshot(n, usdc);
      const catalog = buildCatalog(snap, filters({}, n.network));
      expect(v.catalog(catalog)).toEqual([]);
      expect(catalog.resources).toHaveLength(58);
      for (const r of catalog.resources) expect(v.service(r)).toEqual([]);
      expect(v.descriptor(buildProtocolDescriptor(snap))).toEqual([]);
      expect(v.discoveryList(buildDiscoveryList(snap, { limit: 100, offset: 0 }))).toEqual([]);
      expect(v.agentCard(buildAgentCard(snap))).toEqual([]);
      expect(v.servicesJson(buildServicesJson(snap))).toEqual([]);
      const rails = catalog.resources[0].paymentRails;
      expect(rails).toEqual(usdc ? ['x402-native', 'x402-USDC-base'] : ['x402-native']);
      expect(catalog.resources[0].networks).toEqual(usdc ? [n.network, 'base'] : [n.network]);
    });
  }

  test('network fields carry the node network', () => {
    const snap = snapshot(n, true);
    const d = buildProtocolDescriptor(snap) as { network: string; chainId: number; facilitators: { mode: string }[] };
    expect(d.network).toBe(n.short);
    expect(d.chainId).toBe(n.chainId);
    expect(d.facilitators.map((f) => f.mode)).toEqual(['node-native', 'cdp']);
    const c = buildCatalog(snap, filters({}, n.network));
    expect(c.network).toBe(n.network);
    expect(c.resources.every((r) => r.metadata.network === n.network)).toBe(true);
  });
});

describe('catalog content', () => {
  const snap = snapshot(DEVNET, false);
  const all = buildCatalog(snap, filters({}));

  test('priceFeed.majors: the market-data feed’s last prices when the node has fresh ones, null otherwise', () => {
    type Feed = { priceFeed: { majors: Record<string, number | null>; majorsSource: string | null; majorsUpdatedAt: number | null } };
    const fed = buildProtocolDescriptor({ ...snap, majors: { at: NOW - 5000, source: 'CoinGecko simple/price', usd: { BTC: 87210.12, ETH: 2954.31, SOL: 139.77, BNB: 912.44, LTC: null } } }) as Feed;
    expect(fed.priceFeed).toMatchObject({ majors: { BTC: 87210.12, ETH: 2954.31, SOL: 139.77, BNB: 912.44, LTC: null }, majorsSource: 'CoinGecko simple/price', majorsUpdatedAt: NOW - 5000 });
    expect((buildProtocolDescriptor(snap) as Feed).priceFeed).toMatchObject({ majors: { BTC: null, ETH: null, SOL: null, BNB: null, LTC: null }, majorsSource: null, majorsUpdatedAt: null });
  });

  test('proven fields come from the ledger totals', () => {
    const clock = all.resources.find((r) => r.serviceId === 'native-world-clock')!;
    expect(clock.metadata).toMatchObject({ provenCalls: 3, provenCallsUsdc: 2, provenVolumeAman: 0.006, provenVolumeUsdc: 0.002, provenVolumeBase: '600000', provenVolumeUsdcAtomic: '2000' });
    const other = all.resources.find((r) => r.serviceId === 'native-tx-lookup')!;
    expect(other.metadata).toMatchObject({ provenCalls: 0, provenCallsUsdc: 0, provenVolumeAman: 0, provenVolumeUsdc: 0 });
    const d = buildProtocolDescriptor(snap) as { services: { serviceId: string; provenCalls: number; provenCallsUsdc: number }[] };
    expect(d.services.find((s) => s.serviceId === 'native-world-clock')).toMatchObject({ provenCalls: 3, provenCallsUsdc: 2 });
  });

  test('prices: NATIVE number, exact base units, USD rounded up as the USDC quote, $ text', () => {
    const clock = all.resources.find((r) => r.serviceId === 'native-world-clock')!;
    expect(clock).toMatchObject({ priceAman: 0.002, priceBase: '200000', priceUsd: 0.001, priceUsdcAtomic: '1000', price: '$0.001' });
    const risk = all.resources.find((r) => r.serviceId === 'native-risk-score')!;
    expect(risk).toMatchObject({ priceAman: 15, priceUsd: 7.5, price: '$7.5' });
  });

  test('health block and per-service health come from the prober', () => {
    expect(all.health).toEqual({ total: 58, active: CATALOG.filter((d) => d.run).length, degraded: 0, down: CATALOG.filter((d) => !d.run).length, unknown: 0, checkedAt: NOW - 1000, ageMs: 1000 });
    // Every catalog service runs now; a service without one would show as down.
    const missing = CATALOG.find((d) => !d.run);
    if (missing) expect(all.resources.find((r) => r.serviceId === missing.id)).toMatchObject({ healthStatus: 'down', latencyMs: 0 });
  });

  test('the spec categories are the categories used', () => {
    expect([...SERVICE_CATEGORIES]).toEqual(SPEC_CATEGORIES);
    expect(new Set(all.resources.map((r) => r.category))).toEqual(new Set(SPEC_CATEGORIES));
  });
});

/**
 * The catalog once said `requestRequired: false` for services that answer 400 to an empty
 * request (geo-ip, email-validate, sentiment, …). The flag every document publishes is now what
 * the registry's real input check does with an absent, empty or blank request; a service that
 * accepts one does not refuse it in its pre-payment check either, and its requestFormat says
 * what an empty request means.
 */
/** JSON-input services take the JSON object itself as `request`; every document says so (the spec's field names unchanged). */
describe('JSON-input services: the documents say request may be the JSON object', () => {
  const snap = snapshot(DEVNET, true);
  const jsonIds = registry.list().filter((d) => d.inputIsJson).map((d) => d.id);
  test('there are JSON-input services', () => expect(jsonIds.length).toBeGreaterThanOrEqual(2));
  test('x402 discovery list, services.json, llms.txt and the MCP tools', () => {
    const items = (buildDiscoveryList(snap, { limit: 100, offset: 0 }) as { items: { metadata: { serviceId: string; input: { bodyFields: { request: Record<string, any> } } } }[] }).items;
    const services = (buildServicesJson(snap) as { services: { serviceId: string; requestIsJson: boolean; requestTypes: string[] }[] }).services;
    for (const def of registry.list()) {
      const field = items.find((i) => i.metadata.serviceId === def.id)!.metadata.input.bodyFields.request;
      const listed = services.find((s) => s.serviceId === def.id)!;
      if (def.inputIsJson) {
        expect({ id: def.id, type: field.type, properties: field.properties }).toEqual({ id: def.id, type: 'object', properties: (def.inputSchema as { properties: unknown }).properties });
        expect(field.description).toContain('the same JSON as a string');
        expect(listed).toMatchObject({ requestIsJson: true, requestTypes: ['object', 'string'] });
        expect((toolInputSchema(def).properties as Record<string, { anyOf: unknown[] }>).request.anyOf[0]).toBe(def.inputSchema);
      } else {
        expect({ id: def.id, type: field.type }).toEqual({ id: def.id, type: 'string' });
        expect(listed).toMatchObject({ requestIsJson: false, requestTypes: ['string'] });
      }
    }
    const llms = buildLlmsTxt(snap);
    for (const id of jsonIds) expect(llms.split('\n').find((l) => l.includes(`/api/x402/${id})`))).toContain('A JSON object, or the same JSON as a string');
  });
});

describe('requestRequired says what the validation does with an empty request', () => {
  const snap = snapshot(DEVNET, true);
  const catalog = buildCatalog(snap, filters({}));
  const servicesJson = (buildServicesJson(snap) as { services: { serviceId: string; requestRequired: boolean }[] }).services;
  const discovery = (buildDiscoveryList(snap, { limit: 100, offset: 0 }) as { items: { metadata: { serviceId: string; requestRequired: boolean; input: { bodyFields: { request: { required: boolean } } } } }[] }).items;
  const descriptor = (buildProtocolDescriptor(snap) as { services: { serviceId: string; requestRequired: boolean }[] }).services;
  const openApi = buildOpenApi(snap) as { paths: Record<string, { post: { requestBody: { required: boolean; content: Record<string, { schema: { required: string[] } }> } } }> };
  // No providers, no outbound client, no chain: a pre-payment check can only refuse the input or say its provider is missing.
  const context = { log: silentLogger, now: () => NOW, registry } as unknown as ServiceRunContext;

  test.each(registry.list().map((d) => [d.id]))('%s', async (id) => {
    const def = registry.get(id)!;
    const refused = [undefined, '', '   '].map((r) => !registry.validateInput(def, r).ok);
    expect(new Set(refused).size).toBe(1);
    const required = refused[0];
    expect({ id, catalog: catalog.resources.find((r) => r.serviceId === id)!.metadata.requestRequired }).toEqual({ id, catalog: required });
    expect(servicesJson.find((s) => s.serviceId === id)!.requestRequired).toBe(required);
    const listed = discovery.find((i) => i.metadata.serviceId === id)!.metadata;
    expect([listed.requestRequired, listed.input.bodyFields.request.required]).toEqual([required, required]);
    expect(descriptor.find((s) => s.serviceId === id)?.requestRequired ?? required).toBe(required);
    const body = openApi.paths[`/api/x402/${id}`].post.requestBody;
    expect([body.required, body.content['application/json'].schema.required]).toEqual([required, required ? ['request'] : []]);
    expect(toolInputSchema(def).required ?? []).toEqual(required ? ['request'] : []);
    if (def.requestRequired) expect(required).toBe(true); // the spec's governing list is always published as required
    if (required) {
      expect(def.requestFormat.length).toBeGreaterThan(0);
      return;
    }
    // Accepted empty: the pre-payment check lets it through (a missing provider is a 503, not the caller's fault)…
    const pre = await precheckRefusal(def, undefined, context);
    if (pre) expect({ id, code: pre.code }).toEqual({ id, code: 'service_unavailable' });
    // …and the input text says what an empty request gets.
    expect({ id, format: def.requestFormat }).toEqual({ id, format: def.requestFormat === '' ? '' : expect.stringMatching(/\bempty\b/i) });
  });
});

describe('catalog filters', () => {
  const snap = snapshot(DEVNET, true);
  const resources = buildResources(snap);
  const ids = (q: Record<string, string>) => buildCatalog(snap, filters(q), resources).resources.map((r) => r.serviceId);

  test('defaults: everything, limit 100, offset 0', () => {
    const f = filters({});
    expect(f).toMatchObject({ limit: CATALOG_LIMITS.defaultLimit, offset: 0 });
    expect(CATALOG_LIMITS).toMatchObject({ defaultLimit: 100, maxLimit: 100, maxOffset: 10_000 });
    const doc = buildCatalog(snap, f, resources);
    expect(doc.filters).toMatchObject({ total: 58, returned: 58, limit: 100, offset: 0, defaults: { limit: 100, offset: 0 }, maximum: { limit: 100 } });
  });

  test('category', () => {
    const got = ids({ category: 'explorer' });
    expect(got.sort()).toEqual(CATALOG.filter((d) => d.category === 'explorer').map((d) => d.id).sort());
    expect(got.length).toBeGreaterThan(0);
  });

  test('maxPrice in USD (inclusive), with or without $', () => {
    const got = ids({ maxPrice: '0.001' });
    expect(got).toContain('native-world-clock');
    expect(got.every((id) => registry.get(id)!.priceBase <= 200_000n)).toBe(true);
    expect(ids({ maxPrice: '$0.001' })).toEqual(got);
    expect(ids({ maxPrice: '0' })).toEqual([]);
    expect(ids({ maxPrice: '100' })).toHaveLength(58);
  });

  test('network: base and the node network', () => {
    expect(ids({ network: 'base' })).toHaveLength(58);
    expect(ids({ network: 'native-devnet' })).toHaveLength(58);
    const noUsdc = snapshot(DEVNET, false);
    expect(buildCatalog(noUsdc, filters({ network: 'base' })).resources).toEqual([]);
  });

  test('q: every word, case-insensitive, over id, name, description and tags', () => {
    expect(ids({ q: 'clock' })).toEqual(['native-world-clock']);
    expect(ids({ q: 'IANA timezone' })).toEqual(['native-world-clock']);
    expect(ids({ q: 'pdf' }).sort()).toEqual(['native-credit-note', 'native-invoice-pdf', 'native-invoice-proforma', 'native-quote-estimate', 'native-receipt-payment'].sort());
    expect(ids({ q: 'clock pdf' })).toEqual([]);
    expect(ids({ q: '   ' })).toHaveLength(58);
  });

  test('filters combine, then limit and offset page the matches', () => {
    const reports = ids({ category: 'reports' });
    expect(ids({ category: 'reports', limit: '2' })).toEqual(reports.slice(0, 2));
    expect(ids({ category: 'reports', limit: '2', offset: '2' })).toEqual(reports.slice(2, 4));
    const doc = buildCatalog(snap, filters({ category: 'reports', limit: '2', offset: '2' }), resources);
    expect(doc.filters).toMatchObject({ total: reports.length, returned: 2, applied: { category: 'reports' } });
    expect(ids({ offset: '1000' })).toEqual([]);
  });

  test.each([
    [{ category: 'weather' }, 'category'],
    [{ maxPrice: '-1' }, 'maxPrice'],
    [{ maxPrice: 'cheap' }, 'maxPrice'],
    [{ maxPrice: '0.0000001' }, 'maxPrice'],
    [{ network: 'native-mainnet' }, 'network'],
    [{ network: 'ethereum' }, 'network'],
    [{ q: 'x'.repeat(201) }, 'q'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: '1.5' }, 'limit'],
    [{ offset: '-1' }, 'offset'],
    [{ offset: '10001' }, 'offset'],
  ] as [Record<string, string>, string][])('%j is refused naming %s', (query, param) => {
    const r = parseCatalogQuery(query, DEVNET.network);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.param).toBe(param);
      expect(r.message).toContain(param);
    }
  });

  test('a repeated parameter is refused', () => {
    const r = parseCatalogQuery({ category: ['audit', 'risk'] }, DEVNET.network);
    expect(r).toMatchObject({ ok: false, param: 'category' });
  });
});

describe('examples', () => {
  test.each(CATALOG.map((d) => [d.id, d] as [string, ServiceDefinition]))('%s: the example passes the input check', (_id, def) => {
    const ex = exampleRequest(def, { payTo: PAY_TO });
    if (requestIsRequired(def)) expect(ex).toBeDefined();
    if (ex === TX_ID_PLACEHOLDER) return; // needs a transaction of the caller's
    const checked = registry.validateInput(def, ex);
    expect(checked).toMatchObject({ ok: true });
  });

  test('copyable calls: curl quote, curl paid, CLI; --node only off the default URL', () => {
    const def = registry.get('native-world-clock')!;
    const ex = exampleCalls(def, 'http://127.0.0.1:8402', { payTo: PAY_TO, defaultNodeUrl: 'http://127.0.0.1:8402' });
    expect(ex.cli).toBe('npx native-node call native-world-clock Europe/Berlin');
    expect(ex.curlQuote).toBe(`curl -s -X POST http://127.0.0.1:8402/api/x402/native-world-clock -H 'content-type: application/json' -d '{"request":"Europe/Berlin"}'`);
    expect(ex.curlPaid).toContain(`"payment":{"txId":"<txId>","salt":"<salt>"}`);
    const other = exampleCalls(registry.get('native-token-launch-check')!, 'http://10.0.0.5:9000', { payTo: PAY_TO, defaultNodeUrl: 'http://127.0.0.1:8402' });
    expect(other.cli).toBe(`npx native-node call --node http://10.0.0.5:9000 native-token-launch-check 'SILVR|Silver Token|8|21000000'`);
    const none = exampleCalls(registry.get('native-network-stats')!, 'http://127.0.0.1:8402', { defaultNodeUrl: 'http://127.0.0.1:8402' });
    expect(none.cli).toBe('npx native-node call native-network-stats');
    expect(none.curlQuote).toContain(`-d '{}'`);
  });
});

describe('llms.txt, agent card, OpenAPI', () => {
  const snap = snapshot(DEVNET, true);

  test('llms.txt: # title, > summary, ## sections of - [title](url): note, every service listed', () => {
    const txt = buildLlmsTxt(snap);
    const lines = txt.split('\n');
    expect(lines[0]).toMatch(/^# \S/);
    expect(lines.find((l) => l.startsWith('>'))).toBeDefined();
    expect(lines.filter((l) => l.startsWith('## ')).map((l) => l.slice(3))).toEqual(['Discovery', 'Services', 'Optional']);
    for (const l of lines.filter((x) => x.startsWith('- '))) expect(l).toMatch(/^- \[[^\]]+\]\(https?:\/\/[^)]+\)(: .+)?$/);
    for (const d of CATALOG) expect(txt).toContain(`(${snap.baseUrl}/api/x402/${d.id})`);
  });

  test('agent card: one skill per service', () => {
    const card = buildAgentCard(snap) as { skills: { id: string }[] };
    expect(card.skills.map((s) => s.id)).toEqual(CATALOG.map((d) => d.id));
  });

  test('OpenAPI 3.1: every endpoint, service request schemas are the registry schemas, all schemas compile', () => {
    const doc = buildOpenApi(snap) as { openapi: string; paths: Record<string, Record<string, any>>; components: { schemas: Record<string, unknown> } };
    expect(doc.openapi).toBe('3.1.0');
    const expected = [
      '/api/x402', '/api/x402/bazaar', '/.well-known/x402', '/x402/discovery', '/services.json', '/.well-known/agent.json', '/.well-known/agent-card.json', '/llms.txt', '/openapi.json',
      '/api/mcp', '/marketplace', '/agents', '/join', '/api/v1/tx', '/api/tx', '/api/v1/tx/{id}', '/api/v1/block/{id}', '/api/v1/blocks', '/api/v1/account/{address}', '/api/v1/mempool', '/api/v1/status',
      ...CATALOG.map((d) => `/api/x402/${d.id}`),
    ];
    for (const p of expected) expect(Object.keys(doc.paths)).toContain(p);
    expect(doc.paths['/api/x402']).toHaveProperty('get');
    expect(doc.paths['/api/x402']).toHaveProperty('post');
    for (const def of CATALOG) {
      const op = doc.paths[`/api/x402/${def.id}`].post;
      const request = op.requestBody.content['application/json'].schema.properties.request;
      // The very object the registry compiled.
      if (def.inputIsJson) {
        // A JSON-input service takes the object itself or the same JSON as text: both forms, each the registry's schema.
        expect(request.anyOf[0]).toBe(def.inputSchema);
        expect(request.anyOf[1]).toMatchObject({ type: 'string', contentMediaType: 'application/json' });
        expect(request.anyOf[1].contentSchema).toBe(def.inputSchema);
        expect(request.description).toContain('JSON object');
      } else expect({ ...request, description: undefined }).toEqual({ ...def.inputSchema, description: undefined });
      expect(op.responses).toHaveProperty('402');
      expect(op.requestBody.content['application/json'].schema.required).toEqual(requestIsRequired(def) ? ['request'] : []);
    }
    const bazaarParams = doc.paths['/api/x402/bazaar'].get.parameters.map((p: { name: string }) => p.name);
    expect(bazaarParams).toEqual(['category', 'maxPrice', 'network', 'q', 'limit', 'offset']);
    // Every schema in the document is a valid JSON Schema 2020-12 (the OpenAPI 3.1 dialect).
    const ajv = new Ajv2020({ strict: false });
    ajv.addFormat('uri', true);
    for (const k of inputKeywords) ajv.addKeyword(k);
    ajv.addSchema({ $id: 'openapi', components: doc.components });
    const schemas: unknown[] = [];
    const walk = (node: unknown, key?: string) => {
      if (Array.isArray(node)) return node.forEach((n) => walk(n));
      if (typeof node !== 'object' || node === null) return;
      if (key === 'schema' || key === 'contentSchema') schemas.push(node);
      for (const [k, v] of Object.entries(node)) walk(v, k);
    };
    walk(doc.paths);
    expect(schemas.length).toBeGreaterThan(100);
    for (const s of schemas) expect(() => ajv.compile(JSON.parse(JSON.stringify(s).replace(/#\/components/g, 'openapi#/components')))).not.toThrow();
  });
});
