import { afterAll, beforeAll, expect, it } from 'vitest';
import { createProject } from '../../src/daemon/store/projects.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { authParams, exchange, getCode, oauthFixture, pkce } from '../helpers/oauth.js';
import { portalLogin } from '../helpers/portal.js';

/**
 * Issue #33 item 12: the spend reports for the account's own credentials at /api/spend/*
 * (agw's addition); the spec's /api/portal/spend/* stays session-only; a key with limits
 * never reads the account's spend.
 */
let d: TestDaemon;
let u: TestUser;
let cookie: string;
beforeAll(async () => {
  d = await startTestDaemon();
  u = await d.user({ tier: 'pro', balance: 5 });
  cookie = (await portalLogin(d, u)).cookie;
  await d.daemon.ctx.db.run(
    `INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd) VALUES (?, ?, ?, 3, 1, 500000000, 1000000000)`,
    [u.id, Math.floor(Date.now() / 86_400_000), u.keyId],
  );
});
afterAll(async () => {
  await d?.close();
});

const bySession = async (path: string) => (await d.fetch(`/portal/spend${path}`, { headers: { cookie } })).json();
const noSince = (x: { range: object }) => ({ ...x, range: { ...x.range, since: '' } });

it('an agw_ key without limits reads the same reports as the session', async () => {
  for (const path of ['/summary?range=7d', '/daily?range=7d']) {
    const res = await d.fetch(`/spend${path}`, { key: u.key });
    expect(res.status, path).toBe(200);
    expect(noSince(await res.json())).toEqual(noSince(await bySession(path)));
  }
  const project = await d.daemon.ctx.db.tx((q) => createProject(q, u.id, 'Apollo'));
  const p = await d.fetch(`/spend/projects/${project.uid}`, { key: u.key });
  expect(noSince(await p.json())).toEqual(noSince(await bySession(`/projects/${project.uid}`)));
  expect((await d.fetch('/spend/projects/prj_nope', { key: u.key })).status).toBe(404);
});

it('an OAuth access token reads them too; the session works at both places', async () => {
  const fx = await oauthFixture(d);
  const { verifier, challenge } = pkce();
  const tokens = (await exchange(d, await getCode(d, fx.cookie, authParams(challenge)), verifier)).body as { access_token: string };
  const res = await d.fetch('/spend/summary?range=7d', { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect(res.status).toBe(200);
  expect(noSince(await res.json())).toEqual(noSince(await (await d.fetch('/portal/spend/summary?range=7d', { headers: { cookie: fx.cookie } })).json()));
  expect((await d.fetch('/spend/summary', { headers: { cookie } })).status).toBe(200);
});

it('the spec\'s /portal/spend stays session-only: a key there is 401', async () => {
  expect((await d.fetch('/portal/spend/summary', { key: u.key })).status).toBe(401);
});

it('a key with limits or an expiry never reads the account\'s spend: 403', async () => {
  for (const limits of [{ budget: 1 }, { expiresAt: new Date(Date.now() + 86_400_000).toISOString() }]) {
    const made = await d.fetch('/keys', { method: 'POST', key: u.key, json: { name: 'scoped', limits } });
    expect(made.status).toBe(200);
    const limited = (await made.json()).key as string;
    for (const path of ['/spend/summary', '/spend/daily', '/spend/projects/prj_x']) {
      const res = await d.fetch(path, { key: limited });
      expect(res.status, path).toBe(403);
      expect((await res.json()).code).toBe('FORBIDDEN');
    }
  }
  expect((await d.fetch('/spend/summary')).status).toBe(401);
});
