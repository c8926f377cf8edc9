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
    expect(urls.length).toBe(2);
    let total = Buffer.byteLength(html);
    for (const u of urls) {
      const r = await page(u);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(u.includes('.css') ? /^text\/css/ : /^text\/javascript/);
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
});
