/**
 * `/dashboard`: the operator's view of the node. The page is server-rendered with the
 * current figures (readable without JavaScript); its script draws charts of the last hour or day
 * with uPlot (served by the node from node_modules) from `/dashboard/data.json`, refreshed every
 * 5 s. Each chart has a heading and a text summary beside it for screen readers.
 */
import { esc } from './layout.js';
import { hashrateText, renderShell, type ShellInfo } from './explorer.js';
import { priceText } from './explorerTx.js';

/** Unit of a chart's values: how its axis, legend and summary print them. */
export type ChartUnit = 'hashrate' | 'count' | 'seconds' | 'ms' | 'perMin' | 'difficulty';

/** A chart of the dashboard: its id, title, unit, series (column name, label, colour) and what an empty range means. */
export interface DashboardChart {
  readonly id: string;
  readonly title: string;
  readonly unit: ChartUnit;
  readonly series: readonly (readonly [string, string, string])[];
  /** Shown instead of the summary while every value of the range is zero or missing. */
  readonly empty: string;
}

/** The dashboard's charts, in page order (the script reads the same list from the page). */
export const DASHBOARD_CHARTS: readonly DashboardChart[] = [
  { id: 'hashrate', title: 'Hashrate', unit: 'hashrate', series: [['hashrate', 'network, from chain work', '#0b57d0'], ['poolHashrate', 'Stratum miners, from shares', '#b3261e']], empty: 'No hashrate in this range.' },
  { id: 'difficulty', title: 'Difficulty', unit: 'difficulty', series: [['difficulty', 'difficulty', '#0b57d0']], empty: 'No blocks in this range.' },
  { id: 'interval', title: 'Block interval (seconds, mean of the last 10 blocks)', unit: 'seconds', series: [['blockInterval', 'seconds between blocks', '#0b57d0']], empty: 'Fewer than two blocks: no interval yet.' },
  { id: 'mempool', title: 'Mempool (transactions)', unit: 'count', series: [['mempool', 'transactions', '#0b57d0']], empty: 'The mempool stayed empty in this range.' },
  { id: 'peers', title: 'Peers and sync', unit: 'count', series: [['peers', 'peers', '#0b57d0'], ['syncing', 'syncing (1 = yes)', '#b3261e']], empty: 'No peers in this range.' },
  { id: 'stratum', title: 'Stratum workers and shares', unit: 'count', series: [['workers', 'workers', '#0b57d0'], ['sharesPerMin', 'accepted shares per minute', '#1e7b34'], ['rejectedPerMin', 'rejected shares per minute', '#b3261e']], empty: 'No Stratum workers in this range.' },
  { id: 'calls', title: 'Paid calls per minute, by rail', unit: 'perMin', series: [['nativePerMin', 'native rail', '#0b57d0'], ['usdcPerMin', 'USDC rail', '#7a4100']], empty: 'No paid calls in this range.' },
  { id: 'refunds', title: 'Refunds', unit: 'count', series: [['refundsPending', 'pending (signed, not mined)', '#7a4100'], ['refundedPerMin', 'refunded calls per minute', '#b3261e']], empty: 'No refunds in this range.' },
  { id: 'settle', title: 'Settle latency (time to answer a paid call)', unit: 'ms', series: [['settleMs', 'mean time to answer', '#0b57d0']], empty: 'No paid calls in this range: no latency to show.' },
];

/** What the dashboard shows now (`GET /dashboard/now.json`), refreshed by its script. */
export interface DashboardNow {
  /** Unix seconds on the node's clock when this was read. */
  readonly now: number;
  readonly height: number;
  /** Header time of the tip, Unix seconds. */
  readonly tipTime: number;
  /** Target seconds between blocks. */
  readonly targetSeconds: number;
  /** A banner is raised once no block came for this many target intervals. */
  readonly stallFactor: number;
  readonly difficulty: number;
  readonly hashrate: number;
  readonly blockInterval: number;
  readonly mempool: number;
  readonly peers: number;
  readonly syncing: boolean;
  /** p2p on (undefined: --no-p2p): the bootstrap peers configured, and whether the chain is a devnet (a standalone devnet node has no peers by design). */
  readonly p2p?: { readonly bootstrap: number; readonly devnet?: boolean };
  /** The built-in miner (undefined: off). */
  readonly miner?: { readonly running: boolean; readonly hashrate: number };
  /** Stratum (undefined: off). */
  readonly stratum?: { readonly listening: boolean; readonly url: string | null; readonly connections: number; readonly workers: number; readonly rejectedPerMin: number; readonly acceptedPerMin: number };
  /** Services this node sells: how many, and the ids of those down. */
  readonly services: { readonly total: number; readonly down: readonly string[] };
  readonly refundsPending: number;
  readonly refundsStuck: number;
  readonly refundsSent: number;
  readonly settled: number;
}

/** Something an operator must act on. */
export interface DashboardAlert {
  readonly level: 'error' | 'warn';
  readonly code: 'no_blocks' | 'not_mining' | 'stratum_down' | 'stratum_rejects' | 'no_peers' | 'services_down' | 'refunds_pending' | 'refunds_stuck' | 'node_unreachable';
  readonly message: string;
}

/** Seconds in words: `45 s`, `3 min 20 s`, `2 h 5 min`. */
export function durationText(sec: number): string {
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
}

/**
 * What the operator must act on, most urgent first (the page's banner; its script applies the same
 * rules in the browser, every second, so the tip's age is current between reads).
 */
export function dashboardAlerts(n: DashboardNow): DashboardAlert[] {
  const out: DashboardAlert[] = [];
  const age = n.now - n.tipTime;
  if (!n.syncing && age > n.stallFactor * n.targetSeconds) {
    out.push({ level: 'error', code: 'no_blocks', message: `No block for ${durationText(age)} (${Math.floor(age / n.targetSeconds)}× the target interval of ${durationText(n.targetSeconds)}); the tip is block ${n.height}.` });
  }
  const minerOn = n.miner?.running === true;
  const stratumWorkers = n.stratum?.workers ?? 0;
  if (!minerOn && stratumWorkers === 0 && n.peers === 0) {
    out.push({ level: 'warn', code: 'not_mining', message: `Nothing mines here: the built-in miner is ${n.miner ? 'stopped' : 'off'}, Stratum ${n.stratum ? 'has no workers' : 'is off'}, and no peer sends blocks.` });
  }
  if (n.stratum && !n.stratum.listening) out.push({ level: 'error', code: 'stratum_down', message: 'Stratum is on but not listening: miners cannot connect (see the log for the port).' });
  if (n.stratum && n.stratum.rejectedPerMin > 0 && n.stratum.rejectedPerMin >= n.stratum.acceptedPerMin) {
    out.push({ level: 'warn', code: 'stratum_rejects', message: `Stratum rejects as many shares as it accepts (${n.stratum.rejectedPerMin} rejected, ${n.stratum.acceptedPerMin} accepted per minute).` });
  }
  if (n.p2p && n.peers === 0 && (n.p2p.bootstrap > 0 || n.p2p.devnet === false || n.syncing)) out.push({ level: 'warn', code: 'no_peers', message: 'No peers: this node neither receives nor relays blocks and transactions.' });
  if (n.refundsStuck > 0) out.push({ level: 'error', code: 'refunds_stuck', message: `${n.refundsStuck} refund${n.refundsStuck === 1 ? '' : 's'} stuck for the payee's balance: fund the payee; until then services it could not refund are not sold.` });
  else if (n.refundsPending > 0) out.push({ level: 'warn', code: 'refunds_pending', message: `${n.refundsPending} refund${n.refundsPending === 1 ? '' : 's'} signed and not mined yet.` });
  if (n.services.down.length > 0) {
    const ids = n.services.down.slice(0, 5).join(', ');
    out.push({ level: 'warn', code: 'services_down', message: `${n.services.down.length} of ${n.services.total} services down (not sold): ${ids}${n.services.down.length > 5 ? ' and more' : ''}.` });
  }
  return out;
}

/** The banner of the alerts (empty list: a hidden, empty banner the script fills). */
export function alertBanner(alerts: readonly DashboardAlert[]): string {
  const items = alerts.map((a) => `<li data-code="${esc(a.code)}" data-level="${a.level}">${esc(a.message)}</li>`).join('');
  const cls = alerts.some((a) => a.level === 'error') ? 'banner' : 'banner warnonly';
  return `<div id="alerts" class="${cls}" role="alert"${alerts.length ? '' : ' hidden'}><strong>Needs attention</strong><ul>${items}</ul></div>`;
}

/** The whole page. */
export function renderDashboard(info: ShellInfo, n: DashboardNow): string {
  const card = (k: string, v: string, id: string) => `<li><span class="k">${esc(k)}</span><span class="v" id="now-${id}">${esc(v)}</span></li>`;
  const charts = DASHBOARD_CHARTS.map(
    (c) => `<section class="chartbox" aria-labelledby="h-${c.id}"><h3 id="h-${c.id}">${esc(c.title)}</h3>
<div class="uchart" id="chart-${c.id}" data-unit="${c.unit}" data-empty="${esc(c.empty)}" data-series="${esc(JSON.stringify(c.series))}" role="img" aria-label="${esc(c.title)} chart" aria-describedby="sum-${c.id}"></div>
<p class="muted" id="sum-${c.id}">Charts need JavaScript; the figures above are current.</p></section>`,
  ).join('\n');
  const age = n.now - n.tipTime;
  const stratum = n.stratum ? (n.stratum.listening ? `${n.stratum.workers} worker${n.stratum.workers === 1 ? '' : 's'}` : 'not listening') : 'off';
  const miner = n.miner ? (n.miner.running ? hashrateText(n.miner.hashrate) : 'stopped') : 'off';
  const services = `${n.services.total - n.services.down.length} up / ${n.services.down.length} down`;
  const body = `<h1>Operator's dashboard</h1>
${alertBanner(dashboardAlerts(n))}
<p class="lead">This node's figures, read every 3 seconds; the charts are sampled every 5 seconds (the last hour) and kept per minute for a day in its data directory, across restarts. Prometheus metrics: <code>--metrics-port</code>; a Grafana dashboard is in <code>docs/grafana-dashboard.json</code>.</p>
<div id="dash-data" hidden data-now="${esc(JSON.stringify(n))}"></div>
<ul class="cards" aria-label="Current figures">
${card('Height', String(n.height), 'height')}
${card('Last block', `${durationText(age)} ago`, 'tipage')}
${card('Difficulty', priceText(n.difficulty), 'difficulty')}
${card('Hashrate', hashrateText(n.hashrate), 'hashrate')}
${card('Block interval', `${priceText(Math.round(n.blockInterval * 10) / 10)} s (target ${n.targetSeconds} s)`, 'interval')}
${card('Mempool', `${n.mempool} tx`, 'mempool')}
${card('Peers', `${n.p2p ? n.peers : 'p2p off'}${n.syncing ? ' (syncing)' : ''}`, 'peers')}
${card('Built-in miner', miner, 'miner')}
${card('Stratum', stratum, 'stratum')}
${card('Services', services, 'services')}
${card('Paid calls settled', String(n.settled), 'settled')}
${card('Refunds pending / sent', `${n.refundsPending} / ${n.refundsSent}`, 'refunds')}
</ul>
<div role="group" aria-label="Time range" class="range">
<button type="button" id="range-hour" aria-pressed="true">Last hour</button>
<button type="button" id="range-day" aria-pressed="false">Last day</button>
<span id="dash-status" role="status" aria-live="polite" class="muted"></span>
</div>
<div class="cols">
${charts}
</div>
<h2>Paid calls by service and rail</h2>
<div class="tablewrap"><table id="services"><caption class="muted" id="services-caption">In the selected range.</caption><thead><tr><th scope="col">Service</th><th scope="col">Rail</th><th scope="col" class="num">Calls</th></tr></thead><tbody><tr><td colspan="3" class="muted">Needs JavaScript.</td></tr></tbody></table></div>`;
  const head = `<link rel="stylesheet" href="/dashboard/assets/uPlot.min.css">
<style>.range{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}.range button[aria-pressed=false]{background:var(--bg);color:var(--accent)}.uchart{min-height:200px;max-width:100%;overflow:hidden}.cols{grid-template-columns:repeat(auto-fit,minmax(min(26rem,100%),1fr))}.chartbox{min-width:0}.uplot .u-legend{font-size:.8rem}.stale .v{color:var(--muted)}@media (prefers-color-scheme: dark){.uplot .u-legend,.uplot .u-axis{color:#ddd}}</style>
`;
  return renderShell({ title: `Dashboard · ${info.network}`, current: 'dashboard', body, info, head, scripts: ['/dashboard/assets/uPlot.iife.min.js', '/dashboard/assets/dashboard.js'] });
}

/**
 * The dashboard's script (served as `/dashboard/assets/dashboard.js`, plain ES2017). It reads
 * `/dashboard/now.json` every 3 s (the tiles and the server's alerts) and, every half second, redraws
 * the banner: the server's alerts, "no block" from the tip's age on the node's clock, and "the
 * node does not answer" once a read fails (the tiles then say they are stale). The charts come
 * from `/dashboard/data.json` every 5 s, each axis in its unit, with an empty-state line.
 */
export const DASHBOARD_JS = `(function () {
  'use strict';
  var range = 'hour';
  var charts = {};
  var status = document.getElementById('dash-status');
  var holder = document.getElementById('dash-data');
  var now = holder ? JSON.parse(holder.getAttribute('data-now')) : null;
  var alerts = null;
  var offset = now ? now.now - Date.now() / 1000 : 0;
  var failedSince = 0;
  function num(v) { var a = Math.abs(v); return a >= 1e9 ? (v / 1e9).toPrecision(3) + 'G' : a >= 1e6 ? (v / 1e6).toPrecision(3) + 'M' : a >= 1e4 ? (v / 1e3).toPrecision(3) + 'k' : a > 0 && a < 0.01 ? v.toExponential(1) : String(Math.round(v * 100) / 100); }
  function hashrate(h) { var u = ['H/s', 'kH/s', 'MH/s', 'GH/s', 'TH/s', 'PH/s'], i = 0; while (Math.abs(h) >= 1000 && i < u.length - 1) { h /= 1000; i++; } return (Math.round(h * 10) / 10) + ' ' + u[i]; }
  function dur(sec) { var s = Math.max(0, Math.round(sec)); if (s < 60) return s + ' s'; if (s < 3600) return Math.floor(s / 60) + ' min' + (s % 60 ? ' ' + (s % 60) + ' s' : ''); return Math.floor(s / 3600) + ' h' + (Math.floor((s % 3600) / 60) ? ' ' + Math.floor((s % 3600) / 60) + ' min' : ''); }
  function fmt(v, unit) {
    if (v === null || v === undefined) return '\\u2013';
    if (unit === 'hashrate') return hashrate(v);
    if (unit === 'ms') return v >= 1000 ? (Math.round(v / 100) / 10) + ' s' : Math.round(v) + ' ms';
    if (unit === 'seconds') return (Math.round(v * 10) / 10) + ' s';
    if (unit === 'perMin') return (Math.round(v * 100) / 100) + '/min';
    return num(v);
  }
  function axis(v, unit) {
    if (unit === 'hashrate') { var u = ['', 'k', 'M', 'G', 'T', 'P'], i = 0; while (Math.abs(v) >= 1000 && i < u.length - 1) { v /= 1000; i++; } return (Math.round(v * 10) / 10) + u[i]; }
    if (unit === 'ms') return v >= 1000 ? (Math.round(v / 100) / 10) + 's' : Math.round(v) + 'ms';
    return num(v);
  }
  function setTile(id, text) { var el = document.getElementById('now-' + id); if (el) el.textContent = text; }
  function tiles(n) {
    setTile('height', String(n.height));
    setTile('difficulty', num(n.difficulty));
    setTile('hashrate', hashrate(n.hashrate));
    setTile('interval', (Math.round(n.blockInterval * 10) / 10) + ' s (target ' + n.targetSeconds + ' s)');
    setTile('mempool', n.mempool + ' tx');
    setTile('peers', (n.p2p ? String(n.peers) : 'p2p off') + (n.syncing ? ' (syncing)' : ''));
    setTile('miner', n.miner ? (n.miner.running ? hashrate(n.miner.hashrate) : 'stopped') : 'off');
    setTile('stratum', n.stratum ? (n.stratum.listening ? n.stratum.workers + ' worker' + (n.stratum.workers === 1 ? '' : 's') : 'not listening') : 'off');
    setTile('services', (n.services.total - n.services.down.length) + ' up / ' + n.services.down.length + ' down');
    setTile('settled', String(n.settled));
    setTile('refunds', n.refundsPending + ' / ' + n.refundsSent);
  }
  function banner() {
    var box = document.getElementById('alerts');
    if (!box || !now || (alerts === null && !failedSince)) return;
    var t = Date.now() / 1000 + offset;
    var list = [];
    if (failedSince) list.push({ level: 'error', code: 'node_unreachable', message: 'The node does not answer since ' + new Date(failedSince).toLocaleTimeString() + ': the figures below are from then.' });
    var age = t - now.tipTime;
    if (!now.syncing && age > now.stallFactor * now.targetSeconds) list.push({ level: 'error', code: 'no_blocks', message: 'No block for ' + dur(age) + ' (' + Math.floor(age / now.targetSeconds) + '\\u00d7 the target interval of ' + dur(now.targetSeconds) + '); the tip is block ' + now.height + '.' });
    (alerts || []).forEach(function (a) { if (a.code !== 'no_blocks') list.push(a); });
    setTile('tipage', dur(age) + ' ago');
    var key = JSON.stringify(list);
    if (box.getAttribute('data-key') === key) return;
    box.setAttribute('data-key', key);
    var ul = box.querySelector('ul');
    while (ul.firstChild) ul.removeChild(ul.firstChild);
    list.forEach(function (a) { var li = document.createElement('li'); li.setAttribute('data-code', a.code); li.setAttribute('data-level', a.level); li.textContent = a.message; ul.appendChild(li); });
    box.hidden = list.length === 0;
    box.className = list.some(function (a) { return a.level === 'error'; }) ? 'banner' : 'banner warnonly';
    var cards = document.querySelector('.cards');
    if (cards) cards.classList.toggle('stale', !!failedSince);
  }
  function readNow() {
    fetch('/dashboard/now.json', { headers: { accept: 'application/json' }, cache: 'no-store' })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then(function (d) { now = d.now; alerts = d.alerts; offset = now.now - Date.now() / 1000; failedSince = 0; tiles(now); banner(); })
      .catch(function () { if (!failedSince) failedSince = Date.now(); banner(); });
  }
  function draw(data) {
    if (!window.uPlot) return;
    var boxes = document.querySelectorAll('.uchart');
    for (var i = 0; i < boxes.length; i++) {
      var el = boxes[i];
      var series = JSON.parse(el.getAttribute('data-series'));
      var unit = el.getAttribute('data-unit');
      var cols = [data.columns.t];
      var summary = [];
      var any = false;
      for (var j = 0; j < series.length; j++) {
        var col = data.columns[series[j][0]] || [];
        cols.push(col);
        var last = null;
        for (var q = col.length - 1; q >= 0; q--) if (col[q] !== null) { last = col[q]; break; }
        var max = null;
        for (var k = 0; k < col.length; k++) if (col[k] !== null && (max === null || col[k] > max)) max = col[k];
        if (max !== null && max !== 0) any = true;
        summary.push(series[j][1] + ': now ' + fmt(last, unit) + ', highest ' + fmt(max, unit));
      }
      el.setAttribute('data-points', String(data.columns.t.length));
      el.setAttribute('data-empty-shown', String(!any));
      var sum = document.getElementById('sum-' + el.id.slice(6));
      if (sum) sum.textContent = any ? summary.join('; ') + '.' : el.getAttribute('data-empty');
      var width = Math.max(240, Math.min(el.clientWidth || 400, (document.documentElement.clientWidth || 400) - 32));
      if (charts[el.id]) { charts[el.id].setData(cols); if (Math.abs(charts[el.id].width - width) > 8) charts[el.id].setSize({ width: width, height: 200 }); continue; }
      var opts = {
        width: width, height: 200,
        series: [{}].concat(series.map(function (s) { return { label: s[1], stroke: s[2], width: 2, spanGaps: unit === 'ms', points: { show: unit === 'ms' ? true : undefined, size: 6 }, value: (function (u2) { return function (u, v) { return fmt(v, u2); }; })(unit) }; })),
        axes: [{ stroke: '#888' }, { stroke: '#888', size: 56, values: (function (u2) { return function (u, vals) { return vals.map(function (v) { return axis(v, u2); }); }; })(unit) }],
        scales: { x: { time: true }, y: { range: function (u, lo, hi) { return [Math.min(0, lo), hi > lo ? hi * 1.1 : (hi || 0) + 1]; } } },
        legend: { live: true }
      };
      charts[el.id] = new window.uPlot(opts, cols, el);
    }
    var tbody = document.querySelector('#services tbody');
    while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
    if (!data.services.length) {
      var tr0 = tbody.insertRow(); var td0 = tr0.insertCell(); td0.colSpan = 3; td0.className = 'muted'; td0.textContent = 'No paid calls in this range.';
    }
    data.services.forEach(function (s) {
      var tr = tbody.insertRow();
      tr.insertCell().textContent = s.service;
      tr.insertCell().textContent = s.rail;
      var c = tr.insertCell(); c.className = 'num'; c.textContent = String(s.calls);
    });
    document.getElementById('services-caption').textContent = 'In the last ' + range + '.';
  }
  function load() {
    fetch('/dashboard/data.json?range=' + range, { headers: { accept: 'application/json' }, cache: 'no-store' })
      .then(function (r) { return r.json(); })
      .then(function (d) { draw(d); if (status) status.textContent = 'Charts updated ' + new Date().toLocaleTimeString() + ' (' + d.columns.t.length + ' points).'; })
      .catch(function () { if (status) status.textContent = 'Could not load the history; retrying.'; });
  }
  function pick(r) {
    range = r;
    document.getElementById('range-hour').setAttribute('aria-pressed', String(r === 'hour'));
    document.getElementById('range-day').setAttribute('aria-pressed', String(r === 'day'));
    for (var id in charts) { charts[id].destroy(); delete charts[id]; }
    load();
  }
  document.getElementById('range-hour').addEventListener('click', function () { pick('hour'); });
  document.getElementById('range-day').addEventListener('click', function () { pick('day'); });
  readNow();
  setInterval(readNow, 3000);
  setInterval(banner, 500);
  load();
  setInterval(load, 5000);
})();
`;
