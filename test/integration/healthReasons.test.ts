/**
 * Bazaar reasons: every `down` or `degraded` service says why, as `healthReason`
 * ({code, message}), in the bazaar (`/api/x402/bazaar`), the protocol descriptor (`/api/x402`),
 * the x402 discovery list, services.json and the marketplace card; `active` ones carry null.
 *
 * A real devnet node process (bin/native-node.js start): it has no LLM provider configured, so
 * native-llm-chat is `provider_not_configured`; its public providers point at a closed loopback
 * port (test/helpers/nodeProcess.ts), so native-weather's probe fails: `provider_down`, "Open-Meteo
 * failed its last call".
 *
 * The same node refuses before any quote exactly the services its bazaar shows `down` (503
 * `service_unavailable` with the bazaar's reason code as `reason`) and quotes the others.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { DEVNET, specValidators } from '../discovery/schemas.js';

interface Reason {
  code: string;
  message: string;
}

let dir: string;
let node: NodeProc;

const getJson = async (path: string): Promise<any> => {
  const res = await fetch(`${node.url}${path}`);
  expect(res.status).toBe(200);
  return res.json();
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-reasons-'));
  node = await startNode(['--dev', '--block-time', '1', '--http-port', '0', '--no-stratum', '--data-dir', join(dir, 'data')], { cwd: dir });
  // The prober's first round runs at start; wait (bounded) until it is done.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const c = await getJson('/api/x402/bazaar?limit=1');
    if (c.health.checkedAt > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  rmSync(dir, { recursive: true, force: true });
});

const NOT_CONFIGURED = { code: 'provider_not_configured', message: 'LLM provider is not configured on this node' };

describe('healthReason over HTTP (real node)', () => {
  test('the bazaar: a provider-less service says provider_not_configured, a failing provider provider_down; every down one says why, active ones null', async () => {
    const doc = await getJson('/api/x402/bazaar');
    expect(doc.health.checkedAt).toBeGreaterThan(0);
    expect(specValidators(DEVNET).catalog(doc)).toEqual([]);
    const byId = new Map<string, { healthStatus: string; healthReason: Reason | null }>(doc.resources.map((r: any) => [r.serviceId, r]));
    expect(byId.get('native-llm-chat')).toMatchObject({ healthStatus: 'down', healthReason: NOT_CONFIGURED });
    expect(byId.get('native-weather')).toMatchObject({ healthStatus: 'down', healthReason: { code: 'provider_down', message: 'Open-Meteo failed its last call' } });
    expect(byId.get('native-world-clock')).toMatchObject({ healthStatus: 'active', healthReason: null });
    for (const [id, r] of byId) {
      if (r.healthStatus === 'down' || r.healthStatus === 'degraded') expect({ id, reason: r.healthReason }).toEqual({ id, reason: { code: expect.stringMatching(/^[a-z_]+$/), message: expect.any(String) } });
      else expect({ id, reason: r.healthReason }).toEqual({ id, reason: null });
    }
  });

  test('the protocol descriptor, the x402 discovery list and services.json carry the same reason', async () => {
    const descriptor = await getJson('/api/x402');
    expect(descriptor.services.find((s: any) => s.serviceId === 'native-llm-chat')).toMatchObject({ healthStatus: 'down', healthReason: NOT_CONFIGURED });
    expect(descriptor.services.find((s: any) => s.serviceId === 'native-world-clock')).toMatchObject({ healthStatus: 'active', healthReason: null });
    expect(await getJson('/.well-known/x402')).toMatchObject({ services: expect.arrayContaining([expect.objectContaining({ serviceId: 'native-llm-chat', healthReason: NOT_CONFIGURED })]) });
    const list = await getJson('/x402/discovery');
    expect(list.items.find((i: any) => i.metadata.serviceId === 'native-llm-chat').metadata).toMatchObject({ healthStatus: 'down', healthReason: NOT_CONFIGURED });
    const services = await getJson('/services.json');
    expect(services.services.find((s: any) => s.serviceId === 'native-llm-chat')).toMatchObject({ healthStatus: 'down', healthReason: NOT_CONFIGURED });
  });

  test('the marketplace card shows the reason, its code and message', async () => {
    const res = await fetch(`${node.url}/marketplace?q=llm`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const card = html.slice(html.indexOf('id="svc-native-llm-chat"'));
    expect(card.length).toBeLessThan(html.length);
    const health = /<dt>Health<\/dt><dd>(.*?)<\/dd>/s.exec(card)?.[1] ?? '';
    expect(health).toContain('<span class="health health-down">down</span>');
    expect(health).toContain('data-code="provider_not_configured"');
    expect(health).toContain('LLM provider is not configured on this node');
  });

  test('every service the bazaar shows down is refused before any quote with the reason shown; no other one is refused as unavailable', async () => {
    const doc = await getJson('/api/x402/bazaar');
    const examples = new Map<string, unknown>((await getJson('/services.json')).services.map((s: any) => [s.serviceId, s.example]));
    const seen: Record<string, number> = {};
    for (const r of doc.resources as { serviceId: string; healthStatus: string; healthReason: Reason | null }[]) {
      const example = examples.get(r.serviceId);
      const res = await fetch(`${node.url}/api/x402/${r.serviceId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(example === null || example === undefined ? {} : { request: example }) });
      const body = (await res.json()) as { error?: { code: string; reason?: string } };
      seen[r.healthStatus] = (seen[r.healthStatus] ?? 0) + 1;
      if (r.healthStatus === 'down') expect({ id: r.serviceId, status: res.status, code: body.error?.code, reason: body.error?.reason }).toEqual({ id: r.serviceId, status: 503, code: 'service_unavailable', reason: r.healthReason!.code });
      else expect({ id: r.serviceId, code: body.error?.code ?? null }).not.toEqual({ id: r.serviceId, code: 'service_unavailable' });
    }
    expect(seen.down).toBeGreaterThanOrEqual(2);
    expect(seen.active).toBeGreaterThanOrEqual(20);
  }, 60_000);
});
