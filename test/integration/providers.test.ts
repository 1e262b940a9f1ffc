/**
 * Provider agents end to end, with real processes: a devnet node (`native-node start --dev`), a provider
 * that creates a wallet, registers an agent and a service and sells a shell command with
 * `native-node agent serve --exec`, the moderator (the devnet's dev wallet) approving it, the
 * service in the bazaar and MCP's tool list, a caller paying with `native-node call` and getting
 * the result, the provider paid its share exactly once; then the provider killed: the next paid
 * call refunded exactly once, the service `down` and the call after it refused before payment;
 * a restart that keeps the payout single; and the suspended service gone from every surface.
 *
 * The node runs with the USDC rail on (the test facilitator as its own process): a provider
 * service is quoted and paid in USDC too, its result returned with the receipt and the provider
 * paid its NATIVE share once; a provider failure is answered 502 and never settled; over MCP the
 * same. Across the restart, a payment mined before it and settled after it is served (the
 * agent's start-up grace), not refunded.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { encodeAddress, TESTNET_HRP } from '../../consensus/address.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { createAgentClient } from '../../sdk/client.js';
import { startFacilitatorProcess, type FacilitatorProcess } from '../helpers/facilitator.js';
import { decodeHeader, encodeHeader, NODE_PAY_TO, paymentHeader, referenceViem, signedPayment } from '../helpers/facilitatorPayments.js';
import { testKey } from '../helpers/keys.js';
import { BIN, childEnv, runCli, startNode, stopProcess, type CliRun, type NodeProc } from '../helpers/nodeProcess.js';

// The USDC payments are signed with viem from reference/ (installed on first use); without it the USDC tests are skipped.
const testUsdc = referenceViem.ok ? test : test.skip;

const minerAddress = encodeAddress(testKey('providers-it-miner').address, TESTNET_HRP);
const SERVICE = 'echo-bot-upper';
const PRICE = 1_000_000n; // 0.01 NATIVE
const SHARE = 950_000n; // price minus the devnet's 5 % node fee
let dir: string;
let node: NodeProc | undefined;
let serveProc: ChildProcess | undefined;
let facilitator: FacilitatorProcess | undefined;
let provider = '';

function cli(args: string[], timeoutMs = 90_000): Promise<CliRun> {
  return runCli([...args, '--node', node!.url, '--data-dir', join(dir, 'data')], { cwd: dir, env: { HOME: join(dir, 'home'), NATIVE_WALLET_PASSPHRASE: 'provider pass' }, timeoutMs });
}
const asProvider = (args: string[]) => cli([...args, '--wallet', join(dir, 'provider.json')]);

async function balance(address: string): Promise<bigint> {
  const r = await fetch(`${node!.url}/api/v1/account/${address}`);
  return BigInt(((await r.json()) as { balanceBase: string }).balanceBase);
}
async function bazaarEntry(): Promise<Record<string, unknown> | undefined> {
  const d = (await (await fetch(`${node!.url}/api/x402/bazaar?q=uppercases`)).json()) as { resources: Record<string, unknown>[] };
  return d.resources.find((r) => r.serviceId === SERVICE);
}
/** Polls `check` every 250 ms until it holds, at most `ms`. */
async function until(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('condition not reached in time');
}
async function startServe(): Promise<ChildProcess> {
  // Uppercases its request; the request "fail" makes it exit 1 (a provider failure).
  const exec = 'x=$(cat); [ "$x" != fail ] && printf %s "$x" | tr a-z A-Z';
  const child = spawn(process.execPath, [BIN, 'agent', 'serve', '--service', SERVICE, '--exec', exec, '--wallet', join(dir, 'provider.json'), '--node', node!.url], {
    cwd: dir,
    env: childEnv({ HOME: join(dir, 'home'), NATIVE_WALLET_PASSPHRASE: 'provider pass' }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('agent serve did not start')), 20_000);
    child.stderr!.on('data', (d: Buffer) => {
      if (d.toString().includes('serving')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return child;
}
async function startTheNode(): Promise<void> {
  const usdc = facilitator ? ['--usdc-pay-to', NODE_PAY_TO.toLowerCase(), '--facilitator-url', facilitator.url, '--facilitator-timeout', '3000', '--base-rpc-url', 'none'] : [];
  node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--block-time', '1', '--no-p2p', '--no-stratum', '--miner-address', minerAddress, ...usdc], { cwd: dir, env: { HOME: join(dir, 'home') } });
}
async function post(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${node!.url}/api/x402/${SERVICE}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}
const height = async () => ((await (await fetch(`${node!.url}/api/v1/status`)).json()) as { height: number }).height;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-providers-it-'));
  if (referenceViem.ok) facilitator = await startFacilitatorProcess();
  await startTheNode();
}, 120_000);

afterAll(async () => {
  if (serveProc && serveProc.exitCode === null) serveProc.kill('SIGKILL');
  if (node && node.child.exitCode === null) await stopProcess(node);
  await facilitator?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a provider sells a shell command through the node', () => {
  test('register an agent and a service in three commands; pending until the moderator approves it', async () => {
    const w = await cli(['wallet', 'new', '--wallet', join(dir, 'provider.json'), '--json', '--dev']);
    expect(w.code).toBe(0);
    provider = String(w.json!.address);
    expect((await cli(['send', provider, '1', '--wait', '--json'])).code).toBe(0);
    const agent = await asProvider(['agent', 'register', 'echo-bot', '--description', 'uppercases text', '--capabilities', 'text,upper', '--wait', '--json']);
    expect(agent.json).toMatchObject({ status: 'mined', action: 'agent_register', name: 'echo-bot' });
    // The native- namespace and another agent's namespace are refused before any fee.
    expect((await asProvider(['service', 'register', 'native-upper', '--name', 'U', '--description', 'd', '--category', 'utility', '--price', '0.01', '--json'])).json).toMatchObject({ error: { code: 'tx_registry_reserved_namespace' } });
    const svc = await asProvider(['service', 'register', SERVICE, '--name', 'Upper', '--description', 'uppercases text', '--category', 'utility', '--price', '0.01', '--request-required', '--job-timeout', '4', '--tags', 'text', '--wait', '--json']);
    expect(svc.json).toMatchObject({ status: 'mined', action: 'service_register', serviceId: SERVICE });
    const list = await cli(['service', 'list', '--json']);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ serviceId: SERVICE, agent: 'echo-bot', status: 'pending', listed: false })]);
    expect(await bazaarEntry()).toBeUndefined();
    serveProc = await startServe();
    const approve = await cli(['moderate', 'approve', SERVICE, '--reason', 'reviewed', '--wait', '--json']);
    expect(approve.json).toMatchObject({ status: 'mined', action: 'approve' });
  }, 120_000);

  test('listed in the bazaar and MCP tools with nodeOperated false and providerAgent echo-bot; autoRegistration counts it', async () => {
    await until(async () => (await bazaarEntry())?.healthStatus === 'active');
    const e = (await bazaarEntry())!;
    expect(e).toMatchObject({ serviceId: SERVICE, priceAman: 0.01, category: 'utility', metadata: { nodeOperated: false, providerAgent: 'echo-bot' } });
    const bazaar = (await (await fetch(`${node!.url}/api/x402/bazaar`)).json()) as { autoRegistration: { providerAgentServices: number; totalServices: number } };
    expect(bazaar.autoRegistration).toMatchObject({ providerAgentServices: 1, totalServices: 59 });
    for (const path of ['/services.json', '/llms.txt', '/openapi.json', '/marketplace', '/x402/discovery', '/.well-known/x402']) {
      const body = await (await fetch(`${node!.url}${path}`)).text();
      expect([path, body.includes(SERVICE)]).toEqual([path, true]);
    }
    const agentsDoc = (await (await fetch(`${node!.url}/agents`, { headers: { accept: 'application/json' } })).json()) as { agents: Record<string, unknown>[] };
    expect(agentsDoc.agents.find((a) => a.agentId === 'echo-bot')).toMatchObject({
      nodeOperated: false,
      online: true,
      description: 'uppercases text',
      capabilities: ['text', 'upper', 'utility'],
      services: [expect.objectContaining({ serviceId: SERVICE, healthStatus: 'active' })],
    });
    const client = new Client({ name: 'providers-it', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${node!.url}/api/mcp?net=devnet`)));
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain(SERVICE);
    await client.close();
  }, 30_000);

  test('a paid call returns the provider result with the receipt; the provider is paid its share once', async () => {
    const before = await balance(provider);
    const r = await cli(['call', SERVICE, 'hello world', '--json']);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ result: 'HELLO WORLD', receipt: { serviceId: SERVICE, amountBase: PRICE.toString() } });
    await until(async () => (await balance(provider)) === before + SHARE, 30_000);
    // Several more blocks: still exactly one payout.
    const h = await height();
    await until(async () => (await height()) >= h + 3, 30_000);
    expect(await balance(provider)).toBe(before + SHARE);
  }, 90_000);

  testUsdc('USDC: quoted with the exact option; a USDC call returns the result with the receipt and pays the provider its NATIVE share once, replays included', async () => {
    const quote = await post({ request: 'hello usdc' });
    expect(quote.status).toBe(402);
    expect(quote.body.accepts.map((a: { scheme: string }) => a.scheme)).toEqual(['native-x402', 'exact']);
    const option = quote.body.accepts[1] as { maxAmountRequired: string; payTo: string };
    expect(option).toMatchObject({ network: 'base', payTo: NODE_PAY_TO });
    // The node pays providers of USDC calls in NATIVE from its payee: fund it.
    expect((await cli(['send', String(quote.body.accepts[0].payTo), '1', '--wait', '--json'])).code).toBe(0);
    await facilitator!.control.reset();
    const before = await balance(provider);
    // With the x402 payment-identifier extension: the id is what lets a replay get the stored answer.
    const signed = decodeHeader<Record<string, unknown>>(await paymentHeader({ payTo: option.payTo, value: option.maxAmountRequired }));
    const header = encodeHeader({ ...signed, extensions: { 'payment-identifier': { info: { required: false, id: 'pay_provider_usdc_0123456789' } } } });
    const paid = await post({ request: 'hello usdc' }, { 'x-payment': header });
    expect(paid).toMatchObject({ status: 200, body: { paid: true, result: 'HELLO USDC', receipt: { serviceId: SERVICE, asset: 'USDC', amountAtomic: option.maxAmountRequired } } });
    // The same payment again: the stored answer, nothing settled or paid out again.
    const replay = await post({ request: 'hello usdc' }, { 'x-payment': header });
    expect(replay).toEqual(paid);
    // Over MCP, the same way (x402/payment in _meta).
    const client = new Client({ name: 'providers-it', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${node!.url}/api/mcp?net=devnet`)));
    const payment = await signedPayment({ payTo: option.payTo, value: (await post({ request: 'via mcp' })).body.accepts[1].maxAmountRequired });
    const tool = (await client.callTool({ name: SERVICE, arguments: { request: 'via mcp' }, _meta: { 'x402/payment': payment } }, undefined, { timeout: 30_000 })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    await client.close();
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toMatchObject({ paid: true, result: 'VIA MCP', receipt: { serviceId: SERVICE, asset: 'USDC' } });
    expect((await facilitator!.control.calls()).settle).toBe(2);
    // Two USDC calls: two NATIVE payouts of the share, and no more.
    await until(async () => (await balance(provider)) === before + 2n * SHARE, 60_000);
    const h = await height();
    await until(async () => (await height()) >= h + 3, 60_000);
    expect(await balance(provider)).toBe(before + 2n * SHARE);
  }, 240_000);

  testUsdc('USDC: a provider failure is answered 502 and never settled; the provider is not paid', async () => {
    const option = (await post({ request: 'fail' })).body.accepts[1] as { maxAmountRequired: string; payTo: string };
    await facilitator!.control.reset();
    const before = await balance(provider);
    const failed = await post({ request: 'fail' }, { 'x-payment': await paymentHeader({ payTo: option.payTo, value: option.maxAmountRequired }) });
    expect(failed).toMatchObject({ status: 502, body: { paid: false, error: { code: 'provider_failed' } } });
    const calls = await facilitator!.control.calls();
    expect({ verify: calls.verify, settle: calls.settle }).toEqual({ verify: 1, settle: 0 });
    const h = await height();
    await until(async () => (await height()) >= h + 2, 30_000);
    expect(await balance(provider)).toBe(before);
  }, 60_000);

  test('a restart keeps the payout single and the service listed; a payment mined before it and settled after it is served (start-up grace)', async () => {
    // Paid and mined while the agent is online; not settled before the node stops.
    const caller = createAgentClient({ nodeUrl: node!.url, key: getDevKeyPair() });
    const quote = await caller.quote(SERVICE, 'across a restart');
    const txId = await caller.pay(quote);
    await until(async () => ((await (await fetch(`${node!.url}/api/v1/tx/${txId}`)).json()) as { status: string }).status === 'mined', 30_000);
    const before = await balance(provider);
    serveProc!.kill('SIGKILL');
    await stopProcess(node!);
    await startTheNode();
    // At start the agent has not polled yet (not online): without the grace its payment would be refunded at once.
    serveProc = await startServe();
    await until(async () => (await bazaarEntry())?.healthStatus === 'active');
    // The restarted node listens on another port: settle there, against its quote (same service, price, payee and request).
    const restarted = createAgentClient({ nodeUrl: node!.url });
    const settled = await restarted.settle(await restarted.quote(SERVICE, 'across a restart'), txId, { salt: quote.salt });
    expect(settled).toMatchObject({ result: 'ACROSS A RESTART', receipt: { serviceId: SERVICE, txId } });
    await until(async () => (await balance(provider)) === before + SHARE, 60_000);
    const h = await height();
    await until(async () => (await height()) >= h + 3, 60_000);
    expect(await balance(provider)).toBe(before + SHARE);
  }, 300_000);

  test('the provider stopped: the next paid call is refunded once, the service turns down and later calls get 503 before payment', async () => {
    serveProc!.kill('SIGKILL');
    const before = await balance(provider);
    const dev = encodeAddress(getDevKeyPair().address, TESTNET_HRP);
    const callerBefore = await balance(dev);
    const r = await cli(['call', SERVICE, 'anyone there', '--json']);
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ error: { code: 'service_refunded', refundTxId: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    const invoke = String((r.json!.error as { txId: string }).txId);
    const refundTxId = String((r.json!.error as { refundTxId: string }).refundTxId);
    await until(async () => ((await (await fetch(`${node!.url}/api/v1/tx/${refundTxId}`)).json()) as { status: string }).status === 'mined', 30_000);
    const refund = (await (await fetch(`${node!.url}/api/v1/tx/${refundTxId}`)).json()) as Record<string, unknown>;
    expect(refund).toMatchObject({ type: 'refund', invokeId: invoke, amountBase: PRICE.toString() });
    // Refunded exactly once: the caller is out only the invoke's fee.
    const invokeFee = BigInt(((await (await fetch(`${node!.url}/api/v1/tx/${invoke}`)).json()) as { feeBase: string }).feeBase);
    expect(await balance(dev)).toBe(callerBefore - invokeFee);
    expect((await bazaarEntry())?.healthStatus).toBe('down');
    const again = await cli(['call', SERVICE, 'still there?', '--json']);
    expect(again.json).toMatchObject({ error: { code: 'service_unavailable', status: 503 } });
    expect(await balance(provider)).toBe(before);
  }, 90_000);

  test('suspended: gone from every surface, and not sold', async () => {
    serveProc = await startServe();
    await until(async () => (await bazaarEntry())?.healthStatus === 'active');
    const s = await cli(['moderate', 'suspend', SERVICE, '--reason', 'abuse report', '--wait', '--json']);
    expect(s.json).toMatchObject({ status: 'mined', action: 'suspend' });
    await until(async () => (await bazaarEntry()) === undefined);
    for (const path of ['/api/x402/bazaar', '/services.json', '/llms.txt', '/openapi.json', '/marketplace', '/x402/discovery', '/.well-known/x402', '/agents']) {
      const body = await (await fetch(`${node!.url}${path}`)).text();
      expect([path, body.includes(SERVICE)]).toEqual([path, false]);
    }
    const client = new Client({ name: 'providers-it', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${node!.url}/api/mcp?net=devnet`)));
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain(SERVICE);
    await client.close();
    expect((await cli(['quote', SERVICE, 'x', '--json'])).json).toMatchObject({ error: { code: 'unknown_service' } });
    const shown = await asProvider(['agent', 'show', '--json']);
    expect(shown.json).toMatchObject({ name: 'echo-bot', services: [expect.objectContaining({ serviceId: SERVICE, status: 'suspended', listed: false })] });
  }, 90_000);
});

describe('the other provider and moderator commands', () => {
  test('agent update, service update (back to review), reject, label, retire; coded refusals', async () => {
    const upd = await asProvider(['agent', 'update', 'echo-bot', '--description', 'uppercases any text', '--capabilities', 'text', '--wait', '--json']);
    expect(upd.json).toMatchObject({ status: 'mined', action: 'agent_update' });
    expect((await asProvider(['agent', 'show', '--json'])).json).toMatchObject({ name: 'echo-bot', description: 'uppercases any text', capabilities: ['text'] });
    // The name cannot change; the refusal is the chain's code.
    expect((await asProvider(['agent', 'update', 'other-name', '--description', 'x', '--json'])).json).toMatchObject({ error: { code: 'tx_registry_bad_field' } });
    const svcUpd = await asProvider(['service', 'update', SERVICE, '--name', 'Upper', '--description', 'uppercases text', '--category', 'utility', '--price', '0.02', '--job-timeout', '4', '--wait', '--json']);
    expect(svcUpd.json).toMatchObject({ status: 'mined', action: 'service_update' });
    const list = JSON.parse((await cli(['service', 'list', '--json'])).stdout) as Record<string, unknown>[];
    expect(list).toEqual([expect.objectContaining({ serviceId: SERVICE, status: 'suspended', priceBase: '2000000' })]);
    expect((await cli(['moderate', 'reject', SERVICE, '--reason', 'duplicate of another', '--wait', '--json'])).json).toMatchObject({ status: 'mined', action: 'reject' });
    // Only the moderator key moderates; the provider's is refused by the chain.
    expect((await asProvider(['moderate', 'approve', SERVICE, '--json'])).json).toMatchObject({ error: { code: 'tx_registry_not_moderator' } });
    const label = await cli(['moderate', 'label', provider, 'mixer', '--reason', 'test', '--wait', '--json']);
    expect(label.json).toMatchObject({ status: 'mined', action: 'label', label: 'mixer' });
    const tx = (await (await fetch(`${node!.url}/api/v1/tx/${String(label.json!.txId)}`)).json()) as Record<string, unknown>;
    expect(tx).toMatchObject({ type: 'moderation', action: 'label', address: provider, label: 'mixer' });
    expect((await asProvider(['service', 'retire', SERVICE, '--wait', '--json'])).json).toMatchObject({ status: 'mined', action: 'service_retire' });
    expect(JSON.parse((await cli(['service', 'list', '--json'])).stdout)).toEqual([expect.objectContaining({ serviceId: SERVICE, status: 'retired', listed: false })]);
  }, 120_000);
});
