/**
 * Two real devnet nodes on one genesis and one payee (both sell with the public dev payee, as
 * every devnet does), each with its own ledger: a payment quoted by one node is
 * refused by the other (`wrong_seller`) and served once by the node that quoted it; neither
 * node's payment watcher refunds the other's payments after the refund window; a broadcast of
 * an invoke committed to the other node's ledger is refused (`invoke_wrong_seller`).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { getDevKeyPair } from '../../consensus/devnet.js';
import type { ChainParams } from '../../consensus/params.js';
import { createAgentClient, isAgentClientError, type AgentCallResult } from '../../sdk/client.js';
import { createP2PCluster, getJson, isMined, waitUntil, type P2PCluster, type P2PProc } from '../p2p/helpers/processes.js';

const SERVICE = 'native-world-clock';
const WINDOW_S = 20;

let cluster: P2PCluster;
let params: ChainParams;
let a: P2PProc;
let b: P2PProc;

beforeAll(async () => {
  cluster = createP2PCluster('native-shared-payee-', ['a', 'b']);
  params = cluster.params;
  a = await cluster.start('a', ['--mine', '--refund-window', String(WINDOW_S)]);
  b = await cluster.start('b', ['--no-mine', '--refund-window', String(WINDOW_S), '--bootstrap', a.addr]);
}, 120_000);

afterAll(() => cluster?.stop());

/** The payments part of a node's status. */
const payments = async (p: P2PProc) => (await getJson(p.url, '/api/v1/status')).payments as { sellerId: string; payTo: string; settled: number; refunded: number; refused: number; awaitingSettle: number };

describe('two nodes, one payee, two ledgers', () => {
  test('each node serves the payments quoted against its own ledger, once; the other refuses them and never refunds them', async () => {
    const [pa, pb] = await Promise.all([payments(a), payments(b)]);
    expect(pa.payTo).toBe(pb.payTo); // one payee…
    expect(pa.sellerId).not.toBe(pb.sellerId); // …two sellers
    expect(pa.sellerId).toMatch(/^[0-9a-f]{16}$/);

    const key = getDevKeyPair();
    const atA = createAgentClient({ nodeUrl: a.url, key });
    const atB = createAgentClient({ nodeUrl: b.url, key });
    const settleAt = (c: typeof atA, ...args: Parameters<typeof atA.settle>) => c.settle(...args).then(
      (r) => r,
      (e: unknown) => e,
    );

    // Quoted by A (no request: it commits to the empty string), paid, settled first at B.
    const qa = await atA.quote(SERVICE);
    expect(qa.sellerId).toBe(pa.sellerId);
    const paidA = await atA.pay(qa);
    await waitUntil(() => isMined(b.url, paidA), 60_000, 'the payment quoted by A to be mined and seen by B');
    const onB = { ...qa, endpoint: qa.endpoint.replace(a.url, b.url) };
    const atBFirst = await settleAt(atB, onB, paidA, { timeoutMs: 20_000, salt: qa.salt });
    expect(isAgentClientError(atBFirst) && atBFirst.code).toBe('wrong_seller');
    const served = (await atA.settle(qa, paidA, { timeoutMs: 30_000 })) as AgentCallResult;
    expect(served.receipt.txId).toBe(paidA);
    const atBAgain = await settleAt(atB, onB, paidA, { timeoutMs: 20_000, salt: qa.salt });
    expect(isAgentClientError(atBAgain) && atBAgain.code).toBe('wrong_seller');

    // Quoted by B, paid through B (relayed to A, which mines), served by B only.
    const qb = await atB.quote(SERVICE, 'Asia/Tokyo');
    expect(qb.sellerId).toBe(pb.sellerId);
    const paidB = await atB.pay(qb);
    await waitUntil(() => isMined(b.url, paidB), 60_000, 'the payment quoted by B to be mined');
    const atAFirst = await settleAt(atA, { ...qb, endpoint: qb.endpoint.replace(b.url, a.url) }, paidB, { timeoutMs: 20_000, salt: qb.salt });
    expect(isAgentClientError(atAFirst) && atAFirst.code).toBe('wrong_seller');
    expect(((await atB.settle(qb, paidB, { timeoutMs: 30_000 })) as AgentCallResult).receipt.txId).toBe(paidB);

    // An invoke committed to B's ledger, broadcast to A: refused before any mempool.
    const qb2 = await atB.quote(SERVICE, 'UTC');
    const wrongNode = await createAgentClient({ nodeUrl: a.url, key }).pay({ ...qb2, endpoint: qa.endpoint }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAgentClientError(wrongNode) && wrongNode.code).toBe('invoke_wrong_seller');

    // Past both refund windows: each node settled one call, and no node refunded anything.
    await new Promise((r) => setTimeout(r, (WINDOW_S + 2) * 1000));
    await waitUntil(async () => (await payments(a)).awaitingSettle === 0 && (await payments(b)).awaitingSettle === 0, 30_000, 'the windows to pass');
    const [endA, endB] = await Promise.all([payments(a), payments(b)]);
    expect({ settled: endA.settled, refunded: endA.refunded }).toEqual({ settled: 1, refunded: 0 });
    expect({ settled: endB.settled, refunded: endB.refunded }).toEqual({ settled: 1, refunded: 0 });
    expect(params.network).toBe('native-devnet');
  }, 240_000);
});
