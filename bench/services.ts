/**
 * Services (`npm run bench -- services`). Part 1, chain-data services: builds a large
 * devnet economy through the node's block path (bench/marketChain.ts: 5,000 blocks, over 100,000
 * swaps in 20 pools, 10,000 holders of one token) and calls each of the nineteen 200 times through
 * its `run` with the node's service context over that chain, on inputs varied per call; p50/p99
 * after 5 warm-up calls (the first call reported apart), goal p99 < 20 ms.
 * Options: `--blocks N`, `--holders N`, `--chain-only`, `--local-only`.
 *
 * Part 2, local-compute services: p50/p99 latency of each service's `run`
 * through `executeService`, in process, on realistic inputs, after a warm-up (first calls load
 * fonts, models and data and are reported apart), against the services' latency targets. Then the
 * memory geo-ip costs: RSS of a fresh Node process that loaded the service catalog, before and
 * after its first IPv4 lookup and after its first IPv6 lookup (after a GC each time).
 *
 * Options: `--iterations N` per service (default 200; 50 for the PDF and report services).
 * native-email-validate is not here: its time is the DNS server's.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { silentLogger } from '../chain/types.js';
import { createServiceRegistry, executeService, type ServiceContext } from '../services/index.js';
import { ensureGeoIpPack } from '../test/helpers/dataPacks.js';
import { rm } from 'node:fs/promises';
import { createMempool } from '../chain/mempool.js';
import { encodeAddress } from '../consensus/address.js';
import { chainAddressLabels } from '../services/providerRegistry.js';
import { BRIDGE_NETWORK_NAMES } from '../consensus/params.js';
import { buildMarketChain, defaultMarketChainOptions, type MarketChain } from './marketChain.js';
import { acceptAllVerifier } from './acceptAllVerifier.js';
import { percentile } from './percentile.js';

const registry = createServiceRegistry();
const ctx = { log: silentLogger, now: () => Date.UTC(2027, 0, 12), registry } as unknown as Omit<ServiceContext, 'signal'>;

const TEXT_2KB = [
  'Acme Robotics announced on March 3, 2026 that it raised $12 million to expand its warehouse robots in Berlin.',
  'Chief executive Maria Schmidt said the team was thrilled and proud of the launch, and that customers had waited for it.',
  'Customers in Germany and France reported that the robots were reliable, quiet and easy to use, although setup took longer than planned.',
  'However, some workers were worried about job losses, and one union called the plan unfair and rushed.',
  'The company expects to hire 40 engineers next year and to open a second site near Munich in the autumn.',
  'Analysts at Northbridge Capital wrote that the deal values the firm at about $300 million, a figure they called ambitious.',
  'Competitors in the United States and Japan are building similar machines, and prices have fallen by a third since 2023.',
  'Schmidt said the robots would not replace people but take over the heaviest lifting, which causes most injuries in warehouses.',
  'Regulators in Brussels are drafting rules for autonomous machines at work, which could delay sales in the European Union.',
  'Contact press@acme.example or visit https://acme.example/news for details; a webinar is planned for April 12.',
  'Early reviews were positive: one logistics manager said the system paid for itself within eight months.',
  'Still, the company lost money last year and will need to show steady growth before its planned listing in 2027.',
].join(' ').slice(0, 2048);

const items12 = Array.from({ length: 12 }, (_, i) => ({ description: `Consulting services, phase ${i + 1} (Müller & Partner)`, qty: (i % 3) + 1, unitPrice: 95.5 + i * 10 }));
const txs = Array.from({ length: 200 }, (_, i) => ({ id: `tx-${i}`, amount: i % 17 === 0 ? 9_500 + i : 100 + i * 7.25, counterparty: ['Nordwind Logistik GmbH', 'Acme Trading Ltd', 'Lagos Supplies Ltd', 'Rosneft Trading S.A.', 'Blue Harbor Shipping', 'Kowalski i Syn sp. z o.o.', 'Tanaka Foods KK', 'Delta Parts SRL'][i % 8], country: ['DE', 'GB', 'NG', 'CH', 'NL', 'PL', 'JP', 'RO'][i % 8] }));

/** Service, request, target p50 (ms) or undefined, label. */
const CASES: readonly { id: string; label: string; request: string; targetMs?: number; iterations?: number }[] = [
  { id: 'native-invoice-pdf', label: '12-line invoice', request: JSON.stringify({ invoiceNumber: 'INV-2027-001', buyer: { name: 'Ελληνική Εταιρεία ΑΕ', address: 'Οδός Ερμού 12, Αθήνα' }, items: items12, vatRate: 19, notes: 'Payable within 14 days.' }), targetMs: 30, iterations: 50 },
  { id: 'native-credit-note', label: '3-line credit note', request: JSON.stringify({ creditNoteNumber: 'CN-1', buyer: { name: 'Acme' }, originalInvoice: 'INV-1', items: items12.slice(0, 3).map((x) => ({ ...x, unitPrice: -x.unitPrice })), vatRate: 20 }), iterations: 50 },
  { id: 'native-aml-sanctions-scan', label: 'company name, all lists', request: JSON.stringify({ entity: 'Northbridge Trading Company Ltd' }), targetMs: 50 },
  { id: 'native-aml-sanctions-scan', label: 'listed company, reordered', request: JSON.stringify({ entity: 'Trading Rosneft S.A.' }), targetMs: 50 },
  { id: 'native-aml-sanctions-scan', label: 'wallet address', request: JSON.stringify({ entity: '0x098B716B8Aaf21512996dC57EB0615e2383E2f96' }), targetMs: 50 },
  { id: 'native-sentiment', label: '2 KB English text', request: TEXT_2KB, targetMs: 30 },
  { id: 'native-keywords', label: '2 KB English text', request: TEXT_2KB, targetMs: 30 },
  { id: 'native-summarize', label: '2 KB English text', request: TEXT_2KB },
  { id: 'native-geo-ip', label: 'IPv4 (8.8.8.8 and others)', request: '8.8.8.8', targetMs: 1 },
  { id: 'native-geo-ip', label: 'IPv6', request: '2001:4860:4860::8888', targetMs: 1 },
  { id: 'native-b2b-compliance-report', label: '200 transactions, 8 counterparties', request: JSON.stringify({ txs }), iterations: 50 },
];

const f = (ms: number) => (ms < 1 ? ms.toFixed(3) : ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

async function once(id: string, request: string): Promise<number> {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) throw new Error(`${id}: ${v.error.message}`);
  const t = performance.now();
  await executeService(def, ctx, v.input);
  return performance.now() - t;
}

/** RSS (MB) of a fresh process around its first geo-ip lookups, after a GC each time. */
function geoIpRss(): string {
  const script = `
    const { createServiceRegistry } = await import('./services/index.js');
    const { locateIp } = await import('./services/identity/geoip.js');
    createServiceRegistry();
    const rss = async () => { gc(); await new Promise((r) => setTimeout(r, 100)); gc(); return process.memoryUsage().rss / 1048576; };
    const a = await rss(); await locateIp('8.8.8.8'); const b = await rss(); await locateIp('2001:4860:4860::8888'); const c = await rss();
    console.log(JSON.stringify({ before: a, afterV4: b, afterV6: c }));`;
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const r = JSON.parse(out.trim().split('\n').pop()!) as { before: number; afterV4: number; afterV6: number };
  return `geo-ip memory (fresh process, catalog loaded, RSS after GC): before ${r.before.toFixed(0)} MiB; after the first IPv4 lookup ${r.afterV4.toFixed(0)} MiB (+${(r.afterV4 - r.before).toFixed(0)}); after the first IPv6 lookup too ${r.afterV6.toFixed(0)} MiB (+${(r.afterV6 - r.before).toFixed(0)} in all; goal +120 for the first lookup)`;
}

/** Request of call `i` of each chain-data service on the built chain. */
function chainCases(m: MarketChain): { id: string; label: string; request: (i: number) => string }[] {
  const a = (id: Uint8Array) => encodeAddress(id, m.params.hrp);
  const traders = m.traders.map((t) => a(t.address));
  const wallets = [...traders.slice(0, 6), ...m.bots.map((b) => a(b.address)), a(m.whale.address)];
  const pair = (p: string) => p.replace('-', '/');
  const nets = ['native', ...BRIDGE_NETWORK_NAMES];
  const quotes = ['100 NATIVE -> USDN', '2500 usdn → native', '10 GOLD -> USDN', '1 NETH => NBTC', '50000 MEME -> AGNT', '1000 HOLD -> SOLR', '0.5 NBTC -> NATIVE', '42.5 native > star'];
  const cycle = <T>(xs: readonly T[]) => (i: number) => xs[i % xs.length];
  return [
    { id: 'native-token-audit', label: 'each token (HOLD: over 10,000 holders)', request: cycle(m.tokens) },
    { id: 'native-price-feed', label: '(none)', request: () => '' },
    { id: 'native-market-summary', label: '(none)', request: () => '' },
    { id: 'native-swap-quote', label: '8 pairs, direct and via NATIVE', request: cycle(quotes) },
    { id: 'native-wallet-portfolio', label: 'traders, bots, the whale', request: cycle(wallets) },
    { id: 'native-stable-health', label: '(none)', request: () => '' },
    { id: 'native-supply-audit', label: 'all tokens, HOLD, a pool, each token', request: (i) => ['', 'HOLD', 'NATIVE/USDN', m.tokens[i % m.tokens.length]][i % 4] },
    { id: 'native-token-launch-check', label: 'new and taken symbols', request: (i) => (i % 5 === 0 ? 'GOLD|Gold again|2|1000' : `NEW${i}|New Token ${i}|8|21000000`) },
    { id: 'native-pool-analytics', label: 'each of the 20 pools', request: (i) => pair(m.pools[i % m.pools.length]) },
    { id: 'native-price-history', label: '(none)', request: () => '' },
    { id: 'native-arb-scan', label: '(none)', request: () => '' },
    { id: 'native-market-report', label: '(none)', request: () => '' },
    { id: 'native-holder-stats', label: 'HOLD, each token, all tokens, a pool', request: (i) => ['HOLD', m.tokens[i % m.tokens.length], '', 'NATIVE/HOLD'][i % 4] },
    { id: 'native-whale-watch', label: 'default, 100, 1,000, 10,000 NATIVE', request: cycle(['', '100', '1000', '10000']) },
    { id: 'native-bridge-status', label: '(none)', request: () => '' },
    { id: 'native-bridge-route-check', label: 'network pairs, amounts', request: (i) => `${nets[i % nets.length]}-${nets[(i + 1 + (i % (nets.length - 1))) % nets.length]}-${[100, 2500, 1_000_000][i % 3]}` }, // two different networks (the same one twice is refused before any quote)
    { id: 'native-risk-score', label: 'traders, bots, the whale, EVM', request: (i) => (i % 10 === 9 ? '0x098B716B8Aaf21512996dC57EB0615e2383E2f96' : wallets[i % wallets.length]) },
    { id: 'native-crypto-whale-watch', label: 'traders, bots, the whale', request: cycle(wallets) },
    { id: 'native-crypto-portfolio-tracker', label: 'portfolio:ADDRESS and plain', request: (i) => `${i % 2 ? 'portfolio:' : ''}${wallets[i % wallets.length]}` },
  ];
}

/** Part 1 (see module comment): builds the chain, times the nineteen, prints a table. */
async function runChain(n: number, blocks: number, holders: number): Promise<void> {
  console.log(`building the chain: ${blocks} blocks, ${holders} holders…`);
  const before = loadavg().map((x) => x.toFixed(2)).join(' ');
  const cpu0 = process.cpuUsage();
  const m = await buildMarketChain({ ...defaultMarketChainOptions, blocks, holders }, (h, txs) => console.log(`  height ${h}, ${txs} txs`));
  const cpu = process.cpuUsage(cpu0);
  const { chain, params } = m;
  const swaps = m.mix.swap ?? 0;
  const hold = (await chain.economy.getToken('HOLD'))!;
  console.log(`built in ${m.seconds.toFixed(1)} s (${((cpu.user + cpu.system) / 1e6).toFixed(1)} CPU s): ${m.txs} transactions (${swaps} swaps) in ${blocks} blocks, ${m.pools.length} pools, ${m.tokens.length} tokens, HOLD held by ${hold.holders} accounts; mix ${JSON.stringify(m.mix)}`);
  const chainCtx: Omit<ServiceContext, 'signal'> = {
    chain,
    mempool: createMempool(chain, acceptAllVerifier, params),
    params,
    now: Date.now,
    log: silentLogger,
    registry,
    nativeUsd: { get: () => ({ microUsd: 500_000n, source: 'reference', live: false }) },
    // The node's label reader (node/payments.ts → services/providerRegistry.ts addressLabel).
    addressLabels: chainAddressLabels(chain),
  };
  // Wall time, and this process's CPU time (all threads: LevelDB's reads run on libuv's pool),
  // which a loaded machine inflates far less than wall time.
  let lastCpuMs = 0;
  const time = async (id: string, request: string): Promise<number> => {
    const def = registry.get(id)!;
    const v = registry.validateInput(def, request);
    if (!v.ok) throw new Error(`${id} ${JSON.stringify(request)}: ${v.error.message}`);
    const c = process.cpuUsage();
    const t = performance.now();
    await executeService(def, chainCtx, v.input);
    const wall = performance.now() - t;
    const used = process.cpuUsage(c);
    lastCpuMs = (used.user + used.system) / 1000;
    return wall;
  };
  const rows: string[] = [];
  const loadBefore = loadavg().map((x) => x.toFixed(2)).join(' ');
  try {
    for (const c of chainCases(m)) {
      const first = await time(c.id, c.request(0));
      for (let i = 1; i <= 5; i++) await time(c.id, c.request(i));
      const times: number[] = [];
      const cpus: number[] = [];
      for (let i = 0; i < n; i++) {
        times.push(await time(c.id, c.request(i)));
        cpus.push(lastCpuMs);
      }
      times.sort((x, y) => x - y);
      cpus.sort((x, y) => x - y);
      const p99 = percentile(times, 99);
      rows.push(`| ${c.id} | ${c.label} | ${n} | ${f(first)} | ${f(percentile(times, 50))} | ${f(p99)} | ${f(times[times.length - 1])} | ${f(percentile(cpus, 50))} | ${f(percentile(cpus, 99))} | ${p99 < 20 ? 'met' : 'NOT met'} |`);
    }
  } finally {
    await chain.close();
    await rm(m.dataDir, { recursive: true, force: true });
  }
  console.log('\n| service | inputs | runs | first call ms | p50 ms | p99 ms | max ms | CPU p50 ms | CPU p99 ms | p99 < 20 ms |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) console.log(r);
  console.log(`\nload average (1/5/15 min) before the build: ${before}, before the calls: ${loadBefore}, after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
}

/** Runs the benchmark and prints markdown tables. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { iterations: { type: 'string' }, blocks: { type: 'string' }, holders: { type: 'string' }, 'chain-only': { type: 'boolean' }, 'local-only': { type: 'boolean' } } });
  const n = Number(values.iterations ?? 200);
  if (!values['local-only']) await runChain(n, Number(values.blocks ?? defaultMarketChainOptions.blocks), Number(values.holders ?? defaultMarketChainOptions.holders));
  if (values['chain-only']) return;
  await ensureGeoIpPack();
  const before = loadavg().map((x) => x.toFixed(2)).join(' ');
  const rows: string[] = [];
  for (const c of CASES) {
    const first = await once(c.id, c.request);
    for (let i = 0; i < 5; i++) await once(c.id, c.request);
    const iters = Math.min(n, c.iterations ?? n);
    const times: number[] = [];
    for (let i = 0; i < iters; i++) {
      const req = c.id === 'native-geo-ip' && !c.request.includes(':') ? `${8 + (i % 200)}.${i % 250}.${(i * 7) % 250}.${(i * 13) % 250}` : c.request;
      times.push(await once(c.id, req));
    }
    times.sort((a, b) => a - b);
    const p50 = percentile(times, 50);
    const verdict = c.targetMs === undefined ? '' : p50 < c.targetMs ? `< ${c.targetMs} ms: met` : `< ${c.targetMs} ms: NOT met`;
    rows.push(`| ${c.id} | ${c.label} | ${iters} | ${f(first)} | ${f(p50)} | ${f(percentile(times, 99))} | ${verdict} |`);
  }
  const after = loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log('| service | input | runs | first call ms | p50 ms | p99 ms | target (p50) |');
  console.log('|---|---|---:|---:|---:|---:|---|');
  for (const r of rows) console.log(r);
  console.log(`\nload average (1/5/15 min) before: ${before}, after: ${after}`);
  console.log(geoIpRss());
}
