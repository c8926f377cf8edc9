/**
 * The dashboard's key section (CONTRACT "Keys with limits"): create a key with limits (the
 * budget period defaults to `total`, as the API's does),
 * the keys with what each spent and when it was last used, edit a key's limits, revoke.
 * Filled and driven by assets/portal-keys-js.ts over /api/keys with the session.
 */
/** A table head: each cell's text and class. */
export const th = (cells: [string, string?][]) =>
  `<thead><tr>${cells.map(([t, cls]) => `<th scope="col"${cls ? ` class="${cls}"` : ''}>${t}</th>`).join('')}</tr></thead>`;

function limitFields(p: 'new' | 'edit'): string {
  const f = (id: string, label: string, input: string) => `<div><label for="${p}-${id}">${label}</label>${input}</div>`;
  return `<div class="row limits">
    ${f('budget', 'Budget (USD)', `<input id="${p}-budget" type="number" min="0" max="1000000" step="0.01" inputmode="decimal" placeholder="no budget">`)}
    ${f('period', 'per', `<select id="${p}-period"><option value="day">day</option><option value="week">week</option><option value="month">month</option><option value="total" selected>in total</option></select>`)}
    ${f('rpm', 'Requests / min', `<input id="${p}-rpm" type="number" min="1" step="1" placeholder="no limit">`)}
    ${f('tpm', 'Tokens / min', `<input id="${p}-tpm" type="number" min="1" step="1" placeholder="no limit">`)}
    ${f('models', 'Models (comma-separated ids or aliases)', `<input id="${p}-models" type="text" maxlength="2000" placeholder="any model">`)}
    ${f('expires', 'Expires', `<input id="${p}-expires" type="datetime-local">`)}
  </div>`;
}

export function keysSection(): string {
  return `<section class="card wide" aria-labelledby="keys-h">
  <h2 id="keys-h">API keys</h2>
  <form id="key-form">
    <div class="row">
      <div><label for="key-name">New key name</label><input id="key-name" name="name" type="text" maxlength="100" required placeholder="e.g. ci"></div>
      <button type="submit" id="key-create">Create key</button>
    </div>
    <details><summary>Limits (optional): budget, rate, models, expiry</summary>${limitFields('new')}</details>
  </form>
  <p id="key-error" class="error" role="alert" hidden></p>
  <div id="new-key" hidden>
    <p><strong>Your new key.</strong> Copy it now: it is shown only once and stored hashed.</p>
    <code id="new-key-value" class="secret" tabindex="-1"></code>
    <button type="button" id="new-key-copy" class="secondary">Copy</button>
  </div>
  <div class="scroll"><table>${th([
    ['Name'],
    ['Key', 'hide-sm'],
    ['Budget'],
    ['Spent', 'num'],
    ['Rate', 'hide-sm'],
    ['Models', 'hide-sm'],
    ['Expires', 'hide-sm'],
    ['Last used', 'hide-sm'],
    ['<span class="sr">Actions</span>'],
  ])}<tbody id="key-rows"></tbody></table></div>
  <form id="key-edit" hidden>
    <h3 id="key-edit-title" tabindex="-1"></h3>
    <div class="row"><div><label for="edit-name">Name</label><input id="edit-name" type="text" maxlength="100"></div></div>
    ${limitFields('edit')}
    <p class="note">An empty field lifts that limit. A key made with a limited key stays within that key’s limits.</p>
    <p class="row"><button type="submit" id="key-save">Save limits</button><button type="button" id="key-cancel" class="secondary">Cancel</button></p>
  </form>
</section>`;
}

/** The spend section's per-key card (the summary's byKey). */
export function keySpendCard(cols: string): string {
  return `<section class="card" aria-labelledby="keyspend-h">
  <h2 id="keyspend-h">By key</h2>
  <div class="scroll"><table id="by-key">${cols}<tbody id="key-spend-rows"></tbody></table></div>
</section>`;
}
