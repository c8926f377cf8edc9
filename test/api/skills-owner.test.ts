import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { bundle, json, publishJson, storeSnapshot } from './skills-helpers.js';

/** The owner's side: versions with drafts, notes, metadata and status changes, republish, files, mine, timeseries. */
let td: TestDaemon;
let owner: TestUser;
let other: TestUser;
let id: number;

const call = async (method: string, path: string, key: string | undefined, body?: unknown) => {
  const res = await td.fetch(path, { method, key, json: body });
  return { status: res.status, body: await json(res) };
};

beforeAll(async () => {
  td = await startTestDaemon();
  owner = await td.user();
  other = await td.user({ balance: 100 });
  const res = await publishJson(td, owner.key, { version: '1.0.0', category: 'scene', price: 4 }, bundle('owned-skill', { path: 'tools/t.json', content: '{"name":"t","description":"d","parameters":{"type":"object","properties":{}}}' }));
  id = (await json(res)).id;
  await publishJson(td, owner.key, { version: '1.1.0-rc.1', status: 'draft', notes: 'try me' }, bundle('owned-skill'));
});
afterAll(async () => {
  await td?.close();
});

describe('versions and files', () => {
  it('GET versions lists drafts too, with status, for the owner only', async () => {
    const { status, body } = await call('GET', `/skills/${id}/versions`, owner.key);
    expect(status).toBe(200);
    expect(body.currentVersion).toBe('1.0.0');
    expect(body.versions.map((v: { version: string; status: string }) => [v.version, v.status])).toEqual([
      ['1.1.0-rc.1', 'draft'],
      ['1.0.0', 'published'],
    ]);
    expect(body.versions[1]).toMatchObject({ isCurrent: true, fileCount: 2, installerCount: 0 });
    expect((await call('GET', `/skills/${id}/versions`, other.key)).body.code).toBe('NOT_OWNER');
    expect((await call('GET', `/skills/${id}/versions`, undefined)).status).toBe(401);
  });

  it('GET files of a version: owner only; unknown version → 404 VERSION_NOT_FOUND', async () => {
    const { status, body } = await call('GET', `/skills/${id}/versions/1.0.0/files`, owner.key);
    expect(status).toBe(200);
    expect(body.files.map((f: { path: string }) => f.path)).toEqual(['SKILL.md', 'tools/t.json']);
    for (const f of body.files) expect(Object.keys(f).sort()).toEqual(['path', 'sha256', 'size']);
    const denied = await call('GET', `/skills/${id}/versions/1.0.0/files`, other.key);
    expect([denied.status, denied.body.code]).toEqual([403, 'NOT_OWNER']);
    const missing = await call('GET', `/skills/${id}/versions/9.9.9/files`, owner.key);
    expect([missing.status, missing.body.code]).toEqual([404, 'VERSION_NOT_FOUND']);
  });

  it('PATCH release notes sets notesUpdatedAt and notesUpdatedByName and answers the record', async () => {
    const before = Date.now();
    const { status, body } = await call('PATCH', `/skills/${id}/versions/1.0.0`, owner.key, { notes: 'Now with tools.' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ id, slug: 'owned-skill' });
    const pv = (await call('GET', `/skills/${id}/public-versions`, undefined)).body;
    const v = pv.versions.find((x: { version: string }) => x.version === '1.0.0');
    expect(v.notes).toBe('Now with tools.');
    expect(Date.parse(v.notesUpdatedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(v.notesUpdatedByName).toBe(body.ownerName);
  });

  it('PATCH notes refusals: other user 403 NOT_OWNER, bad body 400, unknown version 404; nothing changes', async () => {
    const snap = await storeSnapshot(td);
    expect((await call('PATCH', `/skills/${id}/versions/1.0.0`, other.key, { notes: 'pwned' })).body.code).toBe('NOT_OWNER');
    expect((await call('PATCH', `/skills/${id}/versions/1.0.0`, owner.key, { notes: { text: 'x' } })).body.code).toBe('INVALID_REQUEST');
    expect((await call('PATCH', `/skills/${id}/versions/1.0.0`, owner.key, { text: 'x' })).body.code).toBe('INVALID_REQUEST');
    expect((await call('PATCH', `/skills/${id}/versions/0.0.1`, owner.key, { notes: 'x' })).body.code).toBe('VERSION_NOT_FOUND');
    expect((await call('PATCH', `/skills/424242/versions/1.0.0`, owner.key, { notes: 'x' })).body.code).toBe('SKILL_NOT_FOUND');
    expect(await storeSnapshot(td)).toEqual(snap);
  });
});

describe('PATCH skill', () => {
  it('changes name, description, category and price', async () => {
    const { status, body } = await call('PATCH', `/skills/${id}`, owner.key, { name: 'Owned Skill', description: 'Better words', category: 'physics-camera', price: 1.25 });
    expect(status).toBe(200);
    expect(body).toMatchObject({ name: 'Owned Skill', description: 'Better words', category: 'physics-camera', price: 1.25, status: 'published' });
    expect((await call('GET', `/skills/${id}`, undefined)).body).toEqual(body);
  });

  it.each([
    [{ category: 'nope' }, 400, 'INVALID_CATEGORY'],
    [{ price: -1 }, 400, 'INVALID_REQUEST'],
    [{ price: 10001 }, 400, 'INVALID_REQUEST'],
    [{ status: 'deleted' }, 400, 'INVALID_REQUEST'],
    [{ slug: 'renamed' }, 400, 'INVALID_REQUEST'],
    [{}, 400, 'INVALID_REQUEST'],
  ])('%j → %i %s, nothing changes', async (patch, status, code) => {
    const snap = await storeSnapshot(td);
    const res = await call('PATCH', `/skills/${id}`, owner.key, patch);
    expect([res.status, res.body.code]).toEqual([status, code]);
    expect(await storeSnapshot(td)).toEqual(snap);
  });

  it('only the owner: 403 NOT_OWNER for others, 401 without credentials', async () => {
    expect((await call('PATCH', `/skills/${id}`, other.key, { price: 0 })).body.code).toBe('NOT_OWNER');
    expect((await call('PATCH', `/skills/${id}`, undefined, { price: 0 })).status).toBe(401);
  });
});

describe('status transitions', () => {
  it('published → draft hides the skill; draft → published shows it again', async () => {
    expect((await call('PATCH', `/skills/${id}`, owner.key, { status: 'draft' })).body.status).toBe('draft');
    expect((await call('GET', `/skills/${id}`, undefined)).status).toBe(404);
    expect((await call('GET', '/skills?q=owned', undefined)).body.total).toBe(0);
    expect((await call('POST', `/skills/${id}/install`, other.key)).body.code).toBe('SKILL_NOT_FOUND');
    expect((await call('PATCH', `/skills/${id}`, owner.key, { status: 'published' })).body.status).toBe('published');
    expect((await call('GET', '/skills?q=owned', undefined)).body.total).toBe(1);
  });

  it('published → archived: installers keep access, new installs get 403 SKILL_ARCHIVED; republish restores', async () => {
    expect((await call('POST', `/skills/${id}/install`, other.key)).status).toBe(200);
    const archived = await call('PATCH', `/skills/${id}`, owner.key, { status: 'archived' });
    expect(archived.body).toMatchObject({ status: 'archived', currentVersion: '1.0.0' });
    // the skill's status hides it; its versions stay as they were (archiving one version is its own act)
    const versions = (await call('GET', `/skills/${id}/versions`, owner.key)).body.versions;
    expect(versions.map((v: { status: string }) => v.status)).toEqual(['draft', 'published']);
    const newcomer = await td.user({ balance: 100 });
    const refused = await call('POST', `/skills/${id}/install`, newcomer.key);
    expect([refused.status, refused.body.code]).toEqual([403, 'SKILL_ARCHIVED']);
    expect((await call('POST', `/skills/${id}/install`, other.key)).body).toMatchObject({ alreadyInstalled: true, charged: 0 });

    const back = await call('POST', `/skills/${id}/versions/1.0.0/republish`, owner.key);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ status: 'published', currentVersion: '1.0.0' });
    expect((await call('GET', `/skills/${id}`, undefined)).status).toBe(200);
    expect((await call('POST', `/skills/${id}/install`, newcomer.key)).body.alreadyInstalled).toBe(false);
  });

  it('republishing a draft prerelease publishes it; it does not become current over the release (issue #33)', async () => {
    const res = await call('POST', `/skills/${id}/versions/1.1.0-rc.1/republish`, owner.key);
    expect(res.body.currentVersion).toBe('1.0.0');
    const pv = (await call('GET', `/skills/${id}/public-versions`, undefined)).body;
    expect(pv.versions.map((v: { version: string }) => v.version)).toEqual(['1.1.0-rc.1', '1.0.0']);
  });

  it('republish refusals: not owner 403, unknown version 404', async () => {
    expect((await call('POST', `/skills/${id}/versions/1.0.0/republish`, other.key)).body.code).toBe('NOT_OWNER');
    expect((await call('POST', `/skills/${id}/versions/7.7.7/republish`, owner.key)).body.code).toBe('VERSION_NOT_FOUND');
  });

  it('a skill first published as draft goes live with PATCH status=published', async () => {
    const draft = await json(await publishJson(td, owner.key, { version: '0.1.0', status: 'draft' }, bundle('later-skill')));
    expect((await call('GET', `/skills/${draft.id}`, undefined)).status).toBe(404);
    const live = await call('PATCH', `/skills/${draft.id}`, owner.key, { status: 'published' });
    expect(live.body).toMatchObject({ status: 'published', currentVersion: '0.1.0' });
    expect((await call('GET', `/skills/${draft.id}/public-versions`, undefined)).body.versions).toHaveLength(1);
  });
});

describe('mine and timeseries', () => {
  it('mine lists the caller’s skills of every status with revenue and installs', async () => {
    const mine = (await call('GET', '/skills/mine', owner.key)).body;
    const owned = mine.items.find((s: { slug: string }) => s.slug === 'owned-skill');
    // other paid 1.25 (owner gets 80% = 1.00), newcomer paid 1.25 after republish (1.00)
    expect(owned).toMatchObject({ installs: 2, installCount: 2, revenue: 2 });
    expect(mine.items.map((s: { slug: string }) => s.slug).sort()).toEqual(['later-skill', 'owned-skill']);
    expect((await call('GET', '/skills/mine', other.key)).body).toEqual({ items: [] });
    expect((await call('GET', '/skills/mine', undefined)).status).toBe(401);
  });

  it('timeseries has one zero-filled entry per UTC day ending today', async () => {
    const { status, body } = await call('GET', '/skills/mine/timeseries?days=7', owner.key);
    expect(status).toBe(200);
    expect(body.days).toBe(7);
    expect(body.series).toHaveLength(7);
    const today = new Date().toISOString().slice(0, 10);
    expect(body.series[6]).toEqual({ date: today, installs: 2, revenue: 2 });
    for (const d of body.series.slice(0, 6)) expect(d).toMatchObject({ installs: 0, revenue: 0 });
    const dates = body.series.map((d: { date: string }) => Date.parse(d.date));
    for (let i = 1; i < dates.length; i++) expect(dates[i] - dates[i - 1]).toBe(86_400_000);
    expect((await call('GET', '/skills/mine/timeseries', owner.key)).body.series).toHaveLength(30);
    expect((await call('GET', '/skills/mine/timeseries?days=366', owner.key)).status).toBe(400);
    expect((await call('GET', '/skills/mine/timeseries?days=0', owner.key)).status).toBe(400);
  });

  it('timeseries buckets installs by their UTC day', async () => {
    // an install booked three days ago (written straight to the store) lands three entries back
    const db = td.daemon.ctx.db;
    const threeDaysAgo = Date.now() - 3 * 86_400_000;
    const u = await td.user();
    await db.run('INSERT INTO skill_installs (skill_id, user_id, version, charged_nusd, owner_credit_nusd, created_at) VALUES (?, ?, ?, ?, ?, ?)', [id, u.id, '1.0.0', 0, 500_000_000, threeDaysAgo]);
    const { body } = await call('GET', '/skills/mine/timeseries?days=7', owner.key);
    expect(body.series[3]).toEqual({ date: new Date(threeDaysAgo).toISOString().slice(0, 10), installs: 1, revenue: 0.5 });
  });
});
