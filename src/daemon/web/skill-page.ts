import { parseFrontMatter } from '../../shared/bundle/frontmatter.js';
import type { PublicVersionsT, SkillT } from '../../shared/schemas/skills.js';
import type { SkillDocs } from '../marketplace/public.js';
import { escapeHtml } from './escape.js';
import { countData, day, price } from './format.js';
import { renderPage, type PageUser } from './layout.js';
import { renderMarkdown } from './markdown.js';
import { trustSection } from './skill-trust.js';
import type { VersionSeal } from '../marketplace/trust/seal.js';

/**
 * `/skills/{slug}`: one skill as its viewer may see it (the API's visibility rules):
 * metadata, the install line (a copy button appears with JavaScript), SKILL.md and the
 * README of the current version rendered as sanitized HTML (markdown.ts), and the versions
 * with their release notes and who last edited them.
 */
export interface SkillPageData {
  skill: SkillT;
  versions: PublicVersionsT;
  docs: SkillDocs;
  user?: PageUser;
  path: string;
  /** The current version's digest, signature and scan findings. */
  trust?: VersionSeal;
}

const stat = (label: string, value: string, id?: string) =>
  `<div><dt>${label}</dt><dd${id ? ` id="${id}"` : ''}>${value}</dd></div>`;

/** Front-matter fields worth showing beside the description (strings only). */
function frontMatterFacts(data: Record<string, unknown> | undefined): string {
  const facts = (['license', 'compatibility'] as const)
    .filter((k) => typeof data?.[k] === 'string' && (data[k] as string).trim())
    .map((k) => `<div><dt>${k === 'license' ? 'License' : 'Compatibility'}</dt><dd>${escapeHtml(data![k])}</dd></div>`);
  return facts.length ? `<dl class="facts">${facts.join('')}</dl>` : '';
}

function docSection(id: string, title: string, html: string): string {
  return `<section class="card doc" aria-labelledby="${id}-h" id="${id}"><h2 id="${id}-h">${title}</h2><div class="md">${html}</div></section>`;
}

function versionRow(v: PublicVersionsT['versions'][number]): string {
  const edited = v.notesUpdatedByName
    ? `<p class="note">Notes edited by ${escapeHtml(v.notesUpdatedByName)}${v.notesUpdatedAt ? ` on ${day(v.notesUpdatedAt)}` : ''}</p>`
    : '';
  return `<li data-version="${escapeHtml(v.version)}"><h3>${escapeHtml(v.version)}${v.isCurrent ? ' <span class="tag">current</span>' : ''}</h3>
  <p class="note">Published ${day(v.publishedAt)} · ${countData(v.installerCount)} on this version</p>
  ${v.notes ? `<div class="md release-notes">${renderMarkdown(v.notes, 3)}</div>` : '<p class="note">No release notes.</p>'}${edited}</li>`;
}

export function skillPage(d: SkillPageData): string {
  const s = d.skill;
  const front = d.docs.skillMd === null ? undefined : parseFrontMatter(d.docs.skillMd);
  const command = `agw skill install ${s.slug}`;
  const archived =
    s.status === 'archived'
      ? `<p class="banner" role="note" id="archived-note">This skill is archived: it is no longer listed or sold. You see it because you own it or installed it before.</p>`
      : '';
  const body = `
<p class="crumbs"><a href="/skills">Skills</a> › <span>${escapeHtml(s.category)}</span></p>
<h1>${escapeHtml(s.name)}</h1>
${archived}
<p class="lead">${escapeHtml(s.description)}</p>
<dl class="stats">
  ${stat('Price', price(s.price), 'skill-price')}${stat('Installs', countData(s.installCount), 'skill-installs')}
  ${stat('Version', s.currentVersion ? escapeHtml(s.currentVersion) : '—')}${stat('By', escapeHtml(s.ownerName))}
</dl>
${frontMatterFacts(front?.data)}
<section class="card install" aria-labelledby="install-h">
  <h2 id="install-h">Install</h2>
  <div class="cmd"><code id="install-cmd">${escapeHtml(command)}</code><button type="button" class="secondary" data-copy="install-cmd" hidden>Copy</button></div>
  <p class="note">${s.price > 0 ? `Costs ${price(s.price)} from your agw wallet, once; later versions are free. ` : ''}Unpacks into <code>.agents/skills/</code>, where agents look for skills (<code>--for claude</code> and others: see <code>agw skill install --help</code>).</p>
  <p id="copy-status" class="sr" role="status" aria-live="polite"></p>
</section>
${d.trust && s.currentVersion ? trustSection(s.slug, s.currentVersion, d.trust) : ''}
${front ? docSection('skill-md', 'SKILL.md', renderMarkdown(front.body)) : ''}
${d.docs.readme !== null ? docSection('readme', 'README', renderMarkdown(d.docs.readme)) : ''}
<section class="card" aria-labelledby="versions-h" id="versions">
  <h2 id="versions-h">Versions</h2>
  ${d.versions.versions.length ? `<ol class="versions">${d.versions.versions.map(versionRow).join('')}</ol>` : '<p class="note">No published version.</p>'}
</section>`;
  return renderPage({ title: s.name, body, nav: 'skills', user: d.user, signInNext: d.path, script: 'site.js' });
}
