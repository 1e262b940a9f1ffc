/**
 * `/dashboard`: the operator's view of the node (issue 32). The page is server-rendered with the
 * current figures (readable without JavaScript); its script draws charts of the last hour or day
 * with uPlot (served by the node from node_modules) from `/dashboard/data.json`, refreshed every
 * 5 s. Each chart has a heading and a text summary beside it for screen readers.
 */
import { esc } from './layout.js';
import { hashrateText, renderShell, type ShellInfo } from './explorer.js';
import { priceText } from './explorerTx.js';

/** A chart of the dashboard: its id, title and series (column name, label, colour). */
export interface DashboardChart {
  readonly id: string;
  readonly title: string;
  readonly series: readonly (readonly [string, string, string])[];
}

/** The dashboard's charts, in page order (the script reads the same list from the page). */
export const DASHBOARD_CHARTS: readonly DashboardChart[] = [
  { id: 'hashrate', title: 'Hashrate (H/s)', series: [['hashrate', 'network, from chain work', '#0b57d0'], ['poolHashrate', 'Stratum miners, from shares', '#b3261e']] },
  { id: 'difficulty', title: 'Difficulty', series: [['difficulty', 'difficulty', '#0b57d0']] },
  { id: 'interval', title: 'Block interval (s, mean of the last 10)', series: [['blockInterval', 'seconds between blocks', '#0b57d0']] },
  { id: 'mempool', title: 'Mempool (transactions)', series: [['mempool', 'transactions', '#0b57d0']] },
  { id: 'peers', title: 'Peers and sync', series: [['peers', 'peers', '#0b57d0'], ['syncing', 'syncing (1 = yes)', '#b3261e']] },
  { id: 'stratum', title: 'Stratum workers and shares', series: [['workers', 'workers', '#0b57d0'], ['sharesPerMin', 'accepted shares / min', '#1e7b34'], ['rejectedPerMin', 'rejected shares / min', '#b3261e']] },
  { id: 'calls', title: 'Paid calls per minute, by rail', series: [['nativePerMin', 'native rail', '#0b57d0'], ['usdcPerMin', 'USDC rail', '#7a4100']] },
  { id: 'refunds', title: 'Refunds', series: [['refundsPending', 'pending (signed, not mined)', '#7a4100'], ['refundedPerMin', 'refunded calls / min', '#b3261e']] },
  { id: 'settle', title: 'Settle latency (ms, mean per period)', series: [['settleMs', 'time to answer a paid call', '#0b57d0']] },
];

/** The figures shown as cards. */
export interface DashboardNow {
  readonly height: number;
  readonly difficulty: number;
  readonly hashrate: number;
  readonly blockInterval: number;
  readonly mempool: number;
  readonly peers: number;
  readonly syncing: boolean;
  readonly workers: number;
  readonly refundsPending: number;
  readonly refundsSent: number;
  readonly settled: number;
}

/** The whole page. */
export function renderDashboard(info: ShellInfo, n: DashboardNow): string {
  const card = (k: string, v: string, id: string) => `<li><span class="k">${esc(k)}</span><span class="v" id="now-${id}">${esc(v)}</span></li>`;
  const charts = DASHBOARD_CHARTS.map(
    (c) => `<section class="chartbox" aria-labelledby="h-${c.id}"><h3 id="h-${c.id}">${esc(c.title)}</h3>
<div class="uchart" id="chart-${c.id}" data-series="${esc(JSON.stringify(c.series))}" role="img" aria-label="${esc(c.title)} chart" aria-describedby="sum-${c.id}"></div>
<p class="muted" id="sum-${c.id}">Charts need JavaScript; the figures above are current.</p></section>`,
  ).join('\n');
  const body = `<h1>Operator's dashboard</h1>
<p class="lead">This node's figures, sampled every 5 seconds (the last hour) and kept per minute for a day in its data directory. Prometheus metrics: <code>--metrics-port</code>; a Grafana dashboard is in <code>docs/grafana-dashboard.json</code>.</p>
<ul class="cards" aria-label="Current figures">
${card('Height', String(n.height), 'height')}
${card('Difficulty', priceText(n.difficulty), 'difficulty')}
${card('Hashrate', hashrateText(n.hashrate), 'hashrate')}
${card('Block interval', `${priceText(n.blockInterval)} s`, 'interval')}
${card('Mempool', `${n.mempool} tx`, 'mempool')}
${card('Peers', `${n.peers}${n.syncing ? ' (syncing)' : ''}`, 'peers')}
${card('Stratum workers', String(n.workers), 'workers')}
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
<table id="services"><caption class="muted" id="services-caption">In the selected range.</caption><thead><tr><th scope="col">Service</th><th scope="col">Rail</th><th scope="col" class="num">Calls</th></tr></thead><tbody><tr><td colspan="3" class="muted">Needs JavaScript.</td></tr></tbody></table>`;
  const head = `<link rel="stylesheet" href="/dashboard/assets/uPlot.min.css">
<style>.range{display:flex;gap:.5rem;align-items:center;margin:.5rem 0}.range button[aria-pressed=false]{background:#fff;color:var(--accent)}.uchart{min-height:200px}.cols{grid-template-columns:repeat(auto-fit,minmax(26rem,1fr))}</style>
`;
  return renderShell({ title: `Dashboard · ${info.network}`, current: 'dashboard', body, info, head, scripts: ['/dashboard/assets/uPlot.iife.min.js', '/dashboard/assets/dashboard.js'] });
}

/** The dashboard's script (served as `/dashboard/assets/dashboard.js`, plain ES2017). */
export const DASHBOARD_JS = `(function () {
  'use strict';
  if (!window.uPlot) return;
  var range = 'hour';
  var charts = {};
  var status = document.getElementById('dash-status');
  function fmt(v) { if (v === null || v === undefined) return '\\u2013'; var a = Math.abs(v); if (a > 0 && a < 0.01) return v.toExponential(2); return a >= 1e6 ? (v / 1e6).toFixed(2) + ' M' : a >= 1e3 ? (v / 1e3).toFixed(2) + ' k' : String(Math.round(v * 100) / 100); }
  function draw(data) {
    var boxes = document.querySelectorAll('.uchart');
    for (var i = 0; i < boxes.length; i++) {
      var el = boxes[i];
      var series = JSON.parse(el.getAttribute('data-series'));
      var cols = [data.columns.t];
      var summary = [];
      for (var j = 0; j < series.length; j++) {
        var col = data.columns[series[j][0]] || [];
        cols.push(col);
        var last = col.length ? col[col.length - 1] : null;
        var max = null;
        for (var k = 0; k < col.length; k++) if (col[k] !== null && (max === null || col[k] > max)) max = col[k];
        summary.push(series[j][1] + ': now ' + fmt(last) + ', highest ' + fmt(max));
      }
      el.setAttribute('data-points', String(data.columns.t.length));
      var sum = document.getElementById('sum-' + el.id.slice(6));
      if (sum) sum.textContent = summary.join('; ') + '.';
      var width = Math.max(280, el.clientWidth || 400);
      if (charts[el.id]) { charts[el.id].setData(cols); continue; }
      var opts = {
        width: width, height: 200,
        series: [{}].concat(series.map(function (s) { return { label: s[1], stroke: s[2], width: 2, spanGaps: false }; })),
        axes: [{ stroke: '#333' }, { stroke: '#333', size: 60, values: function (u, vals) { return vals.map(fmt); } }],
        scales: { x: { time: true } },
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
    fetch('/dashboard/data.json?range=' + range, { headers: { accept: 'application/json' } })
      .then(function (r) { return r.json(); })
      .then(function (d) { draw(d); if (status) status.textContent = 'Updated ' + new Date().toLocaleTimeString() + ' (' + d.columns.t.length + ' points).'; })
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
  load();
  setInterval(load, 5000);
})();
`;
