import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { bundle, json, publishJson, skillMd } from './skills-helpers.js';

/** The public side: search, lookups and public versions; drafts hidden, archived skills for owners and installers only. */
let td: TestDaemon;
let owner: TestUser;
let buyer: TestUser;
let stranger: TestUser;
const ids: Record<string, number> = {};

const get = async (path: string, key?: string) => {
  const res = await td.fetch(path, { key });
  return { status: res.status, body: await json(res) };
};

async function publish(slug: string, fields: Record<string, string | number>, description?: string) {
  const files = [{ path: 'SKILL.md', content: skillMd(slug, description ?? `The ${slug} skill.`) }];
  const res = await publishJson(td, owner.key, { version: '1.0.0', ...fields }, files);
  expect(res.status).toBe(200);
  ids[slug] = (await json(res)).id;
  await new Promise((r) => setTimeout(r, 3)); // distinct timestamps for "recent"
}

beforeAll(async () => {
  td = await startTestDaemon();
  owner = await td.user();
  buyer = await td.user();
  stranger = await td.user();
  await publish('alpha-dialogue', { category: 'npc-dialogue', price: 3, name: 'Alpha Dialogue' });
  await publish('beta-terrain', { category: 'story-terrain', price: 0, name: 'beta terrain' }, 'Builds 100% procedural terrain_maps.');
  await publish('gamma-audio', { category: 'audio-economy', price: 1, name: 'Gamma Audio' });
  await publish('delta-hidden', { category: 'scene', status: 'draft', name: 'Delta Hidden' });
  await publish('epsilon-old', { category: 'scene', name: 'Epsilon Old' });
  // popularity: gamma 2 installs, beta 1
  for (let i = 0; i < 2; i++) {
    const fan = await td.user({ balance: 5 });
    expect((await td.fetch(`/skills/${ids['gamma-audio']}/install`, { method: 'POST', key: fan.key })).status).toBe(200);
  }
  await td.fetch(`/skills/${ids['beta-terrain']}/install`, { method: 'POST', key: buyer.key });
  // epsilon: buyer installs, then the owner archives it
  await td.fetch(`/skills/${ids['epsilon-old']}/install`, { method: 'POST', key: buyer.key });
  const arch = await td.fetch(`/skills/${ids['epsilon-old']}`, { method: 'PATCH', key: owner.key, json: { status: 'archived' } });
  expect(arch.status).toBe(200);
});
afterAll(async () => {
  await td?.close();
});

const slugs = (body: { items: { slug: string }[] }) => body.items.map((s) => s.slug);

describe('search', () => {
  it('lists published skills only, popular first by default', async () => {
    const { status, body } = await get('/skills');
    expect(status).toBe(200);
    expect(slugs(body)).toEqual(['gamma-audio', 'beta-terrain', 'alpha-dialogue']);
    expect(body).toMatchObject({ total: 3, page: 1, limit: 20 });
    expect(Object.keys(body.items[0]).sort()).toEqual(
      ['category', 'createdAt', 'currentVersion', 'description', 'id', 'installCount', 'name', 'ownerId', 'ownerName', 'price', 'slug', 'status', 'updatedAt'],
    );
  });

  it.each([
    ['recent', ['gamma-audio', 'beta-terrain', 'alpha-dialogue']],
    ['name', ['alpha-dialogue', 'beta-terrain', 'gamma-audio']],
    ['price', ['beta-terrain', 'gamma-audio', 'alpha-dialogue']],
    ['popular', ['gamma-audio', 'beta-terrain', 'alpha-dialogue']],
  ])('sort=%s', async (sort, expected) => {
    expect(slugs((await get(`/skills?sort=${sort}`)).body)).toEqual(expected);
  });

  it('q matches name, slug and description, case-insensitively; every word must match', async () => {
    expect(slugs((await get('/skills?q=DIALOGUE')).body)).toEqual(['alpha-dialogue']);
    expect(slugs((await get('/skills?q=procedural')).body)).toEqual(['beta-terrain']);
    expect(slugs((await get('/skills?q=gamma%20audio')).body)).toEqual(['gamma-audio']);
    expect(slugs((await get('/skills?q=gamma%20terrain')).body)).toEqual([]);
    expect(slugs((await get('/skills?q=hidden')).body)).toEqual([]); // a draft
  });

  it('% and _ in q are literal characters', async () => {
    expect(slugs((await get('/skills?q=100%25')).body)).toEqual(['beta-terrain']);
    expect(slugs((await get('/skills?q=%25')).body)).toEqual(['beta-terrain']);
    expect(slugs((await get('/skills?q=terrain_')).body)).toEqual(['beta-terrain']);
    expect(slugs((await get('/skills?q=_')).body)).toEqual(['beta-terrain']);
  });

  it('category filters; an unknown category is 400 INVALID_CATEGORY', async () => {
    expect(slugs((await get('/skills?category=audio-economy')).body)).toEqual(['gamma-audio']);
    expect(slugs((await get('/skills?category=scene')).body)).toEqual([]);
    const bad = await get('/skills?category=nope');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_CATEGORY');
  });

  it('pages with a stable order and the total', async () => {
    const p1 = (await get('/skills?sort=name&limit=2&page=1')).body;
    const p2 = (await get('/skills?sort=name&limit=2&page=2')).body;
    expect(slugs(p1)).toEqual(['alpha-dialogue', 'beta-terrain']);
    expect(slugs(p2)).toEqual(['gamma-audio']);
    expect(p2).toMatchObject({ total: 3, page: 2, limit: 2 });
    expect(slugs((await get('/skills?page=9')).body)).toEqual([]);
  });

  it.each(['limit=101', 'limit=0', 'page=0', 'sort=cheap', 'extra=1'])('bad query %s → 400 INVALID_REQUEST', async (qs) => {
    const { status, body } = await get(`/skills?${qs}`);
    expect(status).toBe(400);
    expect(body.code).toBe('INVALID_REQUEST');
  });
});

describe('lookups', () => {
  it('by id and by slug give the same record', async () => {
    const a = await get(`/skills/${ids['gamma-audio']}`);
    const b = await get('/skills/by-slug/gamma-audio');
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    expect(a.body).toMatchObject({ slug: 'gamma-audio', name: 'Gamma Audio', price: 1, installCount: 2, currentVersion: '1.0.0', ownerId: owner.id });
  });

  it('unknown id or slug → 404 SKILL_NOT_FOUND; a non-numeric id → 400', async () => {
    expect((await get('/skills/999999')).body.code).toBe('SKILL_NOT_FOUND');
    expect((await get('/skills/by-slug/no-such-skill')).status).toBe(404);
    expect((await get('/skills/abc')).status).toBe(400);
  });

  it('a draft is hidden from every public read, but its owner sees it', async () => {
    const id = ids['delta-hidden'];
    for (const path of [`/skills/${id}`, '/skills/by-slug/delta-hidden', `/skills/${id}/public-versions`]) {
      expect((await get(path)).status, path).toBe(404);
      expect((await get(path, buyer.key)).status, path).toBe(404);
      expect((await get(path, owner.key)).status, path).toBe(200);
    }
    expect((await get(`/skills/${id}/public-versions`, owner.key)).body.versions).toEqual([]); // draft versions are not public
  });

  it('an archived skill: visible to its owner and earlier installers only', async () => {
    const id = ids['epsilon-old'];
    expect((await get(`/skills/${id}`)).status).toBe(404);
    expect((await get(`/skills/${id}`, stranger.key)).status).toBe(404);
    expect((await get(`/skills/${id}`, buyer.key)).body.status).toBe('archived');
    expect((await get('/skills/by-slug/epsilon-old', owner.key)).body.status).toBe('archived');
    const pv = (await get(`/skills/${id}/public-versions`, buyer.key)).body;
    expect(pv.versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0']);
    expect(slugs((await get('/skills?q=epsilon', buyer.key)).body)).toEqual([]); // search lists published only
  });

  it('invalid credentials on a public read are ignored, not 401', async () => {
    expect((await get(`/skills/${ids['gamma-audio']}`, 'agw_not_a_real_key')).status).toBe(200);
  });
});

describe('public versions', () => {
  it('has the spec shape with installer counts and notes attribution', async () => {
    const id = ids['alpha-dialogue'];
    await publishJson(td, owner.key, { version: '1.1.0', notes: 'faster' }, bundle('alpha-dialogue'));
    await publishJson(td, owner.key, { version: '2.0.0-draft', status: 'draft' }, bundle('alpha-dialogue'));
    const buyer2 = await td.user({ balance: 10 });
    expect((await td.fetch(`/skills/${id}/install`, { method: 'POST', key: buyer2.key })).status).toBe(200);
    const edit = await td.fetch(`/skills/${id}/versions/1.0.0`, { method: 'PATCH', key: owner.key, json: { notes: 'initial release' } });
    expect(edit.status).toBe(200);
    const { status, body } = await get(`/skills/${id}/public-versions`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ skillId: id, slug: 'alpha-dialogue', currentVersion: '1.1.0' });
    expect(body.versions).toHaveLength(2); // the draft is not listed
    const [v11, v10] = body.versions;
    expect(v11).toEqual({
      version: '1.1.0', publishedAt: expect.any(String), installerCount: 1, isCurrent: true, notes: 'faster', notesUpdatedAt: null, notesUpdatedByName: null,
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), signature: { kid: expect.any(String), sig: expect.stringMatching(/^[A-Za-z0-9_-]{86}$/) },
      status: 'published', prerelease: false,
    });
    expect(v10).toMatchObject({ version: '1.0.0', installerCount: 0, isCurrent: false, notes: 'initial release' });
    expect(Date.parse(v10.notesUpdatedAt)).toBeGreaterThan(Date.parse(v10.publishedAt) - 1);
    expect(v10.notesUpdatedByName).toBe((await get(`/skills/${id}`)).body.ownerName);
  });
});
