import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { getJson, portalLogin } from '../helpers/portal.js';

const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const FORM = 'application/x-www-form-urlencoded';

describe('portal session lifecycle', () => {
  let td: TestDaemon;
  let alice: TestUser;

  beforeAll(async () => {
    td = await startTestDaemon();
    alice = await td.user({ tier: 'team' });
  });
  afterAll(() => td.close());

  test('JSON login sets an HttpOnly SameSite=Lax cookie whose id is stored only hashed', async () => {
    const s = await portalLogin(td, alice);
    expect(s.userId).toBe(alice.id);
    expect(s.setCookie).toMatch(/^service_session=[A-Za-z0-9_-]{30,};/);
    expect(s.setCookie).toMatch(/; HttpOnly/);
    expect(s.setCookie).toMatch(/; SameSite=Lax/);
    expect(s.setCookie).toMatch(/; Path=\//);
    expect(s.setCookie).toMatch(/; Max-Age=604800/);
    expect(s.setCookie).not.toMatch(/Secure/);
    const id = s.cookie.split('=')[1];
    const rows = await td.daemon.ctx.db.all<{ id_hash: string }>('SELECT id_hash FROM sessions WHERE user_id = ?', [alice.id]);
    expect(rows.map((r) => r.id_hash)).toContain(createHash('sha256').update(id).digest('hex'));
    expect(rows.map((r) => r.id_hash)).not.toContain(id);
  });

  test('me answers {userId, email, tier} for the cookie, 401 without it or with a gateway key', async () => {
    const s = await portalLogin(td, alice);
    const me = await getJson(td, '/portal/me', s.cookie);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ userId: alice.id, email: alice.email, tier: 'team' });
    expect(me.body.csrfToken).toEqual(expect.any(String));
    const none = await getJson(td, '/portal/me');
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('UNAUTHORIZED');
    const key = await td.fetch('/portal/me', { key: alice.key });
    expect(key.status).toBe(401);
    const forged = await getJson(td, '/portal/me', 'service_session=not-a-session');
    expect(forged.status).toBe(401);
  });

  test('wrong password and unknown email get the same 401 INVALID_CREDENTIALS', async () => {
    const wrong = await td.fetch('/portal/login', { method: 'POST', json: { email: alice.email, password: 'nope' } });
    const unknown = await td.fetch('/portal/login', { method: 'POST', json: { email: 'nobody@example.com', password: 'nope' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const [a, b] = [await wrong.json(), await unknown.json()];
    expect(a).toEqual(b);
    expect(a.code).toBe('INVALID_CREDENTIALS');
    expect(wrong.headers.get('set-cookie')).toBeNull();
  });

  test('bad bodies are 400 with the field named, and set no cookie', async () => {
    const r = await td.fetch('/portal/login', { method: 'POST', json: { email: alice.email } });
    expect(r.status).toBe(400);
    const body = await r.json();
    expect(body.code).toBe('INVALID_REQUEST');
    expect(body.details.field).toBe('password');
    expect(r.headers.get('set-cookie')).toBeNull();
    const junk = await td.fetch('/portal/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":' });
    expect(junk.status).toBe(400);
  });

  test('form login: JSON answer for tools, 303 to a same-origin next for browsers', async () => {
    const tool = await td.fetch('/portal/login', {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: form({ email: alice.email, password: alice.password }),
    });
    expect(tool.status).toBe(200);
    expect(await tool.json()).toEqual({ userId: alice.id });
    for (const [next, where] of [
      ['/api/oauth/authorize?client_id=x&state=1', '/api/oauth/authorize?client_id=x&state=1'],
      ['//evil.example/steal', '/'],
      ['https://evil.example/', '/'],
      ['/\\evil.example', '/'],
    ]) {
      const r = await td.fetch('/portal/login', {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': FORM, accept: 'text/html', origin: td.url },
        body: form({ email: alice.email, password: alice.password, next }),
      });
      expect(r.status).toBe(303);
      expect(r.headers.get('location')).toBe(where);
      expect(r.headers.get('set-cookie')).toMatch(/^service_session=/);
    }
  });

  test('a browser form with a wrong password shows the login page again with 401', async () => {
    const r = await td.fetch('/portal/login', {
      method: 'POST',
      headers: { 'content-type': FORM, accept: 'text/html' },
      body: form({ email: '<b>x</b>@example.com', password: 'wrong', next: '/x' }),
    });
    expect(r.status).toBe(401);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    const html = await r.text();
    expect(html).toContain('wrong email or password');
    expect(html).toContain('&lt;b&gt;x&lt;/b&gt;@example.com');
    expect(html).not.toContain('<b>x</b>');
  });

  test('a cross-site login form post is refused (login CSRF)', async () => {
    const r = await td.fetch('/portal/login', {
      method: 'POST',
      headers: { 'content-type': FORM, origin: 'http://evil.example' },
      body: form({ email: alice.email, password: alice.password }),
    });
    expect(r.status).toBe(403);
    expect((await r.json()).code).toBe('CSRF_FAILED');
    expect(r.headers.get('set-cookie')).toBeNull();
  });

  test('state-changing session calls are refused cross-site, token or not; a client without browser headers needs no token', async () => {
    const s = await portalLogin(td, alice);
    const cross = await td.fetch('/portal/keys', {
      method: 'POST',
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' },
      json: { name: 'x' },
    });
    expect(cross.status).toBe(403);
    expect((await cross.json()).code).toBe('CSRF_FAILED');
    const ok = await td.fetch('/portal/keys', { method: 'POST', headers: { cookie: s.cookie }, json: { name: 'x' } });
    expect(ok.status).toBe(201);
  });

  test('logout: refused cross-site; from a non-browser client (no token) it deletes the session and expires the cookie', async () => {
    const s = await portalLogin(td, alice);
    const forged = await td.fetch('/portal/logout', { method: 'POST', headers: { cookie: s.cookie, origin: 'http://evil.example' } });
    expect(forged.status).toBe(403);
    expect((await forged.json()).code).toBe('CSRF_FAILED');
    expect((await getJson(td, '/portal/me', s.cookie)).status).toBe(200);
    const out = await td.fetch('/portal/logout', { method: 'POST', headers: { cookie: s.cookie } });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ loggedOut: true });
    expect(out.headers.get('set-cookie')).toMatch(/^service_session=; .*Max-Age=0/);
    expect((await getJson(td, '/portal/me', s.cookie)).status).toBe(401);
    const hash = createHash('sha256').update(s.cookie.split('=')[1]).digest('hex');
    expect(await td.daemon.ctx.db.get('SELECT 1 FROM sessions WHERE id_hash = ?', [hash])).toBeUndefined();
  });

  test('the dashboard logout form (with _csrf) redirects to the login page', async () => {
    const s = await portalLogin(td, alice);
    const r = await td.fetch('/portal/logout', {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: s.cookie, 'content-type': FORM, accept: 'text/html', origin: td.url, 'sec-fetch-site': 'same-origin' },
      body: form({ _csrf: s.csrf }),
    });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/login');
    expect((await getJson(td, '/portal/me', s.cookie)).status).toBe(401);
  });

  test('sessions slide: use renews the expiry; an expired session is refused', async () => {
    const s = await portalLogin(td, alice);
    const hash = createHash('sha256').update(s.cookie.split('=')[1]).digest('hex');
    const db = td.daemon.ctx.db;
    const soon = Date.now() + 60_000;
    await db.run('UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE id_hash = ?', [Date.now() - 120_000, soon, hash]);
    const me = await td.fetch('/portal/me', { headers: { cookie: s.cookie } });
    expect(me.status).toBe(200);
    expect(me.headers.get('set-cookie')).toMatch(/Max-Age=604800/);
    const row = await db.get<{ expires_at: number }>('SELECT expires_at FROM sessions WHERE id_hash = ?', [hash]);
    expect(Number(row!.expires_at)).toBeGreaterThan(Date.now() + 6 * 24 * 3600_000);
    await db.run('UPDATE sessions SET expires_at = ? WHERE id_hash = ?', [Date.now() - 1, hash]);
    expect((await getJson(td, '/portal/me', s.cookie)).status).toBe(401);
  });
});

describe('portal session behind an https public URL', () => {
  let td: TestDaemon;
  beforeAll(async () => {
    td = await startTestDaemon({ yaml: 'publicUrl: https://agw.example.com\n' });
  });
  afterAll(() => td.close());

  test('the cookie is Secure', async () => {
    const u = await td.user();
    const s = await portalLogin(td, u);
    expect(s.setCookie).toMatch(/; Secure/);
  });
});
