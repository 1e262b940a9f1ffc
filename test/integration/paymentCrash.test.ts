/**
 * Payments through a crash, with the real node process: agents pay (200 from /api/v1/tx), the
 * node is SIGKILLed before any block, and restarted on the same port with its miner on.
 *   1. With the mempool file: the payments are loaded again, mined, and settle normally (no
 *      agent had to broadcast anything again).
 *   2. With the mempool file deleted: the agents' settles get payment_not_found, the SDK
 *      broadcasts the same signed payments again, and every call completes, each paid once.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { createParamsFromJson } from '../../consensus/params.js';
import { decodeMempoolFile, MEMPOOL_FILE } from '../../chain/mempoolStore.js';
import { toHex } from '../../consensus/hash.js';
import { txId } from '../../consensus/tx.js';
import { createAgentClient, type AgentCallResult, type AgentEvent } from '../../sdk/client.js';
import { createTrivialDevnetDir } from '../helpers/trivialDevnet.js';
import { startNode, type NodeProc } from '../helpers/nodeProcess.js';

let dir: string;
let dataDir: string;
let node: NodeProc | undefined;

beforeAll(() => {
  ({ dir, dataDir } = createTrivialDevnetDir('native-paycrash-'));
});

afterAll(() => {
  node?.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const chainId = () => createParamsFromJson(JSON.parse(readFileSync(join(dataDir, 'genesis.json'), 'utf8'))).chainId;

/** Starts the node; `port` keeps the address of a node that was killed (agents keep their URL). */
async function start(mine: boolean, port = 0): Promise<NodeProc> {
  const args = ['--dev', '--data-dir', dataDir, '--http-port', String(port), '--no-stratum', '--mempool-save-interval', '1', ...(mine ? ['--mine', '--mine-threads', '1'] : ['--no-mine'])];
  return startNode(args, { cwd: dir });
}

async function kill(): Promise<void> {
  node!.child.kill('SIGKILL');
  await node!.exited;
  node = undefined;
}

/** Starts `n` calls from the dev wallet and resolves once every one is paid (accepted by the node). */
async function payCalls(url: string, n: number, events: AgentEvent[]): Promise<{ txIds: string[]; results: Promise<AgentCallResult>[] }> {
  const agent = createAgentClient({ nodeUrl: url, key: getDevKeyPair(), requestTimeoutMs: 5_000 });
  const txIds: string[] = [];
  let paidAll!: () => void;
  const allPaid = new Promise<void>((r) => (paidAll = r));
  const results = Array.from({ length: n }, (_, i) =>
    agent.call('native-world-clock', ['UTC', 'Europe/Berlin', 'Asia/Tokyo', 'America/New_York'][i % 4], {
      timeoutMs: 90_000,
      waitSeconds: 5,
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'paid') {
          txIds.push(e.txId);
          if (txIds.length === n) paidAll();
        }
      },
    }),
  );
  // A call that fails before paying must fail the test, not hang it.
  await Promise.race([allPaid, Promise.all(results)]);
  return { txIds, results };
}

/** Ids of the transactions in the node's mempool file. */
async function savedIds(): Promise<string[]> {
  const path = join(dataDir, MEMPOOL_FILE);
  if (!existsSync(path)) return [];
  return decodeMempoolFile(readFileSync(path), chainId()).map((e) => toHex(txId(e.bytes)));
}

describe('payments through a crash', () => {
  test('the mempool file brings accepted payments back; without it the SDK broadcasts them again; every call completes once', async () => {
    // 1. Accepted, saved, killed before any block; restarted with the file.
    node = await start(false);
    const port = Number(new URL(node.url).port);
    const events1: AgentEvent[] = [];
    const first = await payCalls(node.url, 4, events1);
    for (let i = 0; i < 100; i++) {
      const saved = await savedIds();
      if (first.txIds.every((id) => saved.includes(id))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await savedIds()).sort()).toEqual([...first.txIds].sort());
    await kill();
    node = await start(true, port);
    const done1 = await Promise.all(first.results);
    expect(done1.map((r) => r.txId).sort()).toEqual([...first.txIds].sort());
    for (const r of done1) expect(r.receipt.height).toBeGreaterThan(0);
    expect(events1.filter((e) => e.type === 'rebroadcast')).toEqual([]);
    expect(node.lines.find((l) => l.msg === 'mempool loaded')).toMatchObject({ loaded: 4, dropped: 0 });
    await kill();

    // 2. Accepted, killed before any block, the mempool file deleted: the SDK's re-broadcast completes the calls.
    node = await start(false, port);
    const events2: AgentEvent[] = [];
    const second = await payCalls(node.url, 4, events2);
    await kill();
    rmSync(join(dataDir, MEMPOOL_FILE), { force: true });
    node = await start(true, port);
    expect(node.lines.find((l) => l.msg === 'mempool loaded')).toBeUndefined();
    const done2 = await Promise.all(second.results);
    expect(done2.map((r) => r.txId).sort()).toEqual([...second.txIds].sort());
    expect(new Set(events2.filter((e) => e.type === 'rebroadcast').map((e) => (e as { txId: string }).txId)).size).toBeGreaterThan(0);
    // Each payment mined exactly once, and no other payment was made: the dev wallet's nonce counts 8 transactions.
    const acc = (await (await fetch(`${node.url}/api/v1/account/${encodeURIComponent(done2[0].receipt.caller)}`)).json()) as { nonce: number };
    expect(acc.nonce).toBe(8);
    const status = (await (await fetch(`${node.url}/api/v1/status`)).json()) as { payments: { settled: number } };
    expect(status.payments.settled).toBe(8);
    await kill();
  }, 120_000);
});
