/**
 * A real devnet node with `--ledger postgres://…`: the paid call of the real CLI is
 * claimed and settled in PostgreSQL (one row, the result stored); the status names the
 * database's seller id, which a second node on the same database shares. With PostgreSQL
 * stopped the node stops selling — quotes and settles answer 503 `ledger_unavailable` — and
 * sells again once it is back.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runCli, startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

let dir: string;
let server: TestPostgres | undefined;
let url: string;
let node: NodeProc | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-pgledger-'));
  server = await startPostgres();
  url = await server.createDatabase('fleet');
  node = await startNode(['--dev', '--data-dir', join(dir, 'a'), '--http-port', '0', '--block-time', '1', '--no-stratum', '--ledger', url], { cwd: dir, env: { HOME: join(dir, 'home') } });
}, 120_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli([...args, '--node', node!.url], { cwd: dir, env: { HOME: join(dir, 'home') }, timeoutMs: 90_000 });
const quote = () => fetch(`${node!.url}/api/x402/native-world-clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'UTC' }) });

async function rows(): Promise<{ id: string; status: string; result: unknown }[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query('SELECT id, status, result FROM payments ORDER BY claimed_at')).rows;
  } finally {
    await c.end();
  }
}

describe('a node on a PostgreSQL ledger', () => {
  test('a paid call is claimed and settled in PostgreSQL; the status shows the database\'s seller id', async () => {
    const r = await cli(['call', 'native-world-clock', 'Europe/Berlin', '--json']);
    expect(r.code).toBe(0);
    const txId = String((r.json?.receipt as Record<string, unknown> | undefined)?.txId ?? '');
    const stored = await rows();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ id: txId, status: 'settled' });
    expect(stored[0]!.result).toEqual(r.json?.result);
    const status = (await (await fetch(`${node!.url}/api/v1/status`)).json()) as { payments: { sellerId: string } };
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const mark = await c.query(`SELECT value->>'sellerId' AS s FROM ledger_marks WHERE name = 'seller'`);
    await c.end();
    expect(status.payments.sellerId).toBe(mark.rows[0].s);
    // Alone on the database, the node holds the signer lease (it signs refunds and payouts).
    expect(node!.lines.some((l) => String(l.msg).startsWith('signer lease acquired'))).toBe(true);
  }, 120_000);

  test('PostgreSQL stopped: quotes and paid calls answer 503 ledger_unavailable; back, the node sells again', async () => {
    await server!.halt();
    try {
      // The ledger checks its connection every 2 s: within that, the node stops quoting.
      const until = Date.now() + 10_000;
      let res = await quote();
      while (res.status === 402 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 200));
        res = await quote();
      }
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: { code: 'ledger_unavailable' } });
      const r = await cli(['call', 'native-world-clock', 'UTC', '--json']);
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toContain('ledger_unavailable');
    } finally {
      await server!.resume();
    }
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline && (status = (await quote()).status) !== 402) await new Promise((r) => setTimeout(r, 250));
    expect(status).toBe(402);
    const r = await cli(['call', 'native-world-clock', 'UTC', '--json']);
    expect(r.code).toBe(0);
    expect((await rows()).filter((x) => x.status === 'settled')).toHaveLength(2);
  }, 120_000);
});
