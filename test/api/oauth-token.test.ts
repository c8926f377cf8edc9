import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { authParams, exchange, getCode, oauthFixture, pkce, tokenCall, TRUSTED, UNTRUSTED, type OAuthFixture } from '../helpers/oauth.js';

/** POST /api/oauth/token: every failure is an RFC 6749 error JSON with Cache-Control: no-store. */
describe('OAuth token endpoint', () => {
  let d: TestDaemon;
  let fx: OAuthFixture;

  beforeAll(async () => {
    d = await startTestDaemon();
    fx = await oauthFixture(d);
  });
  afterAll(() => d?.close());
  afterEach(() => vi.useRealTimers());

  async function fresh() {
    const p = pkce();
    return { ...p, code: await getCode(d, fx.cookie, authParams(p.challenge)) };
  }

  function expectOAuthError(r: { status: number; body: Record<string, unknown>; headers: Headers }, error: string, status = 400) {
    expect(r.status).toBe(status);
    expect(r.body).toEqual({ error, error_description: expect.any(String) });
    expect(r.headers.get('cache-control')).toBe('no-store');
  }

  test('a good exchange answers no-store tokens', async () => {
    const { code, verifier } = await fresh();
    const r = await exchange(d, code, verifier);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'openid profile email tier' });
    expect(typeof r.body.refresh_token).toBe('string');
    expect(typeof r.body.id_token).toBe('string');
  });

  test('a wrong verifier fails with invalid_grant and does not burn the code', async () => {
    const { code, verifier } = await fresh();
    expectOAuthError(await exchange(d, code, pkce().verifier), 'invalid_grant');
    expect((await exchange(d, code, verifier)).status).toBe(200);
  });

  test('a wrong redirect URI or another client fails with invalid_grant', async () => {
    const { code, verifier } = await fresh();
    expectOAuthError(await exchange(d, code, verifier, { redirect_uri: 'http://127.0.0.1:9/other' }), 'invalid_grant');
    expectOAuthError(await exchange(d, code, verifier, { client_id: UNTRUSTED.clientId }), 'invalid_grant');
    expect((await exchange(d, code, verifier)).status).toBe(200);
  });

  test('a code works once; a replay fails and revokes the refresh token it produced', async () => {
    const { code, verifier } = await fresh();
    const first = await exchange(d, code, verifier);
    expect(first.status).toBe(200);
    const replay = await exchange(d, code, verifier);
    expectOAuthError(replay, 'invalid_grant');
    expect(replay.body.error_description).toMatch(/already used/);
    const refresh = await tokenCall(d, { grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token), client_id: TRUSTED.clientId });
    expectOAuthError(refresh, 'invalid_grant');
  });

  test('concurrent redemptions of one code: exactly one wins', async () => {
    const { code, verifier } = await fresh();
    const results = await Promise.all(Array.from({ length: 5 }, () => exchange(d, code, verifier)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(4);
  });

  test('a code expires after 60 seconds', async () => {
    const { code, verifier } = await fresh();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61_000);
    const r = await exchange(d, code, verifier);
    expectOAuthError(r, 'invalid_grant');
    expect(r.body.error_description).toMatch(/expired/);
  });

  test.each([
    ['no grant_type', 'invalid_request', 400, { client_id: TRUSTED.clientId }],
    ['unknown grant_type', 'unsupported_grant_type', 400, { grant_type: 'password', client_id: TRUSTED.clientId }],
    ['client_credentials', 'unsupported_grant_type', 400, { grant_type: 'client_credentials', client_id: TRUSTED.clientId }],
    ['no client_id', 'invalid_request', 400, { grant_type: 'authorization_code', code: 'x', redirect_uri: TRUSTED.redirectUri, code_verifier: 'a'.repeat(43) }],
    ['unknown client', 'invalid_client', 401, { grant_type: 'authorization_code', client_id: 'ghost', code: 'x', redirect_uri: 'x', code_verifier: 'a'.repeat(43) }],
    ['no code', 'invalid_request', 400, { grant_type: 'authorization_code', client_id: TRUSTED.clientId, redirect_uri: TRUSTED.redirectUri, code_verifier: 'a'.repeat(43) }],
    ['no verifier', 'invalid_request', 400, { grant_type: 'authorization_code', client_id: TRUSTED.clientId, code: 'x', redirect_uri: TRUSTED.redirectUri }],
    ['short verifier', 'invalid_request', 400, { grant_type: 'authorization_code', client_id: TRUSTED.clientId, code: 'x', redirect_uri: TRUSTED.redirectUri, code_verifier: 'abc' }],
    ['unknown code', 'invalid_grant', 400, { grant_type: 'authorization_code', client_id: TRUSTED.clientId, code: 'made-up', redirect_uri: TRUSTED.redirectUri, code_verifier: 'a'.repeat(43) }],
    ['no refresh_token', 'invalid_request', 400, { grant_type: 'refresh_token', client_id: TRUSTED.clientId }],
    ['unknown refresh_token', 'invalid_grant', 400, { grant_type: 'refresh_token', client_id: TRUSTED.clientId, refresh_token: 'agwr_nope' }],
  ])('%s → %s %i', async (_name, error, status, form) => {
    expectOAuthError(await tokenCall(d, form as Record<string, string>), error, status);
  });

  test('a repeated parameter or a non-form body is invalid_request, not a 500', async () => {
    const dup = await fetch(`${d.api}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&grant_type=authorization_code&client_id=agw-cli',
    });
    expect(dup.status).toBe(400);
    expect(((await dup.json()) as { error: string }).error).toBe('invalid_request');
    const xml = await fetch(`${d.api}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<x/>' });
    expect(xml.status).toBe(400);
    expect(await xml.json()).toMatchObject({ error: 'invalid_request' });
  });

  test('a refresh token is bound to its client', async () => {
    const { code, verifier } = await fresh();
    const t = await exchange(d, code, verifier);
    const other = await tokenCall(d, { grant_type: 'refresh_token', refresh_token: String(t.body.refresh_token), client_id: UNTRUSTED.clientId });
    expectOAuthError(other, 'invalid_grant');
    const own = await tokenCall(d, { grant_type: 'refresh_token', refresh_token: String(t.body.refresh_token), client_id: TRUSTED.clientId });
    expect(own.status).toBe(200);
    expect(own.body.id_token).toBeUndefined();
  });

  test('a refresh token expires after 30 days', async () => {
    const { code, verifier } = await fresh();
    const t = await exchange(d, code, verifier);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 31 * 24 * 3600_000);
    const r = await tokenCall(d, { grant_type: 'refresh_token', refresh_token: String(t.body.refresh_token), client_id: TRUSTED.clientId });
    expectOAuthError(r, 'invalid_grant');
  });
});
