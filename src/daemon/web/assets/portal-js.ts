import { formatDay, formatUsd, formatWhen } from '../../../shared/format.js';
import { PORTAL_KEYS_JS } from './portal-keys-js.js';

/**
 * The dashboard's one script (plain ES2017, no build step, no dependencies). It reads
 * the JSON API with the session cookie and fills the server-rendered page; every
 * string from the API goes in through textContent, never as HTML. Kept free of
 * backticks so it can live in this template literal. Money and dates are formatted by
 * the CLI's own functions (src/shared/format.ts), embedded as source.
 */
export const PORTAL_JS = String.raw`(function () {
'use strict';
var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || '';
var SVG = 'http://www.w3.org/2000/svg';
function $(id) { return document.getElementById(id); }
function el(tag, attrs, kids) {
  var n = document.createElement(tag);
  for (var k in attrs || {}) {
    if (k === 'text') n.textContent = attrs[k]; else if (attrs[k] !== undefined && attrs[k] !== null) n.setAttribute(k, attrs[k]);
  }
  (kids || []).forEach(function (c) { n.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
  return n;
}
function clear(n) { while (n.firstChild) n.removeChild(n.firstChild); return n; }
function say(msg) { var s = $('status'); s.textContent = ''; setTimeout(function () { s.textContent = msg; }, 30); }

function api(path, opts) {
  opts = opts || {};
  var headers = { accept: 'application/json' };
  if (opts.method && opts.method !== 'GET') headers['x-csrf-token'] = csrf;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  return fetch('/api' + path, {
    method: opts.method || 'GET', credentials: 'same-origin', headers: headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body)
  }).then(function (r) {
    return r.json().catch(function () { return null; }).then(function (body) {
      if (r.status === 401) { location.href = '/login?next=' + encodeURIComponent(location.pathname); throw new Error('signed out'); }
      if (!r.ok) throw new Error((body && body.error) || ('request failed: HTTP ' + r.status));
      return body;
    });
  });
}
function fail(where) { return function (e) { say(where + ': ' + e.message); }; }

${String(formatUsd)}
${String(formatWhen)}
${String(formatDay)}
var usd = formatUsd;
function money(v) { return el('data', { value: String(v), text: usd(v) }); }
function count(v) { return el('data', { value: String(v), text: v.toLocaleString('en-US') }); }
function day(iso) { return iso ? formatWhen(iso) : '—'; }
function td(c, cls) { return el('td', cls ? { 'class': cls } : {}, [c]); }
function rows(tbody, list, make, empty, cols) {
  clear(tbody);
  if (!list.length) tbody.appendChild(el('tr', {}, [el('td', { colspan: String(cols), 'class': 'note', text: empty })]));
  list.forEach(function (x) { tbody.appendChild(make(x)); });
}
function bar(v, max) {
  var s = el('span', { 'class': 'hbar', 'aria-hidden': 'true' });
  s.style.width = (max > 0 ? Math.max(0.5, (v / max) * 100) : 0.5) + '%';
  return s;
}
function range() { return $('range').value; }

function loadSpend() {
  var q = '?range=' + encodeURIComponent(range());
  api('/portal/spend/summary' + q).then(function (s) {
    var t = s.totals;
    var bought = s.purchases ? s.purchases.amount : 0;
    [['total-calls', count(t.calls)], ['total-failures', count(t.failures)], ['total-raw', money(t.rawCost)],
      ['total-customer', money(t.customerCost)], ['total-purchases', money(bought)],
      ['total-charged', money(Math.round((t.customerCost + bought) * 1e9) / 1e9)]].forEach(function (p) { clear($(p[0])).appendChild(p[1]); });
    $('spend-since').textContent = formatWhen(s.range.since);
    var maxP = Math.max.apply(null, [0].concat(s.byProvider.map(function (r) { return r.customerCost; })));
    rows($('provider-rows'), s.byProvider, function (r) {
      return el('tr', { 'data-provider': r.providerId }, [td(r.providerId), td(count(r.calls), 'num'), td(count(r.failures), 'num hide-sm'),
        td(money(r.rawCost), 'num hide-sm'), td(money(r.customerCost), 'num'), td(bar(r.customerCost, maxP), 'barcell')]);
    }, 'No calls in this range.', 6);
    var maxJ = Math.max.apply(null, [0].concat(s.byProject.map(function (r) { return r.customerCost; })));
    rows($('project-rows'), s.byProject, function (r) {
      return el('tr', { 'data-project': r.projectId === null ? '' : r.projectId }, [td(r.projectName), td(count(r.calls), 'num'),
        td(count(r.failures), 'num hide-sm'), td(money(r.rawCost), 'num hide-sm'), td(money(r.customerCost), 'num'), td(bar(r.customerCost, maxJ), 'barcell')]);
    }, 'No calls in this range.', 6);
    drawKeySpend(s);
  }).catch(fail('Spend'));
  api('/portal/spend/daily' + q).then(drawDaily).catch(fail('Daily spend'));
  if (openProject) showProject(openProject);
}

function svg(tag, attrs, text) {
  var n = document.createElementNS(SVG, tag);
  for (var k in attrs) n.setAttribute(k, attrs[k]);
  if (text !== undefined) n.textContent = text;
  return n;
}
function drawDaily(d) {
  var days = d.days.map(function (x) { return Object.assign({}, x, { customerCost: Math.round((x.customerCost + (x.purchaseCost || 0)) * 1e9) / 1e9 }); });
  var W = 800, H = 170, top = 4, base = 168, chart = clear($('daily-chart'));
  var max = Math.max.apply(null, [0].concat(days.map(function (x) { return x.customerCost; })));
  var total = days.reduce(function (a, x) { return a + x.customerCost; }, 0);
  chart.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
  chart.setAttribute('aria-label', 'Customer cost per day over ' + days.length + ' days, ' + usd(total) + ' in all, highest day ' + usd(max));
  chart.appendChild(svg('line', { x1: 0, x2: W, y1: base, y2: base }));
  var bw = W / Math.max(days.length, 1);
  days.forEach(function (x, i) {
    var h = max > 0 ? (x.customerCost / max) * (base - top) : 0;
    var r = svg('rect', { 'class': 'b', x: (i * bw + bw * 0.1).toFixed(2), y: (base - h).toFixed(2), width: Math.max(bw * 0.8, 0.6).toFixed(2), height: Math.max(h, 0).toFixed(2) });
    r.appendChild(svg('title', {}, x.date + ': ' + usd(x.customerCost) + ', ' + x.calls + ' calls, ' + x.failures + ' failed'));
    chart.appendChild(r);
  });
  $('daily-first').textContent = days.length ? days[0].date : '';
  $('daily-max').textContent = 'highest day ' + usd(max);
  $('daily-last').textContent = days.length ? days[days.length - 1].date : '';
  rows($('daily-rows'), days.slice().reverse(), function (x) {
    return el('tr', {}, [td(x.date), td(count(x.calls), 'num'), td(count(x.failures), 'num'), td(money(x.customerCost), 'num')]);
  }, 'No days.', 4);
}

var txCursor = null;
function loadWallet() {
  api('/wallet').then(function (w) {
    clear($('wallet-balance')).appendChild(w.unlimited ? el('span', { text: 'Unlimited' }) : money(w.balance));
    clear($('wallet-allowance')).appendChild(money(w.monthlyAllowanceRemaining));
    $('wallet-allowance-total').textContent = 'of ' + usd(w.monthlyAllowance) + ' a month';
    $('wallet-allowance-of').textContent = usd(w.monthlyAllowanceUsed) + ' of ' + usd(w.monthlyAllowance) + ' · resets ' + formatDay(w.monthlyAllowanceResetsAt);
    var m = $('wallet-meter');
    m.max = w.monthlyAllowance || 1; m.value = w.monthlyAllowanceUsed;
    // what a new call is admitted against: balance + allowance left − the holds of calls in flight
    var held = w.held || 0, calls = w.heldCalls || 0;
    var avail = Math.max(0, Math.round((w.balance + w.monthlyAllowanceRemaining - held) * 1e9) / 1e9);
    $('wallet-available').textContent = w.unlimited ? '' : usd(avail) + ' available' + (held > 0 || calls > 0 ? ', ' + usd(held) + ' held by ' + calls + (calls === 1 ? ' call' : ' calls') + ' in flight' : '');
  }).catch(fail('Wallet'));
  txCursor = null; txGroups = {}; clear($('tx-rows')); loadTx();
}
// API-call debits are grouped: one line per UTC day and model (its calls summed), newest first
var txGroups = {};
function paidFrom(amount, a) { return amount >= 0 ? '' : a <= 0 ? 'balance' : a + amount >= -1e-9 ? 'allowance' : 'allowance ' + usd(a) + ' + balance'; }
function txRow(attrs, when, what, amount, from, after) {
  return el('tr', attrs, [td(when), td(what), td(money(amount), 'num'), td(from, 'hide-sm'), td(money(after), 'num hide-sm')]);
}
function loadTx() {
  api('/wallet/transactions?limit=50' + (txCursor ? '&cursor=' + encodeURIComponent(txCursor) : '')).then(function (p) {
    var body = $('tx-rows');
    if (!p.items.length && !body.firstChild) body.appendChild(el('tr', {}, [el('td', { colspan: '5', 'class': 'note', text: 'No transactions yet.' })]));
    p.items.forEach(function (t) {
      var a = t.fromAllowance || 0;
      if (t.type !== 'usage' || !t.model) {
        body.appendChild(txRow({ 'data-tx': t.id }, day(t.createdAt), t.description || t.type, t.amount, paidFrom(t.amount, a), t.balanceAfter));
        return;
      }
      var date = formatDay(t.createdAt), name = (t.providerId ? t.providerId + '/' : '') + t.model, k = date + ' ' + name;
      var g = txGroups[k];
      if (!g) g = txGroups[k] = { n: 0, amount: 0, allowance: 0, after: t.balanceAfter, row: null };
      g.n += 1;
      g.amount = Math.round((g.amount + t.amount) * 1e9) / 1e9;
      g.allowance = Math.round((g.allowance + a) * 1e9) / 1e9;
      var row = txRow({ 'data-group': k, 'data-calls': String(g.n) }, date, 'API calls: ' + name + ' × ' + g.n, g.amount, paidFrom(g.amount, g.allowance), g.after);
      if (g.row) body.replaceChild(row, g.row); else body.appendChild(row);
      g.row = row;
    });
    txCursor = p.nextCursor; $('tx-more').hidden = !txCursor;
  }).catch(fail('Transactions'));
}

function topup(ev) {
  ev.preventDefault();
  var btn = $('topup-submit'), amount = Number($('topup-amount').value);
  btn.disabled = true;
  api('/wallet/topup', { method: 'POST', body: { amount: amount } }).then(function () {
    $('topup-amount').value = ''; say('Added ' + usd(amount) + ' to the wallet.'); loadWallet();
  }).catch(fail('Top up')).then(function () { btn.disabled = false; });
}

function loadEntitlements() {
  api('/portal/entitlements').then(function (e) {
    $('ent-tier').textContent = e.tierDisplayName + ' (' + e.tier + ')';
    [['ent-capabilities', e.capabilities], ['ent-bands', e.modelBands]].forEach(function (p) {
      var ul = clear($(p[0])); p[1].forEach(function (c) { ul.appendChild(el('li', { text: c })); });
    });
    $('ent-period').textContent = formatDay(e.period.start) + ' – ' + formatDay(e.period.end);
    var box = clear($('ent-quotas'));
    Object.keys(e.quotas).forEach(function (k) {
      var q = e.quotas[k], id = 'q-' + k;
      var lbl = el('div', { 'class': 'lbl' }, [el('span', { id: id + '-l', text: k.replace(/_/g, ' ') }),
        el('span', { text: q.unlimited ? q.used + ' used · no cap' : q.used + ' of ' + q.limit + ' used' })]);
      var m = el('meter', { min: '0', max: String(q.unlimited ? 1 : Math.max(q.limit, 1)), value: String(q.unlimited ? 0 : q.used), 'aria-labelledby': id + '-l' });
      box.appendChild(el('div', { 'class': 'meter', 'data-quota': k }, [lbl, m]));
    });
    var cp = e.unifiedChatProviders;
    $('ent-chat-providers').textContent = cp.length > 1 ? cp.slice(0, -1).join(', ') + ' and ' + cp[cp.length - 1] : cp.join('');
    var noKey = function (m) { return m.providerHasKey ? '' : ' (no key on this service)'; };
    rows($('ent-models'), e.allowedModels.filter(function (m) { return m.unifiedChat; }), function (m) {
      return el('tr', {}, [td(m.provider + noKey(m)), td(el('code', { text: m.model })), td(m.band)]);
    }, 'No unified chat models on this tier.', 3);
    rows($('ent-proxy-models'), e.allowedModels.filter(function (m) { return !m.unifiedChat; }), function (m) {
      return el('tr', {}, [td(m.provider + noKey(m)), td(el('code', { text: m.model })), td(m.band), td(el('code', { text: '/api/external/' + m.provider + '/…' }))]);
    }, 'No other models on this tier.', 4);
    rows($('ent-aliases'), e.aliases, function (a) { return el('tr', {}, [td(el('code', { text: a.alias })), td(a.provider + '/' + a.modelId)]); }, 'No aliases on this tier.', 2);
  }).catch(fail('Entitlements'));
}

${PORTAL_KEYS_JS}
var openProject = null;
function loadProjects() {
  api('/portal/projects').then(function (p) {
    rows($('projects-rows'), p.items, function (x) {
      return el('tr', {}, [td(x.name), td(el('code', { text: x.uid }), 'hide-sm'), td(x.role),
        td(el('button', { type: 'button', 'class': 'secondary', 'data-project-spend': x.uid, 'aria-label': 'Spend of ' + x.name, text: 'Spend' }))]);
    }, 'You have no projects yet.', 4);
  }).catch(fail('Projects'));
}
function showProject(uid) {
  openProject = uid;
  api('/portal/spend/projects/' + encodeURIComponent(uid) + '?range=' + encodeURIComponent(range())).then(function (s) {
    $('project-spend').hidden = false;
    $('project-spend-title').textContent = s.project.name + ' · last ' + s.range.days + ' days';
    clear($('project-spend-total')).appendChild(money(s.totals.customerCost));
    $('project-spend-calls').textContent = ' over ' + s.totals.calls + ' calls (all members)';
    rows($('project-spend-rows'), s.byProvider, function (r) {
      return el('tr', {}, [td(r.providerId), td(count(r.calls), 'num'), td(money(r.rawCost), 'num hide-sm'), td(money(r.customerCost), 'num')]);
    }, 'No calls in this range.', 4);
  }).catch(fail('Project spend'));
}

document.addEventListener('DOMContentLoaded', function () {
  $('range').addEventListener('change', loadSpend);
  initKeys();
  $('tx-more').addEventListener('click', loadTx);
  if ($('topup-form')) $('topup-form').addEventListener('submit', topup);
  $('projects-rows').addEventListener('click', function (ev) {
    var uid = ev.target.getAttribute && ev.target.getAttribute('data-project-spend');
    if (uid) { showProject(uid); $('project-spend-title').focus(); }
  });
  $('new-key-copy').addEventListener('click', function () {
    var v = $('new-key-value').textContent;
    (navigator.clipboard ? navigator.clipboard.writeText(v) : Promise.reject(new Error('no clipboard')))
      .then(function () { say('Copied.'); }, function () { window.getSelection().selectAllChildren($('new-key-value')); say('Selected: press Ctrl+C to copy.'); });
  });
  loadSpend(); loadWallet(); loadEntitlements(); loadKeys(); loadProjects();
});
})();
`;
