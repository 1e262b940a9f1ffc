/**
 * Claims a fleet node will not finish, on a real PostgreSQL: `PgLedger.orphanedClaims`
 * names the `claimed` payments (both rails) of nodes that are gone — silent past the timeout,
 * stopped, never seen — or that restarted since the claim, and never those of a live node's call
 * in flight, nor payments already ended. Before this, a node taking the signer lease refunded every
 * claim (live nodes' calls included) and nobody ended the claims of a non-holder that died.
 */
import { describe, expect, test } from '@jest/globals';
import { writeHeartbeat, markStopped, type FleetQuery, type FleetSelf } from '../../x402/fleet/fleet.js';
import { PgLedger } from '../../x402/ledger/pgLedger.js';
import { usePostgres } from '../helpers/usePostgres.js';

const postgres = usePostgres();

const self: FleetSelf = { url: 'http://127.0.0.1:1', version: '0.1.0', network: 'native-devnet', height: 1, tip: '00'.repeat(32), leaseHolder: false };
const claim = (l: PgLedger, id: string, rail: 'native' | 'usdc', at: number) => l.claim({ id, rail, serviceId: 'native-world-clock', requestHash: 'h', caller: 'c', amount: '1' }, at);

describe('orphaned claims in a fleet', () => {
  test('claims of gone, stopped, unknown and restarted nodes are named; a live node’s claims and ended payments are not', async () => {
    const url = await postgres.server.createDatabase('orphans');
    const ledgers = await Promise.all(['n-live', 'n-silent', 'n-stopped', 'n-unknown', 'n-restarted'].map((nodeId) => PgLedger.open(url, { nodeId })));
    const [live, silent, stopped, unknown, restarted] = ledgers;
    const q: FleetQuery = (t, v) => live.query(t, v);
    try {
      const t0 = Date.now() - 60_000;
      // Heartbeats: live (started at t0), silent (started at t0, last seen 30 s ago), stopped, restarted (started after its claim).
      await writeHeartbeat(q, 'n-live', self, t0);
      await writeHeartbeat(q, 'n-silent', self, t0);
      await q(`UPDATE fleet_nodes SET seen_at = now() - interval '30 seconds' WHERE node_id = 'n-silent'`);
      await writeHeartbeat(q, 'n-stopped', self, t0);
      await markStopped(q, 'n-stopped');
      await writeHeartbeat(q, 'n-restarted', self, t0 + 20_000);

      await claim(live, 'live-native', 'native', t0 + 1_000);
      await claim(live, 'live-usdc', 'usdc', t0 + 1_000);
      await claim(live, 'live-settled', 'native', t0 + 1_000);
      await live.settle('live-settled', { ok: true }, { txId: 'live-settled' });
      await claim(silent, 'silent-native', 'native', t0 + 2_000);
      await claim(silent, 'silent-refunded', 'native', t0 + 2_000);
      await silent.refundPending('silent-refunded', { code: 'service_failed', message: 'x' });
      await claim(stopped, 'stopped-usdc', 'usdc', t0 + 3_000);
      await claim(unknown, 'unknown-native', 'native', t0 + 4_000);
      await claim(restarted, 'restarted-before', 'native', t0 + 10_000);
      await claim(restarted, 'restarted-after', 'native', t0 + 30_000);

      const orphans = await live.orphanedClaims(10_000);
      expect(orphans.map((r) => [r.id, r.rail, r.status]).sort()).toEqual([
        ['restarted-before', 'native', 'claimed'],
        ['silent-native', 'native', 'claimed'],
        ['stopped-usdc', 'usdc', 'claimed'],
        ['unknown-native', 'native', 'claimed'],
      ]);

      // The silent node comes back (a beat with its old start): its claim is in flight again, not orphaned.
      await writeHeartbeat(q, 'n-silent', self, t0);
      expect((await live.orphanedClaims(10_000)).map((r) => r.id).sort()).toEqual(['restarted-before', 'stopped-usdc', 'unknown-native']);
      // Ended ones leave the list: a refund recorded, a USDC payment failed.
      await live.refundPending('unknown-native', { code: 'node_restarted', message: 'x' });
      await live.fail('stopped-usdc', { code: 'node_restarted', message: 'x' });
      expect((await live.orphanedClaims(10_000)).map((r) => r.id)).toEqual(['restarted-before']);
      // A result stored by its node after the holder ended the claim is refused (the claim is ended once).
      await live.refundPending('restarted-before', { code: 'node_restarted', message: 'x' });
      await expect(restarted.settle('restarted-before', { late: true }, { txId: 'restarted-before' })).rejects.toMatchObject({ code: 'ledger_conflict' });
      expect((await live.get('restarted-before'))?.status).toBe('refund_pending');
    } finally {
      await Promise.all(ledgers.map((l) => l.close()));
    }
  });
});
