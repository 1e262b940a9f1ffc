/**
 * Who may do what in a fleet's ledger database (PostgreSQL, x402/ledger/pgLedger.ts). Two roles:
 *
 *   - the owner: applies the migrations (DDL: CREATE TABLE, CREATE INDEX, ALTER TABLE), so it owns
 *     the ledger's tables and needs CREATE on their schema — once per upgrade, by
 *     `native-node ledger migrate --ledger postgres://owner@…` or the first node started under it;
 *   - the runtime role the nodes log in as: no DDL, only the row privileges of
 *     `RUNTIME_TABLE_PRIVILEGES` on the ledger's tables, USAGE on their schema, EXECUTE on the
 *     functions of `RUNTIME_FUNCTIONS` (the advisory locks, NOTIFY) and SELECT on the system views
 *     of `RUNTIME_VIEWS` (the signer lease's fence). The ledger uses no sequence, and LISTEN needs
 *     no privilege.
 *
 * A node checks its role's privileges right after the migrations (`checkRuntimePrivileges`), before
 * it writes anything: a missing one stops the start with `ledger_privilege_missing`, naming each
 * privilege and the GRANT that gives it, rather than a heartbeat or sweep failing later. A schema
 * behind the node's that its role may not migrate stops it with `ledger_migration_required`.
 */
import type pg from 'pg';
import { NodeError } from '../../consensus/errors.js';
import { LedgerErrorCode } from './ledger.js';

/** A row privilege on a table. */
export type TablePrivilege = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE';

/**
 * The row privileges a running node needs on each table of the ledger, from the statements it
 * runs: `INSERT … ON CONFLICT DO UPDATE` and `SELECT … FOR UPDATE` need UPDATE; DELETE only where
 * old rows are deleted (heartbeats of nodes gone for a day, used nonce slots, ended inbox jobs,
 * used inbox signatures).
 */
export const RUNTIME_TABLE_PRIVILEGES: Readonly<Record<string, readonly TablePrivilege[]>> = {
  ledger_schema: ['SELECT'],
  ledger_marks: ['SELECT', 'INSERT', 'UPDATE'],
  payments: ['SELECT', 'INSERT', 'UPDATE'],
  provider_payouts: ['SELECT', 'INSERT', 'UPDATE'],
  inbox_agents: ['SELECT', 'INSERT', 'UPDATE'],
  inbox_stats: ['SELECT', 'INSERT', 'UPDATE'],
  fleet_nodes: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  payee_txs: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  inbox_jobs: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  inbox_signatures: ['SELECT', 'INSERT', 'DELETE'],
};

/** Functions a running node calls (EXECUTE; PostgreSQL grants it to PUBLIC unless revoked). */
export const RUNTIME_FUNCTIONS = ['pg_try_advisory_lock(bigint)', 'pg_advisory_xact_lock(bigint)', 'pg_notify(text, text)'] as const;

/** System views a running node reads: who holds the signer lease (SELECT; PUBLIC's by default). */
export const RUNTIME_VIEWS = ['pg_catalog.pg_locks', 'pg_catalog.pg_stat_activity'] as const;

/** One migration of the ledger's schema. */
export interface LedgerMigration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

/** `role` as an SQL identifier (quoted unless a plain lower-case name). */
export function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/**
 * The GRANT statements that give `role` what a running node needs on tables of `schema`: one per
 * set of privileges, tables in the order of `RUNTIME_TABLE_PRIVILEGES` (what the operator's guide lists).
 */
export function runtimeGrantStatements(role: string, schema = 'public'): string[] {
  const r = quoteIdent(role);
  const bySet = new Map<string, string[]>();
  for (const [table, privs] of Object.entries(RUNTIME_TABLE_PRIVILEGES)) bySet.set(privs.join(', '), [...(bySet.get(privs.join(', ')) ?? []), table]);
  return [`GRANT USAGE ON SCHEMA ${quoteIdent(schema)} TO ${r};`, ...[...bySet].map(([privs, tables]) => `GRANT ${privs} ON ${tables.join(', ')} TO ${r};`)];
}

/** One statement (a pool's or a client's query). */
type Query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/**
 * Checks that the session's role has every privilege a running node needs (see module comment);
 * throws `ledger_privilege_missing` naming each missing one and the GRANT for it.
 */
export async function checkRuntimePrivileges(q: Query): Promise<void> {
  const kinds: string[] = [];
  const objects: string[] = [];
  const privs: string[] = [];
  const want = (kind: string, object: string, priv: string) => (kinds.push(kind), objects.push(object), privs.push(priv));
  for (const [table, ps] of Object.entries(RUNTIME_TABLE_PRIVILEGES)) for (const p of ps) want('table', table, p);
  for (const f of RUNTIME_FUNCTIONS) want('function', f, 'EXECUTE');
  for (const v of RUNTIME_VIEWS) want('view', v, 'SELECT');
  // Unqualified table names resolve on the search_path, as the node's statements do; a table missing counts as not granted.
  const { rows } = await q<{ role: string; schema: string | null; usage: boolean | null; kind: string; object: string; priv: string; ok: boolean | null }>(
    `SELECT current_user AS role, current_schema() AS schema, has_schema_privilege(current_schema(), 'USAGE') AS usage, t.kind, t.object, t.priv,
       CASE t.kind WHEN 'function' THEN has_function_privilege(t.object, t.priv)
         ELSE CASE WHEN to_regclass(t.object) IS NULL THEN false ELSE has_table_privilege(to_regclass(t.object), t.priv) END END AS ok
     FROM unnest($1::text[], $2::text[], $3::text[]) AS t(kind, object, priv)`,
    [kinds, objects, privs],
  );
  const { role, schema, usage } = rows[0]!;
  const r = quoteIdent(role);
  const missing: string[] = [];
  const grants: string[] = [];
  if (!schema || !usage) {
    missing.push(schema ? `USAGE on schema ${schema}` : 'a schema on its search_path');
    grants.push(`GRANT USAGE ON SCHEMA ${quoteIdent(schema ?? 'public')} TO ${r};`);
  }
  const byTable = new Map<string, string[]>();
  for (const row of rows) {
    if (row.ok) continue;
    missing.push(`${row.priv} on ${row.kind === 'table' ? '' : `${row.kind} `}${row.object}`);
    if (row.kind === 'table') byTable.set(row.object, [...(byTable.get(row.object) ?? []), row.priv]);
    else grants.push(row.kind === 'function' ? `GRANT EXECUTE ON FUNCTION ${row.object} TO ${r};` : `GRANT SELECT ON ${row.object} TO ${r};`);
  }
  for (const [table, ps] of byTable) grants.push(`GRANT ${ps.join(', ')} ON ${table} TO ${r};`);
  if (missing.length === 0) return;
  throw new NodeError(
    LedgerErrorCode.PRIVILEGE_MISSING,
    `the ledger database's role "${role}" lacks ${missing.join(', ')}, which a running node needs; as the database's owner run: ${grants.join(' ')} (or \`npx native-node ledger migrate --ledger postgres://<owner>@… --grant ${role}\`; the operator's guide lists every grant under Fleet mode, "Database roles")`,
    { role, schema, missing, grants },
  );
}

function migrationRequired(role: string, schema: string | null, current: number, latest: number, why: string): NodeError {
  return new NodeError(
    LedgerErrorCode.MIGRATION_REQUIRED,
    `the ledger database has schema version ${current} and this node needs ${latest}, but role "${role}" ${why}: apply the migrations once as the role that owns the ledger (\`npx native-node ledger migrate --ledger postgres://<owner>@…\`, or start one node under that role), then start the nodes again`,
    { role, schema, current, latest },
  );
}

/**
 * Applies the migrations the database lacks, in one transaction under the advisory lock `lockKey`
 * (nodes starting together migrate once). A database at the latest version takes no DDL, so a
 * runtime role without CREATE starts; one behind needs a role that may create tables in the
 * schema and owns the ledger's tables (`ledger_migration_required` otherwise); one ahead is
 * refused (`ledger_schema_newer`). Answers the versions before and after.
 */
export async function applyMigrations(pool: pg.Pool, migrations: readonly LedgerMigration[], lockKey: number): Promise<{ from: number; to: number }> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
    const { rows } = await c.query<{ present: boolean; readable: boolean | null; role: string; schema: string | null; can_create: boolean | null }>(
      `SELECT to_regclass('ledger_schema') IS NOT NULL AS present, CASE WHEN to_regclass('ledger_schema') IS NOT NULL THEN has_table_privilege(to_regclass('ledger_schema'), 'SELECT') END AS readable,
         current_user AS role, current_schema() AS schema, has_schema_privilege(current_schema(), 'CREATE') AS can_create`,
    );
    const { present, readable, role, schema, can_create: canCreate } = rows[0]!;
    // A role that may not even read the version: every privilege it lacks, named at once.
    if (present && !readable) await checkRuntimePrivileges((text, values) => c.query(text, values));
    const current = present ? ((await c.query<{ v: number | null }>('SELECT max(version) AS v FROM ledger_schema')).rows[0]?.v ?? 0) : 0;
    const latest = migrations[migrations.length - 1]!.version;
    if (current > latest) throw new NodeError(LedgerErrorCode.SCHEMA_NEWER, `the ledger database has schema version ${current}, newer than this node's ${latest}: upgrade the node`, { current, latest });
    if (current < latest) {
      if (!canCreate) throw migrationRequired(role, schema, current, latest, schema ? `may not create tables in schema ${schema}` : 'has no schema on its search_path');
      try {
        await c.query(`CREATE TABLE IF NOT EXISTS ledger_schema (version int PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
        for (const m of migrations) {
          if (m.version <= current) continue;
          await c.query(m.sql);
          await c.query('INSERT INTO ledger_schema (version, description) VALUES ($1, $2)', [m.version, m.description]);
        }
      } catch (e) {
        // 42501 insufficient_privilege: ALTER TABLE on a table another role owns, say.
        if ((e as { code?: unknown }).code === '42501') throw migrationRequired(role, schema, current, latest, `may not apply them (${(e as Error).message})`);
        throw e;
      }
    }
    await c.query('COMMIT');
    return { from: current, to: Math.max(current, latest) };
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}
