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
 * `/skills/{slug}`: one skill as its viewer may see it (the API's visibility rules), laid
 * out as a package page on npmjs.com: metadata with installs this week, the author (linked
 * to their page) and the homepage and repository the SKILL.md names, the install line (a
 * copy button appears with JavaScript), the current version's files with their sizes and
 * the tools its manifests declare, SKILL.md and the README rendered as sanitized HTML
 * (markdown.ts), and the versions (prereleases marked) with their release notes, rendered
 * the same way, and who last edited them.
 */
export interface SkillPageData {
  skill: SkillT;
  versions: PublicVersionsT;
  docs: SkillDocs;
  /** First installs in the last 7 days. */
  weeklyInstalls: number;
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

/** `metadata.homepage` and `metadata.repository` of SKILL.md, http(s) only, as links (rel as for README links). */
function projectLinks(data: Record<string, unknown> | undefined): string {
  const meta = data?.metadata && typeof data.metadata === 'object' ? (data.metadata as Record<string, unknown>) : {};
  const links = (['homepage', 'repository'] as const).flatMap((k) => {
    const url = meta[k];
    if (typeof url !== 'string' || !/^https?:\/\/[^\s]+$/i.test(url.trim())) return [];
    const label = k === 'homepage' ? 'Homepage' : 'Repository';
    return [`<div><dt>${label}</dt><dd><a id="skill-${k}" href="${escapeHtml(url.trim())}" rel="nofollow ugc noopener noreferrer">${escapeHtml(url.trim().replace(/^https?:\/\//i, ''))}</a></dd></div>`];
  });
  return links.length ? `<dl class="facts">${links.join('')}</dl>` : '';
}

/** Bytes as people read them (1 KiB = 1024 bytes). */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = bytes / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/** The current version's files and the tools its manifests declare. */
function contentsSection(d: SkillPageData): string {
  const { files, tools, version } = d.docs;
  if (!version || files.length === 0) return '';
  const total = files.reduce((n, f) => n + f.size, 0);
  const toolList = tools.length
    ? `<h3 id="tools-h">Tools</h3><ul class="versions" id="skill-tools">${tools.map((t) => `<li data-tool="${escapeHtml(t.name)}"><code>${escapeHtml(t.name)}</code> ${escapeHtml(t.description)}</li>`).join('')}</ul>`
    : '<p class="note" id="skill-tools">No tool manifests (<code>tools/*.json</code>).</p>';
  const rows = files.map((f) => `<tr><td><code class="wrap">${escapeHtml(f.path)}</code></td><td class="num"><data value="${f.size}">${size(f.size)}</data></td></tr>`).join('');
  return `<section class="card" aria-labelledby="contents-h" id="contents">
  <h2 id="contents-h">What version ${escapeHtml(version)} contains</h2>
  <p id="skill-size"><data value="${files.length}">${files.length}</data> file${files.length === 1 ? '' : 's'}, <data value="${total}">${size(total)}</data> unpacked</p>
  ${toolList}
  <details><summary>Files</summary><div class="scroll"><table id="skill-files"><thead><tr><th scope="col">Path</th><th scope="col" class="num">Size</th></tr></thead><tbody>${rows}</tbody></table></div></details>
</section>`;
}

function docSection(id: string, title: string, html: string): string {
  return `<section class="card doc" aria-labelledby="${id}-h" id="${id}"><h2 id="${id}-h">${title}</h2><div class="md">${html}</div></section>`;
}

function versionRow(v: PublicVersionsT['versions'][number]): string {
  const edited = v.notesUpdatedByName
    ? `<p class="note">Notes edited by ${escapeHtml(v.notesUpdatedByName)}${v.notesUpdatedAt ? ` on ${day(v.notesUpdatedAt)}` : ''}</p>`
    : '';
  const tags = `${v.prerelease ? ' <span class="tag pre">prerelease</span>' : ''}${v.status === 'archived' ? ' <span class="status archived">archived</span>' : ''}${v.isCurrent ? ' <span class="tag">current</span>' : ''}`;
  return `<li data-version="${escapeHtml(v.version)}"><h3>${escapeHtml(v.version)}${tags}</h3>
  <p class="note">Published ${day(v.publishedAt)} · ${countData(v.installerCount)} on this version</p>
  ${v.notes ? `<div class="md release-notes">${renderMarkdown(v.notes, 4)}</div>` : '<p class="note">No release notes.</p>'}${edited}</li>`;
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
  ${stat('Price', price(s.price), 'skill-price')}${stat('Installs', countData(s.installCount), 'skill-installs')}${stat('This week', countData(d.weeklyInstalls), 'skill-weekly')}
  ${stat('Version', s.currentVersion ? escapeHtml(s.currentVersion) : '—')}${stat('By', `<a href="/creators/${encodeURIComponent(s.ownerId)}" id="skill-author">${escapeHtml(s.ownerName)}</a>`)}
</dl>
${projectLinks(front?.data)}${frontMatterFacts(front?.data)}
<section class="card install" aria-labelledby="install-h">
  <h2 id="install-h">Install</h2>
  <div class="cmd"><code id="install-cmd">${escapeHtml(command)}</code><button type="button" class="secondary" data-copy="install-cmd" hidden>Copy</button></div>
  <p class="note">${s.price > 0 ? `Costs ${price(s.price)} from your agw wallet, once; later versions are free. ` : ''}Unpacks into <code>.agents/skills/</code>, where agents look for skills (<code>--for claude</code> and others: see <code>agw skill install --help</code>).</p>
  <p id="copy-status" class="sr" role="status" aria-live="polite"></p>
</section>
${contentsSection(d)}
${d.trust && s.currentVersion ? trustSection(s.slug, s.currentVersion, d.trust) : ''}
${front ? docSection('skill-md', 'SKILL.md', renderMarkdown(front.body)) : ''}
${d.docs.readme !== null ? docSection('readme', 'README', renderMarkdown(d.docs.readme)) : ''}
<section class="card" aria-labelledby="versions-h" id="versions">
  <h2 id="versions-h">Versions</h2>
  ${d.versions.versions.length ? `<ol class="versions">${d.versions.versions.map(versionRow).join('')}</ol>` : '<p class="note">No published version.</p>'}
</section>`;
  return renderPage({ title: s.name, body, nav: 'skills', user: d.user, signInNext: d.path, script: 'site.js' });
}
