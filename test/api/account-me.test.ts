import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { authParams, exchange, getCode, oauthFixture, pkce, type OAuthFixture } from '../helpers/oauth.js';

/** GET /api/account (issue #33 item 15: `agw whoami` shows the email with any login). */
let d: TestDaemon;
let fx: OAuthFixture;
beforeAll(async () => {
  d = await startTestDaemon();
  fx = await oauthFixture(d);
});
afterAll(async () => {
  await d?.close();
});

const me = async (headers: Record<string, string>) => {
  const r = await d.fetch('/account', { headers });
  return { status: r.status, body: await r.json() };
};

it('a key, the session and an OAuth token with the email scope: the account and which credential it is', async () => {
  const u = fx.user;
  expect((await me({ authorization: `Bearer ${u.key}` })).body).toEqual({ userId: u.id, email: u.email, tier: 'pro', credential: { kind: 'key', keyId: u.keyId, limited: false } });
  expect((await me({ cookie: fx.cookie })).body).toEqual({ userId: u.id, email: u.email, tier: 'pro', credential: { kind: 'session' } });
  const { verifier, challenge } = pkce();
  const t = (await exchange(d, await getCode(d, fx.cookie, authParams(challenge)), verifier)).body as { access_token: string };
  expect((await me({ authorization: `Bearer ${t.access_token}` })).body).toMatchObject({ userId: u.id, email: u.email, credential: { kind: 'oauth' } });
});

it('an OAuth token without the email scope does not show the email; a limited key says so; no credentials: 401', async () => {
  const { verifier, challenge } = pkce();
  const t = (await exchange(d, await getCode(d, fx.cookie, authParams(challenge, { scope: 'openid' })), verifier)).body as { access_token: string };
  expect((await me({ authorization: `Bearer ${t.access_token}` })).body.email).toBeNull();
  const made = await d.fetch('/keys', { method: 'POST', key: fx.user.key, json: { name: 'ci', limits: { rpm: 10 } } });
  const limited = (await made.json()).key as string;
  expect((await me({ authorization: `Bearer ${limited}` })).body.credential).toMatchObject({ kind: 'key', limited: true });
  expect((await me({})).status).toBe(401);
});
