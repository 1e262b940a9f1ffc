/**
 * The inbox's start-up grace over both implementations (a real LevelDB; the fleet's PostgreSQL
 * tables, test/helpers/inboxBackends.ts), reopened as a node restart reopens it (injected clock):
 * an agent that polled within its online window of the node's stop (or, after a crash, of the
 * last poll recorded) is `inGrace` for the grace window after start, and not online; an agent
 * silent long before the stop, or one that never polled, is not; the grace ends with its window,
 * and a job of the agent that expires ends it at once.
 */
import { afterAll, afterEach, describe, expect, test } from '@jest/globals';
import { POLL_PERSIST_MS } from '../../x402/providers/inbox.js';
import { closeOpenInboxes, inboxBackends, type InboxBackend } from '../helpers/inboxBackends.js';
import { usePostgres } from '../helpers/usePostgres.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp } from '../helpers/tmp.js';

const WINDOW = 30_000;
const ALICE = 'aa'.repeat(20);
const BOB = 'bb'.repeat(20);
const CAROL = 'cc'.repeat(20);

const postgres = usePostgres();
afterAll(cleanupTmp);

describe.each(inboxBackends(postgres))('start-up grace (%s)', (_name, backend: InboxBackend) => {
  // A test that fails midway leaves its inbox open: close it before the server stops.
  afterEach(closeOpenInboxes);
  /** Opens the inbox at `place` as a node start does. */
  const open = (place: string, clock: { t: number }) =>
    backend.open(place, { verifier: new CountingVerifier(), keys: { publicKeyOf: async () => undefined, isAgent: () => true }, hrp: 'tnative', opts: { onlineWindowMs: WINDOW, now: () => clock.t } });

  test('after a clean stop: the agents online at the stop are in grace for the window after start, not online; others are not', async () => {
    const dir = await backend.place();
    const clock = { t: 1_000_000_000_000 };
    let n = await open(dir, clock);
    await n.inbox.take(BOB, 0); // silent long before the stop
    clock.t += 2 * WINDOW;
    await n.inbox.take(ALICE, 0);
    clock.t += 1_000;
    await n.inbox.take(ALICE, 0); // within POLL_PERSIST_MS: kept in memory, written by the stop
    clock.t += 10_000;
    await n.stop();

    clock.t += 60_000; // down for a minute
    n = await open(dir, clock);
    expect([n.inbox.isOnline(ALICE), n.inbox.inGrace(ALICE)]).toEqual([false, true]);
    expect([n.inbox.inGrace(BOB), n.inbox.inGrace(CAROL)]).toEqual([false, false]);
    clock.t += WINDOW - 1;
    expect(n.inbox.inGrace(ALICE)).toBe(true);
    clock.t += 1;
    expect(n.inbox.inGrace(ALICE)).toBe(false);
    await n.stop();
  });

  test('after a crash (no stop record): the latest recorded poll stands for the stop; an expired job ends the grace at once', async () => {
    const dir = await backend.place();
    const clock = { t: 1_000_000_000_000 };
    let n = await open(dir, clock);
    await n.inbox.take(BOB, 0);
    clock.t += WINDOW + POLL_PERSIST_MS + 1;
    await n.inbox.take(ALICE, 0);
    await n.crash(); // crashed: stop() never ran

    clock.t += 5_000;
    n = await open(dir, clock);
    expect([n.inbox.inGrace(ALICE), n.inbox.inGrace(BOB)]).toEqual([true, false]);
    // A paid job waits for ALICE; it times out: her grace ends, and the late answer is refused.
    const abort = new AbortController();
    const run = n.inbox.run('alice-svc', ALICE, 'x', 'x', 1_000, abort.signal);
    abort.abort();
    await expect(run).rejects.toMatchObject({ code: 'provider_timeout' });
    expect(n.inbox.inGrace(ALICE)).toBe(false);
    // Polling again makes her online by the live rule.
    await n.inbox.take(ALICE, 0);
    expect(n.inbox.isOnline(ALICE)).toBe(true);
    await n.stop();
  });
});
