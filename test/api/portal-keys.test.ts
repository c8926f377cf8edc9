import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { getJson, portalLogin, type PortalSession } from '../helpers/portal.js';
import { createProject } from '../../src/daemon/store/projects.js';
import { quotaPeriod } from '../../src/daemon/money/quotas.js';

describe('portal keys, projects and entitlements', () => {
  let td: TestDaemon;
  let alice: TestUser;
  let bob: TestUser;
  let a: PortalSession;
  let b: PortalSession;

  const post = (s: PortalSession, path: string, json: unknown) =>
    td.fetch(path, { method: 'POST', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf }, json });
  const del = (s: PortalSession, path: string) =>
    td.fetch(path, { method: 'DELETE', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });

  beforeAll(async () => {
    td = await startTestDaemon();
    alice = await td.user({ tier: 'pro', quotas: { tts: -1 } });
    bob = await td.user({ tier: 'free' });
    [a, b] = [await portalLogin(td, alice), await portalLogin(td, bob)];
  });
  afterAll(() => td.close());

  test('a created key is shown once, works as a bearer key, is listed without its secret, and stops working when revoked', async () => {
    const r = await post(a, '/portal/keys', { name: '  laptop  ' });
    expect(r.status).toBe(201);
    const k = await r.json();
    expect(k.key).toMatch(/^agw_[0-9a-f]{12}_/);
    expect(k.name).toBe('laptop');
    expect(k.key.startsWith(k.prefix.slice(0, -1))).toBe(true);
    expect((await td.fetch('/wallet', { key: k.key })).status).toBe(200);

    const list = await td.fetch('/portal/keys', { headers: { cookie: a.cookie } });
    const text = await list.text();
    expect(text).not.toContain(k.key);
    const items = JSON.parse(text).items;
    expect(items.map((x: any) => x.id)).toEqual(expect.arrayContaining([k.id, alice.keyId]));
    expect(items.find((x: any) => x.id === k.id)).toMatchObject({ name: 'laptop', revokedAt: null });

    const rev = await del(a, `/portal/keys/${k.id}`);
    expect(rev.status).toBe(200);
    expect(await rev.json()).toEqual({ id: k.id, revoked: true });
    expect((await td.fetch('/wallet', { key: k.key })).status).toBe(401);
    const again = await del(a, `/portal/keys/${k.id}`);
    expect(again.status).toBe(200);
    const after = (await getJson(td, '/portal/keys', a.cookie)).body.items.find((x: any) => x.id === k.id);
    expect(after.revokedAt).toEqual(expect.any(String));
  });

  test('another user’s key cannot be revoked (404) and keeps working', async () => {
    const r = await del(b, `/portal/keys/${alice.keyId}`);
    expect(r.status).toBe(404);
    expect((await r.json()).code).toBe('KEY_NOT_FOUND');
    expect((await td.fetch('/wallet', { key: alice.key })).status).toBe(200);
    expect((await getJson(td, '/portal/keys', b.cookie)).body.items.map((x: any) => x.id)).toEqual([bob.keyId]);
  });

  test('bad input is refused and stores nothing; keys cannot mint keys', async () => {
    const count = async () => (await getJson(td, '/portal/keys', a.cookie)).body.items.length;
    const before = await count();
    const long = await post(a, '/portal/keys', { name: 'x'.repeat(101) });
    expect(long.status).toBe(400);
    expect((await long.json()).code).toBe('INVALID_REQUEST');
    expect((await post(a, '/portal/keys', { name: 'ok', admin: true })).status).toBe(400);
    const viaKey = await td.fetch('/portal/keys', { method: 'POST', key: alice.key, json: {} });
    expect(viaKey.status).toBe(401);
    expect(await count()).toBe(before);
    const unnamed = await post(a, '/portal/keys', {});
    expect(unnamed.status).toBe(201);
    expect((await unnamed.json()).name).toBeNull();
  });

  test('projects lists the ones the user has a role on', async () => {
    const p = await createProject(td.daemon.ctx.db, alice.id, 'Apollo');
    const mine = await getJson(td, '/portal/projects', a.cookie);
    expect(mine.body.items).toEqual([{ uid: p.uid, name: 'Apollo', role: 'owner', createdAt: expect.any(String) }]);
    expect((await getJson(td, '/portal/projects', b.cookie)).body.items).toEqual([]);
  });

  test('entitlements show the tier, quota meters with overrides and this month’s use, and the allowed models', async () => {
    const period = quotaPeriod();
    await td.daemon.ctx.db.run('INSERT INTO quota_counters (user_id, usage_type, period_start, used) VALUES (?, ?, ?, ?)', [alice.id, 'ai_chat', period.key, 17]);
    await td.daemon.ctx.db.run('INSERT INTO quota_counters (user_id, usage_type, period_start, used) VALUES (?, ?, ?, ?)', [alice.id, 'ai_chat', '2001-01-01T00:00:00.000Z', 99]);
    const { status, body } = await getJson(td, '/portal/entitlements', a.cookie);
    expect(status).toBe(200);
    expect(body).toMatchObject({ userId: alice.id, tier: 'pro', tierDisplayName: 'Pro', modelBands: ['lite', 'standard', 'pro'] });
    expect(body.quotas.ai_chat).toEqual({ used: 17, limit: 5000, remaining: 4983, unlimited: false });
    expect(body.quotas.tts).toEqual({ used: 0, limit: -1, remaining: -1, unlimited: true });
    expect(Object.keys(body.quotas).sort()).toEqual(['ai_chat', 'image_generation', 'model_3d', 'npc_generation', 'skybox', 'sound_effect', 'tts']);
    expect(body.period.resetsAt).toBe(new Date(period.end).toISOString());
    expect(body.allowedModels.length).toBeGreaterThan(0);
    expect(body.allowedModels.every((m: any) => ['lite', 'standard', 'pro'].includes(m.band))).toBe(true);
    const free = (await getJson(td, '/portal/entitlements', b.cookie)).body;
    expect(free.allowedModels.every((m: any) => m.band === 'lite')).toBe(true);
    expect(free.allowedModels.length).toBeLessThan(body.allowedModels.length);
    expect((await td.fetch('/portal/entitlements', { key: alice.key })).status).toBe(401);
  });
});
