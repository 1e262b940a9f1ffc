/**
 * Opens the payee's transaction log (the nonce slots of x402/native/payeeNonces.ts): the one place
 * that chooses its engine. A node on a LevelDB ledger keeps the slots in its providers database;
 * a fleet node on a PostgreSQL ledger in the ledger's database (`payee_txs`), where the database
 * keeps "one purpose per nonce" whichever node writes.
 */
import type { Level } from 'level';
import type { SettlementLedger } from '../ledger/ledger.js';
import type { PgLedger } from '../ledger/pgLedger.js';
import { levelPayeeTxLog } from './levelPayeeTxLog.js';
import type { PayeeTxLog } from './payeeNonces.js';
import { pgPayeeTxLog, type PayeeTxFence } from './pgPayeeTxLog.js';

/**
 * The payee's slots: on a PostgreSQL ledger in its database (written by `nodeId`; with `fence`,
 * only while this node's lease session holds the signer lease), otherwise in `db`.
 */
export function openPayeeTxLog(at: { readonly db: Level<string, string>; readonly ledger: SettlementLedger }, fleet: { readonly nodeId?: string; readonly fence?: PayeeTxFence } = {}): PayeeTxLog {
  const { ledger } = at;
  if (ledger.kind === 'postgres') return pgPayeeTxLog((text, values) => (ledger as PgLedger).query(text, values), { nodeId: fleet.nodeId, fence: fleet.fence });
  return levelPayeeTxLog(at.db);
}
