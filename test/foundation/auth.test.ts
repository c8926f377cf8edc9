import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { startProbeApp } from './probe.js';
import { requireAuth, userOf } from '../../src/daemon/auth/principal.js';
import { createSession } from '../../src/daemon/auth/sessions.js';
import { createApiKey, revokeApiKey } from '../../src/daemon/store/keys.js';
import { createUser } from '../../src/daemon/store/users.js';

/** Issue #2 point 7: agw_ keys, the master token, OAuth and session plumbing; 401 with the Error body. */

async function expect401(res: Response): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(401);
  expect(JSON.parse(text)).toEqual({ error: expect.any(String), code: 'UNAUTHORIZED' });
}

describe('agw_ keys on a protected endpoint (GET /api/wallet)', () => {
  let d: TestDaemon;
  let u: TestUser;
  beforeAll(async () => {
    d = await startTestDaemon();
    u = await d.user({ balance: 3 });
  });
  afterAll(() => d.close());

  it('a valid key is accepted', async () => {
    const res = await d.fetch('/wallet', { key: u.key });
    expect(res.status).toBe(200);
    expect((await res.json()).balance).toBe(3);
  });

  it('keys are stored as hashes only: the key text is nowhere in the store row', async () => {
    const row = await d.daemon.ctx.db.get<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = ?', [u.keyId]);
    expect(Object.values(row!).some((v) => typeof v === 'string' && v.includes(u.key.slice(17)))).toBe(false);
    expect(u.key).toMatch(/^agw_[0-9a-f]{12}_[A-Za-z0-9_-]{32,}$/);
  });

  const bad: [string, () => Record<string, string>][] = [
    ['no Authorization header', () => ({})],
    ['a Basic credential', () => ({ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` })],
    ['an empty bearer', () => ({ authorization: 'Bearer ' })],
    ['a malformed agw_ key', () => ({ authorization: 'Bearer agw_not-a-key' })],
    ['an unknown key of the right shape', () => ({ authorization: `Bearer agw_0123456789ab_${'x'.repeat(43)}` })],
    ['a known key id with a wrong secret', () => ({ authorization: `Bearer ${u.key.slice(0, -4)}AAAA` })],
    ['the key without "Bearer"', () => ({ authorization: u.key })],
  ];
  const stored = async () => {
    const db = d.daemon.ctx.db;
    const w = await db.get<{ b: number }>('SELECT balance_nusd AS b FROM wallets WHERE user_id = ?', [u.id]);
    const t = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM wallet_transactions');
    return [Number(w!.b), Number(t!.n)];
  };
  for (const [name, headers] of bad) {
    it(`${name} -> 401 UNAUTHORIZED, and a top-up with it changes nothing`, async () => {
      await expect401(await d.fetch('/wallet', { headers: headers() }));
      const before = await stored();
      await expect401(await d.fetch('/wallet/topup', { method: 'POST', headers: headers(), json: { amount: 50 } }));
      expect(await stored()).toEqual(before);
    });
  }

  it('a revoked key is refused at once, and a second key of the same user still works', async () => {
    const other = await createApiKey(d.daemon.ctx.db, u.id, 'second');
    expect((await d.fetch('/wallet', { key: u.key })).status).toBe(200);
    expect(await revokeApiKey(d.daemon.ctx.db, u.keyId)).toBe(true);
    await expect401(await d.fetch('/wallet', { key: u.key }));
    expect((await d.fetch('/wallet', { key: other.key })).status).toBe(200);
  });
});

describe('master token, OAuth tokens, session cookie, 500s (probe routes on the real app)', () => {
  const MASTER = 'agw_master_0123456789abcdef';
  let probe: Awaited<ReturnType<typeof startProbeApp>>;
  let userId: string;
  let key: string;
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${probe.url}${path}`, { headers });

  beforeAll(async () => {
    probe = await startProbeApp({ AGW_MASTER_TOKEN: MASTER }, (app, ctx) => {
      ctx.verifyAccessToken = async (t) => (t === 'good.oauth.token' ? { kind: 'oauth', userId, tier: 'pro', scopes: ['openid'], clientId: 'cli_x' } : null);
      const who = { handler: async (req: { principal?: { kind: string } }) => ({ kind: req.principal!.kind }) };
      app.get('/probe/master', { preHandler: requireAuth(ctx, ['master']) }, who.handler);
      app.get('/probe/any', { preHandler: requireAuth(ctx, ['key', 'oauth', 'session', 'master']) }, who.handler);
      app.get('/probe/user', { preHandler: requireAuth(ctx, ['key', 'master']) }, async (req) => ({ userId: userOf(req).userId }));
      app.post(
        '/probe/session',
        { preHandler: requireAuth(ctx, ['session']), schema: { body: Type.Object({ n: Type.Integer() }) } },
        async (req) => ({ n: (req.body as { n: number }).n }),
      );
      app.get('/probe/boom', async () => {
        throw new Error('db password hunter2 at /srv/agw/src/x.ts:12');
      });
    });
    const db = probe.ctx.db;
    userId = (await db.tx((q) => createUser(q, { email: 'probe@example.com', tier: 'pro' }))).id;
    key = (await createApiKey(db, userId)).key;
  });
  afterAll(() => probe.close());

  it('the master token from config is accepted where kind master is allowed', async () => {
    const res = await get('/probe/master', { authorization: `Bearer ${MASTER}` });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ kind: 'master' });
  });

  it('a wrong master token, or a user key where only master is allowed -> 401', async () => {
    await expect401(await get('/probe/master', { authorization: `Bearer ${MASTER}x` }));
    await expect401(await get('/probe/master', { authorization: `Bearer ${key}` }));
  });

  it('the master token has no account: user-only handlers answer 403, not a crash', async () => {
    const res = await get('/probe/user', { authorization: `Bearer ${MASTER}` });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('FORBIDDEN');
  });

  it('OAuth access tokens go to the verifier the OAuth module installs', async () => {
    expect(await (await get('/probe/any', { authorization: 'Bearer good.oauth.token' })).json()).toEqual({ kind: 'oauth' });
    await expect401(await get('/probe/any', { authorization: 'Bearer bad.oauth.token' }));
  });

  it('the service_session cookie authenticates; cross-site state changes are refused', async () => {
    const s = await createSession(probe.ctx, userId);
    const cookie = `service_session=${encodeURIComponent(s.id)}`;
    expect(await (await get('/probe/any', { cookie })).json()).toEqual({ kind: 'session' });
    await expect401(await get('/probe/any', { cookie: 'service_session=forged' }));
    const post = (headers: Record<string, string>) =>
      fetch(`${probe.url}/probe/session`, { method: 'POST', headers: { 'content-type': 'application/json', cookie, ...headers }, body: '{"n":7}' });
    const cross = await post({ 'x-csrf-token': s.csrfToken, 'sec-fetch-site': 'cross-site' });
    expect(cross.status).toBe(403);
    expect((await cross.json()).code).toBe('CSRF_FAILED');
    expect(await (await post({})).json()).toEqual({ n: 7 });
    expect(await (await post({ 'sec-fetch-site': 'same-origin' })).json()).toEqual({ n: 7 });
  });

  it('an unexpected error is 500 INTERNAL_ERROR without its message or stack', async () => {
    const res = await get('/probe/boom');
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(JSON.parse(text)).toEqual({ error: 'internal error', code: 'INTERNAL_ERROR' });
    expect(text).not.toMatch(/hunter2|x\.ts|\n\s+at /);
  });
});
