/**
 * The explorer's index pages: every block (paged), the mempool, every token, every pool and every
 * swap (paged). Server-rendered from plain rows; each paged list links to the next older page
 * until the first entry.
 */
import { esc } from './layout.js';
import { addrLink, assetLink, poolLink, priceText, txLink, units } from './explorerTx.js';
import { BLOCKS_HEAD, blockRowHtml, pager, renderShell, searchForm, table, when, type BlockRow, type ShellInfo } from './explorer.js';

/** Blocks per page of `/explorer/blocks`. */
export const BLOCKS_PER_PAGE = 25;

/** `/explorer/blocks`: the best chain, newest first, `BLOCKS_PER_PAGE` (or `limit`) at a time. */
export function renderBlocks(v: { info: ShellInfo; tip: number; blocks: readonly BlockRow[]; limit?: number }): string {
  const per = v.limit ?? BLOCKS_PER_PAGE;
  const lim = per === BLOCKS_PER_PAGE ? '' : `&limit=${per}`;
  const top = v.blocks[0]?.height ?? v.tip;
  const last = v.blocks.at(-1)?.height ?? 0;
  const body = `<h1>Blocks</h1>
${searchForm()}
<p class="lead">Blocks ${last} to ${top} of the best chain (tip ${v.tip}).</p>
${table(BLOCKS_HEAD, v.blocks.map(blockRowHtml).join('\n'), ' id="blocks"')}
${pager({ newest: top < v.tip ? `/explorer/blocks${lim ? `?${lim.slice(1)}` : ''}` : undefined, newer: top < v.tip ? `/explorer/blocks?before=${Math.min(v.tip + 1, top + 1 + per)}${lim}` : undefined, older: last > 0 ? `/explorer/blocks?before=${last}${lim}` : undefined }, 'Older blocks')}`;
  return renderShell({ title: `Blocks · Explorer`, current: 'explorer', body, info: v.info, section: '/explorer/blocks' });
}

/** A pending transaction as the mempool page lists it. */
export interface MempoolRow {
  readonly id: string;
  readonly type: string;
  readonly from: string;
  /** Fee, NATIVE (decimal text). */
  readonly fee: string;
  readonly size: number;
  /** Base units per byte. */
  readonly feeRate: number;
  /** Unix seconds it entered this node's mempool. */
  readonly since: number;
}

/** `/explorer/mempool`: what waits for a block on this node, highest fee rate first. */
export function renderMempool(v: { info: ShellInfo; count: number; bytes: number; queued?: number; rows: readonly MempoolRow[] }): string {
  const body = `<h1>Mempool</h1>
${searchForm()}
<p class="lead" id="mempool-summary">${v.count} transaction${v.count === 1 ? '' : 's'} (${v.bytes.toLocaleString('en-US')} bytes) ready for the next block${v.queued ? `, ${v.queued} queued behind a missing nonce` : ''}; highest fee rate first${v.rows.length < v.count ? `, the first ${v.rows.length} shown` : ''}.</p>
${v.rows.length ? table('<th scope="col">Id</th><th scope="col">Type</th><th scope="col">From</th><th scope="col" class="num">Fee (NATIVE)</th><th scope="col" class="num">Bytes</th><th scope="col" class="num">Fee rate (base/B)</th><th scope="col">Entered</th>', v.rows.map((r) => `<tr data-tx="${esc(r.id)}"><td>${txLink(r.id)}</td><td>${esc(r.type)}</td><td>${addrLink(r.from)}</td><td class="num">${esc(r.fee)}</td><td class="num">${r.size.toLocaleString('en-US')}</td><td class="num">${esc(priceText(Math.round(r.feeRate * 100) / 100))}</td><td>${when(r.since)}</td></tr>`).join('\n'), ' id="mempool"') : '<p class="muted" id="mempool-empty">The mempool is empty: every transaction this node has seen is in a block.</p>'}
<p><a href="/explorer/mempool">Refresh</a> · <a href="/api/v1/status">Mempool limits in /api/v1/status</a></p>`;
  return renderShell({ title: `Mempool · Explorer`, current: 'explorer', body, info: v.info, section: '/explorer/mempool' });
}

/** `/explorer/tokens`: every token, largest holder count first. */
export function renderTokens(v: { info: ShellInfo; tokens: readonly { symbol: string; name: string; issuer: string; decimals: number; kind: string; supply: string; holders: number; frozen: boolean; createdHeight: number }[] }): string {
  const rows = v.tokens
    .map((t) => `<tr><td>${assetLink(t.symbol)}</td><td>${esc(t.name)}${t.frozen ? ' <span class="badge bad">frozen</span>' : ''}</td><td>${t.kind === 'usd-stable' ? 'USD stablecoin' : 'token'}</td><td class="num">${esc(units(t.supply, t.decimals))}</td><td class="num">${t.holders}</td><td>${addrLink(t.issuer)}</td><td class="num"><a href="/explorer/block/${t.createdHeight}">${t.createdHeight}</a></td></tr>`)
    .join('\n');
  const body = `<h1>Tokens</h1>
${searchForm()}
<p class="lead">${v.tokens.length} token${v.tokens.length === 1 ? '' : 's'} issued on ${esc(v.info.network)}.</p>
${v.tokens.length ? table('<th scope="col">Symbol</th><th scope="col">Name</th><th scope="col">Kind</th><th scope="col" class="num">Supply</th><th scope="col" class="num">Holders</th><th scope="col">Issuer</th><th scope="col" class="num">Issued at</th>', rows, ' id="tokens"') : '<p class="muted">No tokens yet.</p>'}
<p><a href="/api/v1/tokens">The tokens as JSON</a></p>`;
  return renderShell({ title: `Tokens · Explorer`, current: 'explorer', body, info: v.info, section: '/explorer/tokens' });
}

/** `/explorer/pools`: every pool, deepest first. */
export function renderPools(v: { info: ShellInfo; pools: readonly { id: string; a: string; b: string; price: number; tvlNative: number; tvlUsd: number; createdHeight: number }[] }): string {
  const rows = v.pools
    .map((p) => `<tr><td>${poolLink(p.id)}</td><td class="num">1 ${esc(p.a)} = ${esc(priceText(p.price))} ${esc(p.b)}</td><td class="num">${esc(priceText(p.tvlNative))}</td><td class="num">$${esc(priceText(p.tvlUsd))}</td><td class="num"><a href="/explorer/block/${p.createdHeight}">${p.createdHeight}</a></td></tr>`)
    .join('\n');
  const body = `<h1>Pools</h1>
${searchForm()}
<p class="lead">${v.pools.length} pool${v.pools.length === 1 ? '' : 's'}, deepest first.</p>
${v.pools.length ? table('<th scope="col">Pool</th><th scope="col" class="num">Price</th><th scope="col" class="num">Liquidity (NATIVE)</th><th scope="col" class="num">Liquidity (USD)</th><th scope="col" class="num">Created at</th>', rows, ' id="pools"') : '<p class="muted">No pools yet.</p>'}
<p><a href="/api/v1/pools">The pools as JSON</a> · <a href="/explorer/swaps">Latest swaps</a></p>`;
  return renderShell({ title: `Pools · Explorer`, current: 'explorer', body, info: v.info, section: '/explorer/pools' });
}

/** A swap row: amounts already in words (HTML). */
export interface SwapRow {
  readonly height: number;
  readonly time: number;
  readonly tx: string;
  readonly pool: string;
  readonly text: string;
}

/** `/explorer/swaps[?pool=]`: swaps newest first, paged by block height. */
export function renderSwaps(v: { info: ShellInfo; pool?: string; swaps: readonly SwapRow[]; older?: string; paged: boolean }): string {
  const base = `/explorer/swaps${v.pool ? `?pool=${encodeURIComponent(v.pool)}` : ''}`;
  const body = `<h1>Swaps${v.pool ? ` in ${poolLink(v.pool)}` : ''}</h1>
${searchForm()}
${v.swaps.length ? table('<th scope="col" class="num">Block</th><th scope="col">Time (UTC)</th><th scope="col">Pool</th><th scope="col">Swap</th><th scope="col">Tx</th>', v.swaps.map((s) => `<tr><td class="num"><a href="/explorer/block/${s.height}">${s.height}</a></td><td>${when(s.time)}</td><td>${poolLink(s.pool)}</td><td>${s.text}</td><td>${txLink(s.tx)}</td></tr>`).join('\n'), ' id="swaps"') : `<p class="muted">${v.paged ? 'No older swaps.' : 'No swaps yet.'}</p>`}
${pager({ newest: v.paged ? base : undefined, older: v.older }, 'Older swaps')}`;
  return renderShell({ title: `Swaps · Explorer`, current: 'explorer', body, info: v.info, section: '/explorer/swaps' });
}
