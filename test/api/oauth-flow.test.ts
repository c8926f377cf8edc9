import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as client from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { oauthFixture, TRUSTED, type OAuthFixture } from '../helpers/oauth.js';

/** The whole flow driven by a standard relying party (openid-client v6) against the real daemon. */
describe('OAuth 2.0 / OIDC with openid-client as the relying party', () => {
  let d: TestDaemon;
  let fx: OAuthFixture;
  let config: client.Configuration;

  beforeAll(async () => {
    d = await startTestDaemon();
    fx = await oauthFixture(d);
    config = await client.discovery(new URL(d.url), TRUSTED.clientId, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    });
  });
  afterAll(() => d?.close());

  /** The browser step: GET the authorize URL with the portal session, return the redirect. */
  async function browser(url: URL): Promise<URL> {
    const res = await fetch(url, { headers: { cookie: fx.cookie }, redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  }

  async function login(scope = 'openid profile email tier') {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: TRUSTED.redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const callback = await browser(url);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    return { tokens, nonce, callback };
  }

  test('the discovery document names every endpoint and the supported methods', async () => {
    const res = await fetch(`${d.url}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const m = (await res.json()) as Record<string, unknown>;
    expect(m).toMatchObject({
      issuer: d.url,
      authorization_endpoint: `${d.api}/oauth/authorize`,
      token_endpoint: `${d.api}/oauth/token`,
      userinfo_endpoint: `${d.api}/oauth/userinfo`,
      jwks_uri: `${d.api}/oauth/jwks`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      scopes_supported: ['openid', 'profile', 'email', 'tier'],
      token_endpoint_auth_methods_supported: ['none'],
    });
    expect(config.serverMetadata().issuer).toBe(d.url);
  });

  test('code exchange with PKCE gives an RS256 access token (900 s) that verifies against the JWKS', async () => {
    const { tokens, nonce, callback } = await login();
    expect(callback.origin + callback.pathname).toBe(TRUSTED.redirectUri);
    expect(callback.searchParams.get('iss')).toBe(d.url);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    expect(tokens.scope).toBe('openid profile email tier');

    const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, { issuer: d.url, audience: `${d.api}`, algorithms: ['RS256'] });
    expect(protectedHeader.alg).toBe('RS256');
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload.exp! - payload.iat!).toBe(900);
    expect(payload).toMatchObject({ iss: d.url, aud: d.api, sub: fx.user.id, scope: 'openid profile email tier', tier: 'pro', client_id: TRUSTED.clientId });
    expect(typeof payload.jti).toBe('string');

    // the ID token: checked by openid-client (iss, aud, nonce, exp) and again here by signature
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: d.url, aud: TRUSTED.clientId, sub: fx.user.id, nonce, email: fx.user.email, tier: 'pro' });
    const id = await jwtVerify(tokens.id_token!, jwks, { issuer: d.url, audience: TRUSTED.clientId });
    expect(id.payload.nonce).toBe(nonce);
    expect(decodeProtectedHeader(tokens.id_token!).kid).toBe(protectedHeader.kid);
  });

  test('userinfo releases claims by scope', async () => {
    const full = await login();
    const info = await client.fetchUserInfo(config, full.tokens.access_token, fx.user.id);
    expect(info).toMatchObject({ sub: fx.user.id, email: fx.user.email, preferred_username: fx.user.email, tier: 'pro' });

    const narrow = await login('openid');
    expect(narrow.tokens.claims()!.email).toBeUndefined();
    const bare = await client.fetchUserInfo(config, narrow.tokens.access_token, fx.user.id);
    expect(bare).toEqual({ sub: fx.user.id });
  });

  test('the access token works at the API like an agw_ key; without a token it is 401', async () => {
    const { tokens } = await login();
    const ok = await d.fetch('/wallet', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { balance: number }).balance).toBe(5);
    const none = await d.fetch('/wallet');
    expect(none.status).toBe(401);
  });

  test('refresh rotates the refresh token; replaying the old one revokes the family', async () => {
    const { tokens } = await login();
    const r1 = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(r1.refresh_token).toBeTruthy();
    expect(r1.refresh_token).not.toBe(tokens.refresh_token);
    expect(r1.access_token).not.toBe(tokens.access_token);
    expect(r1.expires_in).toBe(900);
    expect((await d.fetch('/wallet', { headers: { authorization: `Bearer ${r1.access_token}` } })).status).toBe(200);

    // a replay of the spent token is refused and kills the whole family, the new token too
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.refreshTokenGrant(config, r1.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  test('refresh may narrow the scope but not widen it', async () => {
    const { tokens } = await login('openid email');
    const narrowed = await client.refreshTokenGrant(config, tokens.refresh_token!, { scope: 'openid' });
    expect(narrowed.scope).toBe('openid');
    await expect(client.refreshTokenGrant(config, narrowed.refresh_token!, { scope: 'openid tier' })).rejects.toMatchObject({ error: 'invalid_scope' });
    // the family keeps its scope: the next refresh without scope gets openid email again
    const again = await client.refreshTokenGrant(config, narrowed.refresh_token!);
    expect(again.scope).toBe('openid email');
  });
});
