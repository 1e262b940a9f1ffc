/**
 * The operator's guide's database roles for a fleet's ledger (docs/operators-guide.md, Fleet mode,
 * "Database roles"), read from the guide itself so the tests run what it tells operators to run:
 * its SQL block that creates the owner role, the runtime role and the database, and its block of
 * GRANT statements.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { PgLedger } from '../../x402/ledger/pgLedger.js';
import { ROOT } from './nodeProcess.js';
import type { TestPostgres } from './postgres.js';

const GUIDE = readFileSync(join(ROOT, 'docs', 'operators-guide.md'), 'utf8');
const SQL_BLOCKS = [...GUIDE.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** The statements of an SQL block (comment lines dropped), each without its `;`. */
export function sqlStatements(block: string): string[] {
  return block
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The guide's block creating the roles and the database (undefined when the guide lost it). */
export const GUIDE_ROLES_SQL = SQL_BLOCKS.find((b) => b.includes('CREATE ROLE'));
/** The guide's block of GRANT statements for the runtime role. */
export const GUIDE_GRANTS_SQL = SQL_BLOCKS.find((b) => b.includes('GRANT USAGE ON SCHEMA'));

/** The owner's and the runtime role's URLs of the guide's database on `server`. */
export interface LedgerRoleUrls {
  readonly ownerUrl: string;
  readonly nodeUrl: string;
  readonly database: string;
}

/** Runs the guide's roles block on `server` as its superuser (one statement at a time: CREATE DATABASE runs outside a transaction). */
export async function createGuideRoles(server: TestPostgres): Promise<LedgerRoleUrls> {
  if (!GUIDE_ROLES_SQL) throw new Error("the operator's guide has no SQL block creating the ledger's roles");
  const c = new pg.Client({ connectionString: server.url });
  await c.connect();
  try {
    for (const s of sqlStatements(GUIDE_ROLES_SQL)) await c.query(s);
  } finally {
    await c.end();
  }
  const database = /CREATE DATABASE (\w+)/.exec(GUIDE_ROLES_SQL)![1]!;
  const owner = /CREATE ROLE (\w+)/.exec(GUIDE_ROLES_SQL)![1]!;
  const runtime = [...GUIDE_ROLES_SQL.matchAll(/CREATE ROLE (\w+)/g)][1]![1]!;
  const at = (role: string) => `postgres://${role}@127.0.0.1:${server.port}/${database}`;
  return { ownerUrl: at(owner), nodeUrl: at(runtime), database };
}

/** The guide's roles, the migrations applied as the owner and the runtime role granted (what `ledger migrate --grant` does); answers the URLs. */
export async function migratedGuideLedger(server: TestPostgres): Promise<LedgerRoleUrls> {
  const urls = await createGuideRoles(server);
  await PgLedger.migrate(urls.ownerUrl, { grantTo: new URL(urls.nodeUrl).username });
  return urls;
}
