/**
 * Randomized, seedable run of many agents paying the real node process (PAYMENTS_SEED to replay):
 * valid, replayed and concurrently settled calls, payments above or below the price, for an
 * unknown service or one that is down, bound to a request never sent, or never settled — while
 * the node is SIGKILLed and restarted at random moments (sometimes losing its mempool file).
 * At the end, from the chain and the ledger on disk:
 *   - per agent: balance = funded − fees − payments + refunds;
 *   - every payment to the payee has exactly one end: settled with no refund, or refunded once;
 *   - nothing executed twice (one `paid call settled` log line per settled payment, over every run);
 *   - what each agent was told agrees with the ledger (a result ⇔ settled, a refund ⇔ refunded);
 *   - a watcher of the mempool that settles every payment it sees first — with its own request,
 *     and with each request the payer may have sent (the zones are guessable), without a salt and
 *     with one of its own — never gets a result nor takes a payment.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openChain } from '../../chain/chain.js';
import { MEMPOOL_FILE } from '../../chain/mempoolStore.js';
import { encodeAddress } from '../../consensus/address.js';
import { getDevKeyPair, getDevPayeeKeyPair } from '../../consensus/devnet.js';
import { bytesEqual, toHex } from '../../consensus/hash.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { COIN, type ChainParams } from '../../consensus/params.js';
import { encodeTx, txId as computeTxId, TxType } from '../../consensus/tx.js';
import { createTransferTx } from '../../consensus/txBuilder.js';
import { agentInvoke } from '../../consensus/txTypes/agentInvoke.js';
import { refund as refundType } from '../../consensus/txTypes/refund.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { createAgentClient, isAgentClientError, type AgentClient, type AgentQuote } from '../../sdk/client.js';
import { openLedger } from '../../x402/ledger/open.js';
import { createTrivialDevnetDir } from '../helpers/trivialDevnet.js';
import { startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { testKey } from '../helpers/keys.js';
import { Rng } from '../helpers/rng.js';
import { CountingVerifier } from '../helpers/verifier.js';

const SEED = Number(process.env.PAYMENTS_SEED ?? 20261124);
const AGENTS = 6;
const ROUNDS = 3;
const ACTIONS_PER_ROUND = 3;
const WINDOW_S = 3;
const SERVICE = 'native-world-clock';
const ZONES = ['UTC', 'Europe/Berlin', 'Asia/Tokyo', 'America/New_York'];

type Action = 'valid' | 'replay' | 'concurrent' | 'underpaid' | 'overpaid' | 'unknown' | 'down' | 'abandon' | 'wrongRequest';
const ACTIONS: readonly Action[] = ['valid', 'replay', 'concurrent', 'underpaid', 'overpaid', 'unknown', 'down', 'abandon', 'wrongRequest'];
/** What an agent was told about one payment: a result, a refund (now or after the window), or nothing it can rely on (the node died under it). */
type Told = 'result' | 'refund' | 'refund_later' | 'interrupted';

let dir: string;
let dataDir: string;
let params: ChainParams;
let node: NodeProc | undefined;
let port = 0;
/** Kills so far: a refund signed but not mined before one may be signed again after it (SIGKILL keeps only the last mempool save, if the file is kept at all). */
let killCount = 0;
/** Every log line saying a payment executed, over every run of the node. */
const settledLines: string[] = [];

beforeAll(() => {
  ({ dir, dataDir, params } = createTrivialDevnetDir('native-payrand-'));
});

afterAll(() => {
  node?.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function start(): Promise<void> {
  node = await startNode(['--dev', '--data-dir', dataDir, '--http-port', String(port), '--no-stratum', '--mine', '--mine-threads', '1', '--refund-window', String(WINDOW_S), '--mempool-save-interval', '1'], { cwd: dir });
  port = Number(new URL(node.url).port);
}

/** Refund warnings of the runs that ended (diagnostics of a failure). */
const refundWarnings: Record<string, unknown>[] = [];
function collectLines(p: NodeProc): void {
  refundWarnings.push(...p.lines.filter((l) => l.module === 'refunds' && l.level !== 'info'));
  for (const l of p.lines) if (l.msg === 'paid call settled') settledLines.push(String(l.txId));
}

async function kill(loseMempool: boolean): Promise<void> {
  const p = node!;
  node = undefined;
  p.child.kill('SIGKILL');
  killCount++;
  await p.exited;
  collectLines(p);
  if (loseMempool) rmSync(join(dataDir, MEMPOOL_FILE), { force: true });
}

async function getJson<T>(path: string): Promise<T> {
  return (await (await fetch(`http://127.0.0.1:${port}${path}`)).json()) as T;
}

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Dev wallet → agents and the payee (its float pays refund fees), then waits for the block. */
async function fund(agents: HybridKeyPair[]): Promise<Map<string, bigint>> {
  const dev = getDevKeyPair();
  const funded = new Map<string, bigint>();
  const targets = [...agents.map((a) => ({ id: a.address, amount: BigInt(5 + agents.indexOf(a)) * COIN })), { id: getDevPayeeKeyPair().address, amount: 10n * COIN }];
  const acc = await getJson<{ pendingNonce: number }>(`/api/v1/account/${encodeAddress(dev.address, params.hrp)}`);
  let nonce = BigInt(acc.pendingNonce);
  for (const t of targets) {
    const tx = createTransferTx({ key: dev, chainId: params.chainId, to: t.id, amount: t.amount, nonce, includeKey: nonce === 0n, feeRate: params.minFeeRate });
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(tx.bytes) }) });
    expect(res.status).toBe(200);
    nonce++;
    funded.set(toHex(t.id), t.amount);
  }
  await waitFor('funding mined', async () => (await getJson<{ nonce: number }>(`/api/v1/account/${encodeAddress(dev.address, params.hrp)}`)).nonce === Number(nonce));
  return funded;
}

/**
 * The front-runner: reads `/api/v1/mempool` and settles every agent_invoke it sees at the service,
 * first with its own request, then with each guessable request, without a salt and with its own.
 * Records every answer; the test asserts none was a result.
 */
function startFrontRunner(): { stop: () => Promise<void>; tried: Set<string>; answers: Map<number, number>; results: string[] } {
  const tried = new Set<string>();
  const answers = new Map<number, number>();
  const results: string[] = [];
  let stopped = false;
  const mySalt = 'ee'.repeat(32);
  const attempt = async (txId: string, request: string, salt?: string) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/x402/${SERVICE}?wait=0`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ request, payment: { txId, ...(salt ? { salt } : {}) } }),
    });
    const text = await res.text();
    answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
    if (res.status === 200 || /"result"/.test(text)) results.push(`${txId} ${request} ${salt ?? '-'}: ${res.status} ${text.slice(0, 200)}`);
  };
  // Each payment: its own request with its own salt and without one, and every request the payer
  // may have sent (the zones) without the salt and with its own. At most MAX_TRIED payments, so the
  // watcher's load stays a fraction of the agents' own.
  const MAX_TRIED = 12;
  const tryAll = async (txId: string) => {
    if (tried.size >= MAX_TRIED) return;
    tried.add(txId);
    for (const request of ['Asia/Kolkata', ...ZONES]) {
      await attempt(txId, request);
      await attempt(txId, request, mySalt);
    }
  };
  const seenHeights = new Set<number>();
  const loop = (async () => {
    while (!stopped) {
      try {
        // Payments waiting in the mempool (the front-run proper)…
        const pool = await getJson<{ entries: { txId: string; type: string }[] }>('/api/v1/mempool?limit=100');
        for (const e of pool.entries) if (e.type === 'agent_invoke' && !tried.has(e.txId)) await tryAll(e.txId);
        // …and those already mined (blocks come fast here): a late or restarted payer's settle races the same way.
        const recent = await getJson<{ blocks: { height: number }[] }>('/api/v1/blocks?limit=5');
        for (const b of recent.blocks) {
          if (seenHeights.has(b.height)) continue;
          seenHeights.add(b.height);
          const block = await getJson<{ txIds: string[] }>(`/api/v1/block/${b.height}`);
          for (const id of block.txIds) {
            if (tried.has(id) || tried.size >= MAX_TRIED) continue;
            const tx = await getJson<{ type: string }>(`/api/v1/tx/${id}`);
            if (tx.type === 'agent_invoke') await tryAll(id);
          }
        }
      } catch {
        // the node is being killed and restarted: look again
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    tried,
    answers,
    results,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/** One agent's payments and what it was told about each. */
interface Ledgerish {
  told: Map<string, Told>;
}

/** Runs one action; records every payment it made and the answer the agent got. */
async function act(c: AgentClient, a: Action, rng: Rng, book: Ledgerish): Promise<void> {
  const zone = rng.pick(ZONES);
  const transport = (e: unknown) => isAgentClientError(e) && ['node_unreachable', 'node_timeout', 'settle_timeout', 'node_bad_response'].includes(e.code);
  let txId: string | undefined;
  const paid = (id: string, told: Told) => {
    txId = id;
    book.told.set(id, told);
  };
  try {
    const q = await c.quote(SERVICE, zone);
    const tampered = (o: Partial<AgentQuote>): AgentQuote => ({ ...q, ...o });
    switch (a) {
      case 'valid':
      case 'replay':
      case 'concurrent': {
        const id = await c.pay(q);
        paid(id, 'interrupted');
        const settles = a === 'concurrent' ? [c.settle(q, id, { timeoutMs: 60_000 }), c.settle(q, id, { timeoutMs: 60_000 }), c.settle(q, id, { timeoutMs: 60_000 })] : [c.settle(q, id, { timeoutMs: 60_000 })];
        const outs = await Promise.allSettled(settles);
        const ok = outs.filter((o): o is PromiseFulfilledResult<Awaited<(typeof settles)[number]>> => o.status === 'fulfilled');
        // Refunded instead: the node died while the service ran (service_refunded), or a kill kept the
        // settle away past the refund window (payment_refunded, settle_window_expired).
        const refunded = outs.some((o) => o.status === 'rejected' && (isAgentClientError(o.reason, 'service_refunded') || isAgentClientError(o.reason, 'payment_refunded')));
        if (ok.length) {
          // Every answer that came is the same stored result.
          for (const o of ok) expect(o.value.receipt).toEqual(ok[0].value.receipt);
          book.told.set(id, 'result');
        } else if (refunded) {
          book.told.set(id, 'refund'); // the node died while it ran: refunded at restart
        } else {
          const err = (outs[0] as PromiseRejectedResult).reason;
          if (!transport(err)) throw err;
          return;
        }
        if (a === 'replay' && ok.length) {
          expect((await c.settle(q, id, { timeoutMs: 60_000 })).receipt).toEqual(ok[0].value.receipt);
          const other = await c.quote(SERVICE, zone === 'UTC' ? 'Europe/Berlin' : 'UTC');
          await expect(c.settle(other, id, { timeoutMs: 60_000 })).rejects.toMatchObject({ code: 'request_mismatch' });
        }
        return;
      }
      case 'underpaid':
      case 'overpaid':
      case 'unknown':
      case 'down': {
        const serviceId = a === 'unknown' ? 'native-no-such-service' : a === 'down' ? 'native-llm-chat' : SERVICE;
        const t = tampered({ amount: a === 'underpaid' ? q.amount - 1n : a === 'overpaid' ? q.amount + 1n : q.amount, serviceId, endpoint: q.endpoint.replace(SERVICE, serviceId) });
        const id = await c.pay(t);
        paid(id, 'interrupted');
        const kills = killCount;
        const e = await c.settle(t, id, { timeoutMs: 60_000 }).then(
          () => undefined,
          (err: unknown) => err,
        );
        if (transport(e)) return;
        if (isAgentClientError(e, 'payment_refunded') && !e.payload.refundTxId) throw new Error(`payment_refunded without a refund tx id; the node's refund warnings: ${JSON.stringify(refundWarnings.concat(node?.lines.filter((l) => l.module === 'refunds' && l.level !== 'info') ?? []))}`);
        expect(e).toMatchObject({ code: 'payment_refunded', payload: { refundTxId: expect.stringMatching(/^[0-9a-f]{64}$/) } });
        book.told.set(id, 'refund');
        // A second settle answers the same, unless the node was killed since the first: a refund
        // not mined and not in the mempool it reloads is signed again, and the answer names that one.
        const again = await c.settle(t, id, { timeoutMs: 60_000 }).then(
          () => undefined,
          (err: unknown) => err,
        );
        if (transport(again)) return;
        const first = (e as { payload: { refundTxId: string } }).payload.refundTxId;
        expect(again).toMatchObject({ code: 'payment_refunded', payload: { refundTxId: killCount === kills ? first : expect.stringMatching(/^[0-9a-f]{64}$/) } });
        return;
      }
      case 'abandon':
        paid(await c.pay(q), 'refund_later');
        return;
      case 'wrongRequest': {
        const id = await c.pay(q);
        paid(id, 'refund_later');
        const other = await c.quote(SERVICE, `${zone === 'UTC' ? 'Asia/Tokyo' : 'UTC'}`);
        const e = await c.settle(other, id, { timeoutMs: 60_000 }).then(
          () => undefined,
          (err: unknown) => err,
        );
        if (transport(e)) return;
        // Within the window the mismatch is named; after it (a restart took long) the refund is.
        expect(['request_mismatch', 'payment_refunded']).toContain((e as { code: string }).code);
        return;
      }
    }
  } catch (e) {
    if (transport(e)) {
      if (txId && book.told.get(txId) !== 'refund_later') book.told.set(txId, 'interrupted');
      return;
    }
    throw e;
  }
}

describe('randomized payments with kills and restarts', () => {
  test(`seed ${SEED}: balances add up, each payment has exactly one end, nothing runs twice`, async () => {
    const rng = new Rng(SEED);
    const agents = Array.from({ length: AGENTS }, (_, i) => testKey(`random-agent-${SEED}-${i}`));
    await start();
    const funded = await fund(agents);
    const clients = agents.map((key) => createAgentClient({ nodeUrl: `http://127.0.0.1:${port}`, key, requestTimeoutMs: 5_000 }));
    const books: Ledgerish[] = agents.map(() => ({ told: new Map() }));
    const frontRunner = startFrontRunner();
    let kills = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const plans = agents.map(() => Array.from({ length: ACTIONS_PER_ROUND }, () => rng.pick(ACTIONS)));
      const seeds = agents.map(() => rng.int(2 ** 31));
      const work = Promise.all(
        clients.map(async (c, i) => {
          const r = new Rng(seeds[i]);
          for (const a of plans[i]) await act(c, a, r, books[i]);
        }),
      );
      // A kill at a random moment of most rounds, sometimes losing the mempool file too.
      if (round < ROUNDS - 1 || rng.int(2) === 0) {
        await new Promise((r) => setTimeout(r, 300 + rng.int(1500)));
        await kill(rng.int(3) === 0);
        kills++;
        await new Promise((r) => setTimeout(r, rng.int(500)));
        await start();
      }
      await work;
    }
    expect(kills).toBeGreaterThanOrEqual(ROUNDS - 1);
    await frontRunner.stop();
    // The front-runner saw payments in the mempool and tried each of them many ways: never a result.
    expect(frontRunner.tried.size).toBeGreaterThan(0);
    expect(frontRunner.results).toEqual([]);
    expect(frontRunner.answers.get(200) ?? 0).toBe(0);

    // Let every window pass and every refund be mined.
    await waitFor(
      'every payment ended',
      async () => {
        const s = await getJson<{ mempool: { count: number }; payments: { refundsPending: number; awaitingSettle: number } }>('/api/v1/status');
        return s.mempool.count === 0 && s.payments.refundsPending === 0 && s.payments.awaitingSettle === 0;
      },
      40_000,
    );
    const status = await getJson<{ payments: { settled: number; refunded: number; refused: number; awaitingSettle: number; refundsPending: number } }>('/api/v1/status');
    const last = node!;
    node = undefined;
    await stopProcess(last);
    collectLines(last);

    // ---- The invariants, from the data on disk ----
    const chain = await openChain({ dataDir: join(dataDir, 'chain'), params, verifier: new CountingVerifier(), now: () => Number.MAX_SAFE_INTEGER / 2 });
    const ledger = await openLedger(join(dataDir, 'ledger'));
    try {
      const payee = getDevPayeeKeyPair().address;
      const per = new Map<string, { fees: bigint; payments: bigint; refunds: bigint; got: bigint }>();
      const invokes = new Map<string, string>(); // invoke id → sender hex
      const refundsOf = new Map<string, number>();
      for (let h = 1; h <= chain.tip.height; h++) {
        const block = (await chain.getBlock(chain.getEntryByHeight(h)!.hashHex))!;
        for (const tx of block.txs) {
          const from = toHex(tx.from);
          const row = per.get(from) ?? { fees: 0n, payments: 0n, refunds: 0n, got: 0n };
          row.fees += tx.fee;
          if (tx.type === TxType.agent_invoke) {
            const p = agentInvoke.decodePayload(tx.payload);
            row.payments += p.amount;
            if (bytesEqual(p.payTo, payee)) invokes.set(toHex(computeTxId(encodeTx(tx))), from);
          } else if (tx.type === TxType.refund) {
            const p = refundType.decodePayload(tx.payload);
            const to = per.get(toHex(p.to)) ?? { fees: 0n, payments: 0n, refunds: 0n, got: 0n };
            to.refunds += p.amount;
            per.set(toHex(p.to), to);
            refundsOf.set(toHex(p.invokeId), (refundsOf.get(toHex(p.invokeId)) ?? 0) + 1);
          } else if (tx.type === TxType.transfer) {
            const p = transfer.decodePayload(tx.payload);
            const to = per.get(toHex(p.to)) ?? { fees: 0n, payments: 0n, refunds: 0n, got: 0n };
            to.got += p.amount;
            per.set(toHex(p.to), to);
          }
          per.set(from, row);
        }
      }
      // Per agent: final balance = funded − fees − payments + refunds.
      for (const a of agents) {
        const id = toHex(a.address);
        const row = per.get(id)!;
        expect(row.got).toBe(funded.get(id));
        expect((await chain.getAccount(a.address)).balance).toBe(funded.get(id)! - row.fees - row.payments + row.refunds);
      }
      // Every payment to the payee: exactly one end.
      const settledOnce = new Map<string, number>();
      for (const id of settledLines) settledOnce.set(id, (settledOnce.get(id) ?? 0) + 1);
      let settled = 0;
      let refused = 0;
      let refundedAfterFailure = 0;
      for (const [id] of invokes) {
        const rec = await ledger.get(id);
        expect(rec).toBeDefined();
        if (rec!.status === 'settled') {
          settled++;
          expect(refundsOf.get(id) ?? 0).toBe(0);
          // At most one execution (a SIGKILL may take the last log lines of a run with it).
          expect(settledOnce.get(id) ?? 0).toBeLessThanOrEqual(1);
        } else {
          expect(rec!.status).toBe('refunded');
          expect(refundsOf.get(id)).toBe(1);
          expect(settledOnce.get(id) ?? 0).toBe(0);
          if (rec!.refused) refused++;
          else refundedAfterFailure++;
        }
      }
      // No refund names anything but a payment to the payee; none twice.
      for (const [id, n] of refundsOf) {
        expect(invokes.has(id)).toBe(true);
        expect(n).toBe(1);
      }
      // What the agents were told agrees with the ledger.
      for (const book of books) {
        for (const [id, told] of book.told) {
          const rec = await ledger.get(id);
          if (told === 'interrupted') continue;
          // A payment whose answer was lost may not be mined at all (the node died with it): only told ones are checked.
          // So may one the agent abandoned once it was accepted: a kill before the mempool's next
          // save lost it, nobody broadcast it again, and the agent's next payment took its nonce.
          // Then no money moved (the balances above say so) and nothing is owed.
          if (!rec && told === 'refund_later') {
            expect(invokes.has(id)).toBe(false);
            continue;
          }
          expect(rec).toBeDefined();
          if (told === 'result') expect(rec!.status).toBe('settled');
          else expect(rec!.status).toBe('refunded');
        }
      }
      // The run exercised both ends, and the status counted them as the ledger holds them.
      expect(settled).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
      expect(status.payments).toMatchObject({ settled, refunded: refused + refundedAfterFailure, refused, awaitingSettle: 0, refundsPending: 0 });
    } finally {
      await ledger.close();
      await chain.close();
    }
    // 60-110 s alone at load 10; the front-runner adds about a fifth. The budget leaves room for a full run beside it.
  }, 240_000);
});
