import type { RequestRecordT, RequestsDailyT } from '../../shared/schemas/requests.js';
import { byModel, ms, perDay, type ModelSpend } from './activity-summary.js';
import { escapeHtml } from './escape.js';
import { countData, moneyData, plural } from './format.js';
import { renderPage, type PageUser } from './layout.js';

export { ms } from './activity-summary.js';

/**
 * `/activity`: the signed-in account's request log, from the same store functions as
 * GET /api/requests and /api/requests/daily. Filters are a plain GET form and paging is
 * links (newest first, "Older" follows the cursor), so it reads without JavaScript and
 * every view has a URL; each call links to its detail page, and a request id typed in the
 * search goes straight to it. Charts per day (calls, failed and refused, latency p50/p95)
 * and per model (charged, tokens), SVG rendered here; the filtered log exports as CSV or
 * NDJSON (GET /api/requests/export). Calls, failures and refusals as the dashboard counts
 * them (definitions.ts).
 */
export const ACTIVITY_DAYS = [1, 7, 30];
export const SINCE_CHOICES: [string, string][] = [
  ['', 'Any time'],
  ['1h', 'Last hour'],
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
];

export interface ActivityQuery {
  model: string;
  provider: string;
  status: '' | 'ok' | 'error';
  since: string;
  keyId: string;
  project: string;
  endpoint: '' | 'proxy' | 'smart' | 'chat';
  days: number;
  cursor: string;
}

export interface ActivityPageData {
  user: PageUser;
  query: ActivityQuery;
  items: RequestRecordT[];
  nextCursor: string | null;
  daily: RequestsDailyT['days'];
  providers: string[];
  retentionDays: number;
  /** spend and tokens per model over the chart's days */
  models: ModelSpend[];
  /** the account's keys' names, for the Key column */
  keyNames: Map<string, string | null>;
}

const option = (value: string, label: string, selected: boolean) => `<option value="${escapeHtml(value)}"${selected ? ' selected' : ''}>${escapeHtml(label)}</option>`;

/** The page's URL with the same filters (and a cursor, or another chart range). */
function activityUrl(q: ActivityQuery, change: Partial<ActivityQuery> = {}): string {
  const v = { ...q, ...change };
  const p = new URLSearchParams();
  for (const k of ['model', 'provider', 'status', 'since', 'keyId', 'project', 'endpoint'] as const) if (v[k]) p.set(k, v[k]);
  if (v.days !== 7) p.set('days', String(v.days));
  if (v.cursor) p.set('cursor', v.cursor);
  const s = p.toString();
  return s ? `/activity?${s}` : '/activity';
}

/** date and time (UTC); on a phone the time only (the day is in the charts' axis and the detail page) */
const time = (iso: string) => `<time datetime="${escapeHtml(iso)}"><span class="hide-sm">${escapeHtml(iso.slice(0, 10))} </span>${escapeHtml(iso.slice(11, 19))}</time>`;

export function statusBadge(r: Pick<RequestRecordT, 'status' | 'code'>): string {
  const ok = r.status < 400;
  return `<span class="status ${ok ? 'ok' : 'bad'}" title="${escapeHtml(r.code ?? '')}">${r.status}${r.code ? ` <span class="hide-sm">${escapeHtml(r.code)}</span>` : ''}</span>`;
}

/** The key that made a call, by name (its id when unnamed; OAuth and session calls have none). */
function keyCell(r: RequestRecordT, names: Map<string, string | null>): string {
  if (!r.keyId) return '<span class="note">–</span>';
  const name = names.get(r.keyId);
  return `<span title="${escapeHtml(r.keyId)}">${escapeHtml(name ?? r.keyId)}</span>`;
}

function row(r: RequestRecordT, names: Map<string, string | null>): string {
  const model = r.model ?? r.alias ?? '–';
  return `<tr data-id="${escapeHtml(r.id)}" data-status="${r.status}">
<td><a href="/activity/${encodeURIComponent(r.id)}" aria-label="Call ${escapeHtml(r.id)}">${time(r.createdAt)}</a></td>
<td class="wrap">${escapeHtml(model)}${r.alias && r.model ? ` <span class="note hide-sm">via ${escapeHtml(r.alias)}</span>` : ''}</td>
<td class="hide-sm">${escapeHtml(r.provider)}</td>
<td class="hide-sm" data-col="endpoint">${escapeHtml(r.endpoint)}</td>
<td class="hide-sm" data-col="key">${keyCell(r, names)}</td>
<td class="num"><span title="prompt → completion">${countData(r.promptTokens)} → ${countData(r.completionTokens)}</span></td>
<td class="num">${moneyData(r.cost)}</td>
<td class="num"><data value="${r.latencyMs ?? ''}">${ms(r.latencyMs)}</data></td>
<td class="num hide-sm"><data value="${r.ttfbMs ?? ''}">${ms(r.ttfbMs)}</data></td>
<td>${statusBadge(r)}</td></tr>`;
}

function filters(d: ActivityPageData): string {
  const q = d.query;
  const endpoints: [string, string][] = [['', 'Any'], ['chat', 'chat'], ['smart', 'smart'], ['proxy', 'proxy']];
  return `<form method="get" action="/activity" class="search card" role="search" aria-label="Find a call by its id">
  <div class="field"><label for="f-id">Request id</label><input id="f-id" name="id" type="search" maxlength="100" required placeholder="use_… (the answer's x-request-id)"></div>
  <div class="field"><button type="submit">Go to the call</button></div>
</form>
<form method="get" action="/activity" class="search card" role="search" aria-label="Filter calls">
  <div class="field"><label for="f-endpoint">Endpoint</label><select id="f-endpoint" name="endpoint">${endpoints.map(([v, l]) => option(v, l, v === q.endpoint)).join('')}</select></div>
  <div class="field"><label for="f-model">Model</label><input id="f-model" name="model" type="text" maxlength="200" value="${escapeHtml(q.model)}" placeholder="any"></div>
  <div class="field"><label for="f-provider">Provider</label><select id="f-provider" name="provider">${option('', 'Any', !q.provider)}${[...new Set([...d.providers, ...(q.provider ? [q.provider] : [])])].map((p) => option(p, p, p === q.provider)).join('')}</select></div>
  <div class="field"><label for="f-status">Status</label><select id="f-status" name="status">${option('', 'Any', !q.status)}${option('ok', 'Succeeded', q.status === 'ok')}${option('error', 'Errors', q.status === 'error')}</select></div>
  <div class="field"><label for="f-since">When</label><select id="f-since" name="since">${SINCE_CHOICES.map(([v, l]) => option(v, l, v === q.since)).join('')}</select></div>
  <div class="field"><label for="f-key">Key id</label><input id="f-key" name="keyId" type="text" maxlength="100" value="${escapeHtml(q.keyId)}" placeholder="any"></div>
  <div class="field"><label for="f-project">Project</label><input id="f-project" name="project" type="text" maxlength="100" value="${escapeHtml(q.project)}" placeholder="any"></div>
  ${q.days !== 7 ? `<input type="hidden" name="days" value="${q.days}">` : ''}
  <div class="field"><button type="submit">Filter</button> <a href="/activity">Reset</a></div>
</form>`;
}

function exportLinks(q: ActivityQuery): string {
  const p = new URLSearchParams();
  for (const k of ['model', 'provider', 'status', 'since', 'keyId', 'project', 'endpoint'] as const) if (q[k]) p.set(k, q[k]);
  const url = (format: string) => `/api/requests/export?${new URLSearchParams([['format', format], ...p]).toString()}`;
  return `<p class="toolbar" id="export">Export these calls: <a class="button" href="${escapeHtml(url('csv'))}" download>CSV</a> <a href="${escapeHtml(url('ndjson'))}" download>NDJSON</a></p>`;
}

export function activityPage(d: ActivityPageData): string {
  const q = d.query;
  const filtered = Boolean(q.model || q.provider || q.status || q.since || q.keyId || q.project || q.endpoint);
  const ranges = ACTIVITY_DAYS.map((n) =>
    n === q.days ? `<strong>${n === 1 ? 'Today' : `${n} days`}</strong>` : `<a href="${escapeHtml(activityUrl(q, { days: n, cursor: '' }))}">${n === 1 ? 'Today' : `${n} days`}</a>`,
  ).join(' · ');
  const table = d.items.length
    ? `<div class="scroll"><table id="calls"><caption class="sr">Calls, newest first</caption><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Model</th><th scope="col" class="hide-sm">Provider</th><th scope="col" class="hide-sm">Endpoint</th><th scope="col" class="hide-sm">Key</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Latency</th><th scope="col" class="num hide-sm">TTFB</th><th scope="col">Status</th></tr></thead>
<tbody>${d.items.map((r) => row(r, d.keyNames)).join('\n')}</tbody></table></div>`
    : `<p id="calls">${filtered ? 'No call matches these filters.' : 'No calls yet. Make one, e.g. <code>agw chat "Hello"</code>, and it shows here.'}</p>`;
  const pager =
    q.cursor || d.nextCursor
      ? `<nav class="pager" aria-label="Pages of calls">${q.cursor ? `<a href="${escapeHtml(activityUrl(q, { cursor: '' }))}">Newest</a>` : '<span></span>'}${
          d.nextCursor ? `<a rel="next" href="${escapeHtml(activityUrl(q, { cursor: d.nextCursor }))}">Older</a>` : '<span></span>'
        }</nav>`
      : '';
  const body = `
<h1>Activity</h1>
${perDay(d.daily, q.days, ranges)}
${byModel(d.models, q.days)}
<h2 id="calls-h2">Calls</h2>
${filters(d)}
${exportLinks(q)}
${table}
${pager}
<p class="note">Every gateway call of your account, refused ones included; kept ${plural(d.retentionDays, 'day')}. Times are UTC. The same log: <code>agw logs</code>, <code>GET /api/requests</code>.</p>`;
  return renderPage({ title: 'Activity', body, nav: 'activity', user: d.user });
}
