/**
 * A provider-backed service shown `down` is never quoted, in a real node process: native-ens-resolve
 * over the operator's Ethereum JSON-RPC (`--ethereum-rpc-url`), here a local HTTP server that
 * fails (HTTP 500) until the test lets it answer.
 *
 * The service fails the prober's first round and is shown `down`. Sixty seconds later its failure
 * is older than the provider's retry time, so its own pre-payment check would let a call through
 * again — the window where it used to be quoted, paid and refunded while the bazaar still showed it
 * down. The first probe after that window opens is held for 2.5 s by the server (then answered),
 * so the window lasts at least that long. Throughout, every quote is read between two bazaar
 * reads: a quote given (402) is never beside a bazaar showing the service down, and once the
 * bazaar shows it up (`active`, or `degraded` when the held probe counts as slow on a busy
 * machine), the next quote is given — the moment it is quotable, the bazaar says so.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';

const SERVICE = 'native-ens-resolve';
/** The provider's retry time after a failure (services/outbound/providerHealth.ts DEFAULT_RETRY_AFTER_FAILURE_MS). */
const RETRY_MS = 60_000;

let dir: string;
let node: NodeProc;
let rpc: Server;
/** `failing`: HTTP 500; `recovering`: the next call is held 2.5 s, then every call answers. */
let provider: 'failing' | 'recovering' | 'up' = 'failing';
const calls: { at: number; answered: 'error' | 'ok' }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-down-quote-'));
  rpc = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const answer = () => {
        const id = (JSON.parse(body || '{}') as { id?: unknown }).id ?? 1;
        calls.push({ at: Date.now(), answered: 'ok' });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x1' }));
      };
      if (provider === 'failing') {
        calls.push({ at: Date.now(), answered: 'error' });
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end('{"error":"upstream down"}');
      }
      if (provider === 'recovering') {
        provider = 'up';
        return void setTimeout(answer, 2_500);
      }
      answer();
    });
  });
  await new Promise<void>((r) => rpc.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}/`;
  node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--no-mine', '--no-stratum', '--ethereum-rpc-url', url], { cwd: dir });
}, 120_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  rpc?.closeAllConnections();
  await new Promise((r) => rpc?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** What the bazaar shows of the service. */
async function shown(): Promise<{ status: string; reason: string | null }> {
  const doc = (await (await fetch(`${node.url}/api/x402/bazaar`)).json()) as { resources: { serviceId: string; healthStatus: string; healthReason: { code: string } | null }[] };
  const r = doc.resources.find((x) => x.serviceId === SERVICE)!;
  return { status: r.healthStatus, reason: r.healthReason?.code ?? null };
}

/** An unpaid call: the quote (402) or the refusal before any payment. */
async function quote(): Promise<{ status: number; code: string | null; reason: string | null }> {
  const res = await fetch(`${node.url}/api/x402/${SERVICE}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'vitalik.eth' }) });
  const body = (await res.json()) as { error?: { code: string; reason?: string } };
  return { status: res.status, code: body.error?.code ?? null, reason: body.error?.reason ?? null };
}

describe('a provider-backed service shown down', () => {
  test('is not quoted in its reopening window past the retry time, and is quoted the moment the bazaar shows it active', async () => {
    // The prober's first round finds the provider failing.
    const deadline = Date.now() + 30_000;
    while ((await shown()).status !== 'down') {
      if (Date.now() > deadline) throw new Error('the service was never shown down');
      await new Promise((r) => setTimeout(r, 200));
    }
    const failedAt = Math.max(...calls.filter((c) => c.answered === 'error').map((c) => c.at));
    expect(await shown()).toEqual({ status: 'down', reason: 'provider_down' });
    expect(await quote()).toEqual({ status: 503, code: 'service_unavailable', reason: 'provider_down' });
    // From now on the provider would answer; no probe comes before the retry time, and the first one after it is held 2.5 s.
    provider = 'recovering';

    const samples: { at: number; before: Awaited<ReturnType<typeof quote>>; bazaar: Awaited<ReturnType<typeof shown>>; after: Awaited<ReturnType<typeof quote>> }[] = [];
    const end = failedAt + RETRY_MS + 30_000;
    let upSince: number | undefined;
    while (Date.now() < end && (upSince === undefined || Date.now() - upSince < 2_000)) {
      // Sparse until shortly before the retry time, then dense.
      const wait = Date.now() < failedAt + RETRY_MS - 3_000 ? 1_000 : 100;
      await new Promise((r) => setTimeout(r, wait));
      const before = await quote();
      const bazaar = await shown();
      const after = await quote();
      samples.push({ at: Date.now(), before, bazaar, after });
      if (bazaar.status !== 'down') upSince ??= Date.now();
    }

    for (const s of samples) {
      // A quote given is never beside a bazaar showing the service down (the state only goes down → active here).
      if (s.bazaar.status === 'down') expect({ at: s.at - failedAt, quote: s.before }).toEqual({ at: s.at - failedAt, quote: { status: 503, code: 'service_unavailable', reason: 'provider_down' } });
      // The bazaar shows it up: quotable from that moment.
      if (s.bazaar.status !== 'down') expect({ at: s.at - failedAt, quote: s.after }).toEqual({ at: s.at - failedAt, quote: { status: 402, code: null, reason: null } });
    }
    // The reopening window was seen: shown down with the failure older than the retry time, refused each time.
    const inWindow = samples.filter((s) => s.bazaar.status === 'down' && s.at - failedAt > RETRY_MS + 500);
    expect(inWindow.length).toBeGreaterThanOrEqual(3);
    // And the service came back: shown up, quoted.
    expect(upSince).toBeDefined();
    expect(['active', 'degraded']).toContain(samples.at(-1)!.bazaar.status);
    expect(samples.at(-1)!.after.status).toBe(402);
  }, 150_000);
});
