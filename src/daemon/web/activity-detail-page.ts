import type { RequestDetailT } from '../../shared/schemas/requests.js';
import { ms, statusBadge } from './activity-page.js';
import { escapeHtml } from './escape.js';
import { countData, moneyData } from './format.js';
import { renderPage, type PageUser } from './layout.js';

/**
 * `/activity/{id}`: one call of the request log (GET /api/requests/{id}): every field of
 * the record, and the request and answer bodies when logs.bodies kept them (as text,
 * escaped, at most 32 KB each, secrets already redacted).
 */
function body(title: string, id: string, b: NonNullable<RequestDetailT['bodies']>['request']): string {
  const size = `${b.bytes.toLocaleString('en-US')} bytes${b.truncated ? ', the first 32 KB shown' : ''}`;
  return `<section class="card wide" aria-labelledby="${id}-h"><h2 id="${id}-h">${title}</h2><p class="note">${size}</p>
${b.text === null ? '<p>Empty.</p>' : `<pre class="body" id="${id}" tabindex="0">${escapeHtml(b.text)}</pre>`}</section>`;
}

export function activityDetailPage(user: PageUser, r: RequestDetailT, retentionDays: number): string {
  const fact = (label: string, value: string, id?: string) => `<div><dt>${label}</dt><dd${id ? ` id="${id}"` : ''}>${value}</dd></div>`;
  const code = (v: string | null) => (v === null ? '–' : `<code>${escapeHtml(v)}</code>`);
  const facts = [
    fact('When (UTC)', `<time datetime="${escapeHtml(r.createdAt)}">${escapeHtml(r.createdAt.replace('T', ' ').replace('Z', ''))}</time>`),
    fact('Status', statusBadge(r), 'd-status'),
    fact('Endpoint', escapeHtml(r.endpoint)),
    fact('Provider', escapeHtml(r.provider), 'd-provider'),
    fact('Model', code(r.model), 'd-model'),
    fact('Alias', code(r.alias)),
    fact('Streamed', r.stream ? 'yes' : 'no'),
    fact('Prompt tokens', countData(r.promptTokens), 'd-prompt'),
    fact('Completion tokens', countData(r.completionTokens), 'd-completion'),
    fact('Cached tokens', countData(r.cachedTokens)),
    fact('Cache-write tokens', countData(r.cacheWriteTokens)),
    fact('Reasoning tokens', countData(r.reasoningTokens)),
    fact('Cost', moneyData(r.cost), 'd-cost'),
    fact('Latency', `<data value="${r.latencyMs ?? ''}">${ms(r.latencyMs)}</data>`, 'd-latency'),
    fact('Time to first byte', `<data value="${r.ttfbMs ?? ''}">${ms(r.ttfbMs)}</data>`),
    fact('Upstreams tried', countData(r.attempts)),
    fact('Dropped parameters', r.droppedParams.length ? r.droppedParams.map((p) => code(p)).join(' ') : '–', 'd-dropped'),
    fact('Key', code(r.keyId)),
    fact('Project', code(r.projectId)),
  ].join('');
  const bodies = r.bodies
    ? body('Request body', 'req-body', r.bodies.request) + body('Answer body', 'res-body', r.bodies.response)
    : '<p class="note" id="no-bodies">Bodies are not kept (config <code>logs.bodies: true</code> keeps them, redacted).</p>';
  const html = `
<p class="crumbs"><a href="/activity">Activity</a> › call</p>
<h1>Call <code class="wrap">${escapeHtml(r.id)}</code></h1>
<section class="card wide" aria-label="The call"><dl class="facts" id="call-facts">${facts}</dl>
<p class="note">The answer to this call carried <code>x-request-id: ${escapeHtml(r.id)}</code>. Kept ${retentionDays} days. From a terminal: <code>agw logs show ${escapeHtml(r.id)}</code>.</p></section>
${bodies}`;
  return renderPage({ title: `Call ${r.id}`, body: html, nav: 'activity', user });
}
