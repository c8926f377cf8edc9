import { escapeHtml, renderPage, type PageUser } from './layout.js';
import { definitionNote } from './definitions.js';
import { keySpendCard, keysSection, th } from './keys-section.js';

const money = (id: string, label: string) => `<div><dt>${label}</dt><dd id="${id}">…</dd></div>`;
const SPEND_COLS: [string, string?][] = [['Calls', 'num'], ['Failed', 'num hide-sm'], ['Raw cost', 'num hide-sm'], ['Charged', 'num'], ['<span class="sr">Share</span>']];

/** Self top-up on (config `wallet.selfTopup`): a form the dashboard script posts. */
const topupForm = `<form id="topup-form" class="row">
    <div><label for="topup-amount">Add credit (USD)</label><input id="topup-amount" name="amount" type="number" min="0.01" max="10000" step="0.01" required></div>
    <button type="submit" id="topup-submit">Top up</button>
  </form>`;
/** Self top-up off: how to get credit instead. */
const topupOff = (email: string) =>
  `<p class="note" id="topup-off">Self top-up is off on this service. To add credit, ask an operator to run <code>agw admin wallet credit ${escapeHtml(email)} AMOUNT</code>.</p>`;

/** A new project: a plain form (works without the script), answered with a 303 back to this card. */
const projectForm = (csrf: string) => `<form id="project-form" class="row" method="post" action="/api/portal/projects">
    <input type="hidden" name="_csrf" value="${escapeHtml(csrf)}">
    <div><label for="project-name">New project name</label><input id="project-name" name="name" type="text" maxlength="100" required placeholder="e.g. game"></div>
    <button type="submit" id="project-create">Create project</button>
  </form>`;

/**
 * The dashboard's shell: headings, labelled controls and empty tables that the
 * dashboard script fills from the JSON API.
 */
export function dashboardPage(user: PageUser & { tier: string; selfTopup: boolean }): string {
  const body = `
<h1>Dashboard</h1>
<p id="status" class="sr" role="status" aria-live="polite"></p>
<div class="grid">
<section class="card wide" aria-labelledby="spend-h">
  <h2 id="spend-h">Spend</h2>
  <div class="toolbar">
    <label for="range">Range</label>
    <select id="range">
      <option value="7d">Last 7 days</option>
      <option value="30d" selected>Last 30 days</option>
      <option value="90d">Last 90 days</option>
      <option value="365d">Last 365 days</option>
    </select>
    <span class="note">since <span id="spend-since">…</span></span>
  </div>
  <dl class="stats" id="totals">
    ${money('total-calls', 'Calls')}${money('total-failures', 'Failed calls')}${money('total-raw', 'Raw cost')}${money('total-customer', 'Charged for calls')}${money('total-purchases', 'Skill purchases')}${money('total-charged', 'Charged')}
  </dl>
  ${definitionNote('call-definition')} <p class="note">Refused requests and every call one by one: <a href="/activity">Activity</a>.</p>
  <h3 id="daily-h">Charged per day (calls and skill purchases)</h3>
  <svg id="daily-chart" class="chart" role="img" aria-labelledby="daily-h" viewBox="0 0 800 170"></svg>
  <div class="axis note"><span id="daily-first"></span><span id="daily-max"></span><span id="daily-last"></span></div>
  <details><summary>Daily figures as a table</summary>
    <div class="scroll"><table>${th([['Day'], ['Calls', 'num'], ['Failed', 'num'], ['Charged', 'num']])}<tbody id="daily-rows"></tbody></table></div>
  </details>
</section>
<section class="card" aria-labelledby="prov-h">
  <h2 id="prov-h">By provider</h2>
  <div class="scroll"><table id="by-provider">${th([['Provider'], ...SPEND_COLS])}<tbody id="provider-rows"></tbody></table></div>
</section>
<section class="card" aria-labelledby="proj-h">
  <h2 id="proj-h">By project</h2>
  <div class="scroll"><table id="by-project">${th([['Project'], ...SPEND_COLS])}<tbody id="project-rows"></tbody></table></div>
</section>
${keySpendCard(th([['Key'], ...SPEND_COLS]))}
<section class="card" aria-labelledby="wallet-h">
  <h2 id="wallet-h">Wallet</h2>
  <dl class="stats">${money('wallet-balance', 'Balance')}<div><dt>Allowance left this month</dt><dd><span id="wallet-allowance">…</span> <span id="wallet-allowance-total" class="note"></span></dd></div></dl>
  <div class="meter"><div class="lbl"><span id="wallet-meter-l">Allowance used this month</span><span id="wallet-allowance-of" class="note"></span></div>
  <meter id="wallet-meter" min="0" max="1" value="0" aria-labelledby="wallet-meter-l"></meter></div>
  <p id="wallet-available" class="note" aria-live="polite"></p>
  ${user.selfTopup ? topupForm : topupOff(user.email)}
  <h3>Transactions</h3>
  <p class="note">A debit is paid from this month’s allowance first, then from the balance. API calls show one line per day and model.</p>
  <div class="scroll"><table>${th([['When'], ['What'], ['Amount', 'num'], ['Paid from', 'hide-sm'], ['Balance after', 'num hide-sm']])}<tbody id="tx-rows"></tbody></table></div>
  <p><button type="button" id="tx-more" class="secondary" hidden>Load more</button></p>
</section>
<section class="card" aria-labelledby="ent-h">
  <h2 id="ent-h">Entitlements</h2>
  <p>Tier: <strong id="ent-tier">${escapeHtml(user.tier)}</strong></p>
  <h3>Capabilities</h3><ul class="tags" id="ent-capabilities"></ul>
  <h3>Model bands</h3><ul class="tags" id="ent-bands"></ul>
  <h3>Quotas <span class="note" id="ent-period"></span></h3><div id="ent-quotas"></div>
  <details><summary>Models for unified chat</summary>
    <p class="note"><code>POST /api/gateway/chat</code> serves the models of <span id="ent-chat-providers">every LLM provider</span> (and the aliases below).</p>
    <div class="scroll"><table>${th([['Provider'], ['Model'], ['Band']])}<tbody id="ent-models"></tbody></table></div></details>
  <details><summary>Other models, through the proxy</summary>
    <p class="note">Unified chat does not serve these: call them through the proxy, <code>/api/external/{provider}/…</code> with the provider’s own path and body.</p>
    <div class="scroll"><table>${th([['Provider'], ['Model'], ['Band'], ['Proxy path']])}<tbody id="ent-proxy-models"></tbody></table></div></details>
  <details><summary>Aliases</summary>
    <div class="scroll"><table>${th([['Alias'], ['Resolves to']])}<tbody id="ent-aliases"></tbody></table></div></details>
</section>
${keysSection()}
<section class="card wide" aria-labelledby="projects-h" id="projects">
  <h2 id="projects-h">Projects</h2>
  <p class="note">Tag a call with a project by sending <code>X-Service-Project-Id: &lt;uid&gt;</code>.</p>
  ${projectForm(user.csrfToken)}
  <div class="scroll"><table>${th([['Name'], ['Uid', 'hide-sm'], ['Role'], ['<span class="sr">Spend</span>']])}<tbody id="projects-rows"></tbody></table></div>
  <div id="project-spend" hidden>
    <h3 id="project-spend-title" tabindex="-1"></h3>
    <p>Charged <strong id="project-spend-total"></strong><span id="project-spend-calls"></span></p>
    <div class="scroll"><table>${th([['Provider'], ['Calls', 'num'], ['Raw cost', 'num hide-sm'], ['Charged', 'num']])}<tbody id="project-spend-rows"></tbody></table></div>
  </div>
</section>
</div>`;
  return renderPage({
    title: 'Dashboard',
    body,
    user,
    script: 'portal.js',
    nav: 'dashboard',
    head: `<meta name="csrf-token" content="${escapeHtml(user.csrfToken)}">\n`,
  });
}
