/**
 * The nineteen chain-data services end to end through a real node process: a devnet
 * node runs the built-in economy (`--economy`) until its set-up is mined; the dev wallet swaps on
 * NATIVE/USDN, labels an address `mixer` (the dev key is a moderator on the devnet) and sends it NATIVE. The
 * node then restarts on the same data without the economy actors (so pools stay put while the
 * test reads them), the bazaar lists all nineteen `active`, and one paid native call of each —
 * quoted, paid in one batch of agent_invoke transactions from the dev wallet, settled together —
 * returns real figures, checked against the chain API of the same node (the swap quote's output
 * recomputed from the pool's reserves, the price from the deepest USD pool, holders, floats, the
 * risk score's moderation label).
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeAddress } from '../../consensus/address.js';
import { getAmountOut } from '../../consensus/amm.js';
import { formatUnits } from '../../node/api/economyAccount.js';
import { getDevKeyPair, getDevnetActor } from '../../consensus/devnet.js';
import { toHex } from '../../consensus/hash.js';
import { createKeyPairFromSeed } from '../../consensus/keys.js';
import { COIN } from '../../consensus/params.js';
import { encodeTx, signTx, TX_VERSION } from '../../consensus/tx.js';
import { feeForRate } from '../../consensus/txBuilder.js';
import { moderation } from '../../consensus/txTypes/moderation.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { swap } from '../../consensus/txTypes/swap.js';
import type { TxTypeModule } from '../../consensus/txTypes/types.js';
import { createAgentClient, type AgentPayment } from '../../sdk/client.js';
import { startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const ECONOMY_SERVICES = [
  'native-token-audit', 'native-price-feed', 'native-market-summary', 'native-swap-quote', 'native-wallet-portfolio', 'native-stable-health',
  'native-supply-audit', 'native-token-launch-check', 'native-pool-analytics', 'native-price-history', 'native-arb-scan', 'native-market-report',
  'native-holder-stats', 'native-whale-watch', 'native-bridge-status', 'native-bridge-route-check', 'native-risk-score', 'native-crypto-whale-watch',
  'native-crypto-portfolio-tracker',
];

const TESTNET_HRP = 'tnative';
const dev = getDevKeyPair();
const devAddr = encodeAddress(dev.address, TESTNET_HRP);
const trader1 = encodeAddress(getDevnetActor('trader1').address, TESTNET_HRP);
const mixer = createKeyPairFromSeed(new Uint8Array(32).fill(77)).address;
const mixerAddr = encodeAddress(mixer, TESTNET_HRP);

let dir: string;
let node: NodeProc | undefined;
const start = (extra: string[]) => startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--block-time', '1', '--no-stratum', ...extra], { cwd: dir });

async function get(path: string): Promise<Json> {
  const r = await fetch(`${node!.url}${path}`);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** Polls `check` every 250 ms until it is true (bounded). */
async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Signs and submits a dev-wallet transaction with the given nonce; returns its id. */
async function submit<P>(mod: TxTypeModule<P>, payload: P, nonce: bigint): Promise<string> {
  const params = (await get('/api/v1/status')) as { chainId: number };
  const base = { version: TX_VERSION, chainId: params.chainId, type: mod.type, from: dev.address, nonce, payload: mod.encodePayload(payload), ...(nonce === 0n ? { publicKey: dev.publicKey } : {}) };
  const tx = signTx({ ...base, fee: feeForRate(base, 1n) }, dev);
  const r = await fetch(`${node!.url}/api/v1/tx`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx: toHex(encodeTx(tx)) }) });
  const body = (await r.json()) as { txId?: string };
  if (!body.txId) throw new Error(`tx refused: ${JSON.stringify(body)}`);
  return body.txId;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-econ-e2e-'));
  node = await start(['--economy']);
  // The set-up (tokens, USDN, 9 pools, stakes, bridge flows) is mined.
  await until('the economy set-up', async () => {
    const [pools, bridge] = await Promise.all([get('/api/v1/pools'), get('/api/v1/bridge')]);
    return pools.count >= 9 && bridge.networks.every((n: Json) => n.inCount > 0);
  }, 120_000);
  // The dev wallet swaps on NATIVE/USDN (a candle for the price history), labels `mixer` and pays it.
  const [acct, status] = await Promise.all([get(`/api/v1/account/${devAddr}`), get('/api/v1/status')]);
  const nonce = BigInt(acct.pendingNonce);
  const txs = [
    await submit(swap, { path: ['NATIVE', 'USDN'], amountIn: 10n * COIN, minOut: 1n, expiryHeight: status.height + 100 }, nonce),
    await submit(moderation, { action: 'label', address: mixer, label: 'mixer', reason: 'pools deposits to hide their source' }, nonce + 1n),
    await submit(transfer, { to: mixer, amount: 5n * COIN }, nonce + 2n),
  ];
  await until('the swap, the label and the transfer mined', async () => (await Promise.all(txs.map((id) => get(`/api/v1/tx/${id}`)))).every((t) => t.status === 'mined'));
  await stopProcess(node);
  node = await start([]);
  // The prober's first round marks the services; the actors' transactions still pending at the
  // stop (the mempool is kept on disk) are mined, so nothing but the test's payments moves now.
  await until('the first health round and an empty mempool', async () => (await get('/api/x402/bazaar?limit=1')).health.checkedAt > 0 && (await get('/api/v1/status')).mempool.count === 0, 60_000);
}, 240_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  rmSync(dir, { recursive: true, force: true });
});

test('the bazaar lists the nineteen active; a paid native call of each returns real figures matching the chain API', async () => {
  const bazaar = await get('/api/x402/bazaar');
  const listed = new Map<string, Json>(bazaar.resources.map((r: Json) => [r.serviceId, r]));
  for (const id of ECONOMY_SERVICES) expect({ id, health: listed.get(id)?.healthStatus }).toEqual({ id, health: 'active' });

  const requests: Record<string, string> = {
    'native-token-audit': 'usdn',
    'native-swap-quote': '100 NATIVE -> USDN',
    'native-wallet-portfolio': trader1,
    'native-supply-audit': 'USDN',
    'native-token-launch-check': 'SILVR|Silver Token|8|21000000',
    'native-pool-analytics': 'NATIVE/USDN',
    'native-holder-stats': 'USDN',
    'native-whale-watch': '100',
    'native-bridge-route-check': 'ethereum-native-100',
    'native-risk-score': devAddr,
    'native-crypto-whale-watch': trader1,
    'native-crypto-portfolio-tracker': `portfolio:${trader1}`,
  };
  // The chain as the API shows it, before the calls (nothing but the payments changes it now).
  const [usdnPool, usdn, bridge, trader, price] = await Promise.all([get('/api/v1/pool/NATIVE-USDN'), get('/api/v1/token/USDN'), get('/api/v1/bridge'), get(`/api/v1/account/${trader1}`), get('/api/v1/price')]);

  const client = createAgentClient({ nodeUrl: node!.url, key: dev });
  const quotes = await Promise.all(ECONOMY_SERVICES.map((id) => client.quote(id, requests[id] ?? '')));
  const payments: AgentPayment[] = [];
  for (const q of quotes) payments.push(await client.sendPayment(q));
  const calls = await Promise.all(quotes.map((q, i) => client.settle(q, payments[i].txId, { timeoutMs: 90_000 })));
  const r: Record<string, Json> = Object.fromEntries(ECONOMY_SERVICES.map((id, i) => [id, calls[i].result]));
  for (const [i, id] of ECONOMY_SERVICES.entries()) {
    expect({ id, receipt: calls[i].receipt.txId }).toEqual({ id, receipt: payments[i].txId });
    expect(Object.keys(r[id]).length).toBeGreaterThan(2);
  }

  const { reserveA: rNative, reserveB: rUsdn } = usdnPool.pool as { reserveA: string; reserveB: string };
  expect(usdnPool.pool.a).toBe('NATIVE');
  // Price feed: the deepest USD pool, its reserves and price.
  expect(r['native-price-feed']).toMatchObject({ source: 'pool', pool: { id: 'NATIVE-USDN', stablecoin: 'USDN' } });
  expect(r['native-price-feed'].priceUsd).toBeCloseTo(price.price, 8);
  expect(r['native-price-feed'].priceUsd).toBeCloseTo(Number(rUsdn) / 1e6 / (Number(rNative) / 1e8), 8);
  // Swap quote: the direct route's exact constant-product output from the reserves the API reports
  // is among the routes; the quote is the best route (1-3 hops), so never less than it.
  const fee = r['native-swap-quote'].feeBps as number;
  const direct = getAmountOut(100n * COIN, BigInt(rNative), BigInt(rUsdn), fee);
  const quoted = BigInt(r['native-swap-quote'].amountOutUnits);
  expect(r['native-swap-quote']).toMatchObject({ feasible: true, minimumReceivedUnits: ((quoted * 9950n) / 10_000n).toString() });
  expect(r['native-swap-quote'].routes.find((x: Json) => x.path === 'NATIVE -> USDN')).toMatchObject({ available: true, amountOut: formatUnits(direct, 6) });
  expect(quoted >= direct).toBe(true);
  if (r['native-swap-quote'].route === 'direct') expect(quoted).toBe(direct);
  expect(r['native-pool-analytics']).toMatchObject({ found: true, pool: 'NATIVE-USDN', reservesUnits: { a: rNative, b: rUsdn } });
  expect(r['native-token-audit']).toMatchObject({ symbol: 'USDN', found: true, kind: 'usd-stable', holders: usdn.token.holders });
  expect(r['native-holder-stats'].tokens[0]).toMatchObject({ symbol: 'USDN', holders: usdn.token.holders });
  expect(r['native-supply-audit'].tokens[0].units).toMatchObject({ minted: usdn.token.minted, supply: usdn.token.supply });
  expect(r['native-stable-health']).toMatchObject({ count: 1 });
  expect(r['native-market-summary'].poolCount).toBe(9);
  expect(r['native-price-history']).toMatchObject({ pool: 'NATIVE-USDN' });
  expect(r['native-price-history'].candles.length).toBeGreaterThan(0);
  expect(r['native-arb-scan'].assets.length).toBeGreaterThan(3);
  expect(r['native-market-report'].markdown).toContain('## Stablecoins');
  expect(r['native-whale-watch']).toMatchObject({ threshold: '100', thresholdUnit: 'NATIVE' });
  expect(r['native-token-launch-check']).toMatchObject({ valid: true });
  expect(r['native-bridge-status'].count).toBe(10);
  expect(r['native-bridge-status'].networks.map((n: Json) => [n.network, n.inRecords])).toEqual(bridge.networks.map((n: Json) => [n.name, n.inCount]));
  expect(r['native-bridge-route-check']).toMatchObject({ feasible: true });
  expect(r['native-wallet-portfolio']).toMatchObject({ found: true, balance: { units: trader.balanceBase } });
  expect(r['native-crypto-whale-watch']).toMatchObject({ found: true });
  expect(r['native-crypto-portfolio-tracker']).toMatchObject({ found: true });
  // Risk score: the dev wallet sent NATIVE to the address its moderator key labelled `mixer`.
  expect(r['native-risk-score'].flags.mixerInteraction).toMatchObject({ flagged: true, evidence: { labelled: [{ address: mixerAddr, role: 'counterparty', label: 'mixer' }] } });
  expect(r['native-risk-score'].score).toBeGreaterThanOrEqual(25);
}, 180_000);

test('a paid native-agent-roster call lists each service available exactly when the bazaar does not show it down', async () => {
  const client = createAgentClient({ nodeUrl: node!.url, key: dev });
  const q = await client.quote('native-agent-roster', '');
  const pay = await client.sendPayment(q);
  const roster = (await client.settle(q, pay.txId, { timeoutMs: 90_000 })).result as Json;
  const bazaar = await get('/api/x402/bazaar');
  const status = new Map<string, string>(bazaar.resources.map((x: Json) => [x.serviceId, x.healthStatus]));
  const services = roster.agents.flatMap((a: Json) => a.services) as Json[];
  expect(roster.healthTracked).toBe(true);
  // Services without their provider or data pack are down on this node: the roster must say so.
  expect(services.some((x) => status.get(x.serviceId) === 'down')).toBe(true);
  for (const x of services) expect({ id: x.serviceId, available: x.available }).toEqual({ id: x.serviceId, available: status.get(x.serviceId) !== 'down' });
}, 120_000);
