/**
 * `/marketplace`: the catalog for people, server-rendered. Services grouped by category, each
 * with its price in NATIVE and USD, health, latency, proven calls, input format and copyable
 * example calls (the one-line `native-node call`, and the two curl requests of the x402 flow).
 * The search box (`q`) and the category filter are a GET form over the catalog's own filters.
 */
import { formatAmount } from '../../consensus/amount.js';
import type { ServiceDefinition } from '../../services/types.js';
import { SERVICE_CATEGORIES, filterServices, dollarText, type CatalogFilters, type CatalogService, type CatalogSnapshot } from '../catalog.js';
import { exampleCalls } from '../examples.js';
import { categoryLabel, esc, int, renderPage } from './layout.js';

/** What the page shows. */
export interface MarketplaceView {
  readonly snap: CatalogSnapshot;
  /** Catalog entries of every service (catalog order). */
  readonly resources: readonly CatalogService[];
  /** The raw form values (echoed in the form). */
  readonly q: string;
  readonly category: string;
  /** Parsed filters; undefined when the form values are invalid (`error` says why). */
  readonly filters?: CatalogFilters;
  readonly error?: string;
  /** The CLI's default node URL: examples omit `--node` there. */
  readonly defaultNodeUrl?: string;
}

function serviceCard(s: CatalogService, def: ServiceDefinition, v: MarketplaceView): string {
  const ex = exampleCalls(def, v.snap.baseUrl, { payTo: v.snap.payTo, sampleTxId: v.snap.sampleTxId, defaultNodeUrl: v.defaultNodeUrl });
  const idBase = `svc-${s.serviceId}`;
  const latency = s.lastVerifiedAt ? `${int(s.latencyMs)} ms` : 'not measured yet';
  const checked = s.lastVerifiedAt ? `<span class="muted"> · checked ${esc(new Date(s.lastVerifiedAt).toISOString().replace('T', ' ').slice(0, 19))} UTC</span>` : '';
  // Why it is down or degraded: the code (stable, for scripts and tests) and the sentence (for people).
  const reason = s.healthReason ? ` <span class="health-reason" data-code="${esc(s.healthReason.code)}">${esc(s.healthReason.message)} <span class="muted">(<code>${esc(s.healthReason.code)}</code>)</span></span>` : '';
  const calls = `${int(s.metadata.provenCalls)} native${s.metadata.provenCallsUsdc ? `, ${int(s.metadata.provenCallsUsdc)} USDC` : ''}`;
  const volume = s.metadata.provenCalls || s.metadata.provenCallsUsdc ? ` <span class="muted">(${esc(formatAmount(BigInt(s.metadata.provenVolumeBase)))} NATIVE${s.metadata.provenCallsUsdc ? ` + ${esc(dollarText(BigInt(s.metadata.provenVolumeUsdcAtomic)))}` : ''})</span>` : '';
  return `<li><article class="service" id="${esc(idBase)}" aria-labelledby="${esc(idBase)}-name">
<h3 id="${esc(idBase)}-name">${esc(s.name)}</h3>
<p class="sid"><code>${esc(s.serviceId)}</code></p>
<p>${esc(s.description)}</p>
<dl class="facts">
<dt>Price</dt><dd><strong>${esc(formatAmount(BigInt(s.priceBase)))} NATIVE</strong> <span class="muted">(${esc(s.price)})</span></dd>
<dt>Health</dt><dd><span class="health health-${esc(s.healthStatus)}">${esc(s.healthStatus)}</span>${reason}${checked}</dd>
<dt>Latency</dt><dd>${esc(latency)}</dd>
<dt>Proven calls</dt><dd>${esc(calls)}${volume}</dd>
<dt>Input</dt><dd>${s.metadata.requestFormat ? esc(s.metadata.requestFormat) : '<span class="muted">none</span>'}${s.metadata.requestRequired ? '' : s.metadata.requestFormat ? ' <span class="muted">(optional)</span>' : ''}</dd>
</dl>
${s.healthStatus === 'down' ? '<p class="muted">Not available on this node right now: a call answers 503 before any payment.</p>\n' : ''}<p>Call it (pays from your wallet, waits for the block, prints the result and the receipt):</p>
<pre class="cli" tabindex="0"><code>${esc(ex.cli)}</code></pre>
<details>
<summary>With curl</summary>
<p>1. Ask for the quote (HTTP 402 with the exact price, <code>payTo</code> and the seller id <code>extra.sellerId</code>):</p>
<pre tabindex="0"><code>${esc(ex.curlQuote)}</code></pre>
<p>2. Pay the <code>native-x402</code> option: an <code>agent_invoke</code> for exactly <code>maxAmountRequired</code> to <code>payTo</code> whose <code>requestHash</code> commits to the seller id, the service, the request and a secret salt of yours (<code>extra.commitment</code>, see the agents' guide in the node's docs), broadcast to <code>${esc(v.snap.baseUrl)}/api/v1/tx</code>. 3. Settle with its id:</p>
<pre tabindex="0"><code>${esc(ex.curlPaid)}</code></pre>
</details>
</article></li>`;
}

/** The whole page. */
export function renderMarketplacePage(v: MarketplaceView): string {
  const { snap } = v;
  const defs = snap.services;
  const counts = new Map<string, number>();
  for (const d of defs) counts.set(d.category, (counts.get(d.category) ?? 0) + 1);
  const health = snap.health.summary(snap.now);
  const nativeUsd = dollarText(snap.nativeUsd.microUsd);

  const options = [`<option value=""${v.category === '' ? ' selected' : ''}>All categories (${defs.length})</option>`]
    .concat(SERVICE_CATEGORIES.filter((c) => counts.has(c)).map((c) => `<option value="${esc(c)}"${v.category === c ? ' selected' : ''}>${esc(categoryLabel(c))} (${counts.get(c)})</option>`))
    .join('');

  let results = '';
  let status: string;
  if (!v.filters) {
    status = `<p class="error" role="alert">${esc(v.error ?? 'invalid filter')}</p>`;
  } else {
    // Every match on one page: the catalog is small, and paging a page for people is not worth a click.
    const { page } = filterServices(v.resources, defs, { ...v.filters, limit: defs.length || 1, offset: 0 });
    const byId = new Map(defs.map((d) => [d.id, d]));
    const what = [v.filters.q ? `matching “${esc(v.q.trim())}”` : '', v.filters.category ? `in ${esc(categoryLabel(v.filters.category))}` : ''].filter(Boolean).join(' ');
    status = `<p id="result-count" role="status">${page.length} ${page.length === 1 ? 'service' : 'services'}${what ? ` ${what}` : ''}.${page.length === 0 ? ' Try fewer or other words, or <a href="/marketplace">show all</a>.' : ''}</p>`;
    for (const cat of SERVICE_CATEGORIES) {
      // Services that can be bought now first, then the catalog order.
      const rank = (s: CatalogService) => (s.healthStatus === 'down' ? 1 : 0);
      const inCat = page.filter((s) => s.category === cat).sort((a, b) => rank(a) - rank(b));
      if (inCat.length === 0) continue;
      results += `<section class="category" id="cat-${esc(cat)}" aria-labelledby="cat-${esc(cat)}-h">
<h2 id="cat-${esc(cat)}-h">${esc(categoryLabel(cat))} <span class="muted">(${inCat.length})</span></h2>
<ul class="services">
${inCat.map((s) => serviceCard(s, byId.get(s.serviceId) as ServiceDefinition, v)).join('\n')}
</ul>
</section>
`;
    }
  }

  const devnet = snap.network !== 'native-mainnet' ? `<p class="muted">This is a ${esc(snap.network)} node: <code>npx native-node call</code> (in the node's folder, after <code>npm ci</code>) pays from the funded dev wallet that <code>npm start</code> writes, so the example of every active service below works as shown.</p>` : '';
  const body = `<h1>Marketplace</h1>
<p class="lead">${defs.length} paid services for software agents, sold per call with x402. No account, no API key: the payment is the authentication. An unpaid call answers 402 with the price; pay it on-chain${snap.usdc ? ' or with USDC on Base' : ''} and call again.</p>
<ul class="stats" aria-label="Catalog summary">
<li>Network <strong>${esc(snap.network)}</strong> (chain id ${esc(snap.chainId)})</li>
<li>1 NATIVE = <strong>${esc(nativeUsd)}</strong> <span class="muted">(${esc(snap.nativeUsd.source)})</span></li>
<li>Health: <strong>${health.active}</strong> active, ${health.degraded} degraded, ${health.down} down, ${health.unknown} unknown</li>
</ul>
${devnet}
<form class="search" role="search" method="get" action="/marketplace" aria-label="Search the services">
<div><label for="q">Search</label><input type="search" id="q" name="q" value="${esc(v.q)}" maxlength="200" placeholder="e.g. clock, gas, invoice" autocomplete="off"></div>
<div><label for="category">Category</label><select id="category" name="category">${options}</select></div>
<button type="submit">Search</button>
<a href="/marketplace">Clear</a>
</form>
${status}
${results}`;
  return renderPage({ title: 'Marketplace · native-node x402 services', description: `${defs.length} paid services for software agents, with prices, health and example calls.`, current: 'marketplace', snap, body });
}
