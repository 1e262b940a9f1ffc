/**
 * The MCP endpoint against a real devnet node process (miner on, USDC rail configured), driven
 * by the official SDK client (`Client` + `StreamableHTTPClientTransport`): the tool list (one
 * tool per service plus the free tools), the free tools, the x402 MCP convention for an unpaid
 * call (isError + the quote with both rails), input and availability errors before any quote,
 * a paid native-rail call completed through MCP (an agent_invoke committed to the quote's seller,
 * the request and a salt; `_meta["x402/payment"] = {txId, salt}` → the result with
 * `_meta["x402/payment-response"]` = the receipt), its idempotent repeat (only with the salt), a
 * payment reused for another service, the proven call counted in the catalog and in the Prometheus metrics
 * (`--metrics-port`: quotes, paid calls by service/rail/outcome, settle latency, exactly as over
 * HTTP), and the HTTP edges (`?net=`, GET, CORS preflight).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { encodeAddress, tryDecodeAddress } from '../../consensus/address.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { randomBytes } from 'node:crypto';
import { fromHex } from '../../consensus/hash.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { CATALOG } from '../../services/index.js';
import { COMMITMENT_SCHEME, requestCommitment } from '../../x402/core/wire.js';
import { toHex } from '../../consensus/hash.js';
import { startNode, type NodeProc } from '../helpers/nodeProcess.js';
import { histogramSeries, metricSample, scrapeMetrics } from '../helpers/prometheus.js';
import { DEVNET, specValidators } from '../discovery/schemas.js';

const USDC_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const validate = specValidators(DEVNET);

let dir: string;
let node: NodeProc;
let url: string;
let client: Client;
let metricsUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-mcp-'));
  node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--metrics-port', '0', '--block-time', '1', '--no-stratum', '--usdc-pay-to', USDC_PAY_TO, '--facilitator-url', 'http://127.0.0.1:9'], { cwd: dir });
  url = node.url;
  metricsUrl = String(node.lines.find((l) => l.msg === 'metrics listening')?.url);
  client = new Client({ name: 'native-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/api/mcp?net=mainnet`)));
}, 120_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  node?.child.kill('SIGTERM');
  await node?.exited;
  rmSync(dir, { recursive: true, force: true });
});

async function getJson(path: string): Promise<Record<string, any>> {
  return (await (await fetch(`${url}${path}`)).json()) as Record<string, any>;
}

type ToolResult = { isError?: boolean; structuredContent?: Record<string, any>; content: { type: string; text?: string }[]; _meta?: Record<string, any> };
const call = async (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }, undefined, { timeout: 60_000 })) as unknown as ToolResult;

describe('MCP endpoint (official client, real node)', () => {
  test('the tool list: one tool per service plus the free tools', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names.slice(0, 2)).toEqual(['search_services', 'get_quote']);
    expect(names.slice(2)).toEqual(CATALOG.map((d) => d.id));
    const clock = tools.find((t) => t.name === 'native-world-clock')!;
    expect(clock.inputSchema.description).toContain('IANA time zone name');
    expect((clock.inputSchema.properties as Record<string, any>).request.description).toContain('IANA time zone name');
    expect(clock.description).toContain('0.002 NATIVE');
    const lookup = tools.find((t) => t.name === 'native-tx-lookup')!;
    expect(lookup.inputSchema.required).toEqual(['request']);
    expect(client.getServerVersion()?.name).toBe('native-node');
  });

  test('free tools: search the catalog, get a quote', async () => {
    const found = await call('search_services', { q: 'clock' });
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent!.services.map((s: { serviceId: string }) => s.serviceId)).toEqual(['native-world-clock']);
    for (const s of found.structuredContent!.services) expect(validate.service(s)).toEqual([]);
    const cheap = await call('search_services', { category: 'explorer', maxPrice: 0.01, limit: 2 });
    expect(cheap.structuredContent!.returned).toBe(2);
    const bad = await call('search_services', { category: 'nope' });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent!.error).toMatchObject({ code: 'invalid_query', param: 'category' });

    const q = await call('get_quote', { serviceId: 'native-world-clock', request: 'Europe/Berlin' });
    expect(q.isError).toBeFalsy();
    expect(validate.quote(q.structuredContent)).toEqual([]);
    expect(q.structuredContent!.accepts.map((a: { scheme: string }) => a.scheme)).toEqual(['native-x402', 'exact']);
    // The same quote as the HTTP 402.
    const http = await fetch(`${url}/api/x402/native-world-clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'Europe/Berlin' }) });
    expect(http.status).toBe(402);
    const body = (await http.json()) as Record<string, any>;
    expect(q.structuredContent!.accepts[0]).toEqual(body.accepts[0]);
  });

  test('an unpaid paid tool: isError with the payment-required object (both rails)', async () => {
    const r = await call('native-world-clock', { request: 'Europe/Berlin' });
    expect(r.isError).toBe(true);
    expect(validate.quote(r.structuredContent)).toEqual([]);
    const [native, usdc] = r.structuredContent!.accepts;
    expect(native).toMatchObject({ scheme: 'native-x402', network: 'native-devnet', maxAmountRequired: '200000', asset: 'NATIVE', extra: { chainId: 1337, serviceId: 'native-world-clock', sellerId: expect.stringMatching(/^[0-9a-f]{16}$/), commitment: COMMITMENT_SCHEME, confirmations: 1 } });
    expect(native.extra.requestHash).toBeUndefined();
    expect(usdc).toMatchObject({ scheme: 'exact', network: 'base', payTo: USDC_PAY_TO, maxAmountRequired: '1000' });
    const wrapped = JSON.parse(r.content[0].text!);
    expect(wrapped['x402/error']).toMatchObject({ code: 402, data: { accepts: r.structuredContent!.accepts } });
  });

  test('bad input and unavailable services: isError without a quote', async () => {
    const bad = await call('native-world-clock', { request: 'Mars/Olympus_Mons' });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent!.error.code).toBe('invalid_request');
    expect(bad.structuredContent!.accepts).toBeUndefined();
    const down = await call('native-image-gen', { request: 'a cat' });
    expect(down.structuredContent!.error.code).toBe('service_unavailable');
    await expect(call('native-nope', {})).rejects.toThrow(/Unknown tool/);
  });

  test('a paid native-rail call completed through MCP', async () => {
    const dev = getDevKeyPair();
    const devAddr = encodeAddress(dev.address, 'tnative');
    const before = await scrapeMetrics(metricsUrl);
    const unpaid = await call('native-world-clock', { request: 'Asia/Tokyo' });
    const native = unpaid.structuredContent!.accepts.find((a: { scheme: string }) => a.scheme === 'native-x402');
    const status = await getJson('/api/v1/status');
    const acc = await getJson(`/api/v1/account/${devAddr}`);
    const salt = randomBytes(32).toString('hex');
    const tx = createAgentInvokeTx({
      key: dev,
      chainId: status.chainId,
      nonce: BigInt(acc.pendingNonce),
      includeKey: !acc.publicKeyKnown,
      feeRate: BigInt(status.minFeeRate),
      serviceId: 'native-world-clock',
      payTo: tryDecodeAddress(native.payTo, 'tnative')!,
      amount: BigInt(native.maxAmountRequired),
      requestHash: fromHex(requestCommitment({ sellerId: native.extra.sellerId, serviceId: 'native-world-clock', request: 'Asia/Tokyo', salt })),
    });
    const payment = { txId: tx.id, salt };
    const sent = await fetch(`${url}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(tx.bytes) }) });
    expect(sent.status).toBe(200);

    let paid = await call('native-world-clock', { request: 'Asia/Tokyo' }, { 'x402/payment': payment });
    for (let i = 0; i < 6 && paid.isError && paid.structuredContent?.['x402/payment-response']?.errorReason === 'payment_pending'; i++) {
      paid = await call('native-world-clock', { request: 'Asia/Tokyo' }, { 'x402/payment': payment });
    }
    expect(paid.isError).toBeFalsy();
    const receipt = paid._meta!['x402/payment-response'];
    expect(receipt).toMatchObject({ success: true, transaction: tx.id, network: 'native-devnet', payer: devAddr, serviceId: 'native-world-clock', caller: devAddr, amount: 0.002, txId: tx.id });
    expect(paid.structuredContent).toMatchObject({ paid: true, result: { timezone: 'Asia/Tokyo' }, receipt: { txId: tx.id } });
    expect(JSON.parse(paid.content[0].text!).timezone).toBe('Asia/Tokyo');

    // Counted in the metrics exactly as a paid HTTP call (the paid-call core reports it, whatever the transport).
    const after = await scrapeMetrics(metricsUrl);
    const moved = (name: string, labels: Record<string, string>) => metricSample(after.families, name, labels) - metricSample(before.families, name, labels);
    expect(moved('native_x402_quotes_total', { service: 'native-world-clock' })).toBe(1);
    const settled = { service: 'native-world-clock', rail: 'native', outcome: 'settled' };
    expect(moved('native_x402_paid_calls_total', settled)).toBe(1);
    expect(moved('native_x402_paid_calls_total', { service: 'native-world-clock', rail: 'native' })).toBe(1 + moved('native_x402_paid_calls_total', { service: 'native-world-clock', rail: 'native', outcome: 'pending' }));
    const histogram = (t: string) => histogramSeries(t, 'native_x402_settle_duration_seconds', 'count', 'rail="native",outcome="settled"');
    expect(histogram(after.text) - (histogram(before.text) || 0)).toBe(1);
    expect(histogramSeries(after.text, 'native_x402_settle_duration_seconds', 'sum', 'rail="native",outcome="settled"')).toBeGreaterThan(0);
    expect(moved('native_http_requests_total', { method: 'POST', route: '/api/mcp' })).toBeGreaterThanOrEqual(2);

    // Settling again with the same payment, request and salt returns the stored answer (also in x402's {payload} shape)…
    const again = await call('native-world-clock', { request: 'Asia/Tokyo' }, { 'x402/payment': payment });
    expect(again._meta!['x402/payment-response']).toEqual(receipt);
    const wrapped = await call('native-world-clock', { request: 'Asia/Tokyo' }, { 'x402/payment': { payload: payment } });
    expect(wrapped._meta!['x402/payment-response']).toEqual(receipt);
    // …and without the salt nothing: no result, no receipt.
    const noSalt = await call('native-world-clock', { request: 'Asia/Tokyo' }, { 'x402/payment': { txId: tx.id } });
    expect(noSalt.isError).toBe(true);
    expect(noSalt.structuredContent!['x402/payment-response']).toMatchObject({ success: false, errorReason: 'invalid_payment' });
    expect(noSalt.structuredContent!.result).toBeUndefined();

    // The same (settled) payment for another service is refused, with the quote and the reason: it is for another service.
    const wrong = await call('native-network-stats', {}, { 'x402/payment': payment });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent!['x402/payment-response']).toMatchObject({ success: false, errorReason: 'wrong_service', transaction: tx.id });
    expect(wrong.structuredContent!.result).toBeUndefined();
    expect(wrong.structuredContent!.accepts[0].scheme).toBe('native-x402');
    const malformed = await call('native-network-stats', {}, { 'x402/payment': { tx: 'nope' } });
    expect(malformed.structuredContent!['x402/payment-response']).toMatchObject({ success: false, errorReason: 'invalid_payment' });

    // The catalog counts the proven call.
    const catalog = await getJson('/api/x402/bazaar?q=clock');
    expect(catalog.resources[0].metadata).toMatchObject({ provenCalls: 1, provenVolumeAman: 0.002 });
  }, 90_000);

  test('HTTP edges: ?net=, GET, CORS preflight', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const ok = await fetch(`${url}/api/mcp?net=devnet`, { method: 'POST', headers, body: JSON.stringify(init) });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    expect(((await ok.json()) as Record<string, any>).result.serverInfo.name).toBe('native-node');
    const bad = await fetch(`${url}/api/mcp?net=testnet`, { method: 'POST', headers, body: JSON.stringify(init) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Record<string, any>).error).toMatchObject({ code: 'invalid_query', param: 'net' });
    const get = await fetch(`${url}/api/mcp`);
    expect(get.status).toBe(405);
    const pre = await fetch(`${url}/api/mcp`, { method: 'OPTIONS', headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-protocol-version' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-headers')).toContain('mcp-protocol-version');
  });
});
