/**
 * The chain explorer's pages (`/explorer…`) and the shell they share with the operator's
 * dashboard, server-rendered from plain view objects that node/api/explorerRoutes.ts reads from
 * the chain's indexes. Every page is complete HTML without JavaScript; the home page's live lists
 * and the dashboard's charts add one small script each (served by the node, no build step).
 */
import { CSS, esc } from './layout.js';
import { addrLink, assetLink, poolLink, priceText, short, txLink, units } from './explorerTx.js';

/** What the shell shows in its footer. */
export interface ShellInfo {
  readonly network: string;
  readonly chainId: number;
  readonly version: string;
}

const EXPLORER_CSS = `
.mono,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(12rem,1fr));gap:.5rem;margin:.75rem 0;padding:0;list-style:none}
.cards li{border:1px solid var(--line);border-radius:6px;padding:.5rem .75rem}
.cards .k{display:block;color:var(--muted);font-size:.85rem}.cards .v{font-size:1.2rem;font-weight:700}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(30rem,100%),1fr));gap:0 1.5rem}
.tablewrap{overflow-x:auto;max-width:100%}
.tablewrap table{margin:.5rem 0}
td .mono,td.mono{white-space:nowrap}
.full{overflow-wrap:anywhere;word-break:break-all}
input[type=search]{min-width:0;width:100%;max-width:40rem}
form.search div{flex:1 1 14rem}
button.copy{font-size:.8rem;padding:.05rem .4rem;margin-left:.3rem;background:var(--soft);color:var(--accent);border-color:var(--line)}
.age{color:var(--muted);font-size:.9em;white-space:nowrap}
.pager{display:flex;flex-wrap:wrap;gap:1rem;margin:.75rem 0}
.subnav{margin:.4rem 0 0;font-size:.95rem}
.banner{margin:.75rem 0;padding:.6rem .9rem;border-radius:6px;border:2px solid #b3261e;background:#fdecea;color:#8e1b1b}
.banner ul{margin:.3rem 0 0;padding-left:1.2rem}
.banner.warnonly{border-color:#7a4100;background:#fff4e5;color:#5a3000}
main{overflow-wrap:anywhere}
th{white-space:nowrap}
td time{white-space:nowrap}
td.mono.full{white-space:normal}
dl.facts{grid-template-columns:auto minmax(0,1fr)}
@media (prefers-color-scheme: dark){
:root{color-scheme:dark;--fg:#e6e6e6;--muted:#a8a8a8;--line:#3a3f45;--bg:#121416;--soft:#1d2125;--accent:#8ab4f8}
input,select{background:#1d2125;color:var(--fg);border-color:#5f6368}
.skip:focus{background:#1d2125}
svg.chart{background:#1d2125}
svg.chart text{fill:#ddd}
.badge{background:#37474f;color:#eceff1}
.ok,.health-active{background:#1e3a27;color:#a8dab5}.warn,.health-degraded{background:#3d2a10;color:#f6c48a}.bad,.health-down{background:#4a1c1c;color:#f5b5b5}
tr.orphaned td{background:#4a1c1c;color:#f5b5b5}
tr.fresh td{background:#1e3a27}
.notice,.banner.warnonly{background:#3d2a10;color:#f6c48a;border-color:#f6c48a}
.banner{background:#4a1c1c;color:#f5b5b5;border-color:#f28b82}
.error{background:#4a1c1c;color:#f5b5b5}
}
tr.orphaned td{background:#fdecea;color:#8e1b1b;text-decoration:line-through}
tr.fresh td{background:#e6f4ea}
.notice{background:#fff4e5;border:1px solid #7a4100;color:#5a3000;padding:.4rem .75rem;border-radius:4px}
p.sentence{font-size:1.1rem;background:var(--soft);border-left:4px solid var(--accent);padding:.5rem .75rem}
.badge{display:inline-block;padding:0 .4rem;border-radius:3px;font-weight:600;font-size:.85rem;background:#eceff1;color:#263238}
.ok{background:#e6f4ea;color:#1e5b2e}.warn{background:#fff4e5;color:#7a4100}.bad{background:#fdecea;color:#8e1b1b}
svg.chart{width:100%;height:auto;max-width:48rem;border:1px solid var(--line);border-radius:4px;background:#fff}
.chartbox{margin:.5rem 0 1rem}.chartbox h3{margin:.25rem 0}
`;

/** The whole page around `body`. */
export function renderShell(o: { title: string; current: 'explorer' | 'dashboard'; body: string; info: ShellInfo; head?: string; scripts?: readonly string[]; section?: string }): string {
  const nav: ['explorer' | 'dashboard' | 'marketplace', string, string][] = [
    ['explorer', '/explorer', 'Explorer'],
    ['dashboard', '/dashboard', 'Dashboard'],
    ['marketplace', '/marketplace', 'Marketplace'],
  ];
  const sub = EXPLORER_SECTIONS.map(([href, label]) => `<a href="${href}"${o.section === href ? ' aria-current="page"' : ''}>${label}</a>`).join(' · ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${esc(o.title)}</title>
<style>${CSS}${EXPLORER_CSS}</style>
${o.head ?? ''}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<nav aria-label="Site"><ul>${nav.map(([id, href, label]) => `<li><a href="${href}"${id === o.current ? ' aria-current="page"' : ''}>${label}</a></li>`).join('')}</ul></nav>
${o.current === 'explorer' ? `<nav aria-label="Explorer" class="subnav">${sub}</nav>` : ''}
</header>
<main id="main">
${o.body}
</main>
<footer>
<p>Node ${esc(o.info.version)} on ${esc(o.info.network)} (chain id ${esc(o.info.chainId)}). The same data as JSON: <a href="/api/v1/status">/api/v1/status</a>, <a href="/api/v1/blocks">/api/v1/blocks</a>, <a href="/api/v1/pools">/api/v1/pools</a>.</p>
</footer>
${(o.scripts ?? (o.current === 'explorer' ? ['/explorer/assets/live.js'] : [])).map((s) => `<script src="${esc(s)}" defer></script>`).join('\n')}
</body>
</html>
`;
}

/** The explorer's sections (its second navigation line). */
export const EXPLORER_SECTIONS: readonly (readonly [string, string])[] = [
  ['/explorer/blocks', 'Blocks'],
  ['/explorer/mempool', 'Mempool'],
  ['/explorer/tokens', 'Tokens'],
  ['/explorer/pools', 'Pools'],
  ['/explorer/swaps', 'Swaps'],
];

/** How long ago a Unix-seconds time was, in words (`42 s ago`, `5 min ago`, `3 h ago`, `2 d ago`). */
export function ago(sec: number, nowSec = Math.floor(Date.now() / 1000)): string {
  const d = Math.max(0, nowSec - sec);
  if (d < 60) return `${d} s ago`;
  if (d < 3600) return `${Math.floor(d / 60)} min ago`;
  if (d < 86_400) return `${Math.floor(d / 3600)} h ago`;
  return `${Math.floor(d / 86_400)} d ago`;
}

/** A timestamp cell: UTC time and its relative age (the page script keeps the age current). */
export function when(sec: number): string {
  return `<time datetime="${new Date(sec * 1000).toISOString()}">${esc(utc(sec))}</time> <span class="age" data-t="${sec}">${esc(ago(sec))}</span>`;
}

/** A copy button for a value (shown once the page script can copy). */
export function copyButton(value: string, what = 'value'): string {
  return `<button type="button" class="copy" data-copy="${esc(value)}" aria-label="Copy ${esc(what)}" hidden>Copy</button>`;
}

/** A full address, linked, with a copy button. */
export function fullAddr(a: unknown): string {
  const s = String(a);
  return `<a class="mono full" href="/explorer/address/${esc(encodeURIComponent(s))}">${esc(s)}</a>${copyButton(s, 'address')}`;
}

/** A table in a box that scrolls sideways on its own, so the page never does. */
export function table(head: string, rows: string, attrs = ''): string {
  return `<div class="tablewrap"><table${attrs}><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** Older/newer links of a paged list. */
export function pager(links: { newer?: string; newest?: string; older?: string }, olderLabel = 'Older'): string {
  const parts = [
    links.newest ? `<a href="${esc(links.newest)}">Newest</a>` : '',
    links.newer ? `<a href="${esc(links.newer)}" rel="prev">Newer</a>` : '',
    links.older ? `<a href="${esc(links.older)}" rel="next">${esc(olderLabel)}</a>` : '',
  ].filter(Boolean);
  return parts.length ? `<nav class="pager" aria-label="Pages">${parts.join('')}</nav>` : '';
}

/** The search form (GET /explorer/search). */
export function searchForm(q = ''): string {
  return `<form class="search" role="search" method="get" action="/explorer/search" aria-label="Search the chain">
<div><label for="q">Search</label><input type="search" id="q" name="q" value="${esc(q)}" maxlength="200" placeholder="height, block hash, tx id, address, token, pool (NATIVE-USDN)" autocomplete="off"></div>
<button type="submit">Search</button>
</form>`;
}

/** UTC time of a Unix-seconds timestamp, `YYYY-MM-DD HH:MM:SS`. */
export function utc(sec: number): string {
  return new Date(sec * 1000).toISOString().replace('T', ' ').slice(0, 19);
}

/** A block row of the latest-blocks table. */
export interface BlockRow {
  readonly height: number;
  readonly hash: string;
  readonly time: number;
  readonly txCount: number;
  readonly size: number;
  readonly miner?: string;
}

/** A transaction row of the latest-transactions table. */
export interface TxRow {
  readonly id: string;
  readonly type: string;
  readonly from: string;
  readonly height: number | null;
}

/** The head of a blocks table. */
export const BLOCKS_HEAD = '<th scope="col" class="num">Height</th><th scope="col">Hash</th><th scope="col">Time (UTC)</th><th scope="col" class="num">Txs</th><th scope="col" class="num">Bytes</th>';

/** A row of a blocks table. */
export function blockRowHtml(b: BlockRow): string {
  return `<tr data-hash="${esc(b.hash)}"><td class="num"><a href="/explorer/block/${b.height}">${b.height}</a></td><td><a class="mono" href="/explorer/block/${esc(b.hash)}">${esc(short(b.hash))}</a></td><td>${when(b.time)}</td><td class="num">${b.txCount}</td><td class="num">${b.size.toLocaleString('en-US')}</td></tr>`;
}

function txRowHtml(t: TxRow): string {
  const where = t.height === null ? '<span class="badge warn">pending</span>' : `<a href="/explorer/block/${t.height}">${t.height}</a>`;
  return `<tr data-tx="${esc(t.id)}"${t.height === null ? ' class="pending"' : ''}><td>${txLink(t.id)}</td><td>${esc(t.type)}</td><td>${addrLink(t.from)}</td><td class="num">${where}</td></tr>`;
}

/** The home page: search, figures, the latest blocks and transactions (kept live by /explorer/assets/live.js). */
export function renderHome(v: { info: ShellInfo; height: number; difficulty: number; hashrate: number; mempool: number; blocks: readonly BlockRow[]; txs: readonly TxRow[] }): string {
  const body = `<h1>Chain explorer</h1>
<p class="lead">Blocks, transactions, accounts, tokens and pools of ${esc(v.info.network)}, read from this node.</p>
${searchForm()}
<ul class="cards" aria-label="Chain figures">
<li><span class="k">Height</span><span class="v" id="fig-height">${v.height}</span></li>
<li><span class="k">Difficulty</span><span class="v" id="fig-difficulty">${esc(priceText(v.difficulty))}</span></li>
<li><span class="k">Hashrate (estimate)</span><span class="v" id="fig-hashrate">${esc(hashrateText(v.hashrate))}</span></li>
<li><span class="k">Mempool</span><span class="v"><a id="fig-mempool" href="/explorer/mempool">${v.mempool} tx</a></span></li>
<li><span class="k">Last block</span><span class="v" id="fig-age">${v.blocks[0] ? `<span class="age" data-t="${v.blocks[0].time}">${esc(ago(v.blocks[0].time))}</span>` : '–'}</span></li>
</ul>
<p id="live-status" role="status" aria-live="polite" class="muted">Live updates need JavaScript; reload for new blocks.</p>
<div class="cols">
<section aria-labelledby="blocks-h"><h2 id="blocks-h">Latest blocks</h2>
${table(BLOCKS_HEAD, v.blocks.map(blockRowHtml).join('\n'), ' id="blocks"')}
<p><a href="/explorer/blocks">All blocks</a></p></section>
<section aria-labelledby="txs-h"><h2 id="txs-h">Latest transactions</h2>
${table('<th scope="col">Id</th><th scope="col">Type</th><th scope="col">From</th><th scope="col" class="num">Block</th>', v.txs.map(txRowHtml).join('\n'), ' id="txs"')}
<p><a href="/explorer/mempool">Pending transactions</a></p></section>
</div>`;
  return renderShell({ title: `Explorer · ${v.info.network}`, current: 'explorer', body, info: v.info, scripts: ['/explorer/assets/live.js'] });
}

/** Hashes per second with a unit. */
export function hashrateText(h: number): string {
  const u = ['H/s', 'kH/s', 'MH/s', 'GH/s', 'TH/s', 'PH/s'];
  let i = 0;
  let x = h;
  while (x >= 1000 && i < u.length - 1) {
    x /= 1000;
    i++;
  }
  return `${priceText(Math.round(x * 100) / 100)} ${u[i]}`;
}

/** A definition list of facts (values are HTML). */
export function facts(rows: readonly (readonly [string, string])[]): string {
  return `<dl class="facts">${rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

/** A page saying nothing matched (or the id is malformed). */
export function renderNotFound(info: ShellInfo, q: string, message: string): string {
  const body = `<h1>Not found</h1>
${searchForm(q)}
<p class="error" role="alert">${esc(message)}</p>
<p>The search takes a block height, a block hash or transaction id (64 hex characters), an address (<code>${esc(info.network === 'native-mainnet' ? 'native1…' : 'tnative1…')}</code>), a token symbol (<code>USDN</code>) or a pool (<code>NATIVE-USDN</code> or <code>NATIVE/USDN</code>).</p>`;
  return renderShell({ title: 'Not found · Explorer', current: 'explorer', body, info });
}

/** A block page. */
export function renderBlock(v: {
  info: ShellInfo;
  header: { hash: string; height: number; mainChain: boolean; confirmations: number; prevHash: string; nextHash: string | null; time: number; difficulty: number; nonce: number; size: number; txCount: number; merkleRoot: string };
  coinbase: { miner: string; reward: string; fees: string; tag: string };
  txs: readonly { id: string; type: string; sentence: string }[];
}): string {
  const h = v.header;
  const body = `<h1>Block ${h.height}</h1>
${searchForm()}
${h.mainChain ? '' : '<p class="notice" role="note">This block is not on the best chain: a reorganisation replaced it (or it lost the fork).</p>'}
${facts([
  ['Hash', `<code class="full">${esc(h.hash)}</code>${copyButton(h.hash, 'hash')}`],
  ['Status', h.mainChain ? `<span class="badge ok">best chain</span> ${h.confirmations} confirmation${h.confirmations === 1 ? '' : 's'}` : '<span class="badge bad">orphaned</span>'],
  ['Time', `${when(h.time)} UTC`],
  ['Previous', h.height > 0 ? `<a class="mono" href="/explorer/block/${esc(h.prevHash)}">${esc(short(h.prevHash))}</a>` : 'genesis'],
  ['Next', h.nextHash ? `<a class="mono" href="/explorer/block/${esc(h.nextHash)}">${esc(short(h.nextHash))}</a>` : '<span class="muted">none yet</span>'],
  ['Miner', fullAddr(v.coinbase.miner)],
  ['Reward', `${esc(v.coinbase.reward)} NATIVE + ${esc(v.coinbase.fees)} NATIVE fees`],
  ['Difficulty', esc(priceText(h.difficulty))],
  ['Nonce', esc(h.nonce)],
  ['Size', `${h.size.toLocaleString('en-US')} bytes`],
  ['Merkle root', `<code>${esc(h.merkleRoot)}</code>`],
  ['Coinbase tag', `<code>${esc(v.coinbase.tag)}</code>`],
])}
<h2>${h.txCount} transaction${h.txCount === 1 ? '' : 's'}</h2>
${v.txs.length ? table('<th scope="col">Id</th><th scope="col">Type</th><th scope="col">What happened</th>', v.txs.map((t) => (t.id ? `<tr><td>${txLink(t.id)}</td><td>${esc(t.type)}</td><td>${t.sentence}</td></tr>` : `<tr><td colspan="3">${t.sentence}</td></tr>`)).join('\n')) : '<p class="muted">Only the coinbase.</p>'}
${pager({ newer: h.nextHash ? `/explorer/block/${h.height + 1}` : undefined, older: h.height > 0 ? `/explorer/block/${h.height - 1}` : undefined }, 'Previous block')}`;
  return renderShell({ title: `Block ${h.height} · Explorer`, current: 'explorer', body, info: v.info });
}

/** A transaction page. */
export function renderTx(v: { info: ShellInfo; json: Record<string, unknown>; sentence: string; status: { mined: boolean; height?: number; blockHash?: string; confirmations?: number; index?: number; time?: number } }): string {
  const j = v.json;
  const s = v.status;
  const skip = new Set(['txId', 'type', 'typeId', 'version', 'chainId', 'from', 'nonce', 'fee', 'feeBase', 'size', 'publicKeyIncluded']);
  const payload = Object.entries(j).filter(([k]) => !skip.has(k));
  const body = `<h1>Transaction</h1>
<p><span class="mono full">${esc(j.txId)}</span>${copyButton(String(j.txId), 'transaction id')}</p>
<p class="sentence" id="tx-sentence">${v.sentence}</p>
${facts([
  ['Type', `<code>${esc(j.type)}</code>`],
  ['Status', s.mined ? `<span class="badge ok">mined</span> in block <a href="/explorer/block/${esc(s.blockHash)}">${esc(s.height)}</a> (position ${esc(s.index)}), ${esc(s.confirmations)} confirmation${s.confirmations === 1 ? '' : 's'}` : '<span class="badge warn">pending</span> in the mempool'],
  [s.mined ? 'Time' : 'Seen', s.time !== undefined ? `${when(s.time)} UTC${s.mined ? '' : ' (entered this node\'s mempool)'}` : '<span class="muted">unknown</span>'],
  ['From', fullAddr(j.from)],
  ['Nonce', esc(j.nonce)],
  ['Fee', `${esc(j.fee)} NATIVE`],
  ['Size', `${esc(j.size)} bytes`],
])}
<h2>Payload</h2>
<div class="tablewrap"><table><tbody>${payload.map(([k, val]) => `<tr><th scope="row">${esc(k)}</th><td class="mono full">${esc(Array.isArray(val) ? val.join(' → ') : typeof val === 'object' && val !== null ? JSON.stringify(val) : val)}</td></tr>`).join('')}</tbody></table></div>
<p><a href="/api/v1/tx/${esc(j.txId)}">This transaction as JSON</a></p>`;
  return renderShell({ title: `Transaction ${short(String(j.txId))} · Explorer`, current: 'explorer', body, info: v.info });
}

/** An account page. */
export function renderAccount(v: {
  info: ShellInfo;
  address: string;
  balance: string;
  nonce: number;
  pendingNonce: number;
  label?: string;
  tokens: readonly { symbol: string; balance: string }[];
  lp: readonly { pool: string; shares: string; share: number; amountA: string; amountB: string; a: string; b: string }[];
  stakes: readonly { id: string; amount: string; tierName: string; unlockHeight: number; accruedReward: string; unlocked: boolean }[];
  activity: readonly { height: number; time: number; tx: string; text: string }[];
  /** Pending transactions sent from the account. */
  pending?: readonly { id: string; type: string }[];
  /** Link to the next (older) page of activity; `paged`: this is not the newest page. */
  older?: string;
  paged?: boolean;
}): string {
  const body = `<h1>Account</h1>
<p><span class="mono full" id="address">${esc(v.address)}</span>${copyButton(v.address, 'address')}</p>
${v.label ? `<p><span class="badge">${esc(v.label)}</span></p>` : ''}
${facts([
  ['Balance', `<strong>${esc(v.balance)}</strong> NATIVE`],
  ['Nonce', `${v.nonce}${v.pendingNonce !== v.nonce ? ` (${v.pendingNonce - v.nonce} pending)` : ''}`],
])}
<h2>Tokens</h2>
${v.tokens.length ? `<div class="tablewrap"><table><thead><tr><th scope="col">Token</th><th scope="col" class="num">Balance</th></tr></thead><tbody>${v.tokens.map((t) => `<tr><td>${assetLink(t.symbol)}</td><td class="num">${esc(t.balance)}</td></tr>`).join('')}</tbody></table></div>` : '<p class="muted">No tokens.</p>'}
<h2>Liquidity positions</h2>
${v.lp.length ? `<div class="tablewrap"><table><thead><tr><th scope="col">Pool</th><th scope="col" class="num">Share</th><th scope="col" class="num">Underlying</th></tr></thead><tbody>${v.lp.map((p) => `<tr><td>${poolLink(p.pool)}</td><td class="num">${esc((p.share * 100).toFixed(4))} %</td><td class="num">${esc(p.amountA)} ${assetLink(p.a)} + ${esc(p.amountB)} ${assetLink(p.b)}</td></tr>`).join('')}</tbody></table></div>` : '<p class="muted">No liquidity positions.</p>'}
<h2>Stakes</h2>
${v.stakes.length ? `<div class="tablewrap"><table><thead><tr><th scope="col">Stake</th><th scope="col">Tier</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Reward so far</th><th scope="col">Unlocks</th></tr></thead><tbody>${v.stakes.map((s) => `<tr><td>${txLink(s.id)}</td><td>${esc(s.tierName)}</td><td class="num">${esc(s.amount)} NATIVE</td><td class="num">${esc(s.accruedReward)} NATIVE</td><td>${s.unlocked ? 'unlocked' : `block ${s.unlockHeight}`}</td></tr>`).join('')}</tbody></table></div>` : '<p class="muted">No open stakes.</p>'}
${v.pending?.length ? `<h2>Pending</h2>${table('<th scope="col">Tx</th><th scope="col">Type</th>', v.pending.map((p) => `<tr><td>${txLink(p.id)}</td><td>${esc(p.type)}</td></tr>`).join(''), ' id="pending"')}` : ''}
<h2>Activity</h2>
${v.activity.length ? table('<th scope="col" class="num">Block</th><th scope="col">Time (UTC)</th><th scope="col">What</th><th scope="col">Tx</th>', v.activity.map((a) => `<tr><td class="num"><a href="/explorer/block/${a.height}">${a.height}</a></td><td>${when(a.time)}</td><td>${a.text}</td><td>${a.tx ? txLink(a.tx) : `<a href="/explorer/block/${a.height}">block</a>`}</td></tr>`).join(''), ' id="activity"') : `<p class="muted">${v.paged ? 'No older activity.' : 'No activity recorded.'}</p>`}
${pager({ newest: v.paged ? `/explorer/address/${encodeURIComponent(v.address)}` : undefined, older: v.older }, 'Older activity')}
<p><a href="/api/v1/account/${esc(v.address)}">This account as JSON</a></p>`;
  return renderShell({ title: `Account ${short(v.address)} · Explorer`, current: 'explorer', body, info: v.info });
}

/** A token page. */
export function renderToken(v: {
  info: ShellInfo;
  token: { symbol: string; name: string; issuer: string; decimals: number; kind: string; maxSupply: string; supply: string; minted: string; burned: string; frozen: boolean; hidden: boolean; reserve: string; holders: number; createdHeight: number };
  holders: readonly { address: string; balance: string }[];
  pools: readonly { id: string; price: number; tvlNative: number }[];
}): string {
  const t = v.token;
  const d = t.decimals;
  const body = `<h1>${esc(t.name)} <span class="muted">(${esc(t.symbol)})</span></h1>
${searchForm()}
${facts([
  ['Kind', t.kind === 'usd-stable' ? 'USD stablecoin' : 'token'],
  ['Issuer', fullAddr(t.issuer)],
  ['Decimals', String(d)],
  ['Supply', `${esc(units(t.supply, d))} ${esc(t.symbol)} of at most ${esc(units(t.maxSupply, d))}`],
  ['Minted / burned', `${esc(units(t.minted, d))} / ${esc(units(t.burned, d))}`],
  ['NATIVE reserve', `${esc(units(t.reserve, 8))} NATIVE`],
  ['Holders', String(t.holders)],
  ['Flags', `${t.frozen ? '<span class="badge bad">frozen</span> ' : ''}${t.hidden ? '<span class="badge warn">hidden</span>' : ''}${!t.frozen && !t.hidden ? 'none' : ''}`],
  ['Issued at', `<a href="/explorer/block/${t.createdHeight}">block ${t.createdHeight}</a>`],
])}
<h2>Pools</h2>
${v.pools.length ? `<div class="tablewrap"><table><thead><tr><th scope="col">Pool</th><th scope="col" class="num">Price (b per a)</th><th scope="col" class="num">TVL (NATIVE)</th></tr></thead><tbody>${v.pools.map((p) => `<tr><td>${poolLink(p.id)}</td><td class="num">${esc(priceText(p.price))}</td><td class="num">${esc(priceText(p.tvlNative))}</td></tr>`).join('')}</tbody></table></div>` : '<p class="muted">In no pool.</p>'}
<h2>Largest holders</h2>
${v.holders.length ? `<div class="tablewrap"><table><thead><tr><th scope="col">Address</th><th scope="col" class="num">Balance</th></tr></thead><tbody>${v.holders.map((h) => `<tr><td>${addrLink(h.address)}</td><td class="num">${esc(units(h.balance, d))}</td></tr>`).join('')}</tbody></table></div>` : '<p class="muted">No holders.</p>'}
<p><a href="/api/v1/token/${esc(t.symbol)}">This token as JSON</a></p>`;
  return renderShell({ title: `${t.symbol} · Explorer`, current: 'explorer', body, info: v.info });
}

/** Hourly candle (price = reserve b / reserve a in smallest units; `scale` turns it into b per a). */
export interface CandleView {
  readonly t: number;
  readonly o: number;
  readonly h: number;
  readonly l: number;
  readonly c: number;
  readonly n: number;
}

/** An SVG candle chart of prices (already scaled), with a text alternative. */
export function candleChartSvg(candles: readonly CandleView[], label: string): string {
  if (candles.length === 0) return '<p class="muted">No swaps in this period: no price history to chart.</p>';
  const W = 720;
  const H = 240;
  const pad = { l: 64, r: 12, t: 12, b: 28 };
  let lo = Infinity;
  let hi = -Infinity;
  for (const c of candles) {
    lo = Math.min(lo, c.l);
    hi = Math.max(hi, c.h);
  }
  if (hi === lo) {
    hi *= 1.01;
    lo *= 0.99;
  }
  const t0 = candles[0].t;
  const t1 = candles[candles.length - 1].t + 3600;
  const x = (t: number) => pad.l + ((t - t0) / (t1 - t0)) * (W - pad.l - pad.r);
  const y = (p: number) => pad.t + (1 - (p - lo) / (hi - lo)) * (H - pad.t - pad.b);
  const w = Math.max(1, ((W - pad.l - pad.r) / ((t1 - t0) / 3600)) * 0.7);
  const bars = candles
    .map((c) => {
      const cx = x(c.t + 1800);
      const up = c.c >= c.o;
      const color = up ? '#1e7b34' : '#b3261e';
      return `<line x1="${cx.toFixed(1)}" x2="${cx.toFixed(1)}" y1="${y(c.h).toFixed(1)}" y2="${y(c.l).toFixed(1)}" stroke="${color}"/><rect x="${(cx - w / 2).toFixed(1)}" width="${w.toFixed(1)}" y="${y(Math.max(c.o, c.c)).toFixed(1)}" height="${Math.max(1, Math.abs(y(c.o) - y(c.c))).toFixed(1)}" fill="${color}"><title>${esc(utc(c.t))} UTC: open ${esc(priceText(c.o))}, high ${esc(priceText(c.h))}, low ${esc(priceText(c.l))}, close ${esc(priceText(c.c))}, ${c.n} swaps</title></rect>`;
    })
    .join('');
  const ticks = [lo, (lo + hi) / 2, hi].map((p) => `<text x="${pad.l - 6}" y="${(y(p) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#333">${esc(priceText(p))}</text><line x1="${pad.l}" x2="${W - pad.r}" y1="${y(p).toFixed(1)}" y2="${y(p).toFixed(1)}" stroke="#e0e0e0"/>`).join('');
  const times = `<text x="${pad.l}" y="${H - 8}" font-size="11" fill="#333">${esc(utc(t0).slice(5, 16))}</text><text x="${W - pad.r}" y="${H - 8}" font-size="11" fill="#333" text-anchor="end">${esc(utc(t1).slice(5, 16))}</text>`;
  const last = candles[candles.length - 1];
  const desc = `${candles.length} hourly candles from ${utc(t0)} to ${utc(t1)} UTC; low ${priceText(lo)}, high ${priceText(hi)}, last close ${priceText(last.c)}.`;
  return `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title chart-desc"><title id="chart-title">${esc(label)}</title><desc id="chart-desc">${esc(desc)}</desc>${ticks}${bars}${times}</svg>
<p class="muted">${esc(desc)}</p>`;
}

/** A pool page. */
export function renderPool(v: {
  info: ShellInfo;
  pool: { id: string; a: string; b: string; reserveA: string; reserveB: string; lpSupply: string; price: number; tvlNative: number; tvlUsd: number; createdHeight: number };
  da: number;
  db: number;
  volume: { a: string; b: string; swaps: number };
  candles: readonly CandleView[];
  swaps: readonly { height: number; time: number; tx: string; sender: string; text: string }[];
}): string {
  const p = v.pool;
  const body = `<h1>Pool ${esc(p.a)}/${esc(p.b)}</h1>
${searchForm()}
${facts([
  ['Reserves', `${esc(units(p.reserveA, v.da))} ${assetLink(p.a)} and ${esc(units(p.reserveB, v.db))} ${assetLink(p.b)}`],
  ['Price', `1 ${esc(p.a)} = <strong>${esc(priceText(p.price))}</strong> ${esc(p.b)} <span class="muted">(1 ${esc(p.b)} = ${esc(priceText(p.price > 0 ? 1 / p.price : 0))} ${esc(p.a)})</span>`],
  ['Liquidity', `${esc(priceText(p.tvlNative))} NATIVE ($${esc(priceText(p.tvlUsd))})`],
  ['Volume, 24 h', `${esc(units(v.volume.a, v.da))} ${esc(p.a)} and ${esc(units(v.volume.b, v.db))} ${esc(p.b)} in ${v.volume.swaps} swap${v.volume.swaps === 1 ? '' : 's'}`],
  ['LP shares', esc(p.lpSupply)],
  ['Created at', `<a href="/explorer/block/${p.createdHeight}">block ${p.createdHeight}</a>`],
])}
<h2>Price, last 48 hours</h2>
<div class="chartbox">${candleChartSvg(v.candles, `Price of ${p.a} in ${p.b}, hourly candles`)}</div>
<h2>Latest swaps</h2>
${v.swaps.length ? table('<th scope="col" class="num">Block</th><th scope="col">Time (UTC)</th><th scope="col">Swap</th><th scope="col">Tx</th>', v.swaps.map((s) => `<tr><td class="num"><a href="/explorer/block/${s.height}">${s.height}</a></td><td>${when(s.time)}</td><td>${s.text}</td><td>${txLink(s.tx)}</td></tr>`).join('')) : '<p class="muted">No swaps yet.</p>'}
<p><a href="/explorer/swaps?pool=${esc(encodeURIComponent(p.id))}">All swaps of this pool</a></p>
<p><a href="/api/v1/pool/${esc(p.id)}">This pool as JSON</a></p>`;
  return renderShell({ title: `Pool ${p.a}/${p.b} · Explorer`, current: 'explorer', body, info: v.info });
}
