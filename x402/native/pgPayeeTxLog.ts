/**
 * The payee nonce slots of a fleet in the ledger's PostgreSQL database (`payee_txs`, migration 6
 * of x402/ledger/pgLedger.ts; x402/native/payeeNonces.ts says what a slot is):
 *
 *   payee_txs (payee text, nonce bigint, purpose text, tx_id text, raw bytea, signed_by text,
 *              signed_at timestamptz, replaced text[], PRIMARY KEY (payee, nonce))
 *
 * The primary key is the rule "one purpose per nonce", kept by the database whichever node
 * writes: a claim is `INSERT … ON CONFLICT (payee, nonce) DO NOTHING`, and it also writes nothing
 * when its purpose holds a slot at or above the chain's next nonce. With `fence`, a claim or a
 * replacement writes only while the signer lease's session (named by its application_name) holds
 * the lease's advisory lock: a node that lost the lease without knowing it yet signs nothing that
 * can leave it. `replaced` keeps the ids a bump replaced (one of them may be the one mined).
 */
import type { PayeeTxLog, PayeeTxSlot } from './payeeNonces.js';
import type pg from 'pg';

/** One statement on the ledger's database. */
type PayoutQuery = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/** The fence of a fleet's claims: the lease's advisory lock key and its holder session's application_name. */
export interface PayeeTxFence {
  readonly leaseKey: number;
  readonly sessionName: string;
}

/** Slot rows kept after the chain used their nonce, for reading after the fact: a day. */
const KEEP_USED_SECONDS = 86_400;

/** The fleet's slots over `q` (see module comment). */
export function pgPayeeTxLog(q: PayoutQuery, opts: { readonly fence?: PayeeTxFence; readonly nodeId?: string } = {}): PayeeTxLog {
  const fence = opts.fence;
  // A one-bigint advisory key shows in pg_locks as classid (high 32 bits), objid (low 32 bits), objsubid 1 (as in x402/fleet/fleet.ts).
  const fenceSql = (at: number) =>
    fence
      ? ` AND EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
             AND l.classid = $${at} AND l.objid = $${at + 1} AND l.objsubid = 1 AND a.application_name = $${at + 2})`
      : '';
  const fenceValues = fence ? [Math.floor(fence.leaseKey / 2 ** 32), fence.leaseKey % 2 ** 32, fence.sessionName] : [];
  return {
    async live(payee, from) {
      const { rows } = await q<{ nonce: string; purpose: string; tx_id: string; raw: string }>(
        `SELECT nonce::text AS nonce, purpose, tx_id, encode(raw, 'hex') AS raw FROM payee_txs WHERE payee = $1 AND nonce >= $2::bigint ORDER BY nonce`,
        [payee, from.toString()],
      );
      return rows.map((r): PayeeTxSlot => ({ nonce: BigInt(r.nonce), purpose: r.purpose, txId: r.tx_id, raw: r.raw }));
    },
    async claim(payee, slot, from) {
      const r = await q(
        `INSERT INTO payee_txs (payee, nonce, purpose, tx_id, raw, signed_by)
         SELECT $1, $2::bigint, $3, $4, decode($5, 'hex'), $6
         WHERE NOT EXISTS (SELECT 1 FROM payee_txs WHERE payee = $1 AND purpose = $3 AND nonce >= $7::bigint)${fenceSql(8)}
         ON CONFLICT (payee, nonce) DO NOTHING`,
        [payee, slot.nonce.toString(), slot.purpose, slot.txId, slot.raw, opts.nodeId ?? null, from.toString(), ...fenceValues],
      );
      return r.rowCount === 1;
    },
    async replace(payee, slot) {
      const r = await q(
        `UPDATE payee_txs SET replaced = array_append(replaced, tx_id), tx_id = $4, raw = decode($5, 'hex'), signed_by = $6, signed_at = now()
         WHERE payee = $1 AND nonce = $2::bigint AND purpose = $3${fenceSql(7)}`,
        [payee, slot.nonce.toString(), slot.purpose, slot.txId, slot.raw, opts.nodeId ?? null, ...fenceValues],
      );
      return r.rowCount === 1;
    },
    async prune(payee, below) {
      await q(`DELETE FROM payee_txs WHERE payee = $1 AND nonce < $2::bigint AND signed_at < now() - make_interval(secs => $3)`, [payee, below.toString(), KEEP_USED_SECONDS]);
    },
  };
}
