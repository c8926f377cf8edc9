import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { authorize, authParams, exchange, oauthFixture, pkce, tokenCall, UNTRUSTED, type OAuthFixture } from '../helpers/oauth.js';

/** GET /api/oauth/authorize and the consent form: what is shown, what is redirected, what is issued. */
describe('OAuth authorization endpoint', () => {
  let d: TestDaemon;
  let fx: OAuthFixture;
  const { verifier, challenge } = pkce();

  beforeAll(async () => {
    d = await startTestDaemon();
    fx = await oauthFixture(d);
  });
  afterAll(() => d?.close());

  const codeCount = async () => Number((await d.daemon.ctx.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM oauth_codes'))?.n);

  describe('a bad client or redirect URI is shown to the user, never redirected', () => {
    test.each([
      ['unknown client', { client_id: 'nope' }, 'INVALID_CLIENT'],
      ['missing client', { client_id: undefined }, 'INVALID_CLIENT'],
      ['unregistered redirect', { redirect_uri: 'https://evil.example/cb' }, 'INVALID_REDIRECT_URI'],
      ['redirect differing only in path', { redirect_uri: 'http://127.0.0.1:9/cb/more' }, 'INVALID_REDIRECT_URI'],
      ['missing redirect', { redirect_uri: undefined }, 'INVALID_REDIRECT_URI'],
    ])('%s → 400 %s', async (_name, over, code) => {
      const before = await codeCount();
      const res = await authorize(d, fx.cookie, authParams(challenge, over));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toMatchObject({ code, error: expect.any(String) });
      expect(await codeCount()).toBe(before);
    });

    test('a browser gets an HTML page naming the problem', async () => {
      const res = await authorize(d, fx.cookie, authParams(challenge, { redirect_uri: 'https://evil.example/cb' }), 'text/html');
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(res.headers.get('location')).toBeNull();
      const html = await res.text();
      expect(html).toContain('INVALID_REDIRECT_URI');
      expect(html).not.toContain('evil.example/cb?');
    });
  });

  describe('other errors go back to the redirect URI with error, state and iss', () => {
    test.each([
      ['no PKCE', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
      ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request'],
      ['malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
      ['implicit flow', { response_type: 'token' }, 'unsupported_response_type'],
      ['unknown scope', { scope: 'openid admin' }, 'invalid_scope'],
    ])('%s → %s', async (_name, over, error) => {
      const res = await authorize(d, fx.cookie, authParams(challenge, over));
      expect(res.status).toBe(302);
      const to = new URL(res.headers.get('location')!);
      expect(`${to.origin}${to.pathname}`).toBe('http://127.0.0.1:9/cb');
      expect(to.searchParams.get('error')).toBe(error);
      expect(to.searchParams.get('state')).toBe('st-123');
      expect(to.searchParams.get('iss')).toBe(d.url);
      expect(to.searchParams.get('code')).toBeNull();
    });
  });

  test('a trusted client with a session gets its code at once, carrying state', async () => {
    const res = await authorize(d, fx.cookie, authParams(challenge));
    expect(res.status).toBe(302);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const to = new URL(res.headers.get('location')!);
    expect(to.searchParams.get('state')).toBe('st-123');
    expect(to.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{40,}$/);
  });

  test('without a session: portal login, then back to the client with a code', async () => {
    const res = await authorize(d, undefined, authParams(challenge));
    expect(res.status).toBe(302);
    const loginAt = new URL(res.headers.get('location')!, d.url);
    expect(loginAt.pathname).toBe('/login');
    const next = loginAt.searchParams.get('next')!;
    expect(next.startsWith('/api/oauth/authorize?')).toBe(true);

    // the portal's login form posts email, password and next; it answers 303 to next with the cookie
    const login = await fetch(`${d.api}/portal/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', origin: d.url },
      body: new URLSearchParams({ email: fx.user.email, password: fx.user.password, next }).toString(),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const back = login.headers.get('location')!;
    expect(back).toBe(next);
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('service_session='))!;
    const again = await fetch(new URL(back, d.url), { headers: { cookie }, redirect: 'manual' });
    expect(again.status).toBe(302);
    const code = new URL(again.headers.get('location')!).searchParams.get('code')!;
    const t = await exchange(d, code, verifier);
    expect(t.status).toBe(200);
  });

  test('prompt=none without a session answers login_required instead of showing a login', async () => {
    const res = await authorize(d, undefined, authParams(challenge, { prompt: 'none' }));
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('login_required');
  });

  describe('an untrusted client needs consent', () => {
    const params = () => authParams(challenge, { client_id: UNTRUSTED.clientId, redirect_uri: UNTRUSTED.redirectUri, scope: 'openid email' });
    const consent = (form: Record<string, string>, cookie = fx.cookie) =>
      fetch(`${d.api}/oauth/consent`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams(form).toString(),
        redirect: 'manual',
      });
    const formOf = (over: Record<string, string> = {}) =>
      Object.fromEntries(Object.entries({ ...params(), _csrf: fx.csrfToken, decision: 'approve', ...over }).filter(([, v]) => v !== undefined)) as Record<string, string>;

    test('the consent page names the client (escaped) and the scopes, and cannot be framed', async () => {
      const before = await codeCount();
      const res = await authorize(d, fx.cookie, params(), 'text/html');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      const html = await res.text();
      expect(html).toContain('Untrusted &lt;App&gt;');
      expect(html).not.toContain('Untrusted <App>');
      expect(html).toContain('email address');
      expect(html).toContain(`value="${fx.csrfToken}"`);
      expect(await codeCount()).toBe(before);
    });

    test('approving issues a code bound to that client', async () => {
      const res = await consent(formOf());
      expect(res.status).toBe(303);
      const to = new URL(res.headers.get('location')!);
      expect(`${to.origin}${to.pathname}`).toBe(UNTRUSTED.redirectUri);
      expect(to.searchParams.get('state')).toBe('st-123');
      const code = to.searchParams.get('code')!;
      const t = await tokenCall(d, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: UNTRUSTED.redirectUri,
        client_id: UNTRUSTED.clientId,
        code_verifier: verifier,
      });
      expect(t.status).toBe(200);
      expect(t.body.scope).toBe('openid email');
    });

    test('denying sends access_denied', async () => {
      const res = await consent(formOf({ decision: 'deny' }));
      expect(res.status).toBe(303);
      expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
    });

    test('a cross-site consent post (even with the token) or one without a session issues nothing', async () => {
      const before = await codeCount();
      const cross = await fetch(`${d.api}/oauth/consent`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: fx.cookie, origin: 'http://evil.example' },
        body: new URLSearchParams(formOf()).toString(),
        redirect: 'manual',
      });
      expect(cross.status).toBe(403);
      expect(await cross.json()).toMatchObject({ code: 'CSRF_FAILED' });
      const noSession = await consent(formOf(), 'service_session=forged');
      expect(noSession.status).toBe(401);
      expect(await codeCount()).toBe(before);
    });

    test('a consent post cannot smuggle in another redirect URI', async () => {
      const res = await consent(formOf({ redirect_uri: 'https://evil.example/cb' }));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
    });

    test('prompt=none answers consent_required', async () => {
      const res = await authorize(d, fx.cookie, { ...params(), prompt: 'none' });
      expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('consent_required');
    });
  });

  test('the built-in agw-cli client accepts its loopback redirect on any port, nothing else', async () => {
    const cli = (redirect_uri: string) => authParams(challenge, { client_id: 'agw-cli', redirect_uri });
    for (const uri of ['http://127.0.0.1:53682/callback', 'http://127.0.0.1:1024/callback', 'http://[::1]:40000/callback']) {
      const res = await authorize(d, fx.cookie, cli(uri));
      expect(res.status, uri).toBe(302);
      expect(res.headers.get('location')!.startsWith(uri.replace(/\/callback$/, '/callback?'))).toBe(true);
    }
    for (const uri of ['http://localhost:53682/callback', 'http://127.0.0.1:53682/other', 'https://127.0.0.1:53682/callback', 'http://127.0.0.1.evil.example:80/callback']) {
      const res = await authorize(d, fx.cookie, cli(uri));
      expect(res.status, uri).toBe(400);
    }
  });
});
