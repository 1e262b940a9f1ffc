/**
 * The provider surface's abuse cases over real HTTP (koa app on 127.0.0.1, port 0) with the real
 * inbox — both implementations, LevelDB and the fleet's PostgreSQL (test/helpers/inboxBackends.ts)
 * —, boards and signature checks (reference verifier), the registry stubbed by its interface:
 * unsigned, wrong, expired and used signatures (401, a code each), every re-spelling of a
 * signature (padding, the URL-safe alphabet, unused bits, whitespace: 401), a take signed for
 * another node replayed there (401 `inbox_signature_foreign_node`, the job stays with its agent),
 * a key that registered no agent (403),
 * another agent's job (404), a second answer (409), an oversized result (413, the job fails so
 * the caller is refunded), a late answer (409), board caps (400) and rate limits (429), moderator
 * hiding.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Server } from 'node:http';
import { Level } from 'level';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { toHex } from '../../consensus/hash.js';
import type { HybridKeyPair, HybridPublicKey } from '../../consensus/keys.js';
import { silentLogger } from '../../chain/types.js';
import { createJsonApp } from '../../node/api/app.js';
import { createProviderRouter } from '../../node/api/providerRoutes.js';
import { Boards, BOARD_HTTP_STATUS } from '../../node/boards.js';
import type { LiveRegistry } from '../../services/providerRegistry.js';
import { INBOX_HTTP_STATUS, type Inbox } from '../../x402/providers/inbox.js';
import { signInboxRequest } from '../../x402/providers/inboxAuth.js';
import { signedFetch, type InboxSession } from '../../cli/agentCli.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { testKey } from '../helpers/keys.js';
import { closeOpenInboxes, inboxBackends, type InboxBackend, type OpenInbox } from '../helpers/inboxBackends.js';
import { usePostgres } from '../helpers/usePostgres.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const params = createDevnetChainParams();
const alice = testKey('routes-alice');
const bob = testKey('routes-bob');
const carol = testKey('routes-carol'); // a key on chain, not an agent
const moderator = getDevKeyPair();
const addr = (k: HybridKeyPair) => encodeAddress(k.address, 'tnative');
const published = new Map<string, HybridPublicKey>([alice, bob, carol, moderator].map((k) => [toHex(k.address), k.publicKey]));
const agents = new Set([toHex(alice.address), toHex(bob.address)]);

const postgres = usePostgres();
const backendList = inboxBackends(postgres);
const keys = { publicKeyOf: async (id: Uint8Array) => published.get(toHex(id)), isAgent: (id: Uint8Array) => agents.has(toHex(id)) };
let db: Level<string, string>;
let boards: Boards;
/** The app under test: its inbox and base URL (each backend's describe serves its own). */
let inbox: Inbox;
let base: string;
const servers: Server[] = [];
const opened: OpenInbox[] = [];

/** Serves the provider routes over `inb` on a free port; sets `inbox` and `base` (unless `aside`); returns the base URL. */
async function serve(inb: Inbox, aside = false): Promise<string> {
  const registry = { agentOf: () => undefined, agents: () => [], providerServices: () => [] } as unknown as LiveRegistry;
  const app = createJsonApp({ bodyLimit: 256 * 1024, timeoutMs: 20_000 }, silentLogger, [createProviderRouter({ inbox: inb, boards, registry, params, maxWaitMs: 2000 })], { ...INBOX_HTTP_STATUS, ...BOARD_HTTP_STATUS });
  const server = await new Promise<Server>((resolve) => {
    const srv = app.listen(0, '127.0.0.1', () => resolve(srv));
  });
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  if (aside) return url;
  inbox = inb;
  base = url;
  return url;
}

beforeAll(async () => {
  db = new Level<string, string>(await tmpDir('native-provider-routes-'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  boards = new Boards(db, { perKey: 2, perIp: 8 });
  await boards.start();
});

afterAll(async () => {
  for (const o of opened) await o.stop().catch(() => undefined);
  await closeOpenInboxes();
  for (const srv of servers) await new Promise((r) => srv.close(r));
  await db.close();
  await cleanupTmp();
});

/** Opens an inbox of `backend` on a place of its own and serves it: the app under test, or (`aside`) another node, with its own ledger. */
async function serveBackend(backend: InboxBackend, aside = false): Promise<{ inbox: Inbox; base: string }> {
  const o = await backend.open(await backend.place(), { verifier: new CountingVerifier(), keys, hrp: 'tnative', opts: { maxResultBytes: 1024 } });
  opened.push(o);
  return { inbox: o.inbox, base: await serve(o.inbox, aside) };
}

/** Sends a request signed by `key` (for the app under test unless `over.to` names another node, or for `over.nodeId`). */
async function send(
  key: HybridKeyPair | undefined,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  over: { address?: string; now?: number; headers?: Record<string, string>; nodeId?: string; to?: { inbox: Inbox; base: string } } = {},
) {
  const text = body === undefined ? '' : JSON.stringify(body);
  const nodeId = over.nodeId ?? (over.to?.inbox ?? inbox).nodeId;
  const headers = over.headers ?? (key ? signInboxRequest(key, { address: over.address ?? addr(key), nodeId, method, path, body: new TextEncoder().encode(text), now: over.now }) : {});
  const res = await fetch(`${over.to?.base ?? base}${path}`, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : text });
  return { status: res.status, headers, node: res.headers.get('x-native-node'), json: (await res.json()) as Record<string, unknown> & { error?: { code: string; nodeId?: string } } };
}

/**
 * Every other spelling of the signature in `headers` that decodes to the same bytes: without its
 * padding, with more, the URL-safe alphabet (padded or not), each other value of the two unused
 * bits in its last character, whitespace inside. (Leading and trailing whitespace is no other
 * spelling: HTTP strips it.)
 */
function respellings(headers: Record<string, string>): Record<string, string>[] {
  const sig = headers['x-native-signature']!;
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const body = sig.replace(/=+$/, '');
  const pad = sig.slice(body.length);
  const last = ALPHABET.indexOf(body[body.length - 1]!);
  const url = (x: string) => x.replace(/\+/g, '-').replace(/\//g, '_');
  const variants = [
    body,
    `${sig}=`,
    url(sig),
    url(body),
    ...[1, 2, 3].map((bits) => `${body.slice(0, -1)}${ALPHABET[last ^ bits]}${pad}`),
    `${sig.slice(0, 100)} ${sig.slice(100)}`,
    `${sig.slice(0, 100)}\t${sig.slice(100)}`,
  ];
  for (const v of variants) expect([v, Buffer.from(v, 'base64').equals(Buffer.from(sig, 'base64'))]).toEqual([v, true]);
  expect(new Set(variants).size).toBe(variants.length);
  expect(variants).not.toContain(sig);
  return variants.map((v) => ({ ...headers, 'x-native-signature': v }));
}

/** Queues a job for `agent` as a paid call would; returns the run's settled outcome. */
function paidJob(agent: HybridKeyPair, signal = new AbortController().signal) {
  const run = inbox.run('echo-bot-upper', toHex(agent.address), 'hi', 'hi', 10_000, signal);
  return run.then(
    (result) => ({ ok: true as const, result }),
    (e: { code: string }) => ({ ok: false as const, code: e.code }),
  );
}

async function takeOne(agent: HybridKeyPair): Promise<string> {
  const r = await send(agent, 'GET', '/api/x402/inbox?wait=2');
  expect(r.status).toBe(200);
  const jobs = r.json.jobs as { jobId: string }[];
  expect(jobs).toHaveLength(1);
  return jobs[0].jobId;
}

describe.each(backendList)('inbox (%s)', (_name, backend) => {
  beforeAll(() => serveBackend(backend));

  describe('inbox authentication', () => {
    test('unsigned and wrongly signed requests are 401 inbox_unauthorized, expired ones inbox_signature_expired; each answer names the node', async () => {
      const unsigned = await send(undefined, 'GET', '/api/x402/inbox');
      expect([unsigned.status, unsigned.json.error?.code, unsigned.json.error?.nodeId, unsigned.node]).toEqual([401, 'inbox_unauthorized', inbox.nodeId, inbox.nodeId]);
      expect(inbox.nodeId).toMatch(/^[0-9a-f]{16}$/);
      // Bob signs but claims Alice's address.
      const wrong = await send(bob, 'GET', '/api/x402/inbox', undefined, { address: addr(alice) });
      expect([wrong.status, wrong.json.error?.code]).toEqual([401, 'inbox_unauthorized']);
      const stale = await send(alice, 'GET', '/api/x402/inbox', undefined, { now: Date.now() - 120_000 });
      expect([stale.status, stale.json.error?.code, stale.node]).toEqual([401, 'inbox_signature_expired', inbox.nodeId]);
      const early = await send(alice, 'GET', '/api/x402/inbox', undefined, { now: Date.now() + 120_000 });
      expect([early.status, early.json.error?.code]).toEqual([401, 'inbox_signature_expired']);
      // A signature over another path does not open this one.
      const other = signInboxRequest(alice, { address: addr(alice), nodeId: inbox.nodeId, method: 'GET', path: '/api/x402/inbox?wait=1', body: new Uint8Array() });
      const moved = await send(alice, 'GET', '/api/x402/inbox', undefined, { headers: other });
      expect([moved.status, moved.json.error?.code]).toEqual([401, 'inbox_unauthorized']);
    });

    test('a replayed signature is 401 inbox_signature_used', async () => {
      const first = await send(alice, 'GET', '/api/x402/inbox');
      expect([first.status, first.node]).toEqual([200, inbox.nodeId]);
      const replay = await send(alice, 'GET', '/api/x402/inbox', undefined, { headers: first.headers });
      expect([replay.status, replay.json.error?.code]).toEqual([401, 'inbox_signature_used']);
    });

    test('a signature used before a restart is still a replay after it, within its clock window', async () => {
      const place = await backend.place();
      const deps = { verifier: new CountingVerifier(), keys, hrp: 'tnative' };
      const before = await backend.open(place, deps);
      const first = await send(alice, 'GET', '/api/x402/inbox', undefined, { to: { inbox: before.inbox, base: await serve(before.inbox, true) } });
      expect(first.status).toBe(200);
      await before.stop();
      const after = await backend.open(place, deps);
      opened.push(after);
      const to = { inbox: after.inbox, base: await serve(after.inbox, true) };
      const replay = await send(alice, 'GET', '/api/x402/inbox', undefined, { to, headers: first.headers });
      expect([replay.status, replay.json.error?.code]).toEqual([401, 'inbox_signature_used']);
      expect((await send(alice, 'GET', '/api/x402/inbox', undefined, { to })).status).toBe(200);
    });

    test('a key that registered no agent is 403 inbox_not_registered_agent', async () => {
      const r = await send(carol, 'GET', '/api/x402/inbox');
      expect([r.status, r.json.error?.code]).toEqual([403, 'inbox_not_registered_agent']);
    });
  });

  describe('signatures bound to one node and one spelling', () => {
    test('every re-spelling of a signature is refused, before and after its one use, and takes nothing', async () => {
      // A node of its own: the refusals below count against the address's failure budget.
      const node = await serveBackend(backend, true);
      const outcome = node.inbox.run('echo-bot-upper', toHex(alice.address), 'secret text', 'secret text', 10_000, new AbortController().signal);
      const path = '/api/x402/inbox';
      const headers = signInboxRequest(alice, { address: addr(alice), nodeId: node.inbox.nodeId, method: 'GET', path, body: new Uint8Array() });
      for (const h of respellings(headers)) {
        const r = await send(undefined, 'GET', path, undefined, { headers: h, to: node });
        expect([h['x-native-signature']!.slice(-4), r.status, r.json.error?.code, r.json.jobs]).toEqual([h['x-native-signature']!.slice(-4), 401, 'inbox_unauthorized', undefined]);
      }
      // The canonical spelling is still the agent's, once: it takes the job.
      const ok = await send(undefined, 'GET', path, undefined, { headers, to: node });
      expect(ok.status).toBe(200);
      expect(ok.json.jobs).toMatchObject([{ request: 'secret text' }]);
      const again = [...respellings(headers), headers, { ...headers, 'x-native-signature': ` ${headers['x-native-signature']} ` }];
      const codes = [];
      for (const h of again) codes.push((await send(undefined, 'GET', path, undefined, { headers: h, to: node })).json.error?.code);
      expect(codes).toEqual([...respellings(headers).map(() => 'inbox_unauthorized'), 'inbox_signature_used', 'inbox_signature_used']);
      expect(await node.inbox.answer(toHex(alice.address), (ok.json.jobs as { jobId: string }[])[0]!.jobId, { result: 'done' }, 20)).toMatchObject({ status: 'done' });
      expect(await outcome).toBe('done');
    });

    test('a take signed for one node, replayed at another (its own ledger), is 401 inbox_signature_foreign_node; re-addressed it does not verify; the job stays its agent\'s', async () => {
      const other = await serveBackend(backend, true);
      expect(other.inbox.nodeId).not.toBe(inbox.nodeId);
      const outcome = other.inbox.run('echo-bot-upper', toHex(alice.address), 'for bob only', 'for bob only', 10_000, new AbortController().signal);
      // Alice polls this node: the signature names it.
      const mine = await send(alice, 'GET', '/api/x402/inbox');
      expect(mine.status).toBe(200);
      expect(mine.headers['x-native-node']).toBe(inbox.nodeId);
      // Whoever saw that request replays it at the other node, as signed and re-addressed.
      const replayed = await send(undefined, 'GET', '/api/x402/inbox', undefined, { headers: mine.headers, to: other });
      expect([replayed.status, replayed.json.error?.code, replayed.json.error?.nodeId]).toEqual([401, 'inbox_signature_foreign_node', other.inbox.nodeId]);
      const readdressed = await send(undefined, 'GET', '/api/x402/inbox', undefined, { headers: { ...mine.headers, 'x-native-node': other.inbox.nodeId }, to: other });
      expect([readdressed.status, readdressed.json.error?.code]).toEqual([401, 'inbox_unauthorized']);
      // The job is still there for Alice, signing for that node.
      const take = await send(alice, 'GET', '/api/x402/inbox', undefined, { to: other });
      expect(take.json.jobs).toMatchObject([{ request: 'for bob only' }]);
      await other.inbox.answer(toHex(alice.address), (take.json.jobs as { jobId: string }[])[0]!.jobId, { result: 'ok' }, 4);
      expect(await outcome).toBe('ok');
    });
  });

  describe('agent serve\'s signing', () => {
    test('it learns the node id from the node, and learns it again when its signature names another node', async () => {
      const session: InboxSession = { base, key: alice, address: addr(alice) };
      const first = await signedFetch(session, 'GET', '/api/x402/inbox', undefined, 5000);
      expect([first.status, session.nodeId]).toEqual([200, inbox.nodeId]);
      // The URL now reaches another node (or fleet): one refusal, then the request signed for it.
      session.nodeId = '0123456789abcdef';
      const moved = await signedFetch(session, 'GET', '/api/x402/inbox', undefined, 5000);
      expect([moved.status, session.nodeId]).toEqual([200, inbox.nodeId]);
    });
  });

  describe('jobs', () => {
    test('result in time settles the call; another agent gets 404, a second answer 409', async () => {
      const outcome = paidJob(alice);
      const jobId = await takeOne(alice);
      expect((await send(bob, 'POST', `/api/x402/inbox/${jobId}`, { result: 'stolen' })).json.error?.code).toBe('inbox_job_not_found');
      const ok = await send(alice, 'POST', `/api/x402/inbox/${jobId}`, { result: 'HI' });
      expect(ok).toMatchObject({ status: 200, json: { jobId, status: 'done' } });
      expect(await outcome).toEqual({ ok: true, result: 'HI' });
      const again = await send(alice, 'POST', `/api/x402/inbox/${jobId}`, { result: 'HI again' });
      expect([again.status, again.json.error?.code]).toEqual([409, 'inbox_job_already_answered']);
      expect(inbox.statsOf('echo-bot-upper').calls).toBe(1);
    });

    test('an oversized result is 413 and fails the job (the caller is refunded)', async () => {
      const outcome = paidJob(alice);
      const jobId = await takeOne(alice);
      const big = await send(alice, 'POST', `/api/x402/inbox/${jobId}`, { result: 'x'.repeat(2000) });
      expect([big.status, big.json.error?.code]).toEqual([413, 'inbox_result_too_large']);
      expect(await outcome).toEqual({ ok: false, code: 'provider_result_too_large' });
      expect((await send(alice, 'POST', `/api/x402/inbox/${jobId}`, { result: 'small' })).status).toBe(409);
    });

    test('a reported failure fails the job; a malformed answer is 400 and leaves it open', async () => {
      const outcome = paidJob(alice);
      const jobId = await takeOne(alice);
      expect((await send(alice, 'POST', `/api/x402/inbox/${jobId}`, { nothing: true })).json.error?.code).toBe('inbox_bad_answer');
      expect((await send(alice, 'POST', `/api/x402/inbox/${jobId}`, { error: { message: 'disk full' } })).status).toBe(200);
      expect(await outcome).toEqual({ ok: false, code: 'provider_failed' });
    });

    test('no answer in time: the run fails with provider_timeout and the late answer is 409 inbox_job_expired', async () => {
      const timeout = new AbortController();
      const outcome = paidJob(alice, timeout.signal);
      const jobId = await takeOne(alice);
      timeout.abort();
      expect(await outcome).toEqual({ ok: false, code: 'provider_timeout' });
      // The agent that let a job expire is offline (its services 503 before payment) until it calls again.
      expect(inbox.isOnline(toHex(alice.address))).toBe(false);
      const late = await send(alice, 'POST', `/api/x402/inbox/${jobId}`, { result: 'late' });
      expect([late.status, late.json.error?.code]).toEqual([409, 'inbox_job_expired']);
    });
  });
});

describe('boards and limits (LevelDB inbox)', () => {
  beforeAll(() => serveBackend(backendList[0][1]));

  describe('boards', () => {
    const request = { title: 'Need OCR', description: 'PDF to text, 10 pages', category: 'compute', maxPrice: '0.05' };

    test('signed posts are listed and searched; caps and categories are checked', async () => {
      expect((await send(undefined, 'POST', '/api/x402/requests', request)).status).toBe(401);
      expect((await send(carol, 'POST', '/api/x402/requests', { ...request, category: 'gambling' })).json.error?.code).toBe('board_bad_post');
      expect((await send(carol, 'POST', '/api/x402/requests', { ...request, title: 'x'.repeat(121) })).json.error?.code).toBe('board_bad_post');
      const ok = await send(carol, 'POST', '/api/x402/requests', request);
      expect(ok).toMatchObject({ status: 201, json: { board: 'requests', author: addr(carol), fields: request } });
      const list = await (await fetch(`${base}/api/x402/requests?q=ocr&limit=5`)).json();
      expect(list).toMatchObject({ total: 1, limit: 5, offset: 0, posts: [{ id: ok.json.id }] });
      expect(((await (await fetch(`${base}/api/x402/requests?limit=500`)).json()) as { error: { code: string } }).error.code).toBe('board_bad_query');
    });

    test('past the per-key rate the next post is 429 rate_limited', async () => {
      // carol posted once above (refused posts do not count for the key); the limit is 2 per minute.
      expect((await send(carol, 'POST', '/api/x402/requests', request)).status).toBe(201);
      const third = await send(carol, 'POST', '/api/x402/requests', request);
      expect([third.status, third.json.error?.code]).toEqual([429, 'rate_limited']);
    });

    test('the per-IP limit holds across keys; a moderator hides a lobby message', async () => {
      const m1 = await send(bob, 'POST', '/api/x402/community', { topic: 'intro', text: 'hello agents' });
      expect(m1.status).toBe(201);
      // 8 attempts per IP per minute, counted before the signature check: the 4 of the first board
      // test (refused ones too), carol's 2, bob's and this one; then 429 for any key.
      expect((await send(alice, 'POST', '/api/x402/community', { topic: 'intro', text: 'hi' })).status).toBe(201);
      expect((await send(moderator, 'POST', '/api/x402/community', { topic: 'intro', text: 'welcome' })).json.error?.code).toBe('rate_limited');
      expect((await send(bob, 'POST', `/api/x402/community/${String(m1.json.id)}/hide`, {})).json.error?.code).toBe('board_not_moderator');
      expect((await send(moderator, 'POST', `/api/x402/community/${String(m1.json.id)}/hide`, {})).status).toBe(200);
      const lobby = (await (await fetch(`${base}/api/x402/community?topic=intro`)).json()) as { posts: { id: string }[] };
      expect(lobby.posts.map((p) => p.id)).not.toContain(m1.json.id);
    });
  });

  describe('failed signatures', () => {
    test('past 30 failed signatures a minute from one address, its requests are 429 before any verification', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 40 && statuses[statuses.length - 1] !== 429; i++) statuses.push((await send(undefined, 'GET', '/api/x402/inbox')).status);
      expect(statuses[statuses.length - 1]).toBe(429);
      expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true);
      // Even a good signature waits for the window now.
      const good = await send(alice, 'GET', '/api/x402/inbox');
      expect([good.status, good.json.error?.code]).toEqual([429, 'rate_limited']);
    });
  });
});
