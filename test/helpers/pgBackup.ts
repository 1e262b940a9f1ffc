/**
 * The operator's guide's PostgreSQL backup and restore, on a test server (test/helpers/postgres.ts):
 * `pg_dump -Fc` of a live database (a consistent snapshot, the nodes keep running), and the
 * restore of such a dump in place of the database (`DROP DATABASE … WITH (FORCE)`, a new empty
 * database owned by the same role, `pg_restore`: tables, rows, owners and grants as dumped).
 * The client binaries are the server's own (its bin directory, resolved through symbolic links:
 * /usr/local/bin may hold only the server's), else Debian's newest, else on PATH.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findPostgresBinDir, type TestPostgres } from './postgres.js';

/** Where `tool` (pg_dump, pg_restore) is: beside the server's binary first. */
function toolPath(tool: string): string | undefined {
  const server = findPostgresBinDir();
  const dirs = server ? [dirname(realpathSync(join(server, 'postgres'))), server] : [];
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) dirs.push(...readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)).map((v) => join(debian, v, 'bin')));
  dirs.push(...(process.env.PATH ?? '').split(':').filter(Boolean));
  return dirs.map((d) => join(d, tool)).find((p) => existsSync(p));
}

function run(tool: string, args: string[]): Promise<void> {
  const bin = toolPath(tool);
  if (!bin) return Promise.reject(new Error(`${tool} is not installed (apt-get install postgresql-client)`));
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: 60_000, env: { ...process.env, PGCONNECT_TIMEOUT: '10' } }, (err, _stdout, stderr) => (err ? reject(new Error(`${tool} failed: ${stderr || err.message}`)) : resolve()));
  });
}

const connection = (server: TestPostgres) => ['-h', '127.0.0.1', '-p', String(server.port), '-U', 'postgres', '--no-password'];

/** `pg_dump -Fc` of `database` on `server` into `file`, while its clients keep writing. */
export function dumpDatabase(server: TestPostgres, database: string, file: string): Promise<void> {
  return run('pg_dump', [...connection(server), '-Fc', '-f', file, database]);
}

/** Replaces `database` by the dump `file`: its clients are cut off, the database dropped, made again for `owner` and restored. */
export async function restoreDatabase(server: TestPostgres, database: string, owner: string, file: string): Promise<void> {
  await server.sql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await server.sql(`CREATE DATABASE ${database} OWNER ${owner}`);
  await run('pg_restore', [...connection(server), '--exit-on-error', '-d', database, file]);
}
