import type { MySkillsT, OwnerVersionsT, TimeseriesT } from '../../shared/schemas/skills.js';
import { barChart } from './bar-chart.js';
import { escapeHtml } from './escape.js';
import { countData, day, moneyData, plural, price, usd } from './format.js';
import { renderPage, type PageUser } from './layout.js';

/**
 * `/creator`: the signed-in creator's skills, from the same functions as
 * GET /api/skills/mine, /mine/timeseries and /skills/{id}/versions: installs and revenue
 * per day as server-rendered SVG charts, each skill with its figures, versions and status,
 * and buttons to archive or publish a skill, archive, publish or make current one version
 * (plain forms: they work without JavaScript).
 */
export const CREATOR_RANGES = [7, 30, 90, 365];

type Mine = MySkillsT['items'][number];

export interface CreatorPageData {
  user: PageUser;
  days: number;
  skills: Mine[];
  versions: Map<number, OwnerVersionsT>;
  series: TimeseriesT;
}

function postButton(user: PageUser, action: string, fields: Record<string, string>, label: string, aria: string, cls = 'secondary'): string {
  const hidden = Object.entries({ _csrf: user.csrfToken, ...fields })
    .map(([k, v]) => `<input type="hidden" name="${k}" value="${escapeHtml(v)}">`)
    .join('');
  return `<form method="post" action="${escapeHtml(action)}" class="inline">${hidden}<button type="submit" class="${cls}" aria-label="${escapeHtml(aria)}">${label}</button></form>`;
}

/**
 * A version's buttons: a draft or archived one can be published; a published one archived
 * (unless it is the only one: archive the skill instead) and made current (when it is not).
 */
function versionActions(user: PageUser, s: Mine, x: OwnerVersionsT['versions'][number], publishedCount: number): string {
  const base = `/creator/skills/${s.id}`;
  const v = encodeURIComponent(x.version);
  if (x.status !== 'published') return postButton(user, `${base}/versions/${v}/publish`, {}, 'Publish', `Publish version ${x.version} of ${s.name}`);
  const current = x.isCurrent ? '' : postButton(user, `${base}/current`, { version: x.version }, 'Make current', `Make version ${x.version} of ${s.name} current`);
  const archive = publishedCount > 1 ? postButton(user, `${base}/versions/${v}/archive`, {}, 'Archive', `Archive version ${x.version} of ${s.name}`, 'danger') : '';
  return current + archive;
}

function versionRows(user: PageUser, s: Mine, v: OwnerVersionsT | undefined): string {
  if (!v || !v.versions.length) return '<p class="note">No versions.</p>';
  const publishedCount = v.versions.filter((x) => x.status === 'published').length;
  const rows = v.versions.map((x) => {
    const tags = `${x.prerelease ? ' <span class="tag pre">prerelease</span>' : ''}${x.isCurrent ? ' <span class="tag">current</span>' : ''}`;
    return `<tr data-version="${escapeHtml(x.version)}"><td>${escapeHtml(x.version)}${tags}</td>
<td><span class="status ${x.status}">${x.status}</span></td><td class="hide-sm">${day(x.publishedAt)}</td><td class="num">${countData(x.installerCount)}</td><td class="actions">${versionActions(user, s, x, publishedCount)}</td></tr>`;
  });
  const pinned = v.currentVersionPinned
    ? `<p class="note" data-pinned="${escapeHtml(v.currentVersion ?? '')}">You chose ${escapeHtml(v.currentVersion ?? '')} as the current version. ${postButton(user, `/creator/skills/${s.id}/current`, { version: '' }, 'Use the highest release', `Let the highest release of ${s.name} be current`)}</p>`
    : '';
  return `${pinned}<div class="scroll"><table><thead><tr><th scope="col">Version</th><th scope="col">Status</th><th scope="col" class="hide-sm">Published</th><th scope="col" class="num">On it</th><th scope="col"><span class="sr">Action</span></th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function skillCard(user: PageUser, s: Mine, v: OwnerVersionsT | undefined): string {
  const toggle =
    s.status === 'published'
      ? postButton(user, `/creator/skills/${s.id}/status`, { status: 'archived' }, 'Archive', `Archive ${s.name}`, 'danger')
      : postButton(user, `/creator/skills/${s.id}/status`, { status: 'published' }, 'Publish', `Publish ${s.name}`);
  const name = s.status === 'draft' ? escapeHtml(s.name) : `<a href="/skills/${encodeURIComponent(s.slug)}">${escapeHtml(s.name)}</a>`;
  return `<section class="card" id="skill-${s.id}" data-skill-id="${s.id}" aria-labelledby="skill-${s.id}-h">
  <h3 id="skill-${s.id}-h">${name} <span class="status ${s.status}">${s.status}</span></h3>
  <p class="note"><code>${escapeHtml(s.slug)}</code> · ${escapeHtml(s.category)} · ${price(s.price)}</p>
  <dl class="stats"><div><dt>Installs</dt><dd class="installs">${countData(s.installs)}</dd></div><div><dt>Revenue</dt><dd class="revenue">${moneyData(s.revenue)}</dd></div></dl>
  <p class="actions">${toggle}</p>
  <h4>Versions</h4>
  ${versionRows(user, s, v)}
</section>`;
}

export function creatorPage(d: CreatorPageData): string {
  const installs = d.skills.reduce((n, s) => n + s.installs, 0);
  const revenue = d.skills.reduce((n, s) => n + s.revenue, 0);
  const pts = (k: 'installs' | 'revenue') => d.series.series.map((x) => ({ label: x.date, value: x[k] }));
  const inRange = d.series.series.reduce((a, x) => ({ installs: a.installs + x.installs, revenue: a.revenue + x.revenue }), { installs: 0, revenue: 0 });
  const ranges = CREATOR_RANGES.map((n) => `<option value="${n}"${n === d.days ? ' selected' : ''}>Last ${n} days</option>`).join('');
  const list = d.skills.length
    ? d.skills.map((s) => skillCard(d.user, s, d.versions.get(s.id))).join('\n')
    : '<p id="no-skills">You have not published a skill yet. Publish one from its folder with <code>agw skill publish</code>.</p>';
  const body = `
<h1>Creator</h1>
<dl class="stats" id="creator-totals">
  <div><dt>Skills</dt><dd>${countData(d.skills.length)}</dd></div>
  <div><dt>Installs</dt><dd id="total-installs">${countData(installs)}</dd></div>
  <div><dt>Revenue</dt><dd id="total-revenue">${moneyData(revenue)}</dd></div>
</dl>
<section class="card wide" aria-labelledby="trend-h">
  <h2 id="trend-h">Per day</h2>
  <form method="get" action="/creator" class="toolbar"><label for="days">Range</label><select id="days" name="days">${ranges}</select><button type="submit" class="secondary">Show</button></form>
  <h3 id="installs-h">Installs per day</h3>
  ${barChart({ id: 'installs-chart', labelledBy: 'installs-h', points: pts('installs'), format: (v) => plural(v, 'install'), describe: `${plural(inRange.installs, 'install')} in ${d.days} days` })}
  <h3 id="revenue-h">Revenue per day</h3>
  ${barChart({ id: 'revenue-chart', labelledBy: 'revenue-h', points: pts('revenue'), format: usd, describe: `${usd(inRange.revenue)} in ${d.days} days` })}
  <details><summary>Daily figures as a table</summary><div class="scroll"><table><thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Installs</th><th scope="col" class="num">Revenue</th></tr></thead>
  <tbody>${[...d.series.series].reverse().map((x) => `<tr><td>${x.date}</td><td class="num">${countData(x.installs)}</td><td class="num">${moneyData(x.revenue)}</td></tr>`).join('')}</tbody></table></div></details>
</section>
<h2>Your skills</h2>
<div class="grid" id="my-skills">${list}</div>
<p class="note">Revenue is what your wallet was credited, after the platform fee. Archiving takes a skill out of the catalogue and stops new sales; accounts that installed it can still install and update it. Archiving one version withdraws it: accounts that installed it keep it, nobody else can install it, and it is never current. The current version is the highest published release (a prerelease only when there is no release), unless you make another one current; publishing a release hands that back to the rule.</p>`;
  return renderPage({ title: 'Creator', body, nav: 'creator', user: d.user });
}
