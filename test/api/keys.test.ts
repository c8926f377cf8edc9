import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { portalLogin, type PortalSession } from '../helpers/portal.js';
import { exchange, getCode, oauthFixture, authParams, pkce } from '../helpers/oauth.js';
import { budgetPeriodKey } from '../../src/daemon/money/key-limits.js';
import { verifyApiKeyWithTier } from '../../src/daemon/store/keys.js';

/**
 * CONTRACT "Keys with limits": GET/POST/PATCH/DELETE /api/keys with a key, an OAuth token
 * or the session; validation; "a key made with a key never gets more than that key has".
 */
let td: TestDaemon;
let ada: TestUser;
let bob: TestUser;
let s: PortalSession;

const call = (method: string, path: string, cred: { key?: string; session?: PortalSession }, json?: unknown) =>
  td.fetch(path, {
    method,
    key: cred.key,
    headers: cred.session ? { cookie: cred.session.cookie, 'x-csrf-token': cred.session.csrf } : {},
    json,
  });
const ok = async (r: Response, status = 200) => {
  const body = await r.json();
  expect(r.status, JSON.stringify(body)).toBe(status);
  return body;
};
const inDays = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString();

beforeAll(async () => {
  td = await startTestDaemon();
  ada = await td.user({ tier: 'pro', balance: 10 });
  bob = await td.user({ tier: 'free' });
  s = await portalLogin(td, ada);
});
afterAll(() => td.close());

describe('CRUD over /api/keys', () => {
  test('a key with limits: created with the secret once, listed with limits and spent, patched, revoked', async () => {
    const limits = { budget: 5, budgetPeriod: 'day', rpm: 60, tpm: 100_000, models: ['smart-lite', 'gpt-4o-mini'] };
    const created = await ok(await call('POST', '/keys', { key: ada.key }, { name: ' ci ', limits, expiresAt: inDays(30) }), 200);
    expect(created).toMatchObject({ name: 'ci', revoked: false, limits, spent: 0, lastUsedAt: null, parentKeyId: null });
    expect(created.key).toMatch(/^agw_[0-9a-f]{12}_/);
    expect(created.key.startsWith(created.prefix.slice(0, -1))).toBe(true);
    expect(Date.parse(created.expiresAt)).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    expect((await td.fetch('/gateway/entitlements', { key: created.key })).status).toBe(200);

    const list = await call('GET', '/keys', { session: s });
    const text = await list.text();
    expect(text).not.toContain(created.key);
    const items = JSON.parse(text).items;
    const { key: _secret, ...view } = created;
    // used once above (entitlements): its lastUsedAt shows at once (issue #33 item 19)
    expect(items.find((k: { id: string }) => k.id === created.id)).toEqual({ ...view, lastUsedAt: expect.stringMatching(/:00\.000Z$/) });
    expect(items.find((k: { id: string }) => k.id === ada.keyId)).toMatchObject({ limits: { budget: null, budgetPeriod: null, rpm: null, tpm: null, models: null }, expiresAt: null });

    // what the key spent in this budget period (key_spend, as the money engine books it)
    await td.daemon.ctx.db.run('INSERT INTO key_spend (key_id, period, spent_nusd) VALUES (?, ?, ?)', [created.id, budgetPeriodKey('day', Date.now()), 1_250_000_000]);
    await td.daemon.ctx.db.run('INSERT INTO key_spend (key_id, period, spent_nusd) VALUES (?, ?, ?)', [created.id, 'D2001-01-01', 9_000_000_000]);

    const patched = await ok(await call('PATCH', `/keys/${created.id}`, { session: s }, { name: 'ci-main', limits: { rpm: null, budget: 7.5 } }));
    expect(patched).toMatchObject({ name: 'ci-main', limits: { budget: 7.5, budgetPeriod: 'day', rpm: null, tpm: 100_000 }, spent: 1.25 });

    const revoked = await ok(await call('DELETE', `/keys/${created.id}`, { key: ada.key }));
    expect(revoked).toMatchObject({ id: created.id, revoked: true });
    expect((await td.fetch('/gateway/entitlements', { key: created.key })).status).toBe(401);
    expect(await ok(await call('DELETE', `/keys/${created.id}`, { key: ada.key }))).toMatchObject({ revoked: true });
  });

  test('an OAuth access token manages keys too; no credentials get 401', async () => {
    const o = await oauthFixture(td);
    const p = pkce();
    const tokens = await exchange(td, await getCode(td, o.cookie, authParams(p.challenge)), p.verifier);
    const token = String(tokens.body.access_token);
    const created = await ok(await call('POST', '/keys', { key: token }, { name: 'from-app', limits: { rpm: 10 } }), 200);
    expect((await ok(await call('GET', '/keys', { key: token }))).items.map((k: { id: string }) => k.id)).toContain(created.id);
    expect((await call('GET', '/keys', {})).status).toBe(401);
  });

  test('another account’s key is 404 for every verb and stays as it was', async () => {
    const theirs = await ok(await call('POST', '/keys', { key: bob.key }, { name: 'bob' }), 200);
    for (const [m, body] of [['PATCH', { limits: { rpm: 1 } }], ['DELETE', undefined]] as const) {
      const r = await call(m, `/keys/${theirs.id}`, { key: ada.key }, body);
      expect(r.status).toBe(404);
      expect((await r.json()).code).toBe('KEY_NOT_FOUND');
    }
    expect((await ok(await call('GET', '/keys', { key: ada.key }))).items.map((k: { id: string }) => k.id)).not.toContain(theirs.id);
    expect((await td.fetch('/gateway/entitlements', { key: theirs.key })).status).toBe(200);
  });
});

describe('validation: 400 INVALID_REQUEST naming the field, nothing stored', () => {
  test.each([
    [{ limits: { budget: -1 } }, 'limits.budget'],
    [{ limits: { budget: 'five' } }, 'limits.budget'],
    [{ limits: { budget: 5, budgetPeriod: 'year' } }, 'limits.budgetPeriod'],
    [{ limits: { budgetPeriod: 'day' } }, 'limits.budgetPeriod'],
    [{ limits: { rpm: 0 } }, 'limits.rpm'],
    [{ limits: { rpm: 1.5 } }, 'limits.rpm'],
    [{ limits: { tpm: -5 } }, 'limits.tpm'],
    [{ limits: { models: [] } }, 'limits.models'],
    [{ limits: { models: ['ok', 'not a model!'] } }, 'limits.models'],
    [{ limits: { expiresAt: 'tomorrow' } }, 'limits.expiresAt'],
    [{ limits: { expiresAt: '2001-01-01T00:00:00Z' } }, 'limits.expiresAt'],
    [{ expiresAt: inDays(1), limits: { expiresAt: inDays(2) } }, 'expiresAt'],
    [{ limits: { admin: true } }, 'limits.admin'],
  ])('%j → %s', async (body, field) => {
    const before = (await ok(await call('GET', '/keys', { key: ada.key }))).items.length;
    const r = await call('POST', '/keys', { key: ada.key }, { name: 'bad', ...body });
    const err = await r.json();
    expect(r.status, JSON.stringify(err)).toBe(400);
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.details.field).toBe(field);
    expect(err.error).toContain(field.split('.').pop());
    const patch = await call('PATCH', `/keys/${ada.keyId}`, { key: ada.key }, body);
    expect(patch.status).toBe(400);
    expect((await ok(await call('GET', '/keys', { key: ada.key }))).items.length).toBe(before);
  });

  test('0 and null are told apart: a $0 budget freezes a key, null lifts the budget', async () => {
    const k = await ok(await call('POST', '/keys', { key: ada.key }, { name: 'frozen', limits: { budget: 0 } }), 200);
    expect(k.limits).toMatchObject({ budget: 0, budgetPeriod: 'total' });
    expect((await ok(await call('PATCH', `/keys/${k.id}`, { key: ada.key }, { limits: { budget: null } }))).limits.budget).toBeNull();
  });

  test('POST needs a name', async () => {
    const r = await call('POST', '/keys', { key: ada.key }, { limits: { rpm: 5 } });
    expect(r.status).toBe(400);
    expect((await r.json()).details.field).toBe('name');
  });
});

describe('a key made with a key never gets more than that key has', () => {
  let ci: { id: string; key: string };
  const ciLimits = { budget: 5, budgetPeriod: 'day', rpm: 60, tpm: 10_000, models: ['smart-lite'] };
  let ciExpires: string;

  beforeAll(async () => {
    ciExpires = inDays(7);
    ci = await ok(await call('POST', '/keys', { session: s }, { name: 'ci', limits: { ...ciLimits, expiresAt: ciExpires } }), 200);
  });

  test('what a limited key leaves out is inherited; within its limits is allowed', async () => {
    const child = await ok(await call('POST', '/keys', { key: ci.key }, { name: 'job' }), 200);
    expect(child).toMatchObject({ limits: ciLimits, expiresAt: ciExpires, parentKeyId: ci.id });
    // the key principal carries its maker's limits (for the money engine: its calls also spend from them)
    const p = await verifyApiKeyWithTier(td.daemon.ctx.db, child.key);
    expect(p?.ancestors).toEqual([{ keyId: ci.id, limits: { budgetNano: 5e9, budgetPeriod: 'day', rpm: 60, tpm: 10_000, models: ['smart-lite'] } }]);
    expect((await verifyApiKeyWithTier(td.daemon.ctx.db, ci.key))?.ancestors).toBeUndefined();
    const narrower = await ok(
      await call('POST', '/keys', { key: ci.key }, { name: 'narrow', limits: { budget: 2, budgetPeriod: 'week', rpm: 10, tpm: 100, models: ['openai/gpt-4o-mini'], expiresAt: inDays(1) } }),
      200,
    );
    expect(narrower.limits).toEqual({ budget: 2, budgetPeriod: 'week', rpm: 10, tpm: 100, models: ['openai/gpt-4o-mini'] });
    expect((await ok(await call('POST', '/keys', { key: ci.key }, { name: 'total', limits: { budgetPeriod: 'total' } }), 200)).limits.budgetPeriod).toBe('total');
  });

  test.each([
    [{ budget: 5.01 }, 'limits.budget'],
    [{ budget: null }, 'limits.budget'],
    [{ rpm: 61 }, 'limits.rpm'],
    [{ rpm: null }, 'limits.rpm'],
    [{ tpm: 10_001 }, 'limits.tpm'],
    [{ models: ['smart-lite', 'smart-pro'] }, 'limits.models'],
    [{ models: ['gpt-4o'] }, 'limits.models'],
    [{ models: ['gpt-4o-mini'] }, 'limits.models'], // a bare id is any provider's model of that name
    [{ models: null }, 'limits.models'],
    [{ expiresAt: null }, 'limits.expiresAt'],
  ])('creating with %j → 403 KEY_LIMITS_TOO_WIDE on %s', async (limits, field) => {
    const count = async () => (await ok(await call('GET', '/keys', { session: s }))).items.length;
    const before = await count();
    const r = await call('POST', '/keys', { key: ci.key }, { name: 'wider', limits });
    const err = await r.json();
    expect(r.status, JSON.stringify(err)).toBe(403);
    expect(err).toMatchObject({ code: 'KEY_LIMITS_TOO_WIDE', details: { field } });
    expect(await count()).toBe(before);
  });

  test('a later expiry and a budget period that resets more often are escalations too', async () => {
    const late = await call('POST', '/keys', { key: ci.key }, { name: 'late', expiresAt: inDays(8) });
    expect((await late.json()).details.field).toBe('limits.expiresAt');
    const weekly = await ok(await call('POST', '/keys', { session: s }, { name: 'weekly', limits: { budget: 5, budgetPeriod: 'week' } }), 200);
    for (const period of ['day', 'month']) {
      const r = await call('POST', '/keys', { key: weekly.key }, { name: period, limits: { budget: 1, budgetPeriod: period } });
      expect(r.status).toBe(403);
      expect((await r.json()).details.field).toBe('limits.budgetPeriod');
    }
  });

  test('a limited key sees and manages only itself and the keys made with it, and cannot lift limits', async () => {
    const child = await ok(await call('POST', '/keys', { key: ci.key }, { name: 'managed', limits: { rpm: 5 } }), 200);
    const ids = (await ok(await call('GET', '/keys', { key: ci.key }))).items.map((k: { id: string }) => k.id);
    expect(ids).toContain(ci.id);
    expect(ids).toContain(child.id);
    expect(ids).not.toContain(ada.keyId);
    // other keys of the account: not disclosed, not touched
    expect((await call('PATCH', `/keys/${ada.keyId}`, { key: ci.key }, { limits: { rpm: 1 } })).status).toBe(404);
    expect((await call('DELETE', `/keys/${ada.keyId}`, { key: ci.key })).status).toBe(404);
    expect((await td.fetch('/gateway/entitlements', { key: ada.key })).status).toBe(200);
    // lifting: its own limits and the ones of keys it made
    for (const [id, limits] of [[ci.id, { budget: 50 }], [ci.id, { models: null }], [child.id, { rpm: 61 }]] as const) {
      const r = await call('PATCH', `/keys/${id}`, { key: ci.key }, { limits });
      expect(r.status).toBe(403);
      expect((await r.json()).code).toBe('KEY_LIMITS_TOO_WIDE');
    }
    expect((await ok(await call('PATCH', `/keys/${child.id}`, { key: ci.key }, { limits: { rpm: 60 } }))).limits.rpm).toBe(60);
    // not even the account lifts a key above the key it was made with
    const owner = await call('PATCH', `/keys/${child.id}`, { session: s }, { limits: { rpm: 100 } });
    expect(owner.status).toBe(403);
  });

  test('narrowing a key narrows the keys made with it; revoking one revokes them', async () => {
    const parent = await ok(await call('POST', '/keys', { session: s }, { name: 'p', limits: { budget: 4, budgetPeriod: 'day', rpm: 30, models: ['smart-lite'] } }), 200);
    const child = await ok(await call('POST', '/keys', { key: parent.key }, { name: 'c', limits: { budget: 3, rpm: 20 } }), 200);
    const grandchild = await ok(await call('POST', '/keys', { key: child.key }, { name: 'g' }), 200);
    await ok(await call('PATCH', `/keys/${parent.id}`, { session: s }, { limits: { budget: 1, rpm: 25, models: ['gpt-4o-mini'] } }));
    const byId = new Map((await ok(await call('GET', '/keys', { session: s }))).items.map((k: { id: string }) => [k.id, k]));
    for (const id of [child.id, grandchild.id]) {
      // smart-lite's targets, of which the parent now allows one
      expect(byId.get(id)).toMatchObject({ limits: { budget: 1, budgetPeriod: 'day', rpm: 20, models: ['openai/gpt-4o-mini'] } });
    }
    await ok(await call('DELETE', `/keys/${parent.id}`, { session: s }));
    for (const k of [parent, child, grandchild]) expect((await td.fetch('/gateway/entitlements', { key: k.key })).status).toBe(401);
  });
});

describe('keys made while their maker is narrowed', () => {
  test('a key made at the same time as its maker’s limits are lowered still fits inside them', async () => {
    for (let round = 0; round < 8; round++) {
      const maker = await ok(await call('POST', '/keys', { session: s }, { name: `maker${round}`, limits: { rpm: 60 } }), 200);
      const [made, narrowed] = await Promise.all([
        call('POST', '/keys', { key: maker.key }, { name: `made${round}`, limits: { rpm: 60 } }),
        call('PATCH', `/keys/${maker.id}`, { session: s }, { limits: { rpm: 10 } }),
      ]);
      expect(narrowed.status).toBe(200);
      expect([200, 403]).toContain(made.status);
      const items = (await ok(await call('GET', '/keys', { session: s }))).items as { name: string; limits: { rpm: number } }[];
      for (const k of items.filter((x) => x.name === `made${round}`)) expect(k.limits.rpm).toBeLessThanOrEqual(10);
    }
  });
});

describe('entitlements requested with a limited key', () => {
  test('carry the key: its limits, what it spent this period, what is left and when the period resets', async () => {
    const expiresAt = inDays(3);
    const k = await ok(await call('POST', '/keys', { key: ada.key }, { name: 'budgeted', limits: { budget: 5, budgetPeriod: 'day', rpm: 60, expiresAt } }), 200);
    const now = Date.now();
    await td.daemon.ctx.db.run('INSERT INTO key_spend (key_id, period, spent_nusd) VALUES (?, ?, ?)', [k.id, budgetPeriodKey('day', now), 1_250_000_000]);
    const e = await ok(await td.fetch('/gateway/entitlements', { key: k.key }));
    const midnight = new Date(Math.floor(now / 86_400_000 + 1) * 86_400_000).toISOString();
    expect(e.key).toEqual({
      id: k.id,
      limits: { budget: 5, budgetPeriod: 'day', rpm: 60, tpm: null, models: null },
      expiresAt,
      spent: 1.25,
      budgetRemaining: 3.75,
      budgetResetsAt: midnight,
      requestsRemaining: 60, // nothing called with it yet: the whole window
      tokensRemaining: null,
    });
    expect((await ok(await td.fetch('/gateway/entitlements', { key: ada.key }))).key).toBeUndefined();
  });
});

describe('expiry: 401 KEY_EXPIRED saying when, on gateway and account routes', () => {
  test('a key that expires during the test', async () => {
    const at = new Date(Date.now() + 3000).toISOString();
    const k = await ok(await call('POST', '/keys', { key: ada.key }, { name: 'short', expiresAt: at }), 200);
    expect(k.expiresAt).toBe(at);
    expect((await td.fetch('/gateway/entitlements', { key: k.key })).status).toBe(200);
    expect((await td.fetch('/gateway/entitlements', { key: k.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Date.parse(at) - Date.now() + 50));
    for (const path of ['/gateway/entitlements', '/wallet', '/keys', '/skills/mine']) {
      const r = await td.fetch(path, { key: k.key });
      const err = await r.json();
      expect(r.status, path).toBe(401);
      expect(err.code).toBe('KEY_EXPIRED');
      expect(err.error).toContain(`expired at ${at}`);
    }
    const chat = await td.fetch('/gateway/chat', { method: 'POST', key: k.key, json: { model: 'smart-lite', messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.status).toBe(401);
    expect((await chat.json()).code).toBe('KEY_EXPIRED');
    // the account still sees it, and public reads treat it as anonymous
    expect((await ok(await call('GET', '/keys', { key: ada.key }))).items.find((x: { id: string }) => x.id === k.id).expiresAt).toBe(at);
    expect((await td.fetch('/gateway/aliases', { key: k.key })).status).toBe(200);
  });
});
