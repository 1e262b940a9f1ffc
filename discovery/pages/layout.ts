/**
 * The shell of the server-rendered pages (/marketplace, /agents, /join): escaping, one small
 * inline stylesheet, the navigation. No JavaScript: every page works as plain HTML, forms use
 * GET, and code blocks are selectable with one click (`user-select: all`) for copying.
 */
import { PATHS, shortNetwork, type CatalogSnapshot } from '../catalog.js';

/** HTML-escapes text for element content and double-quoted attributes. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** Display name of a category id: `market-data` → `Market data`. */
export function categoryLabel(category: string): string {
  const s = category.replace(/-/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Thousands separators for integers. */
export function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export const CSS = `
:root{color-scheme:light;--fg:#1a1a1a;--muted:#555;--line:#d8d8d8;--bg:#fff;--soft:#f5f6f7;--accent:#0b57d0}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,summary:focus-visible,pre:focus-visible{outline:3px solid #f9a825;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:1}
header,main,footer{max-width:72rem;margin:0 auto;padding:0 1rem}
header{padding-top:1rem;border-bottom:1px solid var(--line)}
nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:0;padding:0}
nav a[aria-current=page]{font-weight:700;color:var(--fg)}
h1{font-size:1.6rem;margin:.6rem 0 .2rem}
h2{font-size:1.25rem;margin:1.6rem 0 .5rem;border-bottom:2px solid var(--line);padding-bottom:.2rem}
h3{font-size:1.05rem;margin:0}
.lead{color:var(--muted);margin:.2rem 0 .8rem}
.stats{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;margin:.5rem 0 1rem;padding:0;list-style:none}
form.search{display:flex;flex-wrap:wrap;align-items:flex-end;gap:.75rem;margin:1rem 0;padding:.75rem;background:var(--soft);border:1px solid var(--line);border-radius:6px}
form.search div{display:flex;flex-direction:column}
form.search a{padding:.35rem 0}
label{font-weight:600;font-size:.9rem}
input,select,button{font:inherit;padding:.35rem .5rem;border:1px solid #8a8a8a;border-radius:4px;background:#fff;color:var(--fg)}
input[type=search]{min-width:16rem}
button{background:var(--accent);color:#fff;border-color:var(--accent);cursor:pointer}
.error{background:#fdecea;border:1px solid #c62828;color:#8e1b1b;padding:.5rem .75rem;border-radius:4px}
ul.services{list-style:none;padding:0;margin:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(21rem,1fr));gap:.75rem}
article.service{border:1px solid var(--line);border-radius:6px;padding:.75rem;height:100%}
.sid{font-size:.85rem;color:var(--muted);margin:.1rem 0 .4rem}
dl.facts{display:grid;grid-template-columns:auto 1fr;gap:.1rem .75rem;margin:.5rem 0;font-size:.92rem}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
.health{display:inline-block;padding:0 .4rem;border-radius:3px;font-weight:600;font-size:.85rem}
.health-active{background:#e6f4ea;color:#1e5b2e}.health-degraded{background:#fff4e5;color:#7a4100}
.health-down{background:#fdecea;color:#8e1b1b}.health-unknown{background:#eceff1;color:#37474f}
pre{background:var(--soft);border:1px solid var(--line);border-radius:4px;padding:.4rem .5rem;overflow-x:auto;margin:.3rem 0;font-size:.82rem}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre code{user-select:all;-webkit-user-select:all;white-space:pre-wrap;overflow-wrap:anywhere}
details summary{cursor:pointer;color:var(--accent)}
.muted{color:var(--muted)}
table{border-collapse:collapse;width:100%;margin:.5rem 0}caption{text-align:left}th[scope=row]{white-space:nowrap;width:1%}th,td{text-align:left;border-bottom:1px solid var(--line);padding:.3rem .5rem;vertical-align:top}
footer{margin-top:2rem;padding-bottom:2rem;border-top:1px solid var(--line);font-size:.9rem;color:var(--muted)}
`;

/** Which navigation entry is the current page. */
export type PageId = 'marketplace' | 'agents' | 'join';

/** A whole page: head, skip link, navigation, the body, the footer with the machine-readable surfaces. */
export function renderPage(o: { title: string; description: string; current: PageId; snap: CatalogSnapshot; body: string }): string {
  const b = o.snap.baseUrl;
  const nav: [PageId, string, string][] = [
    ['marketplace', PATHS.marketplace, 'Marketplace'],
    ['agents', PATHS.agents, 'Agents'],
    ['join', PATHS.join, 'List a service'],
  ];
  const navItems = nav.map(([id, href, label]) => `<li><a href="${esc(href)}"${id === o.current ? ' aria-current="page"' : ''}>${esc(label)}</a></li>`).join('');
  const machine: [string, string][] = [
    [PATHS.bazaar, 'catalog (JSON)'],
    [PATHS.wellKnown, 'protocol descriptor'],
    [PATHS.discovery, 'x402 discovery'],
    [PATHS.servicesJson, 'services.json'],
    [PATHS.openApi, 'OpenAPI'],
    [PATHS.llmsTxt, 'llms.txt'],
    [PATHS.agentCardV1, 'agent card'],
    [`${PATHS.mcp}?net=${shortNetwork(o.snap.network)}`, 'MCP endpoint (POST)'],
  ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(o.title)}</title>
<meta name="description" content="${esc(o.description)}">
<link rel="alternate" type="application/json" href="${esc(PATHS.bazaar)}" title="Catalog (JSON)">
<style>${CSS}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<nav aria-label="Site"><ul>${navItems}</ul></nav>
</header>
<main id="main">
${o.body}
</main>
<footer>
<p>For agents, free and readable cross-origin: ${machine.map(([href, label]) => `<a href="${esc(href)}">${esc(label)}</a>`).join(' · ')}.</p>
<p>Node ${esc(o.snap.nodeVersion)} on ${esc(o.snap.network)} (chain id ${esc(o.snap.chainId)}) at <code>${esc(b)}</code>.</p>
</footer>
</body>
</html>
`;
}
