/**
 * The fleet's provider inbox (x402/providers/pgInbox.ts): two nodes' inboxes on one real
 * PostgreSQL, in-process. A job queued at A is taken and answered at B and A's caller gets the
 * result; an agent polling only A is online at B, with the stats shared; answer and timeout race
 * and the row decides each job once (the caller has the result exactly when the agent's answer
 * was accepted); a lost notification loses no answer; the jobs of a node that died are expired
 * by its restart and by the lease holder's sweep, and a late answer is 409 `inbox_job_expired`;
 * a signed take replayed at the other node within the clock window is 401 `inbox_signature_used`
 * (the replay set is the fleet's, keyed by the signature's bytes), while a signature made for the
 * fleet is good at any one of its nodes (they share the seller id it names);
 * with the database away every step is `ledger_unavailable` (a run fails, refunded) and nothing
 * is written.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { encodeAddress } from '../../consensus/address.js';
import { toHex } from '../../consensus/hash.js';
import { writeHeartbeat, type FleetSelf } from '../../x402/fleet/fleet.js';
import type { InboxJob } from '../../x402/providers/inbox.js';
import { signInboxRequest } from '../../x402/providers/inboxAuth.js';
import { PgInbox, type PgInboxOptions } from '../../x402/providers/pgInbox.js';
import { PgLedger } from '../../x402/ledger/pgLedger.js';
import { testKey } from '../helpers/keys.js';
import { usePostgres } from '../helpers/usePostgres.js';
import { CountingVerifier } from '../helpers/verifier.js';

const postgres = usePostgres();
const alice = testKey('pg-inbox-alice');
const ALICE = toHex(alice.address);
const SERVICE = 'echo-bot-upper';
const self: FleetSelf = { url: 'http://127.0.0.1:1', version: '0.1.0', network: 'native-devnet', height: 1, tip: '00'.repeat(32), leaseHolder: false };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Node {
  readonly ledger: PgLedger;
  readonly inbox: PgInbox;
}
const open: Node[] = [];
afterAll(async () => {
  for (const n of open) {
    await n.inbox.close();
    await n.ledger.close().catch(() => undefined);
  }
});

/** A node's inbox on `url` named `nodeId` (its heartbeat written as now). */
async function node(url: string, nodeId: string, opts: Partial<PgInboxOptions> = {}): Promise<Node> {
  const ledger = await PgLedger.open(url, { nodeId });
  await writeHeartbeat((t, v) => ledger.query(t, v), nodeId, self, Date.now() - 1000);
  const inbox = new PgInbox(
    { query: (t, v) => ledger.query(t, v), url, nodeId, sellerId: ledger.sellerId, verifier: new CountingVerifier(), keys: { publicKeyOf: async (id) => (toHex(id) === ALICE ? alice.publicKey : undefined), isAgent: () => true }, hrp: 'tnative' },
    { refreshMs: 100, fallbackMs: 200, ...opts },
  );
  await inbox.start();
  const n = { ledger, inbox };
  open.push(n);
  return n;
}

/** A GET of `path` signed by Alice for `n`'s fleet at `now`, as the transport hands it to the inbox. */
function signed(n: Node, path: string, now = Date.now()) {
  const h = signInboxRequest(alice, { address: encodeAddress(alice.address, 'tnative'), nodeId: n.inbox.nodeId, method: 'GET', path, body: new Uint8Array(), now });
  return { method: 'GET', path, body: new Uint8Array(), headers: { agent: h['x-native-agent'], timestamp: h['x-native-timestamp'], node: h['x-native-node'], signature: h['x-native-signature'] } };
}

/** A paid job as the paid-call core runs it; resolves to its settled outcome. */
function paidJob(n: Node, request: string, timeoutMs = 20_000, signal = new AbortController().signal) {
  return n.inbox.run(SERVICE, ALICE, request, request, timeoutMs, signal).then(
    (result) => ({ ok: true as const, result }),
    (e: { code: string }) => ({ ok: false as const, code: e.code }),
  );
}

/** Takes jobs at `n` until `count` are in hand (bounded). */
async function takeAll(n: Node, count: number): Promise<InboxJob[]> {
  const jobs: InboxJob[] = [];
  for (let i = 0; i < 50 && jobs.length < count; i++) jobs.push(...(await n.inbox.take(ALICE, 1000)));
  expect(jobs).toHaveLength(count);
  return jobs;
}

/** Waits (bounded) until `check` holds. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`${what}: not within 100 looks`);
}

const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: { code?: string }) => e.code);

describe('the provider inbox of a fleet', () => {
  test('queued at A, taken and answered at B: A’s caller gets the result; the agent polling only A is online at B; the stats are shared', async () => {
    const url = await postgres.server.createDatabase('inbox_two');
    const a = await node(url, 'n-a');
    const b = await node(url, 'n-b');
    expect(b.inbox.isOnline(ALICE)).toBe(false);
    // The agent polls A only: B sees it online (the shared table, re-read every 100 ms here).
    await a.inbox.take(ALICE, 0);
    await until('alice online at B', () => b.inbox.isOnline(ALICE));
    expect(b.inbox.lastPollAt(ALICE)).toBe(a.inbox.lastPollAt(ALICE));

    const outcome = paidJob(a, 'hello');
    // B's long poll is woken by A's job (a notification; a slow look otherwise).
    const [job] = await takeAll(b, 1);
    expect(job).toMatchObject({ serviceId: SERVICE, agent: ALICE, request: 'hello', input: 'hello', status: 'taken' });
    // A second take anywhere does not hand it out again.
    expect(await a.inbox.take(ALICE, 0)).toEqual([]);
    expect(await b.inbox.answer(ALICE, job!.id, { result: 'HELLO' }, 20)).toMatchObject({ id: job!.id, status: 'done' });
    expect(await outcome).toEqual({ ok: true, result: 'HELLO' });
    // Answered already, at either node.
    await expect(a.inbox.answer(ALICE, job!.id, { result: 'again' }, 20)).rejects.toMatchObject({ code: 'inbox_job_already_answered' });
    expect(b.inbox.statsOf(SERVICE).calls).toBe(1);
    await until('the stats at A', () => a.inbox.statsOf(SERVICE).calls === 1);
  });

  test('answer against timeout: the row decides each job once, and the caller has the result exactly when the answer was accepted', async () => {
    const url = await postgres.server.createDatabase('inbox_race');
    const a = await node(url, 'n-a');
    const b = await node(url, 'n-b');
    const N = 16;
    const aborts = Array.from({ length: N }, () => new AbortController());
    const outcomes = aborts.map((c, i) => paidJob(a, `race-${i}`, 20_000, c.signal));
    const jobs = await takeAll(b, N);
    // Each job's timeout fires at A while its answer arrives at B, in varying order.
    const answers = await Promise.all(
      jobs.map(async (job, i) => {
        const k = Number(job.request!.slice(5));
        const answer = codeOf(b.inbox.answer(ALICE, job.id, { result: job.request!.toUpperCase() }, 20));
        if (i % 2) await sleep(i % 3);
        aborts[k]!.abort();
        return { k, code: await answer };
      }),
    );
    const settled = await Promise.all(outcomes);
    for (const { k, code } of answers) {
      const out = settled[k]!;
      if (code === 'ok') expect(out).toEqual({ ok: true, result: `RACE-${k}` });
      else expect([code, out]).toEqual(['inbox_job_expired', { ok: false, code: 'provider_timeout' }]);
    }
    // The rows agree: every job ended once, done or expired.
    const { rows } = await a.ledger.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM inbox_jobs GROUP BY status`);
    const done = answers.filter((x) => x.code === 'ok').length;
    expect(Object.fromEntries(rows.map((r) => [r.status, r.n]))).toEqual({ ...(done ? { done } : {}), ...(N - done ? { expired: N - done } : {}) });
  });

  test('a lost notification loses no answer: the waiting node re-reads its jobs and reconnects its LISTEN connection', async () => {
    const url = await postgres.server.createDatabase('inbox_lost');
    const a = await node(url, 'n-a');
    const b = await node(url, 'n-b');
    const outcome = paidJob(a, 'quiet');
    const [job] = await takeAll(b, 1);
    // A's LISTEN session is cut: the notification of B's answer cannot reach it.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'native-node inbox n-a' AND datname = current_database()`);
    } finally {
      await admin.end();
    }
    expect(await b.inbox.answer(ALICE, job!.id, { result: 'QUIET' }, 20)).toMatchObject({ status: 'done' });
    expect(await outcome).toEqual({ ok: true, result: 'QUIET' });
    // Listening again: the next answer comes by notification or re-read alike.
    await until('A listens again', async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return (await c.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'native-node inbox n-a' AND datname = current_database()`)).rowCount === 1;
      } finally {
        await c.end();
      }
    });
  });

  test('a node that died: its jobs are expired by the lease holder’s sweep and by its own restart; a late answer is 409 inbox_job_expired', async () => {
    const url = await postgres.server.createDatabase('inbox_dead');
    const a = await node(url, 'n-a');
    const b = await node(url, 'n-b');
    // A queues two jobs and dies (SIGKILL: nothing written on the way out).
    void paidJob(a, 'orphan-1');
    void paidJob(a, 'orphan-2');
    const jobs = await takeAll(b, 2);
    await a.inbox.close();
    // Its heartbeat is live: the sweep leaves its jobs alone.
    expect(await b.inbox.expireOrphaned()).toBe(0);
    // Silent past the timeout: the holder's sweep expires them; their answers are late.
    await b.ledger.query(`UPDATE fleet_nodes SET seen_at = now() - interval '30 seconds' WHERE node_id = 'n-a'`);
    expect(await b.inbox.expireOrphaned()).toBe(2);
    await expect(b.inbox.answer(ALICE, jobs[0]!.id, { result: 'late' }, 20)).rejects.toMatchObject({ code: 'inbox_job_expired' });
    expect(b.inbox.statsOf(SERVICE).failures).toBe(2);
    // The agent did nothing wrong: it stays online.
    await b.inbox.take(ALICE, 0);
    expect(b.inbox.isOnline(ALICE)).toBe(true);

    // Again, and this time A restarts before anyone sweeps: its own start expires them.
    const a2 = await node(url, 'n-c');
    void paidJob(a2, 'orphan-3');
    const [job3] = await takeAll(b, 1);
    await a2.inbox.close();
    const restarted = await node(url, 'n-c');
    await expect(b.inbox.answer(ALICE, job3!.id, { result: 'late' }, 20)).rejects.toMatchObject({ code: 'inbox_job_expired' });
    expect(await restarted.inbox.take(ALICE, 0)).toEqual([]);
  });

  test('a signed take replayed at the other node within the clock window is 401 inbox_signature_used, and steals nothing', async () => {
    const url = await postgres.server.createDatabase('inbox_replay');
    const a = await node(url, 'n-a');
    const b = await node(url, 'n-b');
    // One fleet, one id to sign for.
    expect(b.inbox.nodeId).toBe(a.inbox.nodeId);
    const path = '/api/x402/inbox?wait=0';
    const req = signed(a, path);
    expect(await a.inbox.authenticate(req)).toBe(ALICE);
    await expect(b.inbox.authenticate(req)).rejects.toMatchObject({ code: 'inbox_signature_used', message: expect.stringContaining('replay') });
    // Re-spelled (no padding): refused at either node, whatever it decodes to.
    const bare = { ...req, headers: { ...req.headers, signature: req.headers.signature!.replace(/=+$/, '') } };
    await expect(b.inbox.authenticate(bare)).rejects.toMatchObject({ code: 'inbox_unauthorized' });
    // Both at once at the two nodes with a fresh signature: one wins.
    const req2 = signed(a, path, Date.now() + 1);
    const codes = await Promise.all([codeOf(a.inbox.authenticate(req2)), codeOf(b.inbox.authenticate(req2))]);
    expect(codes.sort()).toEqual(['inbox_signature_used', 'ok']);
    // Another fleet (its own ledger) refuses what was signed for this one.
    const other = await node(await postgres.server.createDatabase('inbox_replay_other'), 'n-x');
    expect(other.inbox.nodeId).not.toBe(a.inbox.nodeId);
    await expect(other.inbox.authenticate(signed(a, path))).rejects.toMatchObject({ code: 'inbox_signature_foreign_node' });
  });

  test('the database away: take, answer and the signature check are ledger_unavailable, a run fails (refunded), nothing is written', async () => {
    const url = await postgres.server.createDatabase('inbox_down');
    const a = await node(url, 'n-a');
    const outcome = paidJob(a, 'before');
    const [job] = await takeAll(a, 1);
    await postgres.server.halt();
    try {
      await expect(a.inbox.take(ALICE, 0)).rejects.toMatchObject({ code: 'ledger_unavailable' });
      await expect(a.inbox.answer(ALICE, job!.id, { result: 'BEFORE' }, 20)).rejects.toMatchObject({ code: 'ledger_unavailable' });
      await expect(a.inbox.authenticate(signed(a, '/api/x402/inbox'))).rejects.toMatchObject({ code: 'ledger_unavailable' });
      expect(await paidJob(a, 'during')).toEqual({ ok: false, code: 'provider_failed' });
    } finally {
      await postgres.server.resume();
    }
    // Back: the job queued before is still open and answerable, and nothing of the outage was written.
    await until('the ledger answers again', () => a.ledger.available());
    expect(await a.inbox.answer(ALICE, job!.id, { result: 'BEFORE' }, 20)).toMatchObject({ status: 'done' });
    expect(await outcome).toEqual({ ok: true, result: 'BEFORE' });
    const { rows } = await a.ledger.query<{ request: string }>(`SELECT request FROM inbox_jobs ORDER BY created_at`);
    expect(rows.map((r) => r.request)).toEqual(['before']);
  });
});
