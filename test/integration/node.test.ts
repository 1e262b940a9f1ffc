/**
 * The real node as a child process (`native-node start --dev`, HTTP on port 0, its own data
 * directory), driven by the real CLI as child processes: status, wallets, a transfer mined by the
 * built-in miner, balances, error codes, graceful shutdown and restart on the same data.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { BIN, childEnv, startNode as startNodeProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { mkdtempSync, rmSync, statSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let dir: string;
let home: string;
let dataDir: string;
let node: NodeProc | undefined;

/** Starts the devnet node on port 0 with one miner thread in this test's data directory. */
function startNode(args: string[]): Promise<NodeProc> {
  return startNodeProcess(['--dev', '--data-dir', dataDir, '--http-port', '0', '--mine-threads', '1', ...args], { cwd: dir, env: { HOME: home } });
}

/** Runs the CLI; resolves with exit code, stdout and stderr (bounded by a timeout). */
function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; json: any }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env: childEnv({ HOME: home, ...env }), timeout: 45_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      let json: unknown;
      try {
        json = JSON.parse(stdout.trim().split('\n').pop() ?? '');
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

async function stopNode(p: NodeProc, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  p.child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 15_000)));
  const code = await Promise.race([p.exited, timeout]);
  clearTimeout(timer);
  if (code === 'timeout') {
    p.child.kill('SIGKILL');
    throw new Error('node did not stop within 15 s');
  }
  return code;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-it-'));
  home = join(dir, 'home');
  dataDir = join(dir, 'data');
  node = await startNode([]);
}, 120_000);

afterAll(async () => {
  if (node && node.child.exitCode === null) {
    node.child.kill('SIGKILL');
    await node.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('native-node start --dev', () => {
  test('logs "listening" with the real URL; writes the dev wallet and the pinned genesis', async () => {
    expect(node!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(node!.url).not.toMatch(/:0$/);
    expect(existsSync(join(dataDir, 'dev-wallet.json'))).toBe(true);
    expect(statSync(join(dataDir, 'dev-wallet.json')).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dataDir, 'genesis.json'))).toBe(true);
    expect(existsSync(join(dataDir, 'chain'))).toBe(true);
  });

  test('cli status --json: devnet, mining, height growing', async () => {
    const [r, human] = await Promise.all([cli(['status', '--node', node!.url, '--json']), cli(['status', '--node', node!.url])]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ network: 'native-devnet', chainId: 1337, peers: 0, syncing: false, peerId: null, listen: [], mining: { running: true, threads: 1 } });
    expect(typeof r.json.height).toBe('number');
    expect(r.json.tip).toMatch(/^[0-9a-f]{64}$/);
    expect(human.stdout).toContain('native-devnet');
    expect(r.json.payments).toMatchObject({ settled: 0, settledUsdc: 0, refundsPending: 0, refundsStuck: 0, ledgerGaps: [], sellerId: expect.stringMatching(/^[0-9a-f]{16}$/), confirmations: 1 });
    expect(human.stdout).toMatch(/payments +0 paid call\(s\) settled \(0 in USDC\), 0 refund\(s\) pending/);
    expect(human.stdout).toMatch(/mining +on, 1 thread\(s\)/);
  });

  let alice: string;
  test('cli wallet new --json writes an encrypted wallet and prints its address; refuses to overwrite', async () => {
    const r = await cli(['wallet', 'new', '--node', node!.url, '--json'], { NATIVE_WALLET_PASSPHRASE: 'correct horse' });
    expect(r.code).toBe(0);
    alice = r.json.address;
    expect(alice).toMatch(/^tnative1/);
    const file = join(home, '.native-node', 'wallet.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ address: alice, network: 'native-devnet', kdf: { name: 'scrypt' } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await cli(['wallet', 'new', '--node', node!.url, '--json'], { NATIVE_WALLET_PASSPHRASE: 'x' });
    expect(again.code).not.toBe(0);
    expect(again.json).toEqual({ error: { code: 'wallet_exists', message: expect.any(String) } });
  });

  let txId: string;
  test('cli send <address> 1.5 --wait from the dev wallet: mined, balance arrives', async () => {
    const r = await cli(['send', alice, '1.5', '--wait', '--timeout', '40', '--node', node!.url, '--data-dir', dataDir, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ status: 'mined', to: alice, amount: '1.5', amountBase: '150000000', nonce: 0 });
    txId = r.json.txId;
    expect(r.json.height).toBeGreaterThan(0);

    // On the devnet the default wallet is the dev wallet (here the built-in dev key: no ./data/native-devnet in cwd).
    const [devBal, mine] = await Promise.all([
      cli(['wallet', 'balance', '--node', node!.url, '--json']),
      cli(['wallet', 'balance', '--wallet', join(home, '.native-node', 'wallet.json'), '--node', node!.url, '--json']),
    ]);
    expect(devBal.code).toBe(0);
    expect(devBal.json).toMatchObject({ address: r.json.from, nonce: 1 });
    expect(mine.json).toMatchObject({ address: alice, balance: '1.5', balanceBase: '150000000', nonce: 0 });
  }, 55_000);

  test('cli tx <id>: mined, decoded', async () => {
    const [r, human] = await Promise.all([cli(['tx', txId, '--node', node!.url, '--json']), cli(['tx', txId, '--node', node!.url])]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ txId, status: 'mined', type: 'transfer', to: alice, amount: '1.5' });
    expect(r.json.confirmations).toBeGreaterThanOrEqual(1);
    expect(human.stdout).toMatch(/status\s+mined/);
  });

  test('sending from the encrypted wallet: wrong passphrase, no passphrase, then a real send back', async () => {
    const wallet = join(home, '.native-node', 'wallet.json');
    const dev = (await cli(['wallet', 'show', '--node', node!.url, '--data-dir', dataDir, '--json'])).json.address as string;
    const [wrong, none] = await Promise.all([
      cli(['send', dev, '0.1', '--wallet', wallet, '--node', node!.url, '--json'], { NATIVE_WALLET_PASSPHRASE: 'wrong' }),
      cli(['send', dev, '0.1', '--wallet', wallet, '--node', node!.url]),
    ]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.json.error.code).toBe('wallet_bad_passphrase');
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/^error wallet_passphrase_required: /);
    const ok = await cli(['send', dev, '0.1', '--wallet', wallet, '--node', node!.url, '--wait', '--timeout', '40', '--json'], { NATIVE_WALLET_PASSPHRASE: 'correct horse' });
    expect(ok.code).toBe(0);
    expect(ok.json).toMatchObject({ status: 'mined', from: expect.stringMatching(/^tnative1/), nonce: 0 });
    const after = await cli(['wallet', 'balance', '--wallet', wallet, '--node', node!.url, '--json']);
    expect(after.json.nonce).toBe(1);
    expect(BigInt(after.json.balanceBase)).toBe(150_000_000n - 10_000_000n - BigInt(ok.json.feeBase));
  }, 55_000);

  test('CLI errors: bad address, bad amount, unreachable node, unknown tx — coded, non-zero exit', async () => {
    const [badAddr, badAmount, down, unknown] = await Promise.all([
      cli(['send', 'nope', '1', '--node', node!.url, '--json']),
      cli(['send', alice, '1.000000001', '--node', node!.url]),
      cli(['status', '--node', 'http://127.0.0.1:1', '--json']),
      cli(['tx', '00'.repeat(32), '--node', node!.url, '--json']),
    ]);
    expect(badAddr.code).not.toBe(0);
    expect(badAddr.json.error.code).toBe('invalid_address');
    expect(badAmount.code).not.toBe(0);
    expect(badAmount.stderr).toMatch(/^error invalid_amount: /);
    expect(down.code).not.toBe(0);
    expect(down.json.error.code).toBe('node_unreachable');
    expect(unknown.json.error.code).toBe('tx_not_found');
  });

  test('a second node on the same port fails with http_listen_failed', async () => {
    const port = new URL(node!.url).port;
    const r = await cli(['start', '--dev', '--data-dir', join(dir, 'other'), '--http-port', port, '--no-mine', '--log-level', 'silent']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^error http_listen_failed: /m);
  });

  test('SIGTERM shuts down gracefully (exit 0); a restart keeps the chain', async () => {
    const before = (await cli(['status', '--node', node!.url, '--json'])).json.height as number;
    const code = await stopNode(node!);
    expect(code).toBe(0);
    expect(node!.lines.some((l) => l.msg === 'stopped')).toBe(true);
    node = await startNode(['--no-mine']);
    const after = await cli(['status', '--node', node.url, '--json']);
    expect(after.json.height).toBeGreaterThanOrEqual(before);
    expect(after.json.mining.running).toBe(false);
    const tx = await cli(['tx', txId, '--node', node.url, '--json']);
    expect(tx.json.status).toBe('mined');
    expect(await stopNode(node, 'SIGINT')).toBe(0);
  }, 50_000);
});
