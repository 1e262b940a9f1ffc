/**
 * The explorer's one script, served as `/explorer/assets/live.js` (plain ES2017, no build step).
 * On every page it keeps relative ages current (`.age[data-t]`) and shows the copy buttons
 * (`button.copy[data-copy]`). On the home page it follows `/explorer/events` (server-sent events
 * from the chain's connect and disconnect) and keeps the figures (the mempool's also read every
 * 5 s from /api/v1/status) and the latest-blocks and
 * latest-transactions tables current; a pending row leaves the list when its transaction is mined
 * (it is listed once, with its block). A block that left the best chain stays in the list, struck
 * through and labelled, and the status line announces the reorganisation to screen readers. Rows
 * are built with textContent (no HTML from the wire).
 */
export const EXPLORER_LIVE_JS = `(function () {
  'use strict';
  function ago(t) {
    var d = Math.max(0, Math.floor(Date.now() / 1000) - t);
    return d < 60 ? d + ' s ago' : d < 3600 ? Math.floor(d / 60) + ' min ago' : d < 86400 ? Math.floor(d / 3600) + ' h ago' : Math.floor(d / 86400) + ' d ago';
  }
  function ages() {
    var els = document.querySelectorAll('.age[data-t]');
    for (var i = 0; i < els.length; i++) els[i].textContent = ago(Number(els[i].getAttribute('data-t')));
  }
  ages();
  setInterval(ages, 5000);
  var copies = document.querySelectorAll('button.copy[data-copy]');
  for (var c = 0; c < copies.length; c++) {
    copies[c].hidden = !(navigator.clipboard && navigator.clipboard.writeText);
    copies[c].addEventListener('click', function (ev) {
      var b = ev.currentTarget;
      navigator.clipboard.writeText(b.getAttribute('data-copy')).then(function () { b.textContent = 'Copied'; setTimeout(function () { b.textContent = 'Copy'; }, 1500); }, function () { b.textContent = 'Copy failed'; });
    });
  }
  var MAX_ROWS = 20;
  var status = document.getElementById('live-status');
  var blocks = document.querySelector('#blocks tbody');
  var txs = document.querySelector('#txs tbody');
  var height = document.getElementById('fig-height');
  var figAge = document.getElementById('fig-age');
  if (!blocks || !txs || !window.EventSource) return;
  function fmtNum(v) { return v >= 1e6 ? (v / 1e6).toPrecision(4) + ' M' : v >= 1e3 ? Math.round(v).toLocaleString('en-US') : String(Math.round(v * 1e4) / 1e4); }
  function hashrate(h) { var u = ['H/s', 'kH/s', 'MH/s', 'GH/s', 'TH/s', 'PH/s'], i = 0; while (h >= 1000 && i < u.length - 1) { h /= 1000; i++; } return (Math.round(h * 100) / 100) + ' ' + u[i]; }
  function setText(id, text) { var el = document.getElementById(id); if (el) el.textContent = text; }
  function say(text) { if (status) status.textContent = text; }
  function short(s) { return s.length > 24 ? s.slice(0, 12) + '\\u2026' + s.slice(-6) : s; }
  function cell(tr, text, href, cls) {
    var td = document.createElement('td');
    if (cls) td.className = cls;
    if (href) { var a = document.createElement('a'); a.href = href; a.textContent = text; if (cls === 'mono') a.className = 'mono'; td.appendChild(a); }
    else td.textContent = text;
    tr.appendChild(td);
    return td;
  }
  function trim(body) { while (body.rows.length > MAX_ROWS) body.deleteRow(body.rows.length - 1); }
  function utc(sec) { return new Date(sec * 1000).toISOString().replace('T', ' ').slice(0, 19); }
  // The newest block the page shows: the stream first sends the ones mined since it was rendered.
  var top = blocks.rows[0] && blocks.rows[0].cells[0] ? Number(blocks.rows[0].cells[0].textContent) : NaN;
  // The mempool changes between blocks: its figure is read every 5 s.
  setInterval(function () {
    fetch('/api/v1/status', { cache: 'no-store' }).then(function (r) { return r.json(); }).then(function (st) {
      if (st && st.mempool && typeof st.mempool.count === 'number') setText('fig-mempool', st.mempool.count + ' tx');
    }, function () {});
  }, 5000);
  var es = new EventSource('/explorer/events' + (top >= 0 ? '?since=' + top : ''));
  es.addEventListener('open', function () { say('Live: new blocks appear as they are mined.'); });
  es.addEventListener('error', function () { say('Live updates interrupted; reconnecting\\u2026'); });
  es.addEventListener('block', function (ev) {
    var b = JSON.parse(ev.data);
    var old = blocks.querySelector('tr[data-hash="' + b.hash + '"]');
    if (old) old.remove();
    var tr = document.createElement('tr');
    tr.setAttribute('data-hash', b.hash);
    tr.className = 'fresh';
    cell(tr, String(b.height), '/explorer/block/' + b.height, 'num');
    cell(tr, short(b.hash), '/explorer/block/' + b.hash, 'mono');
    var tcell = cell(tr, utc(b.time) + ' ');
    var age = document.createElement('span'); age.className = 'age'; age.setAttribute('data-t', String(b.time)); age.textContent = ago(b.time); tcell.appendChild(age);
    cell(tr, String(b.txCount), null, 'num');
    cell(tr, b.size.toLocaleString('en-US'), null, 'num');
    blocks.insertBefore(tr, blocks.firstChild);
    setTimeout(function () { tr.className = ''; }, 3000);
    trim(blocks);
    if (height) height.textContent = String(b.height);
    if (typeof b.difficulty === 'number') setText('fig-difficulty', fmtNum(b.difficulty));
    if (typeof b.hashrate === 'number') setText('fig-hashrate', hashrate(b.hashrate));
    if (typeof b.mempool === 'number') setText('fig-mempool', b.mempool + ' tx');
    if (figAge) { figAge.textContent = ''; var s = document.createElement('span'); s.className = 'age'; s.setAttribute('data-t', String(b.time)); s.textContent = ago(b.time); figAge.appendChild(s); }
    // A transaction is listed once: mined, its pending row goes.
    var ids = b.ids || [];
    for (var p = 0; p < ids.length; p++) {
      var stale = txs.querySelectorAll('tr[data-tx="' + ids[p] + '"]');
      for (var q = 0; q < stale.length; q++) stale[q].remove();
    }
    for (var i = b.txs.length - 1; i >= 0; i--) {
      var t = b.txs[i];
      var row = document.createElement('tr');
      row.setAttribute('data-block', b.hash);
      row.setAttribute('data-tx', t.id);
      cell(row, short(t.id), '/explorer/tx/' + t.id, 'mono');
      cell(row, t.type);
      cell(row, short(t.from), '/explorer/address/' + t.from, 'mono');
      cell(row, String(b.height), '/explorer/block/' + b.height, 'num');
      txs.insertBefore(row, txs.firstChild);
    }
    trim(txs);
    say('Live: block ' + b.height + ' mined with ' + b.txCount + ' transaction' + (b.txCount === 1 ? '' : 's') + '.');
  });
  es.addEventListener('disconnect', function (ev) {
    var b = JSON.parse(ev.data);
    var tr = blocks.querySelector('tr[data-hash="' + b.hash + '"]');
    if (tr) {
      tr.className = 'orphaned';
      tr.setAttribute('title', 'left the best chain in a reorganisation');
      var note = tr.cells[1];
      if (note) note.appendChild(document.createTextNode(' (orphaned)'));
    }
    var rows = txs.querySelectorAll('tr[data-block="' + b.hash + '"]');
    for (var i = 0; i < rows.length; i++) rows[i].className = 'orphaned';
    say('Reorganisation: block ' + b.height + ' (' + short(b.hash) + ') left the best chain; its transactions return to the mempool.');
  });
})();
`;
