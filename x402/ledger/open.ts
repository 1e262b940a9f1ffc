/**
 * Opens the settlement ledger: the one place that chooses an engine (LevelDB or PostgreSQL) for
 * a location. Re-exports the interface (ledger.ts) and the LevelDB engine for the node's callers.
 */
import type { LedgerOptions, SettlementLedger } from './ledger.js';
import { LevelLedger } from './levelLedger.js';

export * from './ledger.js';
export { LevelLedger } from './levelLedger.js';

/** True when `location` names a PostgreSQL database (`postgres://…`, `postgresql://…`) rather than a directory. */
export function isPostgresLocation(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * Opens the ledger at `location`: a PostgreSQL URL (PgLedger, loaded only then) or a directory
 * (LevelLedger, created when missing).
 */
export async function openLedger(location: string, opts: LedgerOptions = {}): Promise<SettlementLedger> {
  if (isPostgresLocation(location)) return (await import('./pgLedger.js')).PgLedger.open(location, opts);
  return LevelLedger.open(location);
}
