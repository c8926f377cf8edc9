import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { authParams, exchange, getCode, oauthFixture, pkce, TRUSTED, type OAuthFixture } from '../helpers/oauth.js';
import { setUserTier } from '../../src/daemon/store/users.js';

/** Access tokens at the API: verified locally (signature, typ, exp, iss, aud); anything off is 401 with the Error body. */
describe('OAuth access tokens at the gateway', () => {
  let d: TestDaemon;
  let fx: OAuthFixture;

  beforeAll(async () => {
    d = await startTestDaemon();
    fx = await oauthFixture(d);
  });
  afterAll(() => d?.close());
  afterEach(() => vi.useRealTimers());

  async function tokens(scope = 'openid profile email tier') {
    const p = pkce();
    const r = await exchange(d, await getCode(d, fx.cookie, authParams(p.challenge, { scope })), p.verifier);
    expect(r.status).toBe(200);
    return r.body as { access_token: string; id_token?: string; refresh_token: string };
  }

  const wallet = (token: string) => d.fetch('/wallet', { headers: { authorization: `Bearer ${token}` } });

  async function expect401(res: Response) {
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: string; code: string };
    expect(body).toMatchObject({ code: 'UNAUTHORIZED', error: expect.any(String) });
  }

  /** Signs a token with the daemon's own current key (only a holder of the store could). */
  async function forge(claims: JWTPayload, header: Record<string, unknown> = {}, expSeconds = 900) {
    const row = await d.daemon.ctx.db.get<{ kid: string; private_jwk: string }>('SELECT kid, private_jwk FROM oauth_keys WHERE retired_at IS NULL');
    const key = await importJWK(JSON.parse(row!.private_jwk) as JWK, 'RS256');
    const now = Math.floor(Date.now() / 1000);
    const payload = { iss: d.url, aud: `${d.url}/api`, sub: fx.user.id, iat: now, exp: now + expSeconds, scope: 'openid tier', client_id: TRUSTED.clientId, tier: 'pro', ...claims };
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', kid: row!.kid, typ: 'at+jwt', ...header })
      .sign(key);
  }

  test('a valid token is accepted by account and gateway endpoints', async () => {
    const t = await tokens();
    expect((await wallet(t.access_token)).status).toBe(200);
    const chat = await d.fetch('/gateway/chat', {
      headers: { authorization: `Bearer ${t.access_token}` },
      json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      method: 'POST',
    });
    expect(chat.status).not.toBe(401);
  });

  test('an expired token is refused with 401 and the Error body', async () => {
    const t = await tokens();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 901_000 + 5_000);
    await expect401(await wallet(t.access_token));
  });

  test('a tampered token is refused: payload edited, signature edited, alg none', async () => {
    const t = await tokens();
    const [h, p, s] = t.access_token.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const edited = Buffer.from(JSON.stringify({ ...payload, sub: 'usr_someone_else' })).toString('base64url');
    await expect401(await wallet(`${h}.${edited}.${s}`));
    const flipped = s.slice(0, -4) + (s.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await expect401(await wallet(`${h}.${p}.${flipped}`));
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url');
    await expect401(await wallet(`${none}.${p}.`));
    await expect401(await wallet('not-a-jwt'));
  });

  test('a token signed by another key with the same kid is refused', async () => {
    const good = await forge({});
    expect((await wallet(good)).status).toBe(200); // the forge helper itself is right
    const { privateKey } = await generateKeyPair('RS256');
    const [h, p] = good.split('.');
    const sig = await new SignJWT(JSON.parse(Buffer.from(p, 'base64url').toString()) as JWTPayload)
      .setProtectedHeader(JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg: string })
      .sign(privateKey);
    await expect401(await wallet(sig));
  });

  test('wrong issuer, wrong audience, the ID token or a token living too long are refused', async () => {
    await expect401(await wallet(await forge({ iss: 'https://evil.example' })));
    await expect401(await wallet(await forge({ aud: TRUSTED.clientId })));
    await expect401(await wallet(await forge({}, { typ: 'JWT' })));
    await expect401(await wallet(await forge({}, {}, 24 * 3600)));
    const t = await tokens();
    await expect401(await wallet(t.id_token!));
  });

  test('the principal has the user’s current tier, and a deleted user’s token stops working', async () => {
    const t = await tokens();
    await setUserTier(d.daemon.ctx.db, fx.user.id, 'team');
    const me = await d.fetch('/portal/me', { headers: { cookie: fx.cookie } });
    expect(((await me.json()) as { tier: string }).tier).toBe('team');
    const userinfo = await d.fetch('/oauth/userinfo', { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(((await userinfo.json()) as { tier: string }).tier).toBe('team');
    await setUserTier(d.daemon.ctx.db, fx.user.id, 'pro');

    const other = await d.user({ tier: 'free' });
    const forged = await forge({ sub: other.id });
    expect((await wallet(forged)).status).toBe(200);
    await d.daemon.ctx.db.run('DELETE FROM users WHERE id = ?', [other.id]);
    await expect401(await wallet(forged));
  });

  test('entitlements need the tier scope: 403 INSUFFICIENT_SCOPE without it, 200 with it, keys unaffected', async () => {
    const get = (auth: string) => d.fetch('/gateway/entitlements', { headers: { authorization: `Bearer ${auth}` } });
    const without = await get((await tokens('openid email')).access_token);
    expect(without.status).toBe(403);
    expect(without.headers.get('www-authenticate')).toContain('insufficient_scope');
    expect(await without.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE', error: expect.any(String) });
    const withTier = await get((await tokens('tier')).access_token);
    expect(withTier.status).toBe(200);
    expect(await withTier.json()).toMatchObject({ userId: fx.user.id, tier: 'pro' });
    expect((await get(fx.user.key)).status).toBe(200);
    expect((await get('eyJhbGciOiJSUzI1NiJ9.e30.AAAA')).status).toBe(401);
  });

  test('userinfo: 401 with WWW-Authenticate without a valid token, 403 without the openid scope, keys are refused', async () => {
    const none = await d.fetch('/oauth/userinfo');
    expect(none.headers.get('www-authenticate')).toContain('invalid_token');
    await expect401(none);
    await expect401(await d.fetch('/oauth/userinfo', { key: fx.user.key }));
    const noOpenid = await tokens('email');
    const res = await d.fetch('/oauth/userinfo', { headers: { authorization: `Bearer ${noOpenid.access_token}` } });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
  });
});
