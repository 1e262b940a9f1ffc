/**
 * A throwaway PostgreSQL for tests: `initdb` into a temporary directory, then `postgres` on
 * 127.0.0.1 at a free port (its Unix socket in the same temporary directory), stopped and deleted
 * by `stop()`. The binaries are found in /usr/local/bin, on PATH, or in Debian's
 * /usr/lib/postgresql/<version>/bin (where `apt-get install postgresql` puts them; .ci/run
 * installs it when none is found). PostgreSQL refuses to run as root: as root, both run as the
 * `postgres` user (Debian's package creates it), which then owns the directory.
 *
 * Durability is off (fsync, full_page_writes, synchronous_commit): the data is thrown away, and
 * this keeps a test's writes off the shared disk's flush queue.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** A running test PostgreSQL. */
export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  /** Creates a fresh database and answers its URL (one per test keeps ledgers apart). */
  createDatabase(name: string): Promise<string>;
  /** Runs one statement on the server's own database (`CREATE DATABASE … TEMPLATE …`, grants). */
  sql(text: string): Promise<void>;
  /** Stops the server (fast shutdown: open connections are cut) and keeps its data. */
  halt(): Promise<void>;
  /** Starts it again on the same port and data directory (after `halt`). */
  resume(): Promise<void>;
  /** Stops the server and deletes its data. */
  stop(): Promise<void>;
}

/** The directory of PostgreSQL's server binaries (initdb, postgres), or undefined when none is installed. */
export function findPostgresBinDir(): string | undefined {
  const candidates = ['/usr/local/bin', ...(process.env.PATH ?? '').split(':').filter(Boolean)];
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(debian, v, 'bin')));
  }
  return candidates.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'postgres')));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** uid/gid to run the server as: ourselves, or the `postgres` user when we are root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || uid <= 0) throw new Error('running as root and there is no postgres user to run PostgreSQL as');
  return { uid, gid };
}

async function waitReady(url: string, child: ChildProcess, log: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited (${child.exitCode}): ${log()}`);
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return;
    } catch {
      await c.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within ${timeoutMs} ms: ${log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Starts a throwaway PostgreSQL (see module comment); resolves once it accepts connections. */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = findPostgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed (no initdb/postgres in /usr/local/bin, PATH or /usr/lib/postgresql/*/bin): apt-get install postgresql');
  const who = runAs();
  const root = mkdtempSync(join(tmpdir(), 'native-pg-'));
  const data = join(root, 'data');
  const sock = join(root, 'sock');
  mkdirSync(sock);
  if (who) {
    chownSync(root, who.uid, who.gid);
    chownSync(sock, who.uid, who.gid);
  }
  const init = spawnSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'], { encoding: 'utf8', ...who, cwd: root });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;
  let out = '';
  const launch = async () => {
    out = '';
    const c = spawn(
      join(bin, 'postgres'),
      ['-D', data, '-p', String(port), '-k', sock, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'synchronous_commit=off', '-c', 'max_connections=200'],
      { stdio: ['ignore', 'pipe', 'pipe'], ...who, cwd: root },
    );
    c.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    c.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    child = c;
    await waitReady(url, c, () => out);
  };
  const halt = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGINT');
    const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  await launch();
  const sql = async (text: string): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };
  return {
    url,
    port,
    async createDatabase(name) {
      await sql(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      return `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(name)}`;
    },
    sql,
    halt,
    resume: launch,
    async stop() {
      await halt();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
