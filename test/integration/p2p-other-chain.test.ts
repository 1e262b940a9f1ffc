/**
 * A bootstrap peer on another chain: two devnet nodes with their own genesis each (own data
 * directories, so different genesis times). The second bootstraps to the first; it must log a
 * warning naming both genesis hashes and show the peer in `/api/v1/status` and `native-node
 * status`, instead of treating the peer as one that never answers.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, childEnv, startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';

let dir: string;
let a: NodeProc | undefined;
let b: NodeProc | undefined;

const common = ['--dev', '--http-port', '0', '--p2p-host', '127.0.0.1', '--p2p-port', '0', '--no-stratum', '--no-mine'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-other-chain-'));
  a = await startNode([...common, '--data-dir', join(dir, 'a')], { cwd: dir });
  // A devnet's genesis time is its first start, in seconds: make sure the second one differs.
  await new Promise((r) => setTimeout(r, 1_100));
  const addrs = a.lines.find((l) => l.msg === 'p2p listening')!.addrs as string[];
  b = await startNode([...common, '--data-dir', join(dir, 'b'), '--bootstrap', addrs.find((x) => x.includes('/tcp/'))!], { cwd: dir });
}, 120_000);

afterAll(async () => {
  await Promise.all([a && stopProcess(a), b && stopProcess(b)]);
  rmSync(dir, { recursive: true, force: true });
});

const genesisOf = (d: string) => (JSON.parse(readFileSync(join(dir, d, 'genesis.json'), 'utf8')) as Record<string, unknown>);

async function waitFor<T>(fn: () => T | undefined | Promise<T | undefined>, ms: number): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('a bootstrap peer on another chain', () => {
  test('is reported: a warning naming both genesis hashes, otherChainPeers in the status, a line in native-node status', async () => {
    expect(genesisOf('a')).not.toEqual(genesisOf('b'));
    const [sa, sb] = (await Promise.all([a!, b!].map(async (n) => (await fetch(`${n.url}/api/v1/block/0`)).json()))) as { hash: string }[];
    const warning = await waitFor(() => b!.lines.find((l) => l.level === 'warn' && typeof l.msg === 'string' && l.msg.includes('another chain')), 20_000);
    expect(warning).toMatchObject({ bootstrap: true, ourGenesis: sb.hash, theirGenesis: sa.hash, theirNetwork: 'native-devnet', theirChainId: 1337 });
    expect(String(warning.msg)).toContain(sa.hash);
    expect(String(warning.msg)).toContain(sb.hash);
    const status = (await (await fetch(`${b!.url}/api/v1/status`)).json()) as { otherChainPeers: unknown[]; peers: number };
    expect(status.otherChainPeers).toEqual([expect.objectContaining({ genesis: sa.hash, network: 'native-devnet', chainId: 1337, bootstrap: true })]);
    // The first node saw the second dial in: it is not its bootstrap peer, and is listed as such.
    const statusA = (await (await fetch(`${a!.url}/api/v1/status`)).json()) as { otherChainPeers: { genesis: string; bootstrap: boolean }[] };
    expect(statusA.otherChainPeers).toEqual([expect.objectContaining({ genesis: sb.hash, bootstrap: false })]);
    const human = await new Promise<string>((resolve) => execFile(process.execPath, [BIN, 'status', '--node', b!.url], { env: childEnv(), timeout: 30_000 }, (_e, out) => resolve(out)));
    expect(human).toMatch(new RegExp(`warning +bootstrap peer \\S+ is on another chain: native-devnet, genesis ${sa.hash}`));
  }, 60_000);
});
