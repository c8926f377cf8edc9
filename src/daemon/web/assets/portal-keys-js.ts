/**
 * The key section of the dashboard script (web/keys-section.ts): list, create with limits,
 * edit limits, revoke, over /api/keys; and the spend summary's per-key card. A fragment of
 * PORTAL_JS's function scope (it uses $, el, api, rows, money, usd, day, say, td, bar).
 * Plain ES2017, no backticks.
 */
export const PORTAL_KEYS_JS = String.raw`
var keyItems = [];
function showKeyError(msg) { var e = $('key-error'); e.textContent = msg || ''; e.hidden = !msg; }
function budgetText(l) { return l.budget === null ? 'none' : usd(l.budget) + (l.budgetPeriod === 'total' ? ' in total' : ' / ' + l.budgetPeriod); }
function rateText(l) {
  var r = [];
  if (l.rpm !== null) r.push(l.rpm.toLocaleString('en-US') + ' rpm');
  if (l.tpm !== null) r.push(l.tpm.toLocaleString('en-US') + ' tpm');
  return r.length ? r.join(' · ') : 'no limit';
}
function keyState(x) { return x.revoked ? 'revoked' : x.expiresAt && Date.parse(x.expiresAt) <= Date.now() ? 'expired' : ''; }
function loadKeys() {
  api('/keys').then(function (k) {
    keyItems = k.items;
    rows($('key-rows'), k.items, function (x) {
      var state = keyState(x), label = x.name || x.prefix;
      var actions = state ? el('span', { 'class': 'note', text: state }) : el('span', {}, [
        el('button', { type: 'button', 'class': 'secondary', 'data-edit': x.id, 'aria-label': 'Edit limits of ' + label, text: 'Edit' }), ' ',
        el('button', { type: 'button', 'class': 'danger', 'data-revoke': x.id, 'aria-label': 'Revoke key ' + label, text: 'Revoke' })]);
      return el('tr', { 'data-key': x.id, 'class': x.revoked ? 'revoked' : '' }, [td(x.name || '(unnamed)'), td(el('code', { text: x.prefix }), 'hide-sm'),
        td(budgetText(x.limits)), td(money(x.spent), 'num'), td(rateText(x.limits), 'hide-sm'),
        td(x.limits.models ? x.limits.models.join(', ') : 'any', 'hide-sm'), td(x.expiresAt ? day(x.expiresAt) : 'never', 'hide-sm'),
        td(day(x.lastUsedAt), 'hide-sm'), td(actions)]);
    }, 'No keys yet.', 9);
  }).catch(fail('Keys'));
}
function num(v) { return v === '' ? null : Number(v); }
function localTime(iso) {
  if (!iso) return '';
  var d = new Date(iso), p = function (n) { return (n < 10 ? '0' : '') + n; };
  return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes());
}
/** The limits in the fields of form p ('new' or 'edit'); when editing an empty field lifts the limit (null). */
function limitsOf(p, editing) {
  var l = {}, v = function (id) { return $(p + '-' + id).value.trim(); };
  var put = function (k, x) { if (x !== null || editing) l[k] = x; };
  put('budget', num(v('budget')));
  if (v('budget') !== '') l.budgetPeriod = v('period');
  put('rpm', num(v('rpm')));
  put('tpm', num(v('tpm')));
  var models = v('models').split(',').map(function (m) { return m.trim(); }).filter(Boolean);
  put('models', models.length ? models : null);
  put('expiresAt', v('expires') ? new Date(v('expires')).toISOString() : null);
  return l;
}
function createKey(ev) {
  ev.preventDefault();
  var btn = $('key-create'); btn.disabled = true; showKeyError('');
  api('/keys', { method: 'POST', body: { name: $('key-name').value.trim(), limits: limitsOf('new', false) } }).then(function (k) {
    $('new-key-value').textContent = k.key; $('new-key').hidden = false; $('key-form').reset();
    $('new-key-value').focus(); say('Key created. Copy it now: it is shown only once.');
    loadKeys();
  }).catch(function (e) { showKeyError('Create key: ' + e.message); }).then(function () { btn.disabled = false; });
}
function editKey(id) {
  var x = keyItems.filter(function (k) { return k.id === id; })[0];
  if (!x) return;
  var l = x.limits, f = $('key-edit');
  f.setAttribute('data-id', id); showKeyError('');
  $('key-edit-title').textContent = 'Limits of ' + (x.name || x.prefix);
  $('edit-name').value = x.name || '';
  $('edit-budget').value = l.budget === null ? '' : String(l.budget);
  $('edit-period').value = l.budgetPeriod || 'total';
  $('edit-rpm').value = l.rpm === null ? '' : String(l.rpm);
  $('edit-tpm').value = l.tpm === null ? '' : String(l.tpm);
  $('edit-models').value = l.models ? l.models.join(', ') : '';
  $('edit-expires').value = localTime(x.expiresAt);
  f.hidden = false; $('key-edit-title').focus();
}
function saveKey(ev) {
  ev.preventDefault();
  var id = $('key-edit').getAttribute('data-id'), btn = $('key-save'); btn.disabled = true; showKeyError('');
  api('/keys/' + encodeURIComponent(id), { method: 'PATCH', body: { name: $('edit-name').value.trim() || null, limits: limitsOf('edit', true) } }).then(function () {
    $('key-edit').hidden = true; say('Key updated.'); loadKeys();
  }).catch(function (e) { showKeyError('Save limits: ' + e.message); }).then(function () { btn.disabled = false; });
}
function keyAction(ev) {
  var t = ev.target, edit = t.getAttribute && t.getAttribute('data-edit'), id = t.getAttribute && t.getAttribute('data-revoke');
  if (edit) return editKey(edit);
  if (!id || !window.confirm('Revoke this key (and the keys made with it)? Programs using it stop working at once.')) return;
  api('/keys/' + encodeURIComponent(id), { method: 'DELETE' }).then(function () { say('Key revoked.'); loadKeys(); }).catch(fail('Revoke key'));
}
function drawKeySpend(s) {
  var max = Math.max.apply(null, [0].concat(s.byKey.map(function (r) { return r.customerCost; })));
  rows($('key-spend-rows'), s.byKey, function (r) {
    return el('tr', { 'data-key-spend': r.keyId }, [td(r.keyName || r.keyId), td(count(r.calls), 'num'), td(count(r.failures), 'num hide-sm'),
      td(money(r.rawCost), 'num hide-sm'), td(money(r.customerCost), 'num'), td(bar(r.customerCost, max), 'barcell')]);
  }, 'No calls with a key in this range.', 6);
}
function initKeys() {
  $('key-form').addEventListener('submit', createKey);
  $('key-edit').addEventListener('submit', saveKey);
  $('key-cancel').addEventListener('click', function () { $('key-edit').hidden = true; showKeyError(''); });
  $('key-rows').addEventListener('click', keyAction);
}
`;
