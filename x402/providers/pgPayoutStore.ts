/**
 * The provider payouts of a fleet in the ledger's PostgreSQL database (`provider_payouts`,
 * migration 3 of x402/ledger/pgLedger.ts): every node writes the payout a call it served owes (a row
 * insert only one node wins), the signer lease's holder sends and tracks them (x402/providers/payouts.ts).
 *
 *   provider_payouts (payment_id text COLLATE "C" PRIMARY KEY, status, entry jsonb, created_at, updated_at)
 *
 * `entry` is the PayoutEntry as JSON; `status` repeats its status for the partial index of the
 * open ones (owed, submitted), which the holder reads every few seconds.
 */
import type pg from 'pg';
import type { PayoutEntry, PayoutStore } from './payoutStore.js';

/** One statement on the ledger's database (PgLedger.query: a connection failure is `ledger_unavailable`). */
export type PayoutQuery = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/** The shared store over `q` (see module comment). */
export function pgPayoutStore(q: PayoutQuery): PayoutStore {
  const entries = (rows: { entry: string }[]) => rows.map((r) => JSON.parse(r.entry) as PayoutEntry);
  return {
    async open() {
      const { rows } = await q<{ entry: string }>(`SELECT entry::text AS entry FROM provider_payouts WHERE status IN ('owed', 'submitted') ORDER BY created_at, payment_id`);
      return entries(rows);
    },
    async paidTotals() {
      const { rows } = await q<{ service_id: string; total: string }>(`SELECT entry->>'serviceId' AS service_id, sum((entry->>'amount')::numeric)::text AS total FROM provider_payouts WHERE status = 'paid' GROUP BY 1`);
      return new Map(rows.map((r) => [r.service_id, BigInt(r.total)]));
    },
    async get(id) {
      const { rows } = await q<{ entry: string }>(`SELECT entry::text AS entry FROM provider_payouts WHERE payment_id = $1`, [id]);
      return entries(rows)[0];
    },
    async create(e) {
      const r = await q(`INSERT INTO provider_payouts (payment_id, status, entry) VALUES ($1, $2, $3::jsonb) ON CONFLICT (payment_id) DO NOTHING`, [e.invokeId, e.status, JSON.stringify(e)]);
      return r.rowCount === 1;
    },
    async put(e) {
      await q(`UPDATE provider_payouts SET status = $2, entry = $3::jsonb, updated_at = now() WHERE payment_id = $1`, [e.invokeId, e.status, JSON.stringify(e)]);
    },
    async namedTxIds(txIds) {
      if (txIds.length === 0) return new Set();
      const { rows } = await q<{ tx: string }>(`SELECT entry->>'txId' AS tx FROM provider_payouts WHERE entry->>'txId' = ANY($1::text[])`, [[...txIds]]);
      return new Set(rows.map((r) => r.tx));
    },
  };
}
