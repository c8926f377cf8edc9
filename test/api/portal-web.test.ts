import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { portalLogin, type PortalSession } from '../helpers/portal.js';

describe('web portal pages', () => {
  let td: TestDaemon;
  let eve: TestUser;
  let s: PortalSession;
  const page = (path: string, cookie?: string) =>
    fetch(`${td.url}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });

  beforeAll(async () => {
    td = await startTestDaemon();
    eve = await td.user({ email: `"<img src=x onerror=alert(1)>"@example.com` });
    s = await portalLogin(td, eve);
  });
  afterAll(() => td.close());

  test('/ without a session is the login form, with a strict CSP and no caching', async () => {
    const r = await page('/?next=/api/oauth/authorize%3Fclient_id%3Dabc');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(r.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(r.headers.get('cache-control')).toBe('no-store');
    const html = await r.text();
    expect(html).toContain('<label for="email">Email</label>');
    expect(html).toContain('name="next" value="/api/oauth/authorize?client_id=abc"');
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
  });

  test('/ with a session is the dashboard; every user string is escaped', async () => {
    const r = await page('/', s.cookie);
    const html = await r.text();
    expect(html).toContain('<h1>Dashboard</h1>');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toContain('<img src=x');
    expect(html).toContain(`<meta name="csrf-token" content="${s.csrf}">`);
    expect(r.headers.get('set-cookie')).toMatch(/^service_session=.*Max-Age=604800/);
  });

  test('/login with a session goes straight to a same-origin next, never elsewhere', async () => {
    const ok = await page('/login?next=%2Fapi%2Foauth%2Fauthorize%3Fx%3D1', s.cookie);
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/api/oauth/authorize?x=1');
    for (const evil of ['https://evil.example', '//evil.example', '/\\evil.example', '/\t/evil.example', 'javascript:alert(1)']) {
      const r = await page(`/login?next=${encodeURIComponent(evil)}`, s.cookie);
      expect(r.headers.get('location')).toBe('/');
    }
    expect((await page('/login')).status).toBe(200);
  });

  test('assets are served by agw with types, long caching when versioned, and 304s', async () => {
    const html = await (await page('/', s.cookie)).text();
    const urls = [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    expect(urls.length).toBe(3); // the icon, the stylesheet, the script
    let total = Buffer.byteLength(html);
    for (const u of urls) {
      const r = await page(u);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(u.includes('.css') ? /^text\/css/ : u.includes('.svg') ? /^image\/svg\+xml/ : /^text\/javascript/);
      expect(r.headers.get('cache-control')).toContain('immutable');
      total += (await r.arrayBuffer()).byteLength;
      const again = await fetch(`${td.url}${u}`, { headers: { 'if-none-match': r.headers.get('etag')! } });
      expect(again.status).toBe(304);
    }
    expect(total).toBeLessThan(50 * 1024);
    const missing = await page('/assets/nope.js');
    expect(missing.status).toBe(404);
    expect((await missing.json()).code).toBe('NOT_FOUND');
    expect((await page('/assets/__proto__')).status).toBe(404);
  });

  test('a favicon (issue #33): every page links the SVG icon; /favicon.ico leads to it', async () => {
    for (const path of ['/', '/login', '/skills']) {
      const html = await (await page(path, path === '/' ? s.cookie : undefined)).text();
      expect(html, path).toMatch(/<link rel="icon" href="\/assets\/favicon\.svg\?v=[0-9a-f]{12}" type="image\/svg\+xml">/);
    }
    const ico = await fetch(`${td.url}/favicon.ico`, { redirect: 'manual' });
    expect(ico.status).toBe(302);
    const svg = await fetch(`${td.url}${ico.headers.get('location')}`);
    expect([svg.status, svg.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    expect(await svg.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  });

  test('a project is created from the Projects card: a plain form post (303 back), or JSON; cross-site refused (issue #33)', async () => {
    const html = await (await page('/', s.cookie)).text();
    expect(html).toMatch(/<form id="project-form" class="row" method="post" action="\/api\/portal\/projects">\s*<input type="hidden" name="_csrf" value="[^"]+">/);
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${td.url}/api/portal/projects`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', ...headers },
        body,
      });
    const form = await post(new URLSearchParams({ name: 'Game', _csrf: s.csrf }).toString(), { 'sec-fetch-site': 'same-origin', origin: td.url });
    expect([form.status, form.headers.get('location')]).toEqual([303, '/#projects']);
    const json = await td.fetch('/portal/projects', { method: 'POST', headers: { cookie: s.cookie }, json: { name: '  Tools  ' } });
    expect(json.status).toBe(200);
    expect(await json.json()).toMatchObject({ uid: expect.stringMatching(/^prj_/), name: 'Tools', role: 'owner' });
    const crossSite = await post(new URLSearchParams({ name: 'Evil' }).toString(), { 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' });
    expect(crossSite.status).toBe(403);
    for (const name of ['', '   ']) expect((await td.fetch('/portal/projects', { method: 'POST', headers: { cookie: s.cookie }, json: { name } })).status).toBe(400);
    expect((await td.fetch('/portal/projects', { method: 'POST', json: { name: 'x' } })).status).toBe(401);
    const list = await (await td.fetch('/portal/projects', { headers: { cookie: s.cookie } })).json();
    expect(list.items.map((p: { name: string; role: string }) => [p.name, p.role])).toEqual([['Game', 'owner'], ['Tools', 'owner']]);
  });

  test('the key form’s budget period defaults to total, as the API’s does (issue #33)', async () => {
    const html = await (await page('/', s.cookie)).text();
    expect(html).toContain('<select id="new-period"><option value="day">day</option><option value="week">week</option><option value="month">month</option><option value="total" selected>in total</option></select>');
  });
});
