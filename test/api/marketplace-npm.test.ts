import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { portalLogin, type PortalSession } from '../helpers/portal.js';
import { json, publishJson } from './skills-helpers.js';

/**
 * The marketplace pages as npmjs.com's (issue #33, item 18, and the page side of items 4-6):
 * the author's public page, what a version contains (files, size, tools), installs this week,
 * homepage and repository links, prereleases marked, release notes as Markdown, and the
 * creator's buttons for one version (archive, make current).
 */
let td: TestDaemon;
let owner: TestUser;
let rival: TestUser;
let ownerS: PortalSession;
const ids: Record<string, number> = {};

const SKILL_MD = [
  '---',
  'name: npm-like',
  'description: Forecasts the weather for a trip.',
  'metadata:',
  '  homepage: https://example.com/npm-like',
  '  repository: https://github.com/example/npm-like',
  '---',
  '# npm-like',
  '',
  'Ask for a city.',
].join('\n');
const tool = (name: string, description: string) => JSON.stringify({ name, description, parameters: { type: 'object', properties: {} } });
const FILES = [
  { path: 'SKILL.md', content: SKILL_MD },
  { path: 'README.md', content: '# Read me\n' },
  { path: 'scripts/run.sh', content: 'echo hi\n' },
  { path: 'tools/alerts.json', content: tool('weather_alerts', 'Severe weather alerts for a region.') },
  { path: 'tools/forecast.json', content: tool('get_forecast', 'The forecast for a city and a day.') },
];
const NOTES = '### Added\n- **Forecasts** for any city\n\n<script>window.__pwned = 1</script>';

const page = (path: string, cookie?: string) => fetch(`${td.url}${path}`, { redirect: 'manual', headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } });
const form = (path: string, s: PortalSession, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${td.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', cookie: s.cookie, ...headers },
    body: new URLSearchParams({ _csrf: s.csrf, ...fields }).toString(),
  });
const listed = (html: string) => [...html.matchAll(/<li class="skill" data-slug="([^"]+)"/g)].map((m) => m[1]);

async function publish(key: string, slug: string, version: string, fields: Record<string, string> = {}, files = FILES) {
  const body = files.map((f) => (f.path === 'SKILL.md' ? { ...f, content: f.content.replace(/npm-like/g, slug) } : f));
  const res = await publishJson(td, key, { version, category: 'research', ...fields }, body);
  expect(res.status, `${slug} ${version}`).toBe(200);
  ids[slug] = (await json(res)).id;
}

beforeAll(async () => {
  td = await startTestDaemon();
  owner = await td.user({ email: 'ada.lovelace@example.com' });
  rival = await td.user();
  await publish(owner.key, 'npm-like', '1.0.0', { notes: NOTES });
  await publish(owner.key, 'npm-like', '1.1.0', { notes: NOTES });
  await publish(owner.key, 'npm-like', '1.2.0-beta.1', { notes: 'Try the **beta**.' });
  await publish(owner.key, 'npm-draft', '1.0.0', { status: 'draft' });
  await publish(owner.key, 'npm-gone', '1.0.0');
  await td.fetch(`/skills/${ids['npm-gone']}`, { method: 'PATCH', key: owner.key, json: { status: 'archived' } });
  await publish(rival.key, 'rival-skill', '1.0.0');
  for (let i = 0; i < 2; i++) expect((await td.fetch(`/skills/${ids['npm-like']}/install`, { method: 'POST', key: (await td.user()).key })).status).toBe(200);
  // an install ten days ago counts in all installs, not in this week's
  const old = await td.user();
  await td.daemon.ctx.db.run('INSERT INTO skill_installs (skill_id, user_id, version, charged_nusd, owner_credit_nusd, created_at) VALUES (?, ?, ?, 0, 0, ?)', [
    ids['npm-like'], old.id, '1.0.0', Date.now() - 10 * 86_400_000,
  ]);
  await td.daemon.ctx.db.run('UPDATE skills SET install_count = install_count + 1 WHERE id = ?', [ids['npm-like']]);
  ownerS = await portalLogin(td, owner);
});
afterAll(async () => {
  await td?.close();
});

describe('the skill page, as a package page', () => {
  test('the author’s name links to their public page; installs in all and this week', async () => {
    const html = await (await page('/skills/npm-like')).text();
    const skill = await json(await td.fetch('/skills/by-slug/npm-like'));
    expect(html).toContain(`<a href="/creators/${skill.ownerId}" id="skill-author">ada.lovelace</a>`);
    expect(html).toContain('<dd id="skill-installs"><data value="3">3</data></dd>');
    expect(html).toContain('<dt>This week</dt><dd id="skill-weekly"><data value="2">2</data></dd>');
  });

  test('what the current version contains: its files with sizes, the total, and the tools of its manifests', async () => {
    const html = await (await page('/skills/npm-like')).text();
    const total = FILES.reduce((n, f) => n + Buffer.byteLength(f.content), 0);
    expect(html).toContain('<h2 id="contents-h">What version 1.1.0 contains</h2>');
    expect(html).toContain(`<p id="skill-size"><data value="5">5</data> files, <data value="${total}">`);
    const table = html.slice(html.indexOf('<table id="skill-files">'), html.indexOf('</table>', html.indexOf('<table id="skill-files">')));
    expect([...table.matchAll(/<code class="wrap">([^<]+)<\/code><\/td><td class="num"><data value="(\d+)">/g)].map((m) => [m[1], Number(m[2])])).toEqual(
      FILES.map((f) => [f.path, Buffer.byteLength(f.content)]).sort(),
    );
    expect([...html.matchAll(/<li data-tool="([^"]+)"><code>[^<]+<\/code> ([^<]+)<\/li>/g)].map((m) => [m[1], m[2]])).toEqual([
      ['weather_alerts', 'Severe weather alerts for a region.'],
      ['get_forecast', 'The forecast for a city and a day.'],
    ]);
  });

  test('homepage and repository from SKILL.md metadata, as nofollow links; anything but http(s) is not linked', async () => {
    const html = await (await page('/skills/npm-like')).text();
    expect(html).toContain('<a id="skill-homepage" href="https://example.com/npm-like" rel="nofollow ugc noopener noreferrer">example.com/npm-like</a>');
    expect(html).toContain('<a id="skill-repository" href="https://github.com/example/npm-like" rel="nofollow ugc noopener noreferrer">github.com/example/npm-like</a>');
    const evil = FILES.map((f) => (f.path === 'SKILL.md' ? { ...f, content: f.content.replace('https://example.com/npm-like', 'javascript:alert(1)') } : f));
    await publish(rival.key, 'rival-evil', '1.0.0', {}, evil);
    const other = await (await page('/skills/rival-evil')).text();
    expect(other).not.toContain('skill-homepage');
    expect(other).not.toContain('javascript:');
    expect(other).toContain('id="skill-repository"');
  });

  test('versions: the prerelease marked, the current one tagged, release notes rendered as Markdown (inert)', async () => {
    const html = await (await page('/skills/npm-like')).text();
    expect(html).toContain('<h3>1.2.0-beta.1 <span class="tag pre">prerelease</span></h3>');
    expect(html).toContain('<h3>1.1.0 <span class="tag">current</span></h3>');
    const v11 = html.slice(html.indexOf('<li data-version="1.1.0">'), html.indexOf('<li data-version="1.0.0">'));
    expect(v11).toContain('<h4>Added</h4>');
    expect(v11).toContain('<li><strong>Forecasts</strong> for any city</li>');
    expect(v11).toContain('&lt;script&gt;window.__pwned = 1&lt;/script&gt;');
    expect(html).not.toContain('<script>window');
    expect(html).toContain('<p>Try the <strong>beta</strong>.</p>');
  });
});

describe('/creators/{id}', () => {
  test('lists the creator’s published skills as GET /api/skills?owner= does, never drafts or archived ones', async () => {
    const r = await page(`/creators/${owner.id}`);
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).toContain('<h1 id="creator-name">ada.lovelace</h1>');
    const api = await json(await td.fetch(`/skills?owner=${owner.id}`));
    expect(api.items.map((s: { slug: string }) => s.slug)).toEqual(['npm-like']);
    expect(listed(html)).toEqual(['npm-like']);
    expect(html).toContain('<dd id="creator-installs"><data value="3">3</data></dd>');
    const rivalPage = await (await page(`/creators/${rival.id}`)).text();
    expect(listed(rivalPage)).toEqual(['rival-evil', 'rival-skill'].sort((a, b) => ids[b] - ids[a]));
    // the /skills list links each author too
    expect(await (await page('/skills?q=npm')).text()).toContain(`by <a href="/creators/${owner.id}">ada.lovelace</a>`);
  });

  test('an unknown id and an account without published skills are the HTML 404 page', async () => {
    const nobody = await td.user();
    for (const id of ['usr_nope', nobody.id]) {
      const r = await page(`/creators/${id}`);
      expect(r.status, id).toBe(404);
      expect(await r.text()).toContain('Page not found');
    }
    const long = await page(`/creators/${'x'.repeat(150)}`); // over the router's parameter limit
    expect([long.status, (await long.text()).includes('Page not found')]).toEqual([400, true]);
  });
});

describe('/creator: one version’s buttons (plain forms)', () => {
  test('a published version has Archive (unless it is the only one) and Make current; the prerelease is marked', async () => {
    const html = await (await page('/creator', ownerS.cookie)).text();
    const id = ids['npm-like'];
    expect(html).toContain(`action="/creator/skills/${id}/versions/1.0.0/archive"`);
    expect(html).toContain(`aria-label="Make version 1.2.0-beta.1 of npm-like current"`);
    expect(html).not.toContain('aria-label="Make version 1.1.0 of npm-like current"'); // already current
    expect(html).toMatch(/<tr data-version="1\.2\.0-beta\.1"><td>1\.2\.0-beta\.1 <span class="tag pre">prerelease<\/span><\/td>/);
    expect(html).not.toContain(`/creator/skills/${ids['npm-gone']}/versions/1.0.0/archive`); // its only version
  });

  test('archive a version: 303 back, archived, no longer current; a cross-site post is refused', async () => {
    const id = ids['npm-like'];
    const evil = await form(`/creator/skills/${id}/versions/1.1.0/archive`, ownerS, {}, { 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' });
    expect(evil.status).toBe(403);
    expect(await evil.text()).toContain('CSRF_FAILED');
    const r = await form(`/creator/skills/${id}/versions/1.1.0/archive`, ownerS, {});
    expect([r.status, r.headers.get('location')]).toEqual([303, `/creator#skill-${id}`]);
    const versions = await json(await td.fetch(`/skills/${id}/versions`, { key: owner.key }));
    expect(versions.currentVersion).toBe('1.0.0');
    expect(versions.versions.find((v: { version: string }) => v.version === '1.1.0').status).toBe('archived');
    const html = await (await page('/creator', ownerS.cookie)).text();
    expect(html).toContain(`aria-label="Publish version 1.1.0 of npm-like"`);
  });

  test('make a version current, then hand it back to the rule', async () => {
    const id = ids['npm-like'];
    const r = await form(`/creator/skills/${id}/current`, ownerS, { version: '1.2.0-beta.1' });
    expect(r.status).toBe(303);
    expect((await json(await td.fetch(`/skills/${id}`))).currentVersion).toBe('1.2.0-beta.1');
    const html = await (await page('/creator', ownerS.cookie)).text();
    expect(html).toContain('You chose 1.2.0-beta.1 as the current version.');
    expect((await form(`/creator/skills/${id}/current`, ownerS, { version: '' })).status).toBe(303);
    expect((await json(await td.fetch(`/skills/${id}`))).currentVersion).toBe('1.0.0');
    const draft = await form(`/creator/skills/${ids['npm-draft']}/current`, ownerS, { version: '9.9.9' });
    expect(draft.status).toBe(404);
    expect(draft.headers.get('content-type')).toMatch(/^text\/html/);
  });
});
