/**
 * The provider agents' HTTP surface, adapters of the inbox (x402/providers/inbox.ts, or
 * x402/providers/pgInbox.ts in a fleet: an agent polls any one node), node/boards.ts and the
 * live registry:
 *
 *   GET  /api/x402/inbox[?wait=s&service=id] signed by an agent: its queued jobs (long poll, ≤ 25 s)
 *   POST /api/x402/inbox/:jobId            signed by the job's agent: {result} or {error: {message}}
 *   GET  /api/x402/requests                the requests board (q, category, limit, offset)
 *   POST /api/x402/requests                signed: {title, description, category, maxPrice}
 *   GET  /api/x402/community               the lobby (q, topic, limit, offset)
 *   POST /api/x402/community               signed: {topic, text}
 *   POST /api/x402/community/:id/hide      signed by a moderator authority key
 *   GET  /api/v1/registry                  every agent and provider service on chain, any status
 *
 * Signed requests carry X-Native-Agent, X-Native-Timestamp, X-Native-Node and X-Native-Signature
 * (x402/providers/inboxAuth.ts); every answer of these routes carries X-Native-Node, the id a signature
 * names. These routes come before `POST /api/x402/:serviceId`.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import { NodeError } from '../../consensus/errors.js';
import { fromHex } from '../../consensus/hash.js';
import { isModerator } from '../../consensus/txTypes/moderation.js';
import type { ChainParams } from '../../consensus/params.js';
import type { LiveRegistry } from '../../services/providerRegistry.js';
import { INBOX_HEADERS } from '../../x402/providers/inboxAuth.js';
import { isInboxAuthRefusal, type Inbox } from '../../x402/providers/inbox.js';
import { Boards, BoardErrorCode, type BoardName } from '../boards.js';
import { RateLimiter } from '../rateLimit.js';

/** What the provider routes need. */
export interface ProviderRouteModules {
  readonly inbox: Inbox;
  readonly boards: Boards;
  readonly registry: LiveRegistry;
  readonly params: ChainParams;
  /** Longest long poll, ms (below the HTTP request time). */
  readonly maxWaitMs: number;
}

const te = new TextEncoder();

/** Failed inbox authentications allowed per IP a minute before the next is refused unverified. */
export const MAX_AUTH_FAILURES_PER_MINUTE = 30;

/** The signed request as the inbox checks it: method, path with query, raw body, the three headers. */
function signedOf(ctx: Koa.Context) {
  const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
  return {
    method: ctx.method,
    path: ctx.originalUrl,
    body: te.encode(raw),
    headers: {
      agent: ctx.get(INBOX_HEADERS.agent) || undefined,
      timestamp: ctx.get(INBOX_HEADERS.timestamp) || undefined,
      node: ctx.get(INBOX_HEADERS.node) || undefined,
      signature: ctx.get(INBOX_HEADERS.signature) || undefined,
    },
  };
}

/** The router of the provider surface. */
export function createProviderRouter(m: ProviderRouteModules): Router {
  const router = new Router();
  // A signature check costs an ML-DSA-87 verification: an address that keeps failing is refused
  // (429) before any more are spent on it.
  const failures = new RateLimiter(MAX_AUTH_FAILURES_PER_MINUTE, 60_000);
  const authenticate = async (ctx: Koa.Context, opts?: { requireAgent?: boolean }) => {
    // The id to sign for, on every answer (a refusal too): a client learns it from its first request.
    ctx.set('X-Native-Node', m.inbox.nodeId);
    ctx.append('Access-Control-Expose-Headers', 'X-Native-Node');
    if (failures.blocked(ctx.ip)) failures.hit(ctx.ip, 'failed signatures from this address');
    try {
      return await m.inbox.authenticate(signedOf(ctx), opts);
    } catch (e) {
      if (isInboxAuthRefusal(e)) failures.hit(ctx.ip, 'failed signatures from this address');
      throw e;
    }
  };

  router.get('/api/x402/inbox', async (ctx) => {
    const agent = await authenticate(ctx);
    const raw = ctx.query.wait;
    const wait = typeof raw === 'string' && /^\d{1,3}$/.test(raw) ? Math.min(Number(raw) * 1000, m.maxWaitMs) : 0;
    const service = typeof ctx.query.service === 'string' && ctx.query.service ? ctx.query.service : undefined;
    const jobs = await m.inbox.take(agent, wait, service);
    ctx.body = {
      agent: m.registry.agentOf(agent)?.name ?? null,
      jobs: jobs.map((j) => ({ jobId: j.id, serviceId: j.serviceId, request: j.request ?? null, input: j.input ?? null, createdAt: j.createdAt, deadline: j.deadline })),
    };
  });

  router.post('/api/x402/inbox/:jobId', async (ctx) => {
    const agent = await authenticate(ctx);
    const job = await m.inbox.answer(agent, ctx.params.jobId, ctx.request.body, signedOf(ctx).body.length);
    ctx.body = { jobId: job.id, status: job.status };
  });

  const board = (name: BoardName) => {
    router.get(`/api/x402/${name}`, (ctx) => {
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.body = { board: name, ...m.boards.list(name, ctx.query) };
    });
    router.post(`/api/x402/${name}`, async (ctx) => {
      m.boards.admitIp(ctx.ip);
      await authenticate(ctx, { requireAgent: false });
      const post = await m.boards.post(name, ctx.get(INBOX_HEADERS.agent), ctx.request.body);
      ctx.status = 201;
      ctx.body = post;
    });
  };
  board('requests');
  board('community');
  router.post('/api/x402/community/:id/hide', async (ctx) => {
    const signer = await authenticate(ctx, { requireAgent: false });
    if (!isModerator(m.params, fromHex(signer))) throw new NodeError(BoardErrorCode.NOT_MODERATOR, 'only a moderator authority key of the chain parameters hides messages');
    ctx.body = await m.boards.hide('community', ctx.params.id);
  });

  router.get('/api/v1/registry', (ctx) => {
    ctx.body = {
      agents: m.registry.agents().map((a) => ({ name: a.name, address: a.address, description: a.description, capabilities: a.capabilities, payout: a.payoutAddress, contact: a.contact, online: a.online, lastPollAt: a.lastPollAt, registeredHeight: a.registeredHeight })),
      services: m.registry.providerServices().map((s) => ({
        serviceId: s.record.id,
        agent: s.agent?.name ?? null,
        name: s.record.name,
        category: s.record.category,
        priceBase: s.record.price.toString(),
        status: s.status,
        listed: s.listed,
        reason: s.record.reason,
        timeoutMs: s.record.timeoutMs,
        available: s.listed && (s.agent?.online ?? false),
      })),
    };
  });
  return router;
}
