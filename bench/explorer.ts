/**
 * Explorer pages on the bench chain (`npm run bench -- explorer`): builds the devnet
 * economy of `npm run bench -- services` (bench/marketChain.ts: 5,000 blocks, over 100,000
 * transactions, 10,000 holders by default), serves the explorer's router over that chain on
 * 127.0.0.1 and reads every kind of page `--reads` times (default 200) with varied ids: home,
 * block, swap and other transactions, accounts (a trader's, the whale's, a holder's), token,
 * pool, search. Prints p50/p99 of the server time (the pages' Server-Timing) and of the whole
 * request. Options: `--blocks N`, `--holders N`, `--reads N`.
 */
import { parseArgs } from 'node:util';
import { encodeAddress } from '../consensus/address.js';
import { toHex } from '../consensus/hash.js';
import { encodeTx, txId } from '../consensus/tx.js';
import { createMempool } from '../chain/mempool.js';
import { silentLogger } from '../chain/types.js';
import { createJsonApp, HttpServer } from '../node/api/http.js';
import { createExplorer } from '../node/api/explorerRoutes.js';
import { acceptAllVerifier } from './acceptAllVerifier.js';
import { buildMarketChain, defaultMarketChainOptions } from './marketChain.js';
import { percentile } from './percentile.js';

/** Runs the benchmark. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { blocks: { type: 'string' }, holders: { type: 'string' }, reads: { type: 'string' } } });
  const blocks = Number(values.blocks ?? defaultMarketChainOptions.blocks);
  const holders = Number(values.holders ?? defaultMarketChainOptions.holders);
  const reads = Number(values.reads ?? 200);
  console.log(`building the chain: ${blocks} blocks, ${holders} holders…`);
  const m = await buildMarketChain({ ...defaultMarketChainOptions, blocks, holders }, (h, txs) => h % 1000 === 0 && console.log(`  height ${h}, ${txs} txs`));
  const { chain, params } = m;
  console.log(`built in ${m.seconds.toFixed(1)} s: ${m.txs} transactions in ${blocks} blocks, ${m.pools.length} pools, ${m.tokens.length} tokens`);
  const mempool = createMempool(chain, acceptAllVerifier, params);
  const explorer = createExplorer({ chain, mempool, params, version: 'bench' });
  const opts = { host: '127.0.0.1', port: 0, bodyLimit: 65_536, timeoutMs: 30_000, version: 'bench' };
  const server = new HttpServer(opts, createJsonApp(opts, silentLogger, [explorer.router]));
  await server.start();

  // Ids to read: transactions of blocks spread over the chain, by type.
  const byType = new Map<string, string[]>();
  for (let h = 1; h <= chain.tip.height; h += Math.max(1, Math.floor(chain.tip.height / 200))) {
    const e = chain.getEntryByHeight(h);
    const b = e && (await chain.getBlock(e.hashHex));
    for (const tx of b?.txs ?? []) {
      const name = tx.type === 0 ? 'transfer' : String(tx.type);
      const list = byType.get(name) ?? byType.set(name, []).get(name)!;
      if (list.length < 50) list.push(toHex(txId(encodeTx(tx))));
    }
  }
  const swaps = (await chain.economy.swaps({ limit: 200 })).map((s) => s.tx);
  const anyTx = [...byType.values()].flat();
  const addr = (id: Uint8Array) => encodeAddress(id, params.hrp);
  const accounts = [m.whale.address, m.issuer.address, ...m.traders.slice(0, 50).map((t) => t.address), ...m.bots.slice(0, 10).map((b) => b.address)].map(addr);
  const pick = <T>(xs: readonly T[], i: number) => xs[(i * 7919) % xs.length];
  const pages: [string, (i: number) => string][] = [
    ['home', () => '/explorer'],
    ['block', (i) => `/explorer/block/${1 + ((i * 7919) % chain.tip.height)}`],
    ['tx (swap)', (i) => `/explorer/tx/${pick(swaps, i)}`],
    ['tx (any type)', (i) => `/explorer/tx/${pick(anyTx, i)}`],
    ['account', (i) => `/explorer/address/${pick(accounts, i)}`],
    ['token', (i) => `/explorer/token/${pick(m.tokens, i)}`],
    ['pool', (i) => `/explorer/pool/${pick(m.pools, i)}`],
    ['search', (i) => `/explorer/search?q=${encodeURIComponent([String(i % chain.tip.height), pick(m.tokens, i), pick(m.pools, i), pick(accounts, i), pick(anyTx, i)][i % 5])}`],
  ];
  console.log(`\n${reads} reads of each page (server time from Server-Timing; total = the whole request on loopback), ms`);
  console.log('| page | p50 server | p99 server | max server | p50 total | p99 total |\n|---|---:|---:|---:|---:|---:|');
  for (const [label, path] of pages) {
    const server_: number[] = [];
    const total: number[] = [];
    for (let i = 0; i < reads; i++) {
      const t0 = performance.now();
      const res = await fetch(`${server.url}${path(i)}`, { redirect: 'manual' });
      await res.arrayBuffer();
      total.push(performance.now() - t0);
      if (res.status >= 500 || (res.status !== 200 && res.status !== 302)) throw new Error(`${path(i)} answered ${res.status}`);
      const d = /app;dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '');
      if (d) server_.push(Number(d[1]));
    }
    server_.sort((a, b) => a - b);
    total.sort((a, b) => a - b);
    const f = (x: number) => x.toFixed(2);
    console.log(`| ${label} | ${f(percentile(server_, 50))} | ${f(percentile(server_, 99))} | ${f(server_[server_.length - 1])} | ${f(percentile(total, 50))} | ${f(percentile(total, 99))} |`);
  }
  explorer.stop();
  await server.stop();
  await chain.close();
}
