import type { SkillT } from '../../shared/schemas/skills.js';
import type { SkillSort } from '../store/skill-search.js';
import { escapeHtml } from './escape.js';
import { countData, plural, price } from './format.js';
import { renderPage, type PageUser } from './layout.js';

/**
 * `/skills`: the public catalogue as one server-rendered page. Search, category and sort
 * are a plain GET form and paging is links, so it works without JavaScript and every
 * state has a URL.
 */
export interface SkillsQuery {
  q: string;
  category: string;
  sort: SkillSort;
  page: number;
}

export interface SkillsPageData {
  query: SkillsQuery;
  categories: string[];
  items: SkillT[];
  total: number;
  limit: number;
  /** Shown instead of results (e.g. an unknown category). */
  error?: string;
  user?: PageUser;
  path: string;
}

export const SORTS: [SkillSort, string][] = [
  ['popular', 'Most installed'],
  ['recent', 'Recently updated'],
  ['name', 'Name (A–Z)'],
  ['price', 'Price (lowest first)'],
];

const option = (value: string, label: string, selected: boolean) =>
  `<option value="${escapeHtml(value)}"${selected ? ' selected' : ''}>${escapeHtml(label)}</option>`;

/** The URL of a result page with the same search. */
export function searchUrl(q: SkillsQuery, page: number): string {
  const p = new URLSearchParams();
  if (q.q) p.set('q', q.q);
  if (q.category) p.set('category', q.category);
  if (q.sort !== 'popular') p.set('sort', q.sort);
  if (page > 1) p.set('page', String(page));
  const s = p.toString();
  return s ? `/skills?${s}` : '/skills';
}

/** One skill in a list (/skills, a creator's page). */
export function card(s: SkillT): string {
  return `<li class="skill" data-slug="${escapeHtml(s.slug)}">
  <h2><a href="/skills/${encodeURIComponent(s.slug)}">${escapeHtml(s.name)}</a></h2>
  <p>${escapeHtml(s.description)}</p>
  <p class="meta"><span class="tag">${escapeHtml(s.category)}</span> <span>${price(s.price)}</span>
    <span class="installs">${countData(s.installCount)} ${s.installCount === 1 ? 'install' : 'installs'}</span>
    <span>by <a href="/creators/${encodeURIComponent(s.ownerId)}">${escapeHtml(s.ownerName)}</a></span>${s.currentVersion ? ` <span>v${escapeHtml(s.currentVersion)}</span>` : ''}</p>
</li>`;
}

function pager(d: SkillsPageData): string {
  const pages = Math.max(1, Math.ceil(d.total / d.limit));
  if (pages <= 1 && d.query.page <= 1) return '';
  const prev = d.query.page > 1 ? `<a rel="prev" href="${escapeHtml(searchUrl(d.query, Math.min(d.query.page - 1, pages)))}">Previous</a>` : '<span></span>';
  const next = d.query.page < pages ? `<a rel="next" href="${escapeHtml(searchUrl(d.query, d.query.page + 1))}">Next</a>` : '<span></span>';
  return `<nav class="pager" aria-label="Result pages">${prev}<span>Page ${d.query.page} of ${pages}</span>${next}</nav>`;
}

export function skillsPage(d: SkillsPageData): string {
  const q = d.query;
  const results = d.error
    ? `<p class="error" role="alert">${escapeHtml(d.error)}</p>`
    : `<p class="note" id="result-count">${plural(d.total, 'skill')}${q.q ? ` matching “${escapeHtml(q.q)}”` : ''}${q.category ? ` in ${escapeHtml(q.category)}` : ''}</p>
${d.items.length ? `<ul class="skills" id="skill-list">${d.items.map(card).join('\n')}</ul>` : '<p id="skill-list">No skill matches. Try fewer words or another category.</p>'}
${pager(d)}`;
  const body = `
<h1>Skills</h1>
<form method="get" action="/skills" class="search card" role="search">
  <div class="field grow"><label for="q">Search</label><input id="q" name="q" type="search" maxlength="200" value="${escapeHtml(q.q)}" placeholder="words in name or description"></div>
  <div class="field"><label for="category">Category</label><select id="category" name="category">${option('', 'All categories', !q.category)}${d.categories.map((c) => option(c, c, c === q.category)).join('')}</select></div>
  <div class="field"><label for="sort">Sort by</label><select id="sort" name="sort">${SORTS.map(([v, l]) => option(v, l, v === q.sort)).join('')}</select></div>
  <div class="field"><button type="submit">Search</button></div>
</form>
${results}
<p class="note">Install from a terminal with <code>agw skill install SLUG</code>; publish your own with <code>agw skill publish</code>.</p>`;
  return renderPage({ title: q.q ? `Skills: ${q.q}` : 'Skills', body, nav: 'skills', user: d.user, signInNext: d.path });
}
