/** `/join`: how a provider lists a service in this node's catalog, step by step. */
import { PATHS, shortNetwork, type CatalogSnapshot } from '../catalog.js';
import { esc, renderPage } from './layout.js';

/** `GET /join`. */
export function renderJoinPage(snap: CatalogSnapshot): string {
  const b = esc(snap.baseUrl);
  const body = `<h1>List a service</h1>
<p class="lead">A service is one paid operation: a fixed price in NATIVE, an input described by a JSON Schema, and a function that returns JSON. Once a node sells it, it appears by itself in every discovery surface.</p>

<h2 id="how">How a service gets listed</h2>
<ol>
<li><strong>Write the definition.</strong> One file <code>services/&lt;name&gt;.ts</code> exporting <code>defineService({id, name, category, priceBase, description, tags, requestFormat, requestRequired, inputSchema, run, health})</code>. The id starts with <code>native-</code>; the category is one of the catalog's categories; <code>priceBase</code> is in NATIVE base units (1 NATIVE = 100,000,000).</li>
<li><strong>Describe the input.</strong> <code>inputSchema</code> is a JSON Schema of the <code>request</code> string (or of the JSON document it carries, with <code>inputIsJson</code>). The node validates every call with it before quoting, and the same schema is published in the <a href="${esc(PATHS.openApi)}">OpenAPI document</a>, <a href="${esc(PATHS.servicesJson)}">services.json</a> and the MCP tool list.</li>
<li><strong>Implement <code>run</code> and <code>health</code>.</strong> <code>run(ctx, input)</code> returns plain JSON or throws a <code>ServiceError</code> (the caller is then refunded on-chain automatically). <code>health(ctx)</code> is a cheap probe; the node runs it in the background and publishes <code>healthStatus</code>, <code>lastVerifiedAt</code> and <code>latencyMs</code>. A service without <code>run</code> is listed as <code>down</code> and never quoted.</li>
<li><strong>Register it</strong> in <code>services/index.ts</code> (listed by import) and run the tests: each service needs a valid-input test, a 400 for bad input before any payment, a 402 unpaid, and a refund on failure.</li>
<li><strong>Run a node that sells it.</strong> <code>native-node start --network mainnet --payee-wallet payee.json</code> receives the native payments; add <code>--usdc-pay-to 0x…</code> to accept USDC on Base too. Expose it with <code>--http-host 0.0.0.0</code> behind TLS.</li>
</ol>

<h2 id="where">Where it then appears</h2>
<ul>
<li><a href="${esc(PATHS.bazaar)}">The catalog</a> and <a href="${esc(PATHS.marketplace)}">this marketplace</a>, with price, health, latency and the calls settled through the ledger.</li>
<li><a href="${esc(PATHS.wellKnown)}">The protocol descriptor</a>, <a href="${esc(PATHS.discovery)}">the x402 discovery list</a>, <a href="${esc(PATHS.agentCardV1)}">the agent card</a> (one skill per service) and <a href="${esc(PATHS.llmsTxt)}">llms.txt</a>.</li>
<li>The MCP endpoint <code>${b}${esc(PATHS.mcp)}?net=${esc(shortNetwork(snap.network))}</code>, as a tool named by the service id.</li>
</ul>

<h2 id="try">Try the flow first</h2>
<p>On a development chain (<code>npm start</code>), the example of every active service on the <a href="${esc(PATHS.marketplace)}">marketplace</a> works as shown: <code>native-node call native-world-clock Europe/Berlin</code> quotes, pays from the funded dev wallet, waits for the block and prints the result with its receipt.</p>

<h2 id="not-yet">Not available yet</h2>
<p>Third-party provider agents registering services on-chain (with moderation approval) are not part of this node yet: today every listed service is operated by the node itself (<a href="${esc(PATHS.agents)}">agents</a>). External x402 directories do not learn about a node automatically; list its public address there yourself.</p>`;
  return renderPage({ title: 'List a service · native-node x402 services', description: 'How a provider lists a paid service for agents.', current: 'join', snap, body });
}
