import type { SkillT } from '../../shared/schemas/skills.js';
import { escapeHtml } from './escape.js';
import { countData, plural } from './format.js';
import { renderPage, type PageUser } from './layout.js';
import { card } from './skills-page.js';

/**
 * `/creators/{id}`: a creator's public page (as an author's page on npmjs.com): their name,
 * how many skills they publish and how often those were installed, and the skills (most
 * installed first), from the same search as GET /api/skills?owner={id}. The author's name
 * on a skill page links here.
 */
export interface CreatorPublicData {
  name: string;
  items: SkillT[];
  total: number;
  user?: PageUser;
  path: string;
}

export function creatorPublicPage(d: CreatorPublicData): string {
  const installs = d.items.reduce((n, s) => n + s.installCount, 0);
  const more = d.total > d.items.length ? `<p class="note">The ${d.items.length} most installed of ${plural(d.total, 'skill')}.</p>` : '';
  const body = `
<p class="crumbs"><a href="/skills">Skills</a> › <span>Creators</span></p>
<h1 id="creator-name">${escapeHtml(d.name)}</h1>
<dl class="stats" id="creator-public-totals">
  <div><dt>Skills</dt><dd id="creator-skills">${countData(d.total)}</dd></div>
  <div><dt>Installs</dt><dd id="creator-installs">${countData(installs)}</dd></div>
</dl>
<ul class="skills" id="skill-list">${d.items.map(card).join('\n')}</ul>
${more}`;
  return renderPage({ title: d.name, body, nav: 'skills', user: d.user, signInNext: d.path });
}
