/**
 * A fleet of two real devnet nodes on one PostgreSQL ledger: both show up in
 * `native-node fleet status`, in each one's `/api/v1/status` `fleet` and in `/metrics`, with the
 * signer lease's holder named; the node whose tip is far behind the fleet's best (B: not mining,
 * not connected, while A mines a block a second) answers paid calls 503 `node_syncing` and is not
 * ready; SIGKILLed, A disappears from the fleet after the heartbeat timeout (10 s), B takes the
 * lease and, now the best tip of the fleet, sells again. With PostgreSQL stopped, both nodes are
 * not ready (`ledger_unavailable`), their status says the ledger cannot be reached and names no
 * holder, and nobody's lease-holder metric is 1; once it is back, both recover and the metric is
 * 1 on the holder only.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import pg from 'pg';
import { fleetText } from '../../cli/fleetCommand.js';
import { FleetHeartbeat, type FleetQuery } from '../../x402/fleet/fleet.js';
import { SIGNER_LEASE_KEY } from '../../x402/fleet/signerLease.js';

interface FleetNodeJson {
  nodeId: string;
  url: string | null;
  height: number;
  lag: number;
  leaseHolder: boolean;
}
interface FleetJson {
  nodeId?: string;
  lag?: number;
  behind?: boolean;
  nodes: FleetNodeJson[];
  live: number;
  gone: { nodeId: string; reason: string }[];
  leaseHolder: string | null;
  bestHeight: number | null;
  ledger?: { tables: Record<string, { rows: number }> };
}

let dir: string;
let server: TestPostgres | undefined;
let url: string;
let a: NodeProc | undefined;
let b: NodeProc | undefined;
const home = () => join(dir, 'home');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-fleet-'));
  server = await startPostgres();
  url = await server.createDatabase('fleet');
  const common = ['--dev', '--http-port', '0', '--block-time', '1', '--no-stratum', '--ledger', url];
  // A mines a block a second and serves metrics; B neither mines nor connects to A: it stays at its genesis.
  [a, b] = await Promise.all([
    startNode([...common, '--data-dir', join(dir, 'a'), '--metrics-port', '0'], { cwd: dir, env: { HOME: home() } }),
    startNode([...common, '--data-dir', join(dir, 'b'), '--no-mine', '--metrics-port', '0'], { cwd: dir, env: { HOME: home() } }),
  ]);
}, 90_000);

afterAll(async () => {
  await Promise.all([a, b].map((n) => n && stopProcess(n)));
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const nodeId = (name: string) => readFileSync(join(dir, name, 'node-id'), 'utf8').trim();
const fleetOf = async (n: NodeProc): Promise<FleetJson> => ((await (await fetch(`${n.url}/api/v1/status`)).json()) as { fleet: FleetJson }).fleet;
const fleetStatus = async () => {
  const r = await runCli(['fleet', 'status', '--ledger', url, '--json'], { cwd: dir, env: { HOME: home() }, timeoutMs: 30_000 });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  return r.json as unknown as FleetJson & { sellerId: string };
};
/** Polls `read` every 250 ms until `ok` holds (at most `ms`); answers the last value. */
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
}
/** A paid call with a well-formed payment of a transaction nobody made (`wait=0`: no wait for its block). */
const pay = async (n: NodeProc) => {
  const res = await fetch(`${n.url}/api/x402/native-world-clock?wait=0`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'UTC', payment: { txId: randomBytes(32).toString('hex') } }) });
  return { status: res.status, code: ((await res.json()) as { error?: { code?: string } }).error?.code };
};

describe('a fleet of two nodes on one PostgreSQL ledger', () => {
  test('both nodes show up in fleet status, /api/v1/status and /metrics; the lease holder is named', async () => {
    const ids = { a: nodeId('a'), b: nodeId('b') };
    const holder = [a!, b!].find((n) => n.lines.some((l) => String(l.msg).startsWith('signer lease acquired')));
    expect(holder).toBeDefined();
    const holderId = holder === a ? ids.a : ids.b;
    // Each heartbeat names its URL once the API listens (within a beat, 2 s).
    const fb = await until(() => fleetOf(b!), (f) => f.live === 2 && f.nodes.every((n) => n.url !== null), 15_000);
    expect(fb.nodes.map((n) => [n.nodeId, n.url, n.leaseHolder]).sort()).toEqual(
      [
        [ids.a, a!.url, holderId === ids.a],
        [ids.b, b!.url, holderId === ids.b],
      ].sort(),
    );
    expect(fb).toMatchObject({ nodeId: ids.b, leaseHolder: holderId });
    expect((await fleetOf(a!)).nodeId).toBe(ids.a);

    const st = await fleetStatus();
    expect(st.nodes.map((n) => n.nodeId).sort()).toEqual([ids.a, ids.b].sort());
    expect(st.leaseHolder).toBe(holderId);
    expect(st.sellerId).toMatch(/^[0-9a-f]{16}$/);
    expect(st.ledger!.tables.fleet_nodes!.rows).toBe(2);
    // The human form of the same view (one CLI run is enough: each costs a process start).
    const human = fleetText(st as unknown as Parameters<typeof fleetText>[0]);
    expect(human).toContain(`${holderId} holds the signer lease`);
    expect(human).toContain(a!.url);

    const metricsUrl = String(a!.lines.find((l) => l.msg === 'metrics listening')?.url);
    // Node a's own view of the fleet follows its next beat (b's view above may be a beat ahead).
    const metrics = await until(async () => (await fetch(metricsUrl)).text(), (t) => /^native_fleet_nodes 2$/m.test(t), 10_000);
    expect(metrics).toMatch(/^native_fleet_nodes 2$/m);
    expect(metrics).toMatch(new RegExp(`^native_fleet_lease_holder ${holderId === ids.a ? 1 : 0}$`, 'm'));
    expect(metrics).toMatch(/^native_fleet_ledger_rows\{table="payments"\} \d+$/m);
  }, 60_000);

  test('PostgreSQL stopped: /ready 503 ledger_unavailable, status says the ledger is unreachable and names no holder, no lease-holder metric is 1; back: both recover', async () => {
    const ids = new Map([[a!, nodeId('a')], [b!, nodeId('b')]]);
    const metricsOf = async (n: NodeProc) => (await (await fetch(String(n.lines.find((l) => l.msg === 'metrics listening')?.url))).text());
    const holderMetric = async (n: NodeProc) => Number(/^native_fleet_lease_holder (\d+)$/m.exec(await metricsOf(n))?.[1]);
    const readyOf = async (n: NodeProc) => {
      const res = await fetch(`${n.url}/ready`);
      return { status: res.status, reason: ((await res.json()) as { reason?: string }).reason ?? null };
    };
    const named = async () => (await fleetOf(a!)).leaseHolder;
    // Before: the lease-holder metric is 1 on the holder, 0 on the other.
    const holderId = await until(named, (h) => h !== null, 10_000);
    for (const [n, id] of ids) expect({ id, metric: await holderMetric(n) }).toEqual({ id, metric: id === holderId ? 1 : 0 });

    await server!.halt();
    try {
      for (const n of [a!, b!]) {
        expect(await until(() => readyOf(n), (r) => r.status === 503, 20_000)).toEqual({ status: 503, reason: 'ledger_unavailable' });
        const f = (await until(() => fleetOf(n), (v) => (v as { ledgerReachable?: boolean }).ledgerReachable === false, 20_000)) as FleetJson & { ledgerReachable: boolean; ledgerError?: string };
        expect(f).toMatchObject({ ledgerReachable: false, leaseHolder: null, nodes: [], live: 0 });
        expect(f.ledgerError).toMatch(/^the ledger's database cannot be reached: /);
        // Nobody can hold the lease without its database.
        expect(await until(() => holderMetric(n), (m) => m === 0, 10_000)).toBe(0);
        expect(await pay(n)).toEqual({ status: 503, code: 'ledger_unavailable' });
      }
    } finally {
      await server!.resume();
    }
    for (const n of [a!, b!]) {
      expect(await until(() => readyOf(n), (r) => r.reason !== 'ledger_unavailable', 30_000)).not.toMatchObject({ reason: 'ledger_unavailable' });
      expect(await until(() => fleetOf(n), (v) => (v as { ledgerReachable?: boolean }).ledgerReachable === true && v.leaseHolder !== null && v.live === 2, 30_000)).toMatchObject({ ledgerReachable: true, live: 2 });
    }
    const after = (await fleetOf(a!)).leaseHolder;
    expect([...ids.values()]).toContain(after);
    for (const [n, id] of ids) expect({ id, metric: await until(() => holderMetric(n), (m) => m === (id === after ? 1 : 0), 10_000) }).toEqual({ id, metric: id === after ? 1 : 0 });
  }, 120_000);

  test('the node far behind the fleet\'s best tip answers 503 node_syncing and is not ready; the other sells', async () => {
    // A mines a block a second from genesis: B (at 0) is more than 10 behind within about 12 s.
    const refused = await until(() => pay(b!), (r) => r.code === 'node_syncing', 30_000);
    expect(refused).toEqual({ status: 503, code: 'node_syncing' });
    const fb = await fleetOf(b!);
    expect(fb.behind).toBe(true);
    expect(fb.lag).toBeGreaterThan(10);
    const ready = await fetch(`${b!.url}/ready`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toContain('node_syncing');
    expect((await pay(a!)).code).not.toBe('node_syncing');
    expect((await fleetOf(a!)).behind).toBe(false);
  }, 45_000);

  test('a SIGKILLed node disappears after the timeout; the other takes the lease and, now the best tip, sells again', async () => {
    const idA = nodeId('a');
    a!.child.kill('SIGKILL');
    await a!.exited;
    const killedAt = Date.now();
    const fb = await until(() => fleetOf(b!), (f) => !f.nodes.some((n) => n.nodeId === idA), 25_000);
    const after = Date.now() - killedAt;
    expect(fb.nodes.map((n) => n.nodeId)).toEqual([nodeId('b')]);
    expect(fb.gone).toEqual(expect.arrayContaining([expect.objectContaining({ nodeId: idA, reason: 'silent' })]));
    // Not before its last row aged past the timeout (10 s, less the beat it was written in).
    expect(after).toBeGreaterThanOrEqual(7_000);
    const holder = await until(() => fleetOf(b!), (f) => f.leaseHolder === nodeId('b'), 5_000);
    expect(holder.leaseHolder).toBe(nodeId('b'));
    expect((await pay(b!)).code).not.toBe('node_syncing');
  }, 45_000);
});

describe('the heartbeat under a role that may not delete', () => {
  test('the clean-up of rows long gone fails, the view is read all the same; the lease-holder metric is this node\'s own knowledge', async () => {
    // A role with what the heartbeat itself needs (no DELETE): deleting rows of nodes gone a day is an extra.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const role = `fleet_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE ROLE ${role} LOGIN; GRANT USAGE ON SCHEMA public TO ${role}; GRANT SELECT, INSERT, UPDATE ON fleet_nodes TO ${role}`);
    await admin.end();
    const asRole = new URL(url);
    asRole.username = role;
    const c = new pg.Client({ connectionString: asRole.href });
    await c.connect();
    const q: FleetQuery = async (text, values) => c.query(text, values);
    const self = { version: 'test', network: 'native-devnet', height: 0, tip: '00'.repeat(32), leaseHolder: true };
    const beat = new FleetHeartbeat(q, 'n-role-test', () => self, { leaseKey: SIGNER_LEASE_KEY, farBehindBlocks: 10 });
    try {
      await beat.start();
      const status = beat.status() as { ledgerReachable: boolean; nodes: { nodeId: string }[] };
      expect(status.ledgerReachable).toBe(true);
      expect(status.nodes.map((n) => n.nodeId)).toContain('n-role-test');
      expect(beat.metrics()).toMatchObject({ leaseHolder: true });
      expect(beat.metrics().live).toBeGreaterThanOrEqual(1);
      self.leaseHolder = false;
      expect(beat.metrics().leaseHolder).toBe(false);
    } finally {
      await beat.stop();
      await c.end();
    }
  }, 30_000);
});
