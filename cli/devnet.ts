/**
 * `native-node devnet --nodes N`: a local network of N devnet nodes for operators and
 * developers. One genesis is written once (`<dir>/genesis.json`, genesis time = now) and copied
 * into every node's data directory before it starts, so all nodes share one chain. Node k
 * (1-based) gets `<dir>/node<k>` as data directory, HTTP port `httpBase + 10(k−1)` and p2p port
 * `p2pBase + 10(k−1)` on 127.0.0.1 (base 0: free ports), mines with `--mine-threads` threads, and
 * bootstraps to every node started before it. Each node is a child process (`native-node start`)
 * whose log goes to `<dir>/node<k>/node.log`. When all are listening, the command prints how to
 * reach each (a table, or one JSON line with `--json`) and runs until SIGINT/SIGTERM, which stops
 * them all gracefully. If one node dies, the others are stopped and the command fails.
 *
 * With `--ledger postgres://…` the nodes are a devnet fleet: every node opens that one ledger
 * (fleet mode: one seller id, one signer lease, any node settles any payment), each with its own
 * data directory (its node id) and ports; Stratum is off on every node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync, type WriteStream } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { NodeError } from '../consensus/errors.js';
import { createDevnetChainParams, DEVNET_ADDRESSES } from '../consensus/devnet.js';
import { encodeAddress, TESTNET_HRP } from '../consensus/address.js';
import { fromHex } from '../consensus/hash.js';
import { paramsToJson } from '../consensus/params.js';
import { CONFIG_OPTIONS } from '../node/config.js';
import { DEVNET_GENESIS_FILE } from '../node/chainParams.js';
import { withSuggestion } from './startHelp.js';
import { PROJECT_ROOT } from '../services/projectRoot.js';

/** Error codes of the devnet command. */
export const DevnetErrorCode = {
  USAGE: 'cli_usage',
  GENESIS_MISMATCH: 'devnet_genesis_mismatch',
  NODE_FAILED: 'devnet_node_failed',
} as const;

/** Most nodes one command starts. */
export const MAX_DEVNET_NODES = 16;
/** How long one node may take to log "listening", ms. */
const START_TIMEOUT_MS = 60_000;
/** How long a node may take to stop after SIGTERM before it is killed, ms. */
const STOP_TIMEOUT_MS = 20_000;

const BIN = join(PROJECT_ROOT, 'bin', 'native-node.js');

/** One running devnet node. */
export interface DevnetNode {
  readonly name: string;
  readonly dataDir: string;
  readonly log: string;
  readonly url: string;
  readonly peerId: string;
  readonly p2p: readonly string[];
  readonly child: ChildProcess;
}

interface DevnetOptions {
  readonly nodes: number;
  readonly dir: string;
  readonly httpBase: number;
  readonly p2pBase: number;
  readonly mine: boolean;
  readonly mineThreads: number;
  readonly logLevel: string;
  readonly json: boolean;
  /** One PostgreSQL ledger shared by every node (a devnet fleet), or each node its own LevelDB one. */
  readonly ledger: string | undefined;
}

function usage(message: string): NodeError {
  return new NodeError(DevnetErrorCode.USAGE, `${message}; usage: npx native-node devnet [--nodes N] [--data-dir <dir>] [--http-port <base>] [--p2p-port <base>] [--mine-threads <n>] [--no-mine] [--json]`);
}

function intOption(raw: unknown, name: string, min: number, max: number, dflt: number): number {
  if (raw === undefined) return dflt;
  if (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw usage(`--${name} must be an integer from ${min} to ${max}`);
  return Number(raw);
}

/** The options `devnet` accepts (its parser and its help read this table; booleans take --no-). */
export const DEVNET_OPTIONS = {
  nodes: { type: 'string' },
  'data-dir': { type: 'string' },
  'http-port': { type: 'string' },
  'p2p-port': { type: 'string' },
  'mine-threads': { type: 'string' },
  mine: { type: 'boolean' },
  'log-level': { type: 'string' },
  json: { type: 'boolean' },
  ledger: { type: 'string' },
} as const;

function parseDevnetArgs(args: string[], cwd: string): DevnetOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args, options: DEVNET_OPTIONS, strict: true, allowPositionals: false, allowNegative: true }) as { values: Record<string, string | boolean | undefined> });
  } catch (e) {
    // One plain line; the command line adds which --help lists the flags.
    throw new NodeError(DevnetErrorCode.USAGE, withSuggestion((e as Error).message, DEVNET_OPTIONS));
  }
  const nodes = intOption(values.nodes, 'nodes', 1, MAX_DEVNET_NODES, 3);
  const httpBase = intOption(values['http-port'], 'http-port', 0, 65535 - 10 * (nodes - 1), 8402);
  const p2pBase = intOption(values['p2p-port'], 'p2p-port', 0, 65535 - 10 * (nodes - 1), 8403);
  const ledger = typeof values.ledger === 'string' ? values.ledger : undefined;
  // A LevelDB ledger is one process's (its directory is locked): only PostgreSQL is shared.
  if (ledger !== undefined && !/^postgres(ql)?:\/\/[^\s]+$/i.test(ledger)) throw usage('--ledger must be a PostgreSQL URL (postgres://user@host:5432/db) shared by the nodes');
  return {
    nodes,
    dir: resolve(cwd, typeof values['data-dir'] === 'string' ? values['data-dir'] : join('data', 'devnet-network')),
    httpBase,
    p2pBase,
    mine: values.mine !== false,
    mineThreads: intOption(values['mine-threads'], 'mine-threads', 1, 256, 1),
    logLevel: typeof values['log-level'] === 'string' ? values['log-level'] : 'info',
    json: values.json === true,
    ledger,
  };
}

/** Writes the shared genesis once and copies it into each node directory (refusing a different one). */
function prepareGenesis(dir: string, nodeDirs: readonly string[]): string {
  mkdirSync(dir, { recursive: true });
  const shared = join(dir, DEVNET_GENESIS_FILE);
  if (!existsSync(shared)) {
    const params = createDevnetChainParams({ genesisTime: Math.floor(Date.now() / 1000), actors: true });
    writeFileSync(shared, `${JSON.stringify(paramsToJson(params), null, 2)}\n`, { mode: 0o644 });
  }
  const text = readFileSync(shared, 'utf8');
  for (const d of nodeDirs) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    const own = join(d, DEVNET_GENESIS_FILE);
    if (!existsSync(own)) writeFileSync(own, text, { mode: 0o644 });
    else if (JSON.stringify(JSON.parse(readFileSync(own, 'utf8'))) !== JSON.stringify(JSON.parse(text))) {
      throw new NodeError(DevnetErrorCode.GENESIS_MISMATCH, `${own} differs from ${shared}: that node belongs to another devnet (delete ${dir} to start afresh)`, { path: own });
    }
  }
  return shared;
}

/** Starts one node and resolves with its URL and p2p addresses once it logs "listening". */
function startChild(name: string, dataDir: string, args: string[], logFile: WriteStream): Promise<DevnetNode> {
  // Its own process group: a Ctrl-C in the terminal reaches the devnet alone, which stops each node
  // with one SIGTERM (a node that also got the terminal's SIGINT would take SIGTERM as a second signal).
  const child = spawn(process.execPath, [BIN, 'start', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env, detached: true });
  child.stderr!.pipe(logFile, { end: false });
  let stderrTail = '';
  child.stderr!.on('data', (d: Buffer) => (stderrTail = (stderrTail + d.toString('utf8')).slice(-4000)));
  return new Promise((resolvePromise, reject) => {
    let p2p: string[] = [];
    let peerId = '';
    let buf = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new NodeError(DevnetErrorCode.NODE_FAILED, `${name} did not start within ${START_TIMEOUT_MS / 1000} s (see ${logFile.path})`));
    }, START_TIMEOUT_MS);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      // The node's own one-line error (`error <code>: …`), when it printed one.
      const said = /^error \S+: .*$/m.exec(stderrTail)?.[0];
      reject(new NodeError(DevnetErrorCode.NODE_FAILED, `${name} exited with ${code} while starting${said ? `: ${said.slice(6)}` : ''} (see ${logFile.path})`));
    };
    child.once('exit', onExit);
    child.stdout!.on('data', (d: Buffer) => {
      logFile.write(d);
      buf += d.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.includes('"msg":"p2p listening"') && !line.includes('"msg":"listening"')) continue;
        try {
          const obj = JSON.parse(line) as { msg: string; addrs?: string[]; peerId?: string; url?: string };
          if (obj.msg === 'p2p listening') {
            p2p = obj.addrs ?? [];
            peerId = obj.peerId ?? '';
          } else if (obj.msg === 'listening' && obj.url) {
            clearTimeout(timer);
            child.off('exit', onExit);
            buf = '';
            resolvePromise({ name, dataDir, log: String(logFile.path), url: obj.url, peerId, p2p, child });
          }
        } catch {
          // not a log line of ours
        }
      }
    });
  });
}

async function stopAll(nodes: readonly { child: ChildProcess }[]): Promise<void> {
  await Promise.all(
    nodes.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([exited.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), STOP_TIMEOUT_MS)))]);
      clearTimeout(timer);
      if (late) {
        child.kill('SIGKILL');
        await exited;
      }
    }),
  );
}

/** Runs `native-node devnet …` until a signal (or a node failure); returns the exit code. */
export async function runDevnet(args: string[], cwd: string = process.cwd()): Promise<number> {
  const o = parseDevnetArgs(args, cwd);
  const nodeDirs = Array.from({ length: o.nodes }, (_, i) => join(o.dir, `node${i + 1}`));
  const genesis = prepareGenesis(o.dir, nodeDirs);
  const hasStratum = CONFIG_OPTIONS.some((c) => c.key === 'stratum');
  const nodes: DevnetNode[] = [];
  const logs: WriteStream[] = [];
  let stopping = false;
  let failed: string | undefined;
  let wake: () => void = () => {};
  const stopped = new Promise<void>((r) => (wake = r));
  const onSignal = () => {
    stopping = true;
    wake();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    for (let i = 0; i < o.nodes && !stopping; i++) {
      const name = `node${i + 1}`;
      const port = (base: number) => String(base === 0 ? 0 : base + 10 * i);
      const nodeArgs = [
        '--dev',
        '--data-dir', nodeDirs[i],
        '--http-port', port(o.httpBase),
        '--p2p-host', '127.0.0.1',
        '--p2p-port', port(o.p2pBase),
        o.mine ? '--mine' : '--no-mine',
        '--mine-threads', String(o.mineThreads),
        '--log-level', o.logLevel,
        ...(hasStratum ? ['--no-stratum'] : []),
        ...(o.ledger ? ['--ledger', o.ledger] : []),
        ...nodes.flatMap((n) => (n.p2p[0] ? ['--bootstrap', n.p2p[0]] : [])),
      ];
      const logFile = createWriteStream(join(nodeDirs[i], 'node.log'), { flags: 'a' });
      logs.push(logFile);
      const node = await startChild(name, nodeDirs[i], nodeArgs, logFile);
      nodes.push(node);
      node.child.once('exit', (code) => {
        if (stopping) return;
        failed = `${name} exited with ${code} (see ${node.log})`;
        stopping = true;
        wake();
      });
    }
    if (!stopping) printNodes(o, nodes, genesis, cwd);
    await stopped;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stopping = true;
    await stopAll(nodes);
    for (const l of logs) l.end();
  }
  if (failed) throw new NodeError(DevnetErrorCode.NODE_FAILED, failed);
  if (!o.json) process.stdout.write('devnet stopped\n');
  return 0;
}

function printNodes(o: DevnetOptions, nodes: readonly DevnetNode[], genesis: string, cwd: string): void {
  if (o.json) {
    const data = { devnet: { dir: o.dir, genesis, ledger: o.ledger === undefined ? null : masked(o.ledger), nodes: nodes.map((n) => ({ name: n.name, url: n.url, peerId: n.peerId, p2p: n.p2p, stratum: null, dataDir: n.dataDir, log: n.log, pid: n.child.pid })) } };
    process.stdout.write(`${JSON.stringify(data)}\n`);
    return;
  }
  const rel = (p: string) => relative(cwd, p) || '.';
  const lines = [
    `devnet: ${nodes.length} node(s) ${o.mine ? `mining (${o.mineThreads} thread(s) each)` : 'not mining'}, one chain (genesis ${rel(genesis)})`,
    '',
    ...(o.ledger ? [`one ledger for every node (a fleet: one seller id, any node settles any payment): ${masked(o.ledger)}`, ''] : []),
    ...nodes.map((n) => `  ${n.name}  ${n.url}  p2p ${n.p2p[0] ?? '(none)'}  stratum off\n         data ${rel(n.dataDir)}  log ${rel(n.log)}`),
    '',
    'Try:',
    ...(o.ledger ? [`  npx native-node fleet status --ledger ${masked(o.ledger)}`] : []),
    `  npx native-node status --node ${nodes[0].url}`,
    `  curl ${nodes[0].url}/api/v1/peers`,
    `  npx native-node send ${encodeAddress(fromHex(DEVNET_ADDRESSES.payee), TESTNET_HRP)} 1.5 --wait --node ${nodes[nodes.length - 1].url} --data-dir ${rel(nodes[nodes.length - 1].dataDir)}`,
    '',
    'Ctrl-C stops every node.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** A ledger URL as printed: its password, if any, left out. */
function masked(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:…@');
}
