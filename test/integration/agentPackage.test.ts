/**
 * The agent package as an agent developer gets it: `npm pack` of packages/agent, the tarball
 * installed into an empty project in a temporary directory (with the registry packages an agent
 * would add beside it: @x402/fetch, @x402/evm and viem for the USDC scheme, the MCP SDK), and
 * programs run from there — they can reach neither the repository's sources nor its
 * node_modules. Against one devnet node process (block every second, USDC rail on: the test
 * facilitator on 127.0.0.1 settling on anvil, chain 8453, as the other USDC tests run it; the 402
 * offers both rails), from the installed package:
 *   - the SDK: loadWallet(dev-wallet.json) + createAgentClient().call → result and receipt, the
 *     payment an agent_invoke mined on the node; the package's encoding and commitment reproduce
 *     the node's test vector (test/fixtures/agent-invoke-vector.json) byte for byte; its signed
 *     receipts verify with the package's verifyReceipt and checkNativePayment;
 *   - @x402/fetch's wrapFetchWithPayment with the native scheme registered beside the exact EVM
 *     (USDC) scheme and the preferRail('native') policy → 200 paid natively, PAYMENT-RESPONSE;
 *   - the same client where the agent's policy picks USDC — the native price above the native
 *     scheme's maxPriceBase (its spend cap drops the native option though native is preferred),
 *     or preferRail('usdc') → 200 paid over USDC: the facilitator settled the authorization on
 *     anvil, nothing paid natively;
 *   - the official MCP client with callPaidTool → the paid tool's result, x402/payment-response;
 * and, with the node's own CLI, `pay --quote-file --print` signs without broadcasting: the
 * printed hex and salt, sent as curl would, buy the call. The package alone installs in < 5 MB.
 *
 * The installs run `npm --offline` (no network in tests): npm's cache must hold the packages,
 * which the repository's `npm ci` and reference/'s `npm ci --prefix reference` put there. Without
 * them the test fails, saying so; it does not skip.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Address, Hex } from 'viem';
import { BASE_USDC } from '../../x402/core/quote.js';
import { EIP3009_STUB_CODE, startAnvil, useAuthorization, type Anvil } from '../helpers/anvil.js';
import { startTestFacilitator, type TestFacilitator } from '../helpers/facilitator.js';
import { NODE_PAY_TO, referenceViem } from '../helpers/facilitatorPayments.js';
import { childEnv, ROOT, runCli, startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';

const USDC = BASE_USDC.asset as Address;
/** The USDC price of native-world-clock (0.002 NATIVE at the devnet reference price), atomic units. */
const USDC_PRICE_ATOMIC = '1000';
/** The EVM key the agent's program signs USDC authorizations with (never funded anywhere; the test facilitator credits every payer). */
const EVM_KEY = `0x${'42'.repeat(32)}`;
const VECTOR = fileURLToPath(new URL('../fixtures/agent-invoke-vector.json', import.meta.url));
const INSTALL_TIMEOUT_MS = 5 * 60_000;
/** What an agent adds beside the package (exact versions: the repository's and reference/'s `npm ci` put them in npm's cache, so the install runs `--offline`: no network in tests). */
const AGENT_DEPS = { '@x402/fetch': '2.27.0', '@x402/evm': '2.27.0', viem: '2.57.20', '@modelcontextprotocol/sdk': '1.32.2' };

let dir: string;
let project: string;
let node: NodeProc;
let anvil: Anvil;
let facilitator: TestFacilitator;
let wallet: string;
let packageBytes: number;

/** Runs a command, resolving with stdout; rejects with its stderr tail. */
function run(file: string, args: string[], cwd: string, timeout: number, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env: childEnv(env), timeout, maxBuffer: 16 << 20 }, (err, stdout, stderr) => (err ? reject(new Error(`${file} ${args.join(' ')}: ${err.message}\n${stderr.slice(-3000)}`)) : resolve(stdout)));
  });
}

/** What fills npm's cache with every package these installs take, run in the repository. */
const FILL_NPM_CACHE = `cd ${ROOT.replace(/\/+$/, '')} && npm ci && npm ci --prefix reference`;

/** `npm <args> --offline`; a package missing from npm's cache fails with what to run. */
async function npm(args: string[], cwd: string): Promise<string> {
  try {
    return await run('npm', [...args, '--no-audit', '--no-fund', '--offline', '--ignore-scripts', '--loglevel=error'], cwd, INSTALL_TIMEOUT_MS);
  } catch (e) {
    const msg = (e as Error).message;
    if (!/ENOTCACHED|ETARGET|only-if-cached/.test(msg)) throw e;
    throw new Error(
      `npm's cache lacks packages this test installs offline (the agent package's dependencies and ${Object.entries(AGENT_DEPS).map(([n, v]) => `${n}@${v}`).join(', ')}). ` +
        `The repository's and reference/'s installs put them there; run:\n\n    ${FILL_NPM_CACHE}\n\nthen run this test again (it does not skip without them).\n\n${msg}`,
    );
  }
}

/** Bytes of the files under `p`. */
function sizeOf(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.size;
  return readdirSync(p).reduce((n, e) => n + sizeOf(join(p, e)), 0);
}

/** The agent's program (run from the installed project): one case per argument, JSON on its last line. */
const AGENT_PROGRAM = `
import { readFileSync } from 'node:fs';
import * as pkg from '@native-node/agent';
const { createAgentClient, loadWallet, registerNativeScheme, preferRail, callPaidTool } = pkg;
const nodeUrl = process.env.NODE_URL;
const { key, address } = await loadWallet(process.env.WALLET);
const agent = createAgentClient({ nodeUrl, key });
const out = (v) => process.stdout.write(JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? x.toString() : x)) + '\\n');

switch (process.argv[2]) {
  case 'sdk': {
    const r = await agent.call('native-world-clock', 'Europe/Paris', { maxPriceBase: 10_000_000n });
    // The node's test vector, rebuilt with the installed package's own encoding and commitment.
    const V = JSON.parse(readFileSync(process.env.VECTOR, 'utf8'));
    const hex = (b) => Buffer.from(b).toString('hex');
    const unhex = (h) => new Uint8Array(Buffer.from(h, 'hex'));
    const vkey = pkg.createKeyPairFromSeed(unhex(V.key.seed));
    const requestHash = pkg.requestCommitment(V.commitment);
    const unsigned = { version: 1, chainId: V.invoke.chainId, type: 2, from: vkey.address, nonce: BigInt(V.invoke.nonce), fee: BigInt(V.invoke.fee),
      payload: pkg.agentInvoke.encodePayload({ serviceId: V.invoke.serviceId, payTo: unhex(V.invoke.payTo), amount: BigInt(V.invoke.amount), requestHash: unhex(requestHash) }) };
    const quote = pkg.parseQuote({ x402Version: 1, accepts: [{ scheme: 'native-x402', network: 'native-devnet', maxAmountRequired: V.invoke.amount, payTo: V.invoke.payToAddress, asset: 'NATIVE', maxTimeoutSeconds: 60,
      extra: { txType: 'agent_invoke', chainId: V.invoke.chainId, serviceId: V.invoke.serviceId, sellerId: V.commitment.sellerId, commitment: pkg.COMMITMENT_SCHEME } }] }, V.invoke.serviceId, V.commitment.request, 'http://unused', Date.now(), V.commitment.salt);
    const signed = pkg.createPaymentTx(quote, { key: vkey, nonce: 0n, includeKey: false, feeRate: 1n });
    // The call's signed receipts, verified with the package alone: offline against did.json, then the payment on chain.
    const did = await (await fetch(nodeUrl + '/.well-known/did.json')).json();
    const v = pkg.verifyReceipt(r.receipt, did, { resultBytes: new TextEncoder().encode(JSON.stringify(r.result)), expect: { baseUrl: nodeUrl, txId: r.txId, payer: address } });
    const chain = v.ok ? await pkg.checkNativePayment(nodeUrl, v.hybrid) : v;
    out({ address, result: r.result, receipt: r.receipt, txId: r.txId, salt: r.salt, verified: { ok: v.ok, resultVerified: v.resultVerified, anchored: v.anchored, onChain: chain.ok, payee: v.hybrid?.payee },
      vector: { address: pkg.encodeAddress(vkey.address, 'tnative'), requestHash, unsigned: hex(pkg.encodeUnsignedTx(unsigned)), sighash: hex(pkg.txSighash(unsigned)), signedRequestHash: signed.requestHash } });
    break;
  }
  case 'x402-fetch': {
    const { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } = await import('@x402/fetch');
    const { registerExactEvmScheme } = await import('@x402/evm/exact/client');
    const { privateKeyToAccount } = await import('viem/accounts');
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(process.env.EVM_KEY) });
    registerNativeScheme(client, { agent, maxPriceBase: 1_000_000n });
    client.registerPolicy(preferRail('native'));
    const paidFetch = wrapFetchWithPayment(fetch, client);
    const res = await paidFetch(nodeUrl + '/api/x402/native-world-clock', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'Asia/Tokyo' }) });
    const header = res.headers.get('PAYMENT-RESPONSE');
    out({ address, status: res.status, body: await res.json(), paymentResponse: header ? decodePaymentResponseHeader(header) : null });
    break;
  }
  case 'x402-fetch-usdc': {
    // The same client, the agent's policy choosing the USDC rail: (1) native preferred, but its
    // price (0.002 NATIVE = 200000 base units) above the native scheme's maxPriceBase, whose spend
    // cap drops the native option; (2) preferRail('usdc') with the native option affordable.
    const { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } = await import('@x402/fetch');
    const { registerExactEvmScheme } = await import('@x402/evm/exact/client');
    const { privateKeyToAccount } = await import('viem/accounts');
    const signer = privateKeyToAccount(process.env.EVM_KEY);
    const nativeAccount = async () => (await (await fetch(nodeUrl + '/api/v1/account/' + address)).json()).pendingNonce;
    const nativeNonceBefore = await nativeAccount();
    const calls = [];
    for (const [policy, maxPriceBase, rail, request] of [['native above maxPriceBase', 100_000n, 'native', 'Asia/Tokyo'], ['preferRail usdc', 1_000_000n, 'usdc', 'Europe/Rome']]) {
      const client = new x402Client();
      registerExactEvmScheme(client, { signer });
      registerNativeScheme(client, { agent, maxPriceBase });
      client.registerPolicy(preferRail(rail));
      const paidFetch = wrapFetchWithPayment(fetch, client);
      const res = await paidFetch(nodeUrl + '/api/x402/native-world-clock', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request }) });
      const header = res.headers.get('PAYMENT-RESPONSE');
      calls.push({ policy, request, status: res.status, body: await res.json(), paymentResponse: header ? decodePaymentResponseHeader(header) : null });
    }
    out({ address, evmAddress: signer.address, calls, nativeNonceBefore, nativeNonceAfter: await nativeAccount() });
    break;
  }
  case 'mcp': {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const mcp = new Client({ name: 'agent-package-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(nodeUrl + '/api/mcp')));
    const r = await callPaidTool(mcp, agent, { name: 'native-world-clock', arguments: { request: 'America/New_York' } }, { maxPriceBase: 1_000_000n });
    await mcp.close();
    out({ address, isError: r.result.isError ?? false, structuredContent: r.result.structuredContent, paymentResponse: r.paymentResponse, txId: r.txId });
    break;
  }
  default:
    throw new Error('unknown case ' + process.argv[2]);
}
`;

/** Runs one case of the agent's program in the installed project; its last stdout line, parsed. */
async function agentCase(name: string): Promise<Record<string, any>> {
  const stdout = await run(process.execPath, ['agent.mjs', name], project, 120_000, { NODE_URL: node.url, WALLET: wallet, VECTOR, EVM_KEY });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, any>;
}

async function getJson(path: string): Promise<{ status: number; json: Record<string, any> }> {
  const res = await fetch(`${node.url}${path}`);
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

beforeAll(async () => {
  // The test facilitator checks USDC payments with reference/'s viem: required here, not skipped.
  if (!referenceViem.ok) throw new Error(`the USDC case needs reference/ installed; run:\n\n    ${FILL_NPM_CACHE}\n\n${referenceViem.reason}`);
  dir = mkdtempSync(join(tmpdir(), 'native-agent-pkg-'));
  const data = join(dir, 'data');
  // The USDC rail as the other USDC tests run it: the facilitator settles on anvil (an EIP-3009 stand-in at the USDC address).
  anvil = await startAnvil(8453);
  await anvil.rpc('anvil_setCode', [USDC, EIP3009_STUB_CODE]);
  facilitator = await startTestFacilitator({ submit: (auth) => useAuthorization(anvil, USDC, auth.from as Address, auth.nonce as Hex, { to: auth.to, value: auth.value }) });
  // The node starts while the package is packed and installed.
  const started = startNode(
    ['--dev', '--data-dir', data, '--http-port', '0', '--block-time', '1', '--no-stratum', '--usdc-pay-to', NODE_PAY_TO, '--facilitator-url', facilitator.url, '--facilitator-timeout', '5000', '--base-rpc-url', anvil.url],
    { cwd: dir },
  );
  try {
    const packed = JSON.parse(await run('npm', ['pack', '--json', '--pack-destination', dir, '--loglevel=error'], join(ROOT, 'packages', 'agent'), 120_000)) as { filename: string }[];
    const tarball = join(dir, packed[0].filename);
    // The package alone, as `npm install <tarball>` gives it.
    const alone = join(dir, 'alone');
    mkdirSync(alone);
    writeFileSync(join(alone, 'package.json'), JSON.stringify({ name: 'alone', private: true, type: 'module' }));
    await npm(['install', tarball], alone);
    packageBytes = sizeOf(join(alone, 'node_modules'));
    // An agent's project: the package and what it plugs into.
    project = join(dir, 'agent');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'agent', private: true, type: 'module', dependencies: { '@native-node/agent': `file:${tarball}`, ...AGENT_DEPS } }));
    writeFileSync(join(project, 'agent.mjs'), AGENT_PROGRAM);
    await npm(['install'], project);
  } finally {
    node = await started;
  }
  wallet = join(data, 'dev-wallet.json');
}, INSTALL_TIMEOUT_MS + 60_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  await facilitator?.stop();
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the agent package, installed from its tarball', () => {
  test('installs alone in under 5 MB, with only its signing and encoding dependencies', () => {
    const names = readdirSync(join(dir, 'alone', 'node_modules')).flatMap((n) => (n.startsWith('@') ? readdirSync(join(dir, 'alone', 'node_modules', n)).map((m) => `${n}/${m}`) : n.startsWith('.') ? [] : [n]));
    expect(names.sort()).toEqual(['@native-node/agent', '@noble/ciphers', '@noble/curves', '@noble/hashes', '@noble/post-quantum', '@scure/base']);
    process.stderr.write(`agent package install: ${(packageBytes / 1e6).toFixed(2)} MB\n`);
    expect(packageBytes).toBeLessThan(5_000_000);
  });

  test('the SDK pays a call (loadWallet + createAgentClient().call) and reproduces the node test vector', async () => {
    const r = await agentCase('sdk');
    expect(r.result).toMatchObject({ timezone: 'Europe/Paris' });
    expect(r.receipt).toMatchObject({ serviceId: 'native-world-clock', caller: r.address, txId: r.txId, amountBase: '200000' });
    const tx = await getJson(`/api/v1/tx/${r.txId}`);
    expect(tx.json).toMatchObject({ type: 'agent_invoke', status: 'mined' });
    // Verified from the installed package: signatures and result offline (payee not pinned), then the payment on chain paying the payee that signed.
    expect(r.verified).toEqual({ ok: true, resultVerified: true, anchored: false, onChain: true, payee: tx.json.payTo });
    const { readFileSync } = await import('node:fs');
    const V = JSON.parse(readFileSync(VECTOR, 'utf8')) as Record<string, any>;
    expect(r.vector).toEqual({ address: V.key.address, requestHash: V.commitment.requestHash, unsigned: V.unsigned, sighash: V.sighash, signedRequestHash: V.commitment.requestHash });
  }, 150_000);

  test('@x402/fetch wrapFetchWithPayment with the native scheme beside the USDC one pays the native rail', async () => {
    const r = await agentCase('x402-fetch');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ paid: true, result: { timezone: 'Asia/Tokyo' }, receipt: { serviceId: 'native-world-clock', caller: r.address } });
    expect(r.paymentResponse).toMatchObject({ success: true, transaction: r.body.receipt.txId, payer: r.address });
    const tx = await getJson(`/api/v1/tx/${r.body.receipt.txId}`);
    expect(tx.json).toMatchObject({ type: 'agent_invoke', status: 'mined' });
  }, 150_000);

  test("@x402/fetch pays the USDC rail when the agent's policy picks it: native above maxPriceBase, or preferRail('usdc')", async () => {
    facilitator.reset();
    const r = await agentCase('x402-fetch-usdc');
    expect(r.calls.map((c: Record<string, any>) => c.policy)).toEqual(['native above maxPriceBase', 'preferRail usdc']);
    for (const c of r.calls as Record<string, any>[]) {
      expect({ policy: c.policy, status: c.status }).toEqual({ policy: c.policy, status: 200 });
      expect(c.paymentResponse).toMatchObject({ success: true, network: 'eip155:8453', payer: r.evmAddress });
      expect(c.body).toMatchObject({ paid: true, result: { timezone: c.request }, receipt: { serviceId: 'native-world-clock', caller: r.evmAddress, txId: c.paymentResponse.transaction } });
      // Settled on anvil: the transfer of the price to the node's payee, mined.
      const receipt = await anvil.rpc<{ status: string; logs: { address: string }[] } | null>('eth_getTransactionReceipt', [c.paymentResponse.transaction]);
      expect(receipt).toMatchObject({ status: '0x1' });
      expect(receipt!.logs.every((l) => l.address.toLowerCase() === USDC.toLowerCase())).toBe(true);
    }
    expect(facilitator.calls.settled.map((s) => ({ payer: s.payer.toLowerCase(), value: s.value, transaction: s.transaction }))).toEqual(
      (r.calls as Record<string, any>[]).map((c) => ({ payer: r.evmAddress.toLowerCase(), value: USDC_PRICE_ATOMIC, transaction: c.paymentResponse.transaction })),
    );
    expect(facilitator.calls.lastSettle).toMatchObject({ x402Version: 2, paymentRequirements: { network: 'eip155:8453', amount: USDC_PRICE_ATOMIC, payTo: NODE_PAY_TO } });
    // Nothing paid natively: the agent's native account sent nothing.
    expect(r.nativeNonceBefore).toEqual(expect.anything());
    expect(r.nativeNonceAfter).toEqual(r.nativeNonceBefore);
  }, 150_000);

  test('the official MCP client pays a paid tool natively (callPaidTool)', async () => {
    const r = await agentCase('mcp');
    expect(r.isError).toBe(false);
    expect(r.structuredContent).toMatchObject({ paid: true, result: { timezone: 'America/New_York' }, receipt: { serviceId: 'native-world-clock', txId: r.txId, caller: r.address } });
    expect(r.paymentResponse).toMatchObject({ success: true, transaction: r.txId, payer: r.address });
  }, 150_000);

  test('native-node pay --print signs without broadcasting; the printed hex and salt buy the call over plain HTTP', async () => {
    const endpoint = `${node.url}/api/x402/native-world-clock`;
    const request = 'Europe/Berlin';
    const quoteRes = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request }) });
    expect(quoteRes.status).toBe(402);
    const quoteFile = join(dir, 'q.json');
    writeFileSync(quoteFile, await quoteRes.text());
    const printed = await runCli(['pay', '--quote-file', quoteFile, '--request', request, '--print', '--node', node.url, '--wallet', wallet, '--json'], { cwd: dir });
    expect(printed.code).toBe(0);
    const p = printed.json!;
    expect(p).toMatchObject({ serviceId: 'native-world-clock', request, broadcast: false, amountBase: '200000' });
    expect(p.tx).toMatch(/^[0-9a-f]+$/);
    expect(p.salt).toMatch(/^[0-9a-f]{64}$/);
    // Not sent: the node does not know it.
    expect((await getJson(`/api/v1/tx/${p.txId}`)).status).toBe(404);
    const sent = await fetch(`${node.url}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: p.tx }) });
    expect(((await sent.json()) as Record<string, unknown>).txId).toBe(p.txId);
    const settled = await fetch(`${endpoint}?wait=30`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request, payment: { txId: p.txId, salt: p.salt } }) });
    expect(settled.status).toBe(200);
    expect(await settled.json()).toMatchObject({ paid: true, result: { timezone: 'Europe/Berlin' }, receipt: { txId: p.txId } });
  }, 120_000);
});
