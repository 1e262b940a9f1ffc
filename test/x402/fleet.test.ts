/**
 * The fleet's heartbeats (x402/fleet/fleet.ts) on a real PostgreSQL, in-process: two ledgers
 * beating into one database see the same view (nodes, tips, lags, the lease holder named from the
 * advisory lock); a node whose tip is more than 10 blocks behind the best says why it must not
 * sell; a stopped node is gone at once, a silent one after the timeout; `fleet status`'s reader
 * counts the ledger's rows and refuses a database without a ledger or without the heartbeat table.
 */
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { FleetHeartbeat, fleetNodeId, type FleetSelf } from '../../x402/fleet/fleet.js';
import { MIGRATIONS, PgLedger } from '../../x402/ledger/pgLedger.js';
import { SIGNER_LEASE_KEY, SignerLease } from '../../x402/fleet/signerLease.js';
import { readFleetStatus } from '../../cli/fleetCommand.js';
import { usePostgres } from '../helpers/usePostgres.js';

const postgres = usePostgres();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const self = (height: number, holder = false): Omit<FleetSelf, 'url'> => ({ version: '0.1.0', network: 'native-devnet', height, tip: height.toString(16).padStart(64, '0'), leaseHolder: holder });

describe('fleet heartbeats', () => {
  test('a data directory keeps its node id', () => {
    const dir = mkdtempSync(join(tmpdir(), 'native-fleet-id-'));
    try {
      const id = fleetNodeId(dir);
      expect(id).toMatch(/^n-[0-9a-f]{12}$/);
      expect(fleetNodeId(dir)).toBe(id);
      expect(readFileSync(join(dir, 'node-id'), 'utf8').trim()).toBe(id);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('two nodes: one view, lags, the lease holder from the lock; far behind refuses; stopped and silent nodes are gone', async () => {
    const url = await postgres.server.createDatabase('fleet_hb');
    const a = await PgLedger.open(url, { nodeId: 'n-a' });
    const b = await PgLedger.open(url, { nodeId: 'n-b' });
    const lease = new SignerLease(url, { name: 'n-a', pollMs: 100 });
    let heightB = 5;
    const opts = { leaseKey: SIGNER_LEASE_KEY, farBehindBlocks: 10, beatMs: 100, goneMs: 1000, sizeMs: 0 };
    const hbA = new FleetHeartbeat((t, v) => a.query(t, v), 'n-a', () => self(30, lease.isHolder()), opts);
    const hbB = new FleetHeartbeat((t, v) => b.query(t, v), 'n-b', () => self(heightB), opts);
    try {
      await lease.start();
      expect(lease.isHolder()).toBe(true);
      await a.claim({ id: 'p1', rail: 'native', serviceId: 'native-world-clock', requestHash: 'h', caller: 'c', amount: '1' });
      hbA.url = 'http://127.0.0.1:1001';
      hbB.url = 'http://127.0.0.1:1002';
      await hbA.start();
      await hbB.start();
      await hbA.beat();
      const v = hbA.view()!;
      expect(v.live).toBe(2);
      expect(v.nodes.map((n) => [n.nodeId, n.url, n.height, n.lag, n.leaseHolder])).toEqual([
        ['n-a', 'http://127.0.0.1:1001', 30, 0, true],
        ['n-b', 'http://127.0.0.1:1002', 5, 25, false],
      ]);
      expect(v).toMatchObject({ bestHeight: 30, leaseHolder: 'n-a', leaseSource: 'lock', farBehindBlocks: 10, gone: [] });
      expect(v.ledger!.tables.payments!.rows).toBe(1);
      expect(v.ledger!.tables.fleet_nodes!.rows).toBe(2);
      expect(v.ledger!.bytes).toBeGreaterThan(0);

      // 25 blocks behind: B must not sell, with the heights in the reason; A may.
      expect(hbB.behind()).toMatch(/height 5\) is 25 blocks behind its fleet's best tip \(30\)/);
      expect(hbA.behind()).toBeUndefined();
      expect(hbB.status()).toMatchObject({ nodeId: 'n-b', lag: 25, behind: true, live: 2, leaseHolder: 'n-a' });
      expect(hbB.metrics()).toMatchObject({ live: 2, bestHeight: 30, lag: 25, behind: true, leaseHolder: false, ledgerRows: { payments: 1, fleet_nodes: 2 } });
      // 10 behind is still in step (the p2p sync's threshold: more than 10).
      heightB = 20;
      expect(hbB.behind()).toBeUndefined();
      expect(hbB.lag()).toEqual({ height: 20, best: 30, lag: 10 });

      // The reader of `fleet status` sees the same, with the seller id.
      const st = await readFleetStatus(url);
      expect(st.nodes.map((n) => n.nodeId)).toEqual(['n-a', 'n-b']);
      expect(st).toMatchObject({ leaseHolder: 'n-a', sellerId: a.sellerId, schemaVersion: MIGRATIONS[MIGRATIONS.length - 1]!.version });

      // A stopped node is gone at once; the lease passes to nobody until someone takes it.
      await hbB.stop();
      await lease.stop();
      await hbA.beat();
      expect(hbA.view()!.nodes.map((n) => n.nodeId)).toEqual(['n-a']);
      expect(hbA.view()!.gone).toMatchObject([{ nodeId: 'n-b', reason: 'stopped' }]);
      expect(hbA.view()!.leaseHolder).toBeNull();
      expect(hbA.behind()).toBeUndefined();

      // A silent node (its process gone) is gone once its row is older than the timeout.
      const silent = new FleetHeartbeat((t, v2) => b.query(t, v2), 'n-c', () => self(31), opts);
      await silent.beat();
      await hbA.beat();
      expect(hbA.view()!.nodes.map((n) => n.nodeId)).toEqual(['n-a', 'n-c']);
      expect(hbA.view()!.bestHeight).toBe(31);
      const t0 = Date.now();
      while (hbA.view()!.nodes.some((n) => n.nodeId === 'n-c')) {
        if (Date.now() - t0 > 5000) throw new Error('n-c still live after 5 s');
        await sleep(50);
      }
      expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
      expect(hbA.view()!.gone.find((g) => g.nodeId === 'n-c')).toMatchObject({ reason: 'silent', height: 31 });
    } finally {
      await hbA.stop();
      await hbB.stop();
      await lease.stop();
      await a.close();
      await b.close();
    }
  });

  test('fleet status refuses a database without a ledger, one whose nodes predate the heartbeats, and an unreachable one', async () => {
    const empty = await postgres.server.createDatabase('fleet_empty');
    await expect(readFleetStatus(empty)).rejects.toMatchObject({ code: 'fleet_no_ledger' });
    const old = await postgres.server.createDatabase('fleet_old');
    const c = new pg.Client({ connectionString: old });
    await c.connect();
    await c.query(`CREATE TABLE ledger_schema (version int PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now()); INSERT INTO ledger_schema (version, description) VALUES (1, 'payments and marks')`);
    await c.end();
    await expect(readFleetStatus(old)).rejects.toMatchObject({ code: 'fleet_no_heartbeats', message: expect.stringContaining('version 1') });
    await expect(readFleetStatus(`postgres://postgres@127.0.0.1:1/x`)).rejects.toMatchObject({ code: 'ledger_unavailable' });
    await expect(readFleetStatus('postgres://bad host/x')).rejects.toMatchObject({ code: 'invalid_ledger_url' });
  });
});
