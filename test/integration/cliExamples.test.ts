/**
 * The command line as a new user types it after the README's set-up (`npm ci`, then a node
 * running): every `npx native-node call …` the marketplace prints for an active service runs as
 * printed (a shell, the repository as working directory, no wallet flag) and exits 0 —
 * native-tx-lookup's names a transaction mined on the node's chain; the /join page's commands
 * run as printed in order (agent, service, worker, approval, then the views and a call), the
 * service sells, and the provider's payout shows on both accounts' explorer pages; every command
 * a hint inside an error message names (`npx native-node …` in the sources) parses as printed:
 * its `--help` answers for that command and each of its flags is one the command takes (running
 * them needs the network, PostgreSQL or a stopped node: ledgerGap.test.ts runs `ledger gap
 * --refund` as its node prints it); `swap` prints what it received and names an unknown token as
 * such; `status` says Stratum is off when it is. One devnet node (economy on, a block a second)
 * serves them all.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandOptionTables } from '../../cli/cli.js';
import { COMMAND_DOCS } from '../../cli/commandDocs.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { encodeAddress, TESTNET_HRP } from '../../consensus/address.js';
import { createAgentClient } from '../../sdk/client.js';
import { BIN, ROOT, childEnv, startNode, type NodeProc } from '../helpers/nodeProcess.js';
import { until } from '../helpers/until.js';

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

/** The words of a printed command line as a POSIX shell splits them (single and double quotes; no expansion). */
function words(line: string): string[] {
  const out: string[] = [];
  let cur: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      cur = (cur ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === ' ') {
      if (cur !== undefined) out.push(cur);
      cur = undefined;
    } else cur = (cur ?? '') + c;
  }
  if (cur !== undefined) out.push(cur);
  return out;
}

/** Every `npx native-node …` a message of the product names between backticks or in parentheses (the hints of errors, logs and health reasons). */
function hintsInSources(): { file: string; line: string }[] {
  const out: { file: string; line: string }[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts')) {
        for (const m of readFileSync(p, 'utf8').matchAll(/[`(]\\?npx native-node ([^`)\\]*)/g)) {
          // Built from variables (help text, examples): not a hint someone copies.
          if (!/^[a-z]/.test(m[1]) || /^\S*\$\{/.test(m[1])) continue;
          out.push({ file: p.slice(ROOT.length), line: `npx native-node ${m[1].trim().replace(/\$\{role\}/g, 'native_node')}` });
        }
      }
    }
  };
  for (const d of ['chain', 'cli', 'common', 'consensus', 'discovery', 'node', 'p2p', 'sdk', 'services', 'x402']) walk(join(ROOT, d));
  return out;
}

/** Runs bin/native-node.js with exactly these arguments (no shell). */
function bin(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(), timeout: 30_000 }, (e, out, err) => {
      resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out: String(out), err: String(err) });
    });
  });
}


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
    // native-tx-lookup's example names a transaction mined on this chain, once the node has found one (it looks every second).
    const html = await until('a mined transaction in the native-tx-lookup example', async () => {
      const page = await (await fetch(`${url}/marketplace`)).text();
      return /native-tx-lookup [0-9a-f]{64}</.test(page) && page;
    }, 15_000);
    const cards = [...html.matchAll(/<article class="service" id="svc-([^"]+)"[\s\S]*?<span class="health health-(\w+)">[\s\S]*?<pre class="cli"[^>]*><code>([^<]+)<\/code><\/pre>/g)].map((m) => ({ id: m[1], health: m[2], line: unescape(m[3]) }));
    expect(cards.length).toBe(58);
    const active = cards.filter((c) => c.health === 'active');
    expect(active.length).toBeGreaterThan(30);
    const failed: { id: string; line: string; code: number; err: string }[] = [];
    const offline: string[] = [];
    expect(cards.find((c) => c.id === 'native-tx-lookup')?.line).toMatch(new RegExp(`^npx native-node call --node ${url} native-tx-lookup [0-9a-f]{64}$`));
    for (const c of active) {
      expect(c.line.startsWith(`npx native-node call --node ${url} ${c.id}`)).toBe(true);
      expect(c.line).not.toMatch(/<[a-zA-Z]+>/);
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

  test("the /join page's commands run as printed, in order; the service sells and its provider payout shows on both accounts", async () => {
    const html = await (await fetch(`${url}/join`)).text();
    // Every command of the page but the one template (`service update …`).
    const lines = [...html.matchAll(/<code>(npx native-node [^<]+)<\/code>/g)].map((m) => unescape(m[1])).filter((l) => !l.includes('…'));
    const starts = ['agent register', 'service register', 'agent serve', 'moderate approve', 'agent show', 'service list', 'call native-world-clock'];
    expect(lines.map((l) => words(l).slice(2, 4).join(' ')).map((w) => starts.find((s) => w.startsWith(s)))).toEqual(starts);
    let worker: ReturnType<typeof spawn> | undefined;
    try {
      for (const line of lines) {
        expect(line).toContain(` --node ${url}`);
        if (line.includes(' agent serve ')) {
          // The worker runs until stopped: started in the background, as in a second terminal.
          worker = spawn('/bin/sh', ['-c', line], { cwd: ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
          let err = '';
          worker.stderr!.on('data', (d) => (err += String(d)));
          await until('the worker to serve', async () => err.includes('serving my-agent-upper'), 30_000);
          continue;
        }
        const r = await sh(line);
        expect({ line, code: r.code, err: r.err }).toEqual({ line, code: 0, err: expect.any(String) });
      }
      // Approved and polled: the service sells; its result comes from the worker's command.
      await until('my-agent-upper on sale', async () => {
        const reg = (await (await fetch(`${url}/api/v1/registry`)).json()) as { services: { serviceId: string; listed: boolean; available: boolean }[] };
        return reg.services.some((s) => s.serviceId === 'my-agent-upper' && s.listed && s.available);
      }, 60_000);
      const call = await sh(`npx native-node call --node ${url} my-agent-upper hello`);
      expect({ code: call.code, err: call.err }).toEqual({ code: 0, err: expect.any(String) });
      expect(call.out).toContain('HELLO');
      // The provider (the dev wallet registered the agent) is paid out; both accounts list it.
      const payee = (await createAgentClient({ nodeUrl: url, key: getDevKeyPair() }).quote('my-agent-upper', 'x')).payTo;
      const provider = encodeAddress(getDevKeyPair().address, TESTNET_HRP);
      await until('the payout on both account pages', async () => {
        // The pages' text (the dev wallet also mines a block a second: its newest 200 rows).
        const [sent, received] = await Promise.all([payee, provider].map(async (a) => (await (await fetch(`${url}/explorer/address/${a}?limit=200`)).text()).replace(/<[^>]+>/g, '')));
        return /paid out 0\.\d+ NATIVE to the provider tnative1/.test(sent) && /received a provider payout of 0\.\d+ NATIVE from tnative1/.test(received);
      }, 60_000);
    } finally {
      if (worker?.pid) process.kill(-worker.pid, 'SIGTERM');
    }
  }, 240_000);

  test('every hint an error message gives parses as printed: its --help answers for that command, and each flag is one it takes', async () => {
    const hints = hintsInSources();
    const tables = await commandOptionTables();
    // The hints the audit named are all found.
    for (const h of ['data install geoip', 'ledger gap --refund', 'sanctions update', 'ledger migrate --ledger', 'agent register']) expect(hints.map((x) => x.line)).toContainEqual(expect.stringContaining(`npx native-node ${h}`));
    const seen = new Set<string>();
    for (const { file, line } of hints) {
      if (seen.has(line)) continue;
      seen.add(line);
      const argv = words(line).slice(2);
      const key = COMMAND_DOCS[`${argv[0]} ${argv[1]}`] ? `${argv[0]} ${argv[1]}` : argv[0];
      const r = await bin([...argv, '--help']);
      expect({ file, line, code: r.code, usage: r.out.split('\n')[0] }).toEqual({ file, line, code: 0, usage: expect.stringMatching(new RegExp(`^Usage: npx native-node ${key}\\b`)) });
      const unknown = argv.filter((a) => a.startsWith('--') && !(a.slice(2).split('=')[0] in (tables[key] ?? {})));
      expect({ file, line, unknown }).toEqual({ file, line, unknown: [] });
    }
  }, 120_000);

  test('swap prints what it received; an unknown token is named, with the nearest symbol', async () => {
    const ok = await sh(`npx native-node swap "1 NATIVE -> USDN" --wait --node ${url}`, 45_000);
    expect({ code: ok.code, err: ok.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(ok.out).toMatch(/^swap mined in block \d+: swapped 1 NATIVE for [\d.]+ USDN \(quoted [\d.]+, at least [\d.]+\)$/m);
    const json = await sh(`npx native-node swap "1 NATIVE -> USDN" --wait --json --node ${url}`);
    expect(JSON.parse(json.out)).toMatchObject({ status: 'mined', amountOut: expect.stringMatching(/^[\d.]+$/), amountOutBase: expect.stringMatching(/^\d+$/) });
    const unknown = await sh(`npx native-node swap "1 NATIVE -> USDX" --node ${url}`);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toBe('error token_not_found: no token USDX on this chain (did you mean USDN?); npx native-node token list lists them\n');
  }, 120_000);

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
