/**
 * The free discovery side of the node, wired: the health prober and the routes of every free
 * surface, all generated live from the service registry, the settlement ledger, the prober and
 * the price source.
 *
 *   GET  /api/x402/bazaar               catalog (own-bazaar) with filters
 *   GET  /api/x402, /.well-known/x402   protocol descriptor
 *   GET  /x402/discovery                x402 discovery list (?type=http&limit=&offset=)
 *   GET  /services.json                 services with input schemas and examples
 *   GET  /.well-known/agent.json, /.well-known/agent-card.json   A2A agent card
 *   GET  /llms.txt                      llms.txt
 *   GET  /openapi.json                  OpenAPI 3.1 of every endpoint
 *   POST /api/mcp                       MCP (node/api/mcp.ts)
 *   GET  /marketplace, /agents, /join   pages for people (discovery/pages/)
 *
 * Every free surface answers cross-origin reads (`Access-Control-Allow-Origin: *`, preflight
 * included). Documents are generated from live state and kept, serialised (and gzipped for
 * clients that accept it), for at most `DOCUMENT_TTL_MS` and only while nothing they show has
 * changed: the prober has not finished a round, no payment has settled, the price is the same.
 * A read of a kept document costs no building; `updatedAt` says when it was generated.
 *
 * Every document names one base URL, the node's public one (`--public-url`, else the listening
 * address; node/api/publicUrl.ts), never the request's `Host`: the kept documents are the same
 * for every Host, and their keys do not include it.
 */
import { gzipSync } from 'node:zlib';
import { Router } from '@koa/router';
import type Koa from 'koa';
import { NodeError } from '../../consensus/errors.js';
import type { ChainParams } from '../../consensus/params.js';
import { silentLogger, type ChainReader, type Logger } from '../../chain/types.js';
import { toHex } from '../../consensus/hash.js';
import { encodeTx, txId } from '../../consensus/tx.js';
import type { ServiceRegistry } from '../../services/registry.js';
import type { NativeUsdSource, ServiceContext, ServiceDefinition, ServiceUsage } from '../../services/types.js';
import { DEFAULT_FACILITATOR_URL, PATHS, buildResources, parseCatalogQuery, type CatalogService, type CatalogSnapshot, type RegisteredAgent, type UsdcRail } from '../../discovery/catalog.js';
import { DISCOVERY_LIMITS, buildCatalog, buildDiscoveryList, buildProtocolDescriptor, buildServicesJson } from '../../discovery/documents.js';
import { createHealthProber, type HealthProber, type HealthProberOptions, type HealthReader, type ServiceHealth } from '../../services/prober.js';
import { payeeRefusal, type PaidCallCore } from '../../x402/core/paidCall.js';
import { buildAgentCard, buildLlmsTxt, buildOpenApi } from '../../discovery/agentDocs.js';
import { freshMajors } from '../../services/providers/index.js';
import { HttpErrorCode } from './http.js';
import { createMcpRouter } from './mcp.js';
import { localBaseUrl } from './publicUrl.js';
import { renderAgentsPage, agentsJson } from '../../discovery/pages/agents.js';
import { renderJoinPage } from '../../discovery/pages/join.js';
import { renderMarketplacePage } from '../../discovery/pages/marketplace.js';

/** Options of the discovery side. */
export interface DiscoveryOptions {
  /** Health prober options (interval, jitter, concurrency, timeouts). */
  readonly health?: Partial<HealthProberOptions>;
  /** Facilitator of the USDC rail (when the rail is on). */
  readonly facilitatorUrl?: string;
  /** Whether the node checks USDC authorizations itself before the facilitator. */
  readonly usdcAuthVerified?: boolean;
  /** Software version shown in the documents. */
  readonly version: string;
  /** The node's default URL (the CLI's `--node` default): examples omit `--node` there. */
  readonly defaultNodeUrl?: string;
  /**
   * The base URL the documents, MCP and quotes name (the node's public URL). Default: the address
   * the connection reached (socket's local address), never the request's Host.
   */
  readonly baseUrl?: () => string;
  /** JSON-RPC messages one `POST /api/mcp` may carry (default `DEFAULT_MCP_MAX_BATCH`). */
  readonly mcpMaxBatch?: number;
}

/** What discovery reads. */
export interface DiscoveryModules {
  /** The services; a live registry also gives provider services' live health and a version that changes with them. */
  readonly registry: ServiceRegistry & { readonly version?: number; liveHealth?(id: string): ServiceHealth | undefined; agents?(): readonly RegisteredAgent[] };
  readonly usage: ServiceUsage;
  readonly nativeUsd: NativeUsdSource;
  /** The paid-call core: the payees the documents name, what is for sale, and MCP's paid tools. */
  readonly paidCalls: PaidCallCore;
  readonly params: ChainParams;
  /** What health checks run with. */
  readonly context: Omit<ServiceContext, 'signal'>;
  readonly logger?: Logger;
  /** Unix ms (tests). */
  readonly now?: () => number;
}

/** The running discovery side. */
export interface Discovery {
  readonly router: Router;
  readonly prober: HealthProber;
  /** The snapshot and cached catalog entries (for the base URL given; the node gives its public one). */
  catalog(baseUrl: string): { snap: CatalogSnapshot; resources: readonly CatalogService[] };
  start(): void;
  stop(): Promise<void>;
}

/** Longest time a generated document is served again, ms. */
export const DOCUMENT_TTL_MS = 1_000;
/** Most documents kept at once (base URL × path × query); the store is emptied when full. */
const MAX_KEPT_DOCUMENTS = 512;

/** A generated document, serialised. */
interface KeptDocument {
  readonly key: string;
  readonly at: number;
  readonly type: string;
  readonly status: number;
  readonly body: Buffer;
  gzip?: Buffer;
}

/** CORS for cross-origin reads of a free surface. */
function allowCrossOrigin(ctx: Koa.Context): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
  ctx.set('Access-Control-Allow-Headers', 'content-type, accept');
  ctx.set('Access-Control-Max-Age', '600');
}


/**
 * A transaction mined on the chain, for native-tx-lookup's example (so its marketplace call runs
 * as printed): the newest one within the last 50 blocks, looked for in the background: every
 * second while none is known, and every 10 s whether the known one is still on the best chain.
 */
function sampleTransaction(chain: ChainReader, now: () => number): { current(): string | undefined } {
  let id: string | undefined;
  let checkedAt = -Infinity;
  const find = async (): Promise<string | undefined> => {
    if (id !== undefined && (await chain.getTx(id))) return id;
    for (let h = chain.tip.height; h > 0 && h > chain.tip.height - 50; h--) {
      const entry = chain.getEntryByHeight(h);
      if (!entry || entry.txCount === 0) continue;
      const block = await chain.getBlock(entry.hashHex);
      if (block?.txs.length) return toHex(txId(encodeTx(block.txs[0])));
    }
    return undefined;
  };
  return {
    current() {
      if (now() - checkedAt >= (id === undefined ? 1_000 : 10_000)) {
        checkedAt = now();
        void find().then(
          (found) => (id = found),
          () => undefined,
        );
      }
      return id;
    },
  };
}

/** The services' refusals for the payee's funds now (x402/core/paidCall.ts `payeeRefusal`); undefined while no refund is stuck. */
function payeeRefusalsNow(core: PaidCallCore): ((def: ServiceDefinition) => { code: string; message: string } | undefined) | undefined {
  const cover = core.refundCover();
  if (!cover || cover.stuck.count === 0) return undefined;
  return (def) => {
    const e = payeeRefusal(def, cover);
    return e && { code: e.code, message: e.message };
  };
}

/** What of the payee's funds the catalog entries depend on: nothing while no refund is stuck. */
function coverKey(core: PaidCallCore): string {
  const c = core.refundCover();
  return c && c.stuck.count > 0 ? `${c.stuck.count}:${c.spendableBase}:${c.refundFeeBase}` : '-';
}

/** Builds the discovery side (call `start()` to run the prober). */
export function createDiscovery(opts: DiscoveryOptions, m: DiscoveryModules): Discovery {
  const log = m.logger ?? silentLogger;
  const now = m.now ?? Date.now;
  // The public base URL; never the request's Host (see module comment).
  const baseUrlOf = (ctx: Koa.Context): string => opts.baseUrl?.() ?? localBaseUrl(ctx);
  const usdcPayTo = m.paidCalls.usdcPayTo;
  const usdc: UsdcRail | undefined = usdcPayTo ? { payTo: usdcPayTo, facilitatorUrl: opts.facilitatorUrl ?? DEFAULT_FACILITATOR_URL, authVerified: opts.usdcAuthVerified ?? false } : undefined;
  const prober = createHealthProber(
    { services: () => m.registry.list(), isAvailable: (def) => m.paidCalls.isForSale(def), context: m.context, logger: log },
    opts.health,
  );

  const sample = sampleTransaction(m.context.chain, now);
  const snapshot = (baseUrl: string): CatalogSnapshot => ({
    baseUrl,
    network: m.params.network,
    chainId: m.params.chainId,
    services: m.registry.list(),
    nativeUsd: m.nativeUsd.get(),
    usage: m.usage,
    health: m.registry.liveHealth ? withLiveHealth(prober, m.registry.liveHealth) : prober,
    now: now(),
    payTo: m.paidCalls.nativePayTo,
    seller: m.paidCalls.nativeSeller,
    usdc,
    nodeVersion: opts.version,
    agents: m.registry.agents?.().map((a) => ({ name: a.name, address: a.address, description: a.description, capabilities: [...a.capabilities], online: a.online })),
    majors: freshMajors(m.context, now()),
    payeeRefusal: payeeRefusalsNow(m.paidCalls),
    sampleTxId: sample.current(),
  });

  // Entries change when health is re-probed, a payment settles or the price moves: that is the key.
  const cache = new Map<string, { key: string; resources: CatalogService[] }>();
  const cacheKey = (snap: CatalogSnapshot) => {
    let calls = 0;
    for (const d of snap.services) {
      const v = snap.usage.volume(d.id);
      calls += v.calls + v.callsUsdc;
    }
    return `${prober.rounds}|${calls}|${snap.nativeUsd.microUsd}|${snap.services.length}|${m.registry.version ?? 0}|${coverKey(m.paidCalls)}|${snap.sampleTxId ?? ''}`;
  };
  const catalog = (baseUrl: string) => {
    const snap = snapshot(baseUrl);
    const key = cacheKey(snap);
    let hit = cache.get(baseUrl);
    if (!hit || hit.key !== key) {
      // One base URL on a node (its public one); a few in tests without one (the local addresses). Bound it anyway.
      if (!hit && cache.size >= 16) cache.clear();
      hit = { key, resources: buildResources(snap) };
      cache.set(baseUrl, hit);
    }
    return { snap, resources: hit.resources, key };
  };

  // Serialised documents by base URL (the public one: the same for every Host), path and query (see module comment).
  const kept = new Map<string, KeptDocument>();
  const send = (ctx: Koa.Context, id: string, type: string, build: (snap: CatalogSnapshot, resources: readonly CatalogService[]) => unknown, status = 200) => {
    const baseUrl = baseUrlOf(ctx);
    const { snap, resources, key } = catalog(baseUrl);
    const where = `${baseUrl} ${id}`;
    let doc = kept.get(where);
    if (!doc || doc.key !== key || snap.now - doc.at >= DOCUMENT_TTL_MS || snap.now < doc.at) {
      const built = build(snap, resources);
      if (!kept.has(where) && kept.size >= MAX_KEPT_DOCUMENTS) kept.clear();
      doc = { key, at: snap.now, type, status, body: Buffer.from(typeof built === 'string' ? built : JSON.stringify(built)) };
      kept.set(where, doc);
    }
    ctx.status = doc.status;
    ctx.type = doc.type;
    ctx.vary('Accept-Encoding');
    ctx.set('Cache-Control', 'no-cache');
    // Worth it only for bodies larger than a packet or so.
    if (doc.body.length > 1400 && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      doc.gzip ??= gzipSync(doc.body, { level: 6 });
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = doc.gzip;
    } else {
      ctx.body = doc.body;
    }
  };
  const JSON_TYPE = 'application/json; charset=utf-8';

  const router = new Router();
  const free = (path: string, handler: (ctx: Koa.Context) => void | Promise<void>) => {
    router.get(path, async (ctx) => {
      allowCrossOrigin(ctx);
      await handler(ctx);
    });
    router.options(path, (ctx) => {
      allowCrossOrigin(ctx);
      ctx.status = 204;
    });
  };
  const invalidQuery = (param: string, message: string) => new NodeError(HttpErrorCode.INVALID_QUERY, message, { param });

  free(PATHS.bazaar, (ctx) => {
    const parsed = parseCatalogQuery(ctx.query, m.params.network);
    if (!parsed.ok) throw invalidQuery(parsed.param, parsed.message);
    const f = parsed.filters;
    const id = `bazaar ${JSON.stringify([f.category, f.maxPrice, f.network, f.q, f.limit, f.offset])}`;
    send(ctx, id, JSON_TYPE, (snap, resources) => buildCatalog(snap, f, resources));
  });
  const descriptor = (ctx: Koa.Context) => send(ctx, 'descriptor', JSON_TYPE, (snap) => buildProtocolDescriptor(snap));
  free(PATHS.descriptor, descriptor);
  free(PATHS.wellKnown, descriptor);
  free(PATHS.discovery, (ctx) => {
    const type = ctx.query.type;
    if (type !== undefined && type !== '' && type !== 'http') throw invalidQuery('type', 'type must be http (the only resource type here)');
    const page: { limit: number; offset: number } = { limit: DISCOVERY_LIMITS.defaultLimit, offset: 0 };
    for (const [name, max, min] of [['limit', DISCOVERY_LIMITS.maxLimit, 1], ['offset', DISCOVERY_LIMITS.maxOffset, 0]] as const) {
      const raw = ctx.query[name];
      if (raw === undefined || raw === '') continue;
      if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw invalidQuery(name, `${name} must be an integer from ${min} to ${max}`);
      page[name] = Number(raw);
    }
    send(ctx, `discovery ${page.limit} ${page.offset}`, JSON_TYPE, (snap) => buildDiscoveryList(snap, page));
  });
  free(PATHS.servicesJson, (ctx) => send(ctx, 'services', JSON_TYPE, (snap) => buildServicesJson(snap)));
  const agentCard = (ctx: Koa.Context) => send(ctx, 'agent-card', JSON_TYPE, (snap) => buildAgentCard(snap));
  free(PATHS.agentCard, agentCard);
  free(PATHS.agentCardV1, agentCard);
  free(PATHS.llmsTxt, (ctx) => send(ctx, 'llms', 'text/plain; charset=utf-8', (snap) => buildLlmsTxt(snap)));
  free(PATHS.openApi, (ctx) => send(ctx, 'openapi', JSON_TYPE, (snap) => buildOpenApi(snap)));

  const HTML_TYPE = 'text/html; charset=utf-8';
  const pageHeaders = (ctx: Koa.Context) => {
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'");
    ctx.set('X-Content-Type-Options', 'nosniff');
  };
  free(PATHS.marketplace, (ctx) => {
    // The page shares the catalog's filters; a bad value is shown on the page with a 400.
    const q = typeof ctx.query.q === 'string' ? ctx.query.q : '';
    const category = typeof ctx.query.category === 'string' ? ctx.query.category : '';
    const parsed = parseCatalogQuery({ q, category }, m.params.network);
    pageHeaders(ctx);
    send(
      ctx,
      `marketplace ${JSON.stringify([q, category])}`,
      HTML_TYPE,
      (snap, resources) => renderMarketplacePage({ snap, resources, q, category, error: parsed.ok ? undefined : parsed.message, filters: parsed.ok ? parsed.filters : undefined, defaultNodeUrl: opts.defaultNodeUrl }),
      parsed.ok ? 200 : 400,
    );
  });
  free(PATHS.agents, (ctx) => {
    ctx.vary('Accept');
    if (ctx.accepts('html', 'json') === 'json') return send(ctx, 'agents.json', JSON_TYPE, (snap) => agentsJson(snap));
    pageHeaders(ctx);
    send(ctx, 'agents.html', HTML_TYPE, (snap) => renderAgentsPage(snap));
  });
  free(PATHS.join, (ctx) => {
    pageHeaders(ctx);
    send(ctx, 'join', HTML_TYPE, (snap) => renderJoinPage(snap));
  });

  const mcp = createMcpRouter({
    registry: m.registry,
    paidCalls: m.paidCalls,
    params: m.params,
    nativeUsd: m.nativeUsd,
    catalog: (baseUrl) => {
      const { snap, resources } = catalog(baseUrl);
      return { snap, resources };
    },
    catalogKey: (baseUrl) => catalog(baseUrl).key,
    baseUrl: opts.baseUrl,
    maxBatch: opts.mcpMaxBatch,
    version: opts.version,
    logger: log,
  });
  router.use(mcp.routes());
  router.use(mcp.allowedMethods());

  return {
    router,
    prober,
    catalog,
    start() {
      prober.start();
    },
    async stop() {
      await prober.stop();
    },
  };
}

/** The prober's health, with the live health of provider services (their agent polls or not) over it. */
function withLiveHealth(prober: HealthReader, live: (id: string) => ServiceHealth | undefined): HealthReader {
  return {
    get: (id) => live(id) ?? prober.get(id),
    summary: (now) => prober.summary(now),
    get rounds() {
      return prober.rounds;
    },
  };
}
