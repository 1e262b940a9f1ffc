/**
 * A ledger restored from a backup, on the real node and the real command line: the
 * operator backs up `<data-dir>/ledger`, the node then serves one call and leaves another payment
 * unsettled, mines on, and the backup is restored. At the restart the node reports the gap (log
 * line, `payments.ledgerGaps`, the metric), serves new calls, and neither serves again nor refunds
 * the two payments — also after the refund window. `native-node ledger gap` lists the gap;
 * `--refund`, run as the node's log line prints it (in the node's folder, no flags: the devnet's
 * data directory is found), has the next start refund both, once each.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { createAgentClient, isAgentClientError } from '../../sdk/client.js';
import { runCli, startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';

const SERVICE = 'native-world-clock';
const WINDOW_S = 4;

let dir: string;
let dataDir: string;
let node: NodeProc | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'native-ledger-gap-'));
  // Where `npm start` keeps a devnet node's data, below the folder the node runs in.
  dataDir = join(dir, 'data', 'native-devnet');
});

afterAll(() => {
  node?.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function start(): Promise<NodeProc> {
  node = await startNode(['--dev', '--data-dir', dataDir, '--http-port', '0', '--no-stratum', '--mine', '--block-time', '1', '--refund-window', String(WINDOW_S), '--metrics-port', '0'], { cwd: dir });
  return node;
}

async function stop(): Promise<void> {
  const p = node!;
  node = undefined;
  await stopProcess(p);
}

const getJson = async (url: string, path: string) => (await (await fetch(`${url}${path}`)).json()) as Record<string, any>;

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a ledger restored from a backup', () => {
  test('the gap is reported, never judged by itself, and refunded once when the operator says so', async () => {
    // A first run creates the ledger; the operator's backup is taken with the node stopped.
    await start();
    await stop();
    cpSync(join(dataDir, 'ledger'), join(dir, 'ledger-backup'), { recursive: true });

    // After the backup: one call served, one payment left unsettled (within the window), then more blocks.
    let n = await start();
    const key = getDevKeyPair();
    const client = createAgentClient({ nodeUrl: n.url, key });
    const served = await client.call(SERVICE, 'Europe/Berlin', { timeoutMs: 60_000 });
    const q = await client.quote(SERVICE, 'Asia/Tokyo');
    const unsettled = await client.pay(q);
    await waitFor('the unsettled payment to be mined', async () => (await getJson(n.url, `/api/v1/tx/${unsettled}`)).status === 'mined');
    // No tolerance: the restored ledger is found behind its witness however close to the tip it is.
    await stop();

    // Restore the backup and restart: the gap is reported; nothing of it is served or refunded.
    rmSync(join(dataDir, 'ledger'), { recursive: true, force: true });
    cpSync(join(dir, 'ledger-backup'), join(dataDir, 'ledger'), { recursive: true });
    n = await start();
    expect(n.lines.some((l) => String(l.msg).includes('behind its witness (restored from a backup?)'))).toBe(true);
    const gaps = (await getJson(n.url, '/api/v1/status')).payments.ledgerGaps as { invokes: number; amountBase: string; cause: string }[];
    expect(gaps).toEqual([expect.objectContaining({ invokes: 2, amountBase: String(2n * q.amount), cause: 'ledger_restored' })]);
    // The metrics line names the full `/metrics` URL.
    const metricsLine = n.lines.find((l) => l.msg === 'metrics listening');
    const metrics = await (await fetch(String(metricsLine?.url))).text();
    expect(metrics).toMatch(/^native_ledger_gap_payments 2$/m);
    const again = createAgentClient({ nodeUrl: n.url, key });
    const q1 = await again.quote(SERVICE, 'Europe/Berlin');
    const replay = await again.settle(q1, served.txId, { timeoutMs: 20_000, salt: served.salt }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAgentClientError(replay) && replay.code).toBe('payment_in_ledger_gap');
    // New calls sell as usual.
    expect((await again.call(SERVICE, 'UTC', { timeoutMs: 60_000 })).receipt.serviceId).toBe(SERVICE);
    // Past the window: no refund of either payment.
    await new Promise((r) => setTimeout(r, (WINDOW_S + 2) * 1000));
    const status = (await getJson(n.url, '/api/v1/status')).payments;
    expect({ refunded: status.refunded, refundsPending: status.refundsPending }).toEqual({ refunded: 0, refundsPending: 0 });
    await stop();

    // The operator's decision, with the node stopped: list, then refund.
    const list = await runCli(['ledger', 'gap', '--data-dir', dataDir, '--dev', '--json'], { cwd: dir });
    expect(list.code).toBe(0);
    expect(list.json).toEqual({ gaps: [expect.objectContaining({ invokes: 2 })] });
    // The command the log line names, as printed (`npx native-node …` is bin/native-node.js here), in the node's folder.
    const hint = n.lines.map((l) => /`npx native-node (ledger gap --refund)`/.exec(String(l.msg))?.[1]).find(Boolean);
    expect(hint).toBe('ledger gap --refund');
    const decide = await runCli(hint!.split(' '), { cwd: dir });
    expect({ code: decide.code, stdout: decide.stdout }).toEqual({ code: 0, stdout: expect.stringMatching(/^heights \d+-\d+: 2 payment\(s\), .* — refunded at the next start$/m) });
    expect(decide.stderr).toContain(`using ${dataDir}, the only data directory here with one`);

    n = await start();
    await waitFor('both refunds mined', async () => {
      const p = (await getJson(n.url, '/api/v1/status')).payments;
      return p.refunded === 2 && p.refundsPending === 0;
    });
    expect((await getJson(n.url, '/api/v1/status')).payments.ledgerGaps).toEqual([]);
    const last = createAgentClient({ nodeUrl: n.url, key });
    const refused = await last.settle(await last.quote(SERVICE, 'Asia/Tokyo'), unsettled, { timeoutMs: 20_000, salt: q.salt }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAgentClientError(refused) && refused.code).toBe('payment_refunded');
    await stop();
  }, 400_000);
});
