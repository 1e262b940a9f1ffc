/**
 * Real node processes for the p2p integration suites: a shared devnet genesis written before
 * start, nodes on 127.0.0.1 with free HTTP and p2p ports, small HTTP helpers and bounded waits.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeAddress } from '../../../consensus/address.js';
import { createDevnetChainParams } from '../../../consensus/devnet.js';
import type { HybridKeyPair } from '../../../consensus/keys.js';
import { paramsToJson, type ChainParams } from '../../../consensus/params.js';
import { toHex } from '../../../consensus/hash.js';
import { CONFIG_OPTIONS } from '../../../node/config.js';
import { createTransferTx } from '../../../consensus/txBuilder.js';
import { startNode, type NodeProc } from '../../helpers/nodeProcess.js';

/** A started node with its p2p identity. */
export interface P2PProc extends NodeProc {
  readonly dataDir: string;
  readonly peerId: string;
  /** Its p2p multiaddr on 127.0.0.1 (with /p2p/<id>). */
  readonly addr: string;
}

/** Writes one devnet genesis into every data directory (nodes of one devnet share it). */
export function writeSharedGenesis(dataDirs: readonly string[], opts: Parameters<typeof createDevnetChainParams>[0] = {}): ChainParams {
  const params = createDevnetChainParams({ genesisTime: Math.floor(Date.now() / 1000), ...opts });
  const text = `${JSON.stringify(paramsToJson(params), null, 2)}\n`;
  for (const d of dataDirs) {
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'genesis.json'), text);
  }
  return params;
}

const STRATUM_OFF = CONFIG_OPTIONS.some((o) => o.key === 'stratum') ? ['--no-stratum'] : [];

/** Starts a devnet node on 127.0.0.1 (HTTP and p2p on free ports) in `dataDir`. */
export async function startP2PNode(dataDir: string, args: string[], cwd: string): Promise<P2PProc> {
  const proc = await startNode(['--dev', '--data-dir', dataDir, '--http-port', '0', '--p2p-host', '127.0.0.1', '--p2p-port', '0', '--mine-threads', '1', ...STRATUM_OFF, ...args], { cwd, timeoutMs: 60_000 });
  const line = proc.lines.find((l) => l.msg === 'p2p listening') as { peerId: string; addrs: string[] } | undefined;
  if (!line) throw new Error('no "p2p listening" line before "listening"');
  return { ...proc, dataDir, peerId: line.peerId, addr: line.addrs[0] };
}

/** Stops a node with SIGTERM (SIGKILL after 20 s); resolves with its exit code. */
export async function stopProc(p: NodeProc): Promise<number | null> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.child.exitCode;
  p.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([p.exited, new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), 20_000)))]);
  clearTimeout(timer);
  if (code === 'late') {
    p.child.kill('SIGKILL');
    return p.exited;
  }
  return code;
}

/** Nodes of one devnet in one temp dir: a data dir per name, all on one genesis. */
export interface P2PCluster {
  readonly dir: string;
  readonly params: ChainParams;
  /** Starts (or restarts) the node `name` on its data dir. */
  start(name: string, args: string[]): Promise<P2PProc>;
  /** Stops every node started and removes the dir. */
  stop(): Promise<void>;
}

/** Creates the temp dir `<tmp>/<prefix>…` with a data dir and the shared genesis for each name. */
export function createP2PCluster(prefix: string, names: readonly string[]): P2PCluster {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const params = writeSharedGenesis(names.map((n) => join(dir, n)));
  const started: P2PProc[] = [];
  return {
    dir,
    params,
    async start(name, args) {
      const p = await startP2PNode(join(dir, name), args, dir);
      started.push(p);
      return p;
    },
    async stop() {
      await Promise.all(started.map((p) => stopProc(p)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** GET a JSON route (bounded). */
export async function getJson<T = any>(url: string, path: string): Promise<T> {
  const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) });
  return (await res.json()) as T;
}

/** Status of a node: height, tip, chain work as a bigint, peers and the p2p fields. */
export async function status(url: string): Promise<{ height: number; tip: string; work: bigint; peers: number; syncing: boolean; peerId: string | null; sync?: { height: number; targetHeight: number; rate: number; eta: number | null } }> {
  const s = await getJson(url, '/api/v1/status');
  return { ...s, work: BigInt(`0x${s.chainWork}`) };
}

/** Waits (bounded) until `cond()` holds; polls every `everyMs`. */
export async function waitUntil(cond: () => Promise<boolean> | boolean, timeoutMs: number, what: string, everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await cond()) return;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

/** Signs a transfer from `key` with the node's pending nonce and submits it; returns the tx id. */
export async function sendTransfer(url: string, params: ChainParams, key: HybridKeyPair, to: Uint8Array, amount: bigint): Promise<string> {
  const acc = await getJson(url, `/api/v1/account/${encodeAddress(key.address, params.hrp)}`);
  const tx = createTransferTx({ key, chainId: params.chainId, to, amount, nonce: BigInt(acc.pendingNonce), includeKey: !acc.publicKeyKnown, feeRate: params.minFeeRate });
  const res = await fetch(`${url}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(tx.bytes) }), signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { txId?: string; error?: { code: string; message: string } };
  if (!res.ok || !body.txId) throw new Error(`tx refused: ${JSON.stringify(body)}`);
  return body.txId;
}

/** Whether the transaction is mined on the node's best chain. */
export async function isMined(url: string, txId: string): Promise<boolean> {
  const res = await fetch(`${url}/api/v1/tx/${txId}`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) return false;
  return ((await res.json()) as { status: string }).status === 'mined';
}

/** Base-unit balance of an account on a node. */
export async function balance(url: string, params: ChainParams, id: Uint8Array): Promise<bigint> {
  return BigInt((await getJson(url, `/api/v1/account/${encodeAddress(id, params.hrp)}`)).balanceBase);
}

/** The log lines of a node with a given message. */
export function logLines(p: NodeProc, msg: string): Record<string, unknown>[] {
  return p.lines.filter((l) => l.msg === msg);
}
