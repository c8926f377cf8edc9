import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { portalLogin, type PortalSession } from '../helpers/portal.js';
import { json, publishJson, skillMd } from './skills-helpers.js';

/**
 * The marketplace's web pages over HTTP (the browser suite drives them in Chromium):
 * status codes, security headers, the same data as the JSON API, visibility, the
 * creator's form posts and the HTML 404.
 */
let td: TestDaemon;
let owner: TestUser;
let fan: TestUser;
let other: TestUser;
let ownerS: PortalSession;
let fanS: PortalSession;
let otherS: PortalSession;
const ids: Record<string, number> = {};

const page = (path: string, init: { cookie?: string; accept?: string } = {}) =>
  fetch(`${td.url}${path}`, {
    redirect: 'manual',
    headers: { accept: init.accept ?? 'text/html,application/xhtml+xml', ...(init.cookie ? { cookie: init.cookie } : {}) },
  });
const form = (path: string, s: PortalSession | undefined, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${td.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', ...(s ? { cookie: s.cookie } : {}), ...headers },
    body: new URLSearchParams(fields).toString(),
  });
/** The slugs listed on a /skills page, in order. */
const listed = (html: string) => [...html.matchAll(/<li class="skill" data-slug="([^"]+)"/g)].map((m) => m[1]);
const apiSlugs = async (query: string) => ((await json(await td.fetch(`/skills?${query}`))).items as { slug: string }[]).map((s) => s.slug);

async function publish(slug: string, fields: Record<string, string | number>, extra: { path: string; content: string }[] = []) {
  const files = [{ path: 'SKILL.md', content: skillMd(slug, `The ${slug} skill.`, `# ${slug}\n\nUse **${slug}** well.\n`) }, ...extra];
  const res = await publishJson(td, owner.key, { version: '1.0.0', category: 'scene', ...fields }, files);
  expect(res.status).toBe(200);
  ids[slug] = (await json(res)).id;
}

beforeAll(async () => {
  td = await startTestDaemon();
  owner = await td.user();
  fan = await td.user({ balance: 20 });
  other = await td.user();
  await publish('web-alpha', { name: 'Web Alpha', price: 2, category: 'npc-dialogue' }, [
    { path: 'README.md', content: '# Read me\n\n<script>window.__pwned = 1</script>\n\n<img src=x onerror="window.__pwned = 2">\n' },
  ]);
  await publish('web-beta', { name: 'Web Beta', category: 'story-terrain' });
  await publish('web-draft', { name: 'Web Draft', status: 'draft' });
  await publish('web-gone', { name: 'Web Gone' });
  for (let i = 0; i < 21; i++) await publish(`filler-${String(i).padStart(2, '0')}`, { name: `Filler ${i}` });
  await td.fetch(`/skills/${ids['web-alpha']}/versions/1.0.0`, { method: 'PATCH', key: owner.key, json: { notes: 'First <b>release</b>.' } });
  expect((await td.fetch(`/skills/${ids['web-alpha']}/install`, { method: 'POST', key: fan.key })).status).toBe(200);
  expect((await td.fetch(`/skills/${ids['web-gone']}/install`, { method: 'POST', key: fan.key })).status).toBe(200);
  await td.fetch(`/skills/${ids['web-gone']}`, { method: 'PATCH', key: owner.key, json: { status: 'archived' } });
  [ownerS, fanS, otherS] = await Promise.all([portalLogin(td, owner), portalLogin(td, fan), portalLogin(td, other)]);
});
afterAll(async () => {
  await td?.close();
});

function expectStrictPage(r: Response) {
  expect(r.headers.get('content-type')).toMatch(/^text\/html/);
  const csp = r.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).toContain("frame-ancestors 'none'");
  expect(r.headers.get('x-content-type-options')).toBe('nosniff');
}

describe('/skills', () => {
  test('lists what GET /api/skills lists, in the same order, 20 to a page, with the strict CSP', async () => {
    const r = await page('/skills');
    expect(r.status).toBe(200);
    expectStrictPage(r);
    const html = await r.text();
    expect(listed(html)).toEqual(await apiSlugs('limit=20'));
    expect(listed(html)).toHaveLength(20);
    expect(html).toContain('23 skills'); // 2 + 21 fillers: the draft and the archived one are not listed
    expect(html).not.toContain('web-draft');
    expect(html).not.toContain('web-gone');
    expect(html).not.toMatch(/<script(?![^>]*src="\/assets\/)/);
    expect(html).not.toMatch(/(?:src|href)="https?:/);
    const two = await (await page('/skills?page=2')).text();
    expect(listed(two)).toEqual(await apiSlugs('limit=20&page=2'));
    expect(two).toContain('Page 2 of 2');
    expect(two).toContain('rel="prev" href="/skills"');
  });

  test('search, category and sort narrow and order the list as the API does', async () => {
    for (const q of ['q=alpha', 'q=web', 'category=story-terrain', 'sort=name', 'sort=price&q=web', 'sort=recent&category=scene']) {
      expect(listed(await (await page(`/skills?${q}`)).text()), q).toEqual(await apiSlugs(`${q}&limit=20`));
    }
    expect(listed(await (await page('/skills?q=alpha')).text())).toEqual(['web-alpha']);
    expect(await (await page('/skills?q=nothing-like-this')).text()).toContain('No skill matches');
  });

  test('a bad query is forgiven (sort, page) or answered with a 400 page (unknown category)', async () => {
    expect(listed(await (await page('/skills?sort=bogus&page=-3')).text())).toEqual(await apiSlugs('limit=20'));
    const r = await page('/skills?category=%3Cscript%3E');
    expect(r.status).toBe(400);
    const html = await r.text();
    expect(html).toContain('There is no category “&lt;script&gt;”');
    expect(html).not.toContain('<script>');
  });
});

describe('/skills/{slug}', () => {
  test('shows SKILL.md and README as inert HTML, price, installs, versions with notes and editor, the install line', async () => {
    const r = await page('/skills/web-alpha');
    expect(r.status).toBe(200);
    expectStrictPage(r);
    const html = await r.text();
    expect(html).toContain('<h1>Web Alpha</h1>');
    expect(html).toContain('<h2>web-alpha</h2>'); // SKILL.md's heading, one level down
    expect(html).toContain('Use <strong>web-alpha</strong> well.');
    expect(html).toContain('&lt;script&gt;window.__pwned = 1&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror="window.__pwned = 2"&gt;');
    expect(html).not.toMatch(/<img|<script>window/);
    expect(html).toContain('<dd id="skill-price"><data value="2">$2.00</data></dd>');
    const api = await json(await td.fetch('/skills/by-slug/web-alpha'));
    expect(html).toContain(`<dd id="skill-installs"><data value="${api.installCount}">`);
    expect(api.installCount).toBe(1);
    expect(html).toContain('<code id="install-cmd">agw skill install web-alpha</code>');
    expect(html).toContain('First &lt;b&gt;release&lt;/b&gt;.');
    const editor = owner.email.split('@')[0];
    expect(html).toContain(`Notes edited by ${editor}`);
    expect(html).toMatch(/<script src="\/assets\/site\.js\?v=[0-9a-f]+" defer><\/script>/);
  });

  test('a draft, a missing skill and an archived one (for strangers) are HTML 404 pages', async () => {
    for (const slug of ['web-draft', 'no-such-skill', 'web-gone']) {
      const r = await page(`/skills/${slug}`, { cookie: otherS.cookie });
      expect(r.status, slug).toBe(404);
      expectStrictPage(r);
      expect(await r.text()).toContain('Page not found');
    }
    expect((await page('/skills/web-draft')).status).toBe(404);
  });

  test('an archived skill is shown with a note to its owner and to earlier installers', async () => {
    for (const s of [ownerS, fanS]) {
      const r = await page('/skills/web-gone', { cookie: s.cookie });
      expect(r.status).toBe(200);
      expect(await r.text()).toContain('id="archived-note"');
    }
  });
});

describe('/creator', () => {
  test('without a session: a 303 to the login page, returning here', async () => {
    const r = await page('/creator?days=7');
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe(`/login?next=${encodeURIComponent('/creator?days=7')}`);
  });

  test('shows each skill’s installs and revenue as GET /api/skills/mine has them', async () => {
    const r = await page('/creator', { cookie: ownerS.cookie });
    expect(r.status).toBe(200);
    expectStrictPage(r);
    const html = await r.text();
    const mine = (await json(await td.fetch('/skills/mine', { key: owner.key }))).items as { id: number; installs: number; revenue: number }[];
    expect(mine.length).toBe(25);
    for (const s of mine) {
      const card = html.slice(html.indexOf(`id="skill-${s.id}"`));
      expect(card).toMatch(new RegExp(`^[^]*?<dd class="installs"><data value="${s.installs}">[^]*?<dd class="revenue"><data value="${s.revenue}">`));
    }
    expect(html).toContain('<svg id="installs-chart"');
    expect((html.match(/<rect class="b"/g) ?? []).length).toBe(60); // 30 days × 2 charts
    expect(html).toContain('aria-current="page">Creator');
  });

  test('archive and publish through plain form posts; the CSRF token and ownership are checked', async () => {
    const id = ids['web-beta'];
    const crossSite = await form(`/creator/skills/${id}/status`, ownerS, { status: 'archived' }, { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await crossSite.text()).toContain('CSRF_FAILED');
    const notOwner = await form(`/creator/skills/${id}/status`, otherS, { status: 'archived', _csrf: otherS.csrf });
    expect(notOwner.status).toBe(403);
    expect(await notOwner.text()).toContain('NOT_OWNER');
    const signedOut = await form(`/creator/skills/${id}/status`, undefined, { status: 'archived' });
    expect([signedOut.status, signedOut.headers.get('location')]).toEqual([303, '/login?next=%2Fcreator']);
    expect((await json(await td.fetch(`/skills/${id}`))).status).toBe('published');

    const archive = await form(`/creator/skills/${id}/status`, ownerS, { status: 'archived', _csrf: ownerS.csrf });
    expect([archive.status, archive.headers.get('location')]).toEqual([303, `/creator#skill-${id}`]);
    expect((await td.fetch(`/skills/${id}`)).status).toBe(404);
    const again = await form(`/creator/skills/${id}/versions/1.0.0/publish`, ownerS, { _csrf: ownerS.csrf });
    expect(again.status).toBe(303);
    expect((await json(await td.fetch(`/skills/${id}`))).status).toBe('published');
    const bad = await form(`/creator/skills/${id}/status`, ownerS, { status: 'deleted', _csrf: ownerS.csrf });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/^text\/html/);
  });
});

describe('site navigation and the HTML 404', () => {
  test('the dashboard, /skills and /creator share one navigation marking the current page', async () => {
    for (const [path, current] of [['/', 'Dashboard'], ['/skills', 'Skills'], ['/creator', 'Creator']]) {
      const html = await (await page(path, { cookie: ownerS.cookie })).text();
      expect(html, path).toContain('<nav class="site" aria-label="Site">');
      expect(html, path).toContain(`aria-current="page">${current}</a>`);
      expect(html, path).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    }
  });

  test('an unknown page is an HTML 404; unknown API paths keep the JSON Error body', async () => {
    const r = await page('/no/such/page');
    expect(r.status).toBe(404);
    expectStrictPage(r);
    expect(await r.text()).toContain('<h1 id="err-h">Page not found</h1>');
    const head = await fetch(`${td.url}/no/such/page`, { method: 'HEAD' });
    expect(head.status).toBe(404);
    for (const [path, accept] of [['/api/no/such', 'text/html'], ['/no/such/page', 'application/json'], ['/api', '*/*']]) {
      const j = await page(path, { accept });
      expect(j.status, path).toBe(404);
      expect(await j.json(), path).toMatchObject({ code: 'NOT_FOUND' });
    }
    const long = await page(`/skills/${'a'.repeat(150)}`); // over the router's parameter limit
    expect(long.status).toBe(400);
    expect(await long.text()).toContain('Page not found');
    const longApi = await page(`/api/skills/by-slug/${'a'.repeat(150)}`);
    expect((await longApi.json()).code).toBe('INVALID_REQUEST');
    const post = await fetch(`${td.url}/no/such/page`, { method: 'POST' });
    expect((await post.json()).code).toBe('NOT_FOUND');
  });
});
