import type { RequestRecordT, RequestsDailyT } from '../../shared/schemas/requests.js';
import { barChart } from './bar-chart.js';
import { escapeHtml } from './escape.js';
import { countData, moneyData, plural, usd } from './format.js';
import { renderPage, type PageUser } from './layout.js';
import { lineChart } from './line-chart.js';

/**
 * `/activity`: the signed-in account's request log, from the same store functions as
 * GET /api/requests and /api/requests/daily. Filters are a plain GET form and paging is
 * links (newest first, "Older" follows the cursor), so it reads without JavaScript and
 * every view has a URL; each call links to its detail page. Charts per day: calls,
 * errors, latency p50/p95 (SVG, server-rendered).
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
}

const option = (value: string, label: string, selected: boolean) => `<option value="${escapeHtml(value)}"${selected ? ' selected' : ''}>${escapeHtml(label)}</option>`;

/** The page's URL with the same filters (and a cursor, or another chart range). */
function activityUrl(q: ActivityQuery, change: Partial<ActivityQuery> = {}): string {
  const v = { ...q, ...change };
  const p = new URLSearchParams();
  for (const k of ['model', 'provider', 'status', 'since', 'keyId', 'project'] as const) if (v[k]) p.set(k, v[k]);
  if (v.days !== 7) p.set('days', String(v.days));
  if (v.cursor) p.set('cursor', v.cursor);
  const s = p.toString();
  return s ? `/activity?${s}` : '/activity';
}

export const ms = (v: number | null) => (v === null ? '–' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v).toLocaleString('en-US')} ms`);
/** date and time (UTC); on a phone the time only (the day is in the charts' axis and the detail page) */
const time = (iso: string) => `<time datetime="${escapeHtml(iso)}"><span class="hide-sm">${escapeHtml(iso.slice(0, 10))} </span>${escapeHtml(iso.slice(11, 19))}</time>`;

export function statusBadge(r: Pick<RequestRecordT, 'status' | 'code'>): string {
  const ok = r.status < 400;
  return `<span class="status ${ok ? 'ok' : 'bad'}" title="${escapeHtml(r.code ?? '')}">${r.status}${r.code ? ` <span class="hide-sm">${escapeHtml(r.code)}</span>` : ''}</span>`;
}

function row(r: RequestRecordT): string {
  const model = r.model ?? r.alias ?? '–';
  return `<tr data-id="${escapeHtml(r.id)}" data-status="${r.status}">
<td><a href="/activity/${encodeURIComponent(r.id)}" aria-label="Call ${escapeHtml(r.id)}">${time(r.createdAt)}</a></td>
<td class="wrap">${escapeHtml(model)}${r.alias && r.model ? ` <span class="note hide-sm">via ${escapeHtml(r.alias)}</span>` : ''}</td>
<td class="hide-sm">${escapeHtml(r.provider)}</td>
<td class="num"><span title="prompt → completion">${countData(r.promptTokens)} → ${countData(r.completionTokens)}</span></td>
<td class="num">${moneyData(r.cost)}</td>
<td class="num"><data value="${r.latencyMs ?? ''}">${ms(r.latencyMs)}</data></td>
<td class="num hide-sm"><data value="${r.ttfbMs ?? ''}">${ms(r.ttfbMs)}</data></td>
<td>${statusBadge(r)}</td></tr>`;
}

function filters(d: ActivityPageData): string {
  const q = d.query;
  return `<form method="get" action="/activity" class="search card" role="search" aria-label="Filter calls">
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

function charts(d: ActivityPageData): string {
  const labels = d.daily.map((x) => x.date);
  const total = d.daily.reduce((a, x) => ({ n: a.n + x.requests, e: a.e + x.errors, c: a.c + x.cost }), { n: 0, e: 0, c: 0 });
  const ranges = ACTIVITY_DAYS.map((n) =>
    n === d.query.days ? `<strong>${n === 1 ? 'Today' : `${n} days`}</strong>` : `<a href="${escapeHtml(activityUrl(d.query, { days: n, cursor: '' }))}">${n === 1 ? 'Today' : `${n} days`}</a>`,
  ).join(' · ');
  return `<section class="card wide" aria-labelledby="per-day-h">
  <h2 id="per-day-h">Per day</h2>
  <p class="toolbar">${ranges}</p>
  <dl class="stats" id="activity-totals"><div><dt>Calls</dt><dd id="total-calls">${countData(total.n)}</dd></div><div><dt>Errors</dt><dd id="total-errors">${countData(total.e)}</dd></div><div><dt>Charged</dt><dd id="total-cost">${moneyData(total.c)}</dd></div></dl>
  <h3 id="calls-h">Calls per day</h3>
  ${barChart({ id: 'calls-chart', labelledBy: 'calls-h', points: d.daily.map((x) => ({ label: x.date, value: x.requests })), format: (v) => plural(v, 'call'), describe: `${plural(total.n, 'call')} in ${d.query.days} days` })}
  <h3 id="errors-h">Errors per day</h3>
  ${barChart({ id: 'errors-chart', labelledBy: 'errors-h', points: d.daily.map((x) => ({ label: x.date, value: x.errors })), format: (v) => plural(v, 'error'), describe: `${plural(total.e, 'error')} in ${d.query.days} days` })}
  <h3 id="latency-h">Latency per day (p50, p95)</h3>
  ${lineChart({
    id: 'latency-chart',
    labelledBy: 'latency-h',
    labels,
    series: [
      { name: 'p50', values: d.daily.map((x) => x.latencyP50Ms) },
      { name: 'p95', values: d.daily.map((x) => x.latencyP95Ms) },
    ],
    format: (v) => ms(v),
    describe: `Latency of calls that reached a provider, per day`,
  })}
  <details><summary>Daily figures as a table</summary><div class="scroll"><table id="daily-table"><thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Errors</th><th scope="col" class="num">p50</th><th scope="col" class="num">p95</th><th scope="col" class="num">Charged</th></tr></thead>
  <tbody>${[...d.daily].reverse().map((x) => `<tr><td>${x.date}</td><td class="num">${countData(x.requests)}</td><td class="num">${countData(x.errors)}</td><td class="num">${ms(x.latencyP50Ms)}</td><td class="num">${ms(x.latencyP95Ms)}</td><td class="num">${moneyData(x.cost)}</td></tr>`).join('')}</tbody></table></div></details>
</section>`;
}

export function activityPage(d: ActivityPageData): string {
  const q = d.query;
  const filtered = Boolean(q.model || q.provider || q.status || q.since || q.keyId || q.project);
  const table = d.items.length
    ? `<div class="scroll"><table id="calls"><caption class="sr">Calls, newest first</caption><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Model</th><th scope="col" class="hide-sm">Provider</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Latency</th><th scope="col" class="num hide-sm">TTFB</th><th scope="col">Status</th></tr></thead>
<tbody>${d.items.map(row).join('\n')}</tbody></table></div>`
    : `<p id="calls">${filtered ? 'No call matches these filters.' : 'No calls yet. Make one, e.g. <code>agw chat "Hello"</code>, and it shows here.'}</p>`;
  const pager =
    q.cursor || d.nextCursor
      ? `<nav class="pager" aria-label="Pages of calls">${q.cursor ? `<a href="${escapeHtml(activityUrl(q, { cursor: '' }))}">Newest</a>` : '<span></span>'}${
          d.nextCursor ? `<a rel="next" href="${escapeHtml(activityUrl(q, { cursor: d.nextCursor }))}">Older</a>` : '<span></span>'
        }</nav>`
      : '';
  const body = `
<h1>Activity</h1>
${charts(d)}
<h2 id="calls-h2">Calls</h2>
${filters(d)}
${table}
${pager}
<p class="note">Every gateway call of your account, refused ones included; kept ${plural(d.retentionDays, 'day')}. Times are UTC. The same log: <code>agw logs</code>, <code>GET /api/requests</code>.</p>`;
  return renderPage({ title: 'Activity', body, nav: 'activity', user: d.user });
}
