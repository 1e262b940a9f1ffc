/**
 * `native-node ledger migrate --ledger postgres://owner@… [--grant <role>]`: applies the
 * migrations a fleet's PostgreSQL ledger lacks, as the role that owns its tables (the one step
 * that needs DDL), and with `--grant` gives the nodes' runtime role the row privileges a running
 * node needs (x402/ledger/pgPrivileges.ts). Run it before the first start and after each upgrade;
 * the nodes may then run under a role without CREATE. Writes no payment data.
 *
 * The ledger is `--ledger`, else `NATIVE_LEDGER`, else the config file's `ledger`.
 * Errors: `fleet_ledger_required` (no PostgreSQL ledger named), `ledger_unavailable`,
 * `ledger_migration_required` (this role may not apply them), `ledger_schema_newer`.
 */
import { NodeError } from '../consensus/errors.js';
import type { NodeConfig } from '../node/config.js';
import type { Out } from './cliKit.js';
import { FleetCommandErrorCode } from './fleetCommand.js';

/** Migrates the ledger of `config` (see module comment); returns the exit code. */
export async function ledgerMigrateCommand(config: NodeConfig, out: Out, opts: { grant?: string }): Promise<number> {
  const url = config.ledger;
  if (!url || !/^postgres(ql)?:\/\//i.test(url)) {
    throw new NodeError(FleetCommandErrorCode.LEDGER_REQUIRED, 'ledger migrate is for a fleet\'s PostgreSQL ledger: --ledger postgres://owner@host:5432/db (or NATIVE_LEDGER, or "ledger" in the config file); a LevelDB ledger is migrated by its node');
  }
  const { PgLedger } = await import('../x402/ledger/pgLedger.js');
  const r = await PgLedger.migrate(url, { grantTo: opts.grant });
  const done = r.from === r.to ? `the ledger's schema is at version ${r.to}: nothing to apply` : `the ledger's schema migrated from version ${r.from} to ${r.to}`;
  const granted = r.grants.length ? `\ngranted to ${opts.grant}:\n  ${r.grants.join('\n  ')}` : '';
  out.print(`${done}${granted}`, r);
  return 0;
}
