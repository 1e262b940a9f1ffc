/**
 * The command line as a new user types it after the README's set-up (`npm ci`, then a node
 * running): every `npx native-node call …` the marketplace prints for an active service runs as
 * printed (a shell, the repository as working directory, no wallet flag) and exits 0; `swap`
 * prints what it received and names an unknown token as such; `status` says Stratum is off when
 * it is. One devnet node (economy on, a block a second) serves them all.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, childEnv, startNode, type NodeProc } from '../helpers/nodeProcess.js';

let dir: string;
let node: NodeProc;
let url: string;

/** Runs one command line through the shell in the repository, as a user would paste it. */
function sh(line: string, timeoutMs = 60_000): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', line], { cwd: ROOT, env: childEnv(), timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024 }, (e, out, err) => {
      resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out: String(out), err: String(err) });
    });
  });
}

const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-cli-examples-'));
  node = await startNode(['--dev', '--economy', '--block-time', '1', '--data-dir', join(dir, 'data'), '--http-port', '0', '--no-stratum'], { cwd: dir });
  url = node.url;
  // The prober's first round (which services are active) and the economy's first pools.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const c = (await (await fetch(`${url}/api/x402/bazaar?limit=1`)).json()) as { health: { checkedAt: number } };
    const pools = (await (await fetch(`${url}/api/v1/pools`)).json()) as { pools: unknown[] };
    if (c.health.checkedAt > 0 && pools.pools.length > 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
}, 120_000);

afterAll(async () => {
  node?.child.kill('SIGTERM');
  await node?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('the examples the node serves, run as printed', () => {
  test('every marketplace example of an active service exits 0 with a receipt', async () => {
    const html = await (await fetch(`${url}/marketplace`)).text();
    const cards = [...html.matchAll(/<article class="service" id="svc-([^"]+)"[\s\S]*?<span class="health health-(\w+)">[\s\S]*?<pre class="cli"[^>]*><code>([^<]+)<\/code><\/pre>/g)].map((m) => ({ id: m[1], health: m[2], line: unescape(m[3]) }));
    expect(cards.length).toBe(58);
    const active = cards.filter((c) => c.health === 'active');
    expect(active.length).toBeGreaterThan(30);
    const failed: { id: string; line: string; code: number; err: string }[] = [];
    const offline: string[] = [];
    for (const c of active) {
      expect(c.line.startsWith(`npx native-node call --node ${url} ${c.id}`)).toBe(true);
      // native-tx-lookup's example names a transaction of the caller's: a template, not a command.
      if (c.line.includes('<txId>')) continue;
      const r = await sh(c.line);
      // This machine reaches nothing beyond 127.0.0.1: a service whose example fetches from the web is
      // refused before any payment with the resolver's failure — the command itself ran as printed.
      if (r.code === 2 && /^error (dns_failed|service_unavailable): .*(cannot resolve|resolver)/m.test(r.err)) {
        offline.push(c.id);
        continue;
      }
      if (r.code !== 0 || !/tx\s+[0-9a-f]{64}/.test(r.out)) failed.push({ id: c.id, line: c.line, code: r.code, err: r.err.trim().split('\n').slice(-2).join(' | ') });
    }
    expect(failed).toEqual([]);
    expect(offline.length).toBeLessThan(10);
  }, 480_000);

  test('swap prints what it received; an unknown token is named, with the nearest symbol', async () => {
    const ok = await sh(`npx native-node swap "1 NATIVE -> USDN" --wait --node ${url}`);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^swap mined in block \d+: swapped 1 NATIVE for [\d.]+ USDN \(quoted [\d.]+, at least [\d.]+\)$/m);
    const json = await sh(`npx native-node swap "1 NATIVE -> USDN" --wait --json --node ${url}`);
    expect(JSON.parse(json.out)).toMatchObject({ status: 'mined', amountOut: expect.stringMatching(/^[\d.]+$/), amountOutBase: expect.stringMatching(/^\d+$/) });
    const unknown = await sh(`npx native-node swap "1 NATIVE -> USDX" --node ${url}`);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toBe('error token_not_found: no token USDX on this chain (did you mean USDN?); npx native-node token list lists them\n');
  }, 60_000);

  test('a mistyped service id is answered with the nearest one', async () => {
    for (const [cmd, id] of [['call', 'native-wrld-clock'], ['quote', 'world-clock']]) {
      const r = await sh(`npx native-node ${cmd} ${id} UTC --node ${url}`);
      expect({ cmd, code: r.code, err: r.err }).toEqual({ cmd, code: 2, err: `error unknown_service: no service ${id} on this node (did you mean native-world-clock?); ${url}/marketplace lists them\n` });
    }
  }, 30_000);

  test('status says Stratum is off when it is off', async () => {
    const r = await sh(`npx native-node status --node ${url}`);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^stratum {4}off$/m);
    expect(r.out).not.toContain('starting');
  }, 30_000);
});
