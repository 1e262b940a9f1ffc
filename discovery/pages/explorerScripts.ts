/**
 * The explorer's one script, served as `/explorer/assets/live.js` (plain ES2017, no build step):
 * it follows `/explorer/events` (server-sent events from the chain's connect and disconnect) and
 * keeps the home page's latest-blocks and latest-transactions tables current. A block that left
 * the best chain stays in the list, struck through and labelled, and the status line announces
 * the reorganisation to screen readers. Rows are built with textContent (no HTML from the wire).
 */
export const EXPLORER_LIVE_JS = `(function () {
  'use strict';
  var MAX_ROWS = 20;
  var status = document.getElementById('live-status');
  var blocks = document.querySelector('#blocks tbody');
  var txs = document.querySelector('#txs tbody');
  var height = document.getElementById('fig-height');
  if (!blocks || !txs || !window.EventSource) return;
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
    cell(tr, utc(b.time));
    cell(tr, String(b.txCount), null, 'num');
    cell(tr, b.size.toLocaleString('en-US'), null, 'num');
    blocks.insertBefore(tr, blocks.firstChild);
    setTimeout(function () { tr.className = ''; }, 3000);
    trim(blocks);
    if (height) height.textContent = String(b.height);
    for (var i = b.txs.length - 1; i >= 0; i--) {
      var t = b.txs[i];
      var row = document.createElement('tr');
      row.setAttribute('data-block', b.hash);
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
