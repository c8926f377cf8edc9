import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { getJson, portalLogin, type PortalSession } from '../helpers/portal.js';

/**
 * Issue #14 point 5, the contract's rule "Cross-site requests": a state-changing request made
 * with the session cookie is refused (403 CSRF_FAILED) when Sec-Fetch-Site is present and is
 * neither same-origin nor none, or, without it, when Origin is present and is not the
 * service's own origin. Neither header: a non-browser client, accepted without a token.
 * Bearer credentials are not affected. A valid CSRF token does not make a cross-site
 * request acceptable.
 */
const FORM = 'application/x-www-form-urlencoded';
let td: TestDaemon;
let alice: TestUser;
let s: PortalSession;

beforeAll(async () => {
  td = await startTestDaemon({ yaml: 'wallet: { selfTopup: true }\n' });
  alice = await td.user({ balance: 1 });
  s = await portalLogin(td, alice);
});
afterAll(async () => {
  await td?.close();
});

const balance = async () => ((await (await td.fetch('/wallet', { key: alice.key })).json()) as { balance: number }).balance;
const topup = (headers: Record<string, string>) =>
  td.fetch('/wallet/topup', { method: 'POST', headers: { cookie: s.cookie, ...headers }, json: { amount: 1 } });

describe('session-authenticated state changes', () => {
  it.each<[string, Record<string, string>]>([
    ['Sec-Fetch-Site: cross-site with a valid token', { 'sec-fetch-site': 'cross-site', origin: 'http://evil.example', 'x-csrf-token': '' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['Sec-Fetch-Site: cross-site naming our origin', { 'sec-fetch-site': 'cross-site', origin: '' }],
    ['Origin of another site with a valid token', { origin: 'http://evil.example', 'x-csrf-token': '' }],
    ['Origin: null', { origin: 'null' }],
    ['Origin on another port of our host', { origin: 'http://127.0.0.1:1' }],
    ['Origin with another scheme', { origin: '' }],
  ])('%s → 403 CSRF_FAILED, nothing credited', async (_name, h) => {
    const headers = { ...h };
    if (headers['x-csrf-token'] === '') headers['x-csrf-token'] = s.csrf;
    if (headers.origin === '') headers.origin = _name.includes('scheme') ? td.url.replace('http:', 'https:') : td.url;
    const before = await balance();
    const r = await topup(headers);
    expect(r.status).toBe(403);
    expect((await r.json()).code).toBe('CSRF_FAILED');
    expect(await balance()).toBe(before);
  });

  it.each<[string, () => Record<string, string>]>([
    ['no Sec-Fetch-Site nor Origin (a non-browser client), no token', () => ({})],
    ['Sec-Fetch-Site: same-origin', () => ({ 'sec-fetch-site': 'same-origin' })],
    ['Sec-Fetch-Site: none (typed by the user)', () => ({ 'sec-fetch-site': 'none' })],
    ['Sec-Fetch-Site: same-origin wins over an odd Origin', () => ({ 'sec-fetch-site': 'same-origin', origin: 'http://evil.example' })],
    ['our own Origin without Sec-Fetch-Site (plain-HTTP browsers)', () => ({ origin: td.url })],
  ])('%s → accepted', async (_name, h) => {
    const before = await balance();
    const r = await topup(h());
    expect(r.status).toBe(200);
    expect(await balance()).toBe(before + 1);
  });

  it('the Host the request came to counts as our origin when publicUrl is not set (localhost and 127.0.0.1 alike)', async () => {
    const url = td.url.replace('127.0.0.1', 'localhost');
    const r = await fetch(`${url}/api/portal/keys`, { method: 'POST', headers: { cookie: s.cookie, origin: url, 'content-type': 'application/json' }, body: '{}' });
    expect(r.status).toBe(201);
  });

  it('bearer-authenticated requests are not affected', async () => {
    const before = await balance();
    const r = await td.fetch('/wallet/topup', { method: 'POST', key: alice.key, headers: { 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' }, json: { amount: 1 } });
    expect(r.status).toBe(200);
    expect(await balance()).toBe(before + 1);
  });

  it('GET is not state-changing: a cross-site read with the session is answered', async () => {
    const r = await td.fetch('/portal/me', { headers: { cookie: s.cookie, 'sec-fetch-site': 'cross-site' } });
    expect(r.status).toBe(200);
  });
});

describe('logout and login', () => {
  it('POST /api/portal/logout from curl (cookie, no token, no browser headers) ends the session', async () => {
    const own = await portalLogin(td, alice);
    const r = await fetch(`${td.api}/portal/logout`, { method: 'POST', headers: { cookie: own.cookie } });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ loggedOut: true });
    expect((await getJson(td, '/portal/me', own.cookie)).status).toBe(401);
  });

  it('a cross-site logout form is refused and the session lives on', async () => {
    const own = await portalLogin(td, alice);
    const r = await td.fetch('/portal/logout', {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: own.cookie, 'content-type': FORM, accept: 'text/html', 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' },
      body: new URLSearchParams({ _csrf: own.csrf }).toString(),
    });
    expect(r.status).toBe(403);
    expect((await getJson(td, '/portal/me', own.cookie)).status).toBe(200);
  });

  it('login makes a session, so a cross-site sign-in is refused too (login CSRF); same-origin and non-browser logins work', async () => {
    const body = new URLSearchParams({ email: alice.email, password: alice.password }).toString();
    const cross = await td.fetch('/portal/login', { method: 'POST', headers: { 'content-type': FORM, 'sec-fetch-site': 'cross-site' }, body });
    expect(cross.status).toBe(403);
    expect((await cross.json()).code).toBe('CSRF_FAILED');
    expect(cross.headers.get('set-cookie')).toBeNull();
    const nullOrigin = await td.fetch('/portal/login', { method: 'POST', headers: { 'content-type': FORM, origin: 'null' }, body });
    expect(nullOrigin.status).toBe(403);
    const same = await td.fetch('/portal/login', {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': FORM, accept: 'text/html', 'sec-fetch-site': 'same-origin', origin: td.url },
      body,
    });
    expect(same.status).toBe(303);
    expect(same.headers.get('set-cookie')).toMatch(/^service_session=/);
    const curl = await td.fetch('/portal/login', { method: 'POST', json: { email: alice.email, password: alice.password } });
    expect(curl.status).toBe(200);
  });
});

describe('with publicUrl set, only that origin is ours', () => {
  let pd: TestDaemon;
  let ps: PortalSession;
  beforeAll(async () => {
    pd = await startTestDaemon({ yaml: 'publicUrl: https://agw.example.com\n' });
    ps = await portalLogin(pd, await pd.user());
  });
  afterAll(async () => {
    await pd?.close();
  });

  it('Origin: the public URL → accepted; the address the request came to → refused', async () => {
    const post = (origin: string) =>
      pd.fetch('/portal/keys', { method: 'POST', headers: { cookie: ps.cookie, origin }, json: { name: 'k' } });
    expect((await post('https://agw.example.com')).status).toBe(201);
    const local = await post(pd.url);
    expect(local.status).toBe(403);
    expect((await local.json()).code).toBe('CSRF_FAILED');
  });
});
