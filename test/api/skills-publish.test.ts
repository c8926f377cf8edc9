import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../src/daemon/auth/sessions.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { bundle, json, publishForm, publishJson, skillMd, storeSnapshot } from './skills-helpers.js';

/** POST /skills as multipart and JSON: defaults, ownership, versions, auth and field rules. */
const MASTER = 'agw_master_token_for_tests_0123456789';
let td: TestDaemon;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  td = await startTestDaemon({ yaml: `auth:\n  masterToken: ${MASTER}\n` });
  alice = await td.user();
  bob = await td.user();
});
afterAll(async () => {
  await td?.close();
});

const get = async (path: string, key?: string) => json(await td.fetch(path, { key }));

describe('publishing', () => {
  it('JSON publish answers {id, version}; defaults come from SKILL.md', async () => {
    const res = await publishJson(td, alice.key, { version: '1.0.0', category: 'scene', price: 2.5 }, bundle('json-skill'));
    expect(res.status).toBe(200);
    const out = await json(res);
    expect(out).toEqual({ id: expect.any(Number), version: '1.0.0' });
    const skill = await get(`/skills/${out.id}`);
    expect(skill).toMatchObject({
      id: out.id,
      slug: 'json-skill',
      name: 'json-skill',
      description: 'The json-skill skill.',
      category: 'scene',
      price: 2.5,
      status: 'published',
      currentVersion: '1.0.0',
      ownerId: alice.id,
      installCount: 0,
    });
    expect(typeof skill.ownerName).toBe('string');
    expect(Date.parse(skill.createdAt)).toBeGreaterThan(0);
  });

  it('multipart publish with explicit fields, binary and nested files', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
    const files = bundle('form-skill', { path: 'assets/img/logo.png', content: png }, { path: 'scripts/run.sh', content: 'echo hi\n' });
    const res = await publishForm(td, alice.key, { version: '0.1.0', slug: 'form-skill-x', name: 'Form Skill', description: 'Own text', category: 'audio-economy', price: '0', notes: 'first cut' }, files);
    expect(res.status).toBe(200);
    const { id } = await json(res);
    expect(await get(`/skills/by-slug/form-skill-x`)).toMatchObject({ id, name: 'Form Skill', description: 'Own text', category: 'audio-economy', price: 0 });
    const listed = await get(`/skills/${id}/versions/0.1.0/files`, alice.key);
    expect(listed.files.map((f: { path: string }) => f.path)).toEqual(['SKILL.md', 'assets/img/logo.png', 'scripts/run.sh']);
    const logo = listed.files.find((f: { path: string }) => f.path === 'assets/img/logo.png');
    expect(logo.size).toBe(png.length);
    expect(logo.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await get(`/skills/${id}/public-versions`)).versions[0].notes).toBe('first cut');
  });

  it('JSON and multipart store the same bytes under the same hashes, once', async () => {
    const files = bundle('twin-skill', { path: 'data.bin', content: Buffer.from([0, 1, 2, 3, 250]) });
    const a = await json(await publishJson(td, alice.key, { version: '1.0.0' }, files));
    const before = (await td.daemon.ctx.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM blobs'))!.n;
    await publishForm(td, alice.key, { version: '1.0.1', slug: 'twin-skill' }, files);
    const after = (await td.daemon.ctx.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM blobs'))!.n;
    expect(Number(after)).toBe(Number(before)); // deduplicated across versions
    const v1 = await get(`/skills/${a.id}/versions/1.0.0/files`, alice.key);
    const v2 = await get(`/skills/${a.id}/versions/1.0.1/files`, alice.key);
    expect(v2.files).toEqual(v1.files);
  });

  it('the first publisher owns the slug: 403 SLUG_TAKEN for others', async () => {
    const res = await publishJson(td, bob.key, { version: '2.0.0' }, bundle('json-skill'));
    expect(res.status).toBe(403);
    expect((await json(res)).code).toBe('SLUG_TAKEN');
  });

  it('concurrent first publishes of one slug: exactly one owner', async () => {
    const [a, b] = await Promise.all([
      publishJson(td, alice.key, { version: '1.0.0' }, bundle('race-skill')),
      publishJson(td, bob.key, { version: '1.0.0' }, bundle('race-skill')),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 403]);
    const rows = await td.daemon.ctx.db.all("SELECT id FROM skills WHERE slug = 'race-skill'");
    expect(rows).toHaveLength(1);
  });

  it('same version again: 409 VERSION_EXISTS, and overwrite=true replaces its files', async () => {
    const first = await json(await publishJson(td, alice.key, { version: '1.0.0' }, bundle('over-skill', { path: 'a.txt', content: 'one' })));
    const again = await publishJson(td, alice.key, { version: '1.0.0' }, bundle('over-skill', { path: 'a.txt', content: 'two' }));
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe('VERSION_EXISTS');
    const replaced = await publishForm(td, alice.key, { version: '1.0.0', overwrite: 'true' }, bundle('over-skill', { path: 'b.txt', content: 'three' }));
    expect(replaced.status).toBe(200);
    expect((await json(replaced)).id).toBe(first.id);
    const files = await get(`/skills/${first.id}/versions/1.0.0/files`, alice.key);
    expect(files.files.map((f: { path: string }) => f.path)).toEqual(['SKILL.md', 'b.txt']);
  });

  it('a draft overwrite of the only published version hides the skill instead of showing a draft', async () => {
    const { id } = await json(await publishJson(td, alice.key, { version: '1.0.0' }, bundle('hide-skill')));
    const res = await publishJson(td, alice.key, { version: '1.0.0', overwrite: true, status: 'draft' }, bundle('hide-skill'));
    expect(res.status).toBe(200);
    expect((await td.fetch(`/skills/${id}`)).status).toBe(404);
    expect(await get(`/skills/${id}`, alice.key)).toMatchObject({ status: 'draft', currentVersion: '1.0.0' });
  });

  it('the current version is the highest SemVer, not the latest upload; non-SemVer ranks below', async () => {
    const { id } = await json(await publishJson(td, alice.key, { version: '1.10.0' }, bundle('order-skill')));
    await publishJson(td, alice.key, { version: '1.9.0' }, bundle('order-skill'));
    await publishJson(td, alice.key, { version: 'nightly' }, bundle('order-skill'));
    await publishJson(td, alice.key, { version: '1.10.0-beta.1' }, bundle('order-skill'));
    const pv = await get(`/skills/${id}/public-versions`);
    expect(pv.currentVersion).toBe('1.10.0');
    expect(pv.versions.map((v: { version: string }) => v.version)).toEqual(['1.10.0', '1.10.0-beta.1', '1.9.0', 'nightly']);
    expect(pv.versions.filter((v: { isCurrent: boolean }) => v.isCurrent)).toHaveLength(1);
    await publishJson(td, alice.key, { version: '2.0.0' }, bundle('order-skill'));
    expect((await get(`/skills/${id}`)).currentVersion).toBe('2.0.0');
  });

  it('without SemVer the latest published version is current', async () => {
    const { id } = await json(await publishJson(td, alice.key, { version: 'build-b' }, bundle('plain-skill')));
    await new Promise((r) => setTimeout(r, 5));
    await publishJson(td, alice.key, { version: 'build-a' }, bundle('plain-skill'));
    expect((await get(`/skills/${id}`)).currentVersion).toBe('build-a');
  });

  it('a session may publish from the portal itself; cross-site 403 CSRF_FAILED', async () => {
    const s = await createSession(td.daemon.ctx, bob.id);
    const cookie = `service_session=${s.id}`;
    const denied = await publishForm(td, undefined, { version: '1.0.0' }, bundle('session-skill'), { cookie, 'x-csrf-token': s.csrfToken, origin: 'http://evil.example' });
    expect(denied.status).toBe(403);
    expect((await json(denied)).code).toBe('CSRF_FAILED');
    const ok = await publishForm(td, undefined, { version: '1.0.0' }, bundle('session-skill'), { cookie, origin: td.url });
    expect(ok.status).toBe(200);
    expect((await get(`/skills/by-slug/session-skill`)).ownerId).toBe(bob.id);
  });
});

describe('refusals', () => {
  const expectRefused = async (res: Response, status: number, code: string, field?: string) => {
    const before = await storeSnapshot(td);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(status);
    expect(body.code).toBe(code);
    if (field) expect(body.details?.field).toBe(field);
    expect(await storeSnapshot(td)).toEqual(before);
  };

  it('no credentials → 401; the master token → 403 MASTER_TOKEN_CANNOT_PUBLISH', async () => {
    await expectRefused(await publishJson(td, undefined, { version: '1.0.0' }, bundle('nobody-skill')), 401, 'UNAUTHORIZED');
    await expectRefused(await publishForm(td, MASTER, { version: '1.0.0' }, bundle('master-skill')), 403, 'MASTER_TOKEN_CANNOT_PUBLISH');
    await expectRefused(await publishJson(td, MASTER, { version: '1.0.0' }, bundle('master-skill')), 403, 'MASTER_TOKEN_CANNOT_PUBLISH');
    expect((await td.fetch('/skills/by-slug/master-skill')).status).toBe(404);
  });

  it('a category outside the configured list → 400 INVALID_CATEGORY', async () => {
    await expectRefused(await publishJson(td, alice.key, { version: '1.0.0', category: 'weapons' }, bundle('cat-skill')), 400, 'INVALID_CATEGORY');
    await expectRefused(await publishForm(td, alice.key, { version: '1.0.0', category: 'weapons' }, bundle('cat-skill')), 400, 'INVALID_CATEGORY');
  });

  it.each([
    ['missing version', { category: 'scene' }, 'version'],
    ['empty version', { version: '' }, 'version'],
    ['version with a slash', { version: '1.0/2' }, 'version'],
    ['version with a space', { version: '1.0 beta' }, 'version'],
    ['negative price', { version: '1.0.0', price: -1 }, 'price'],
    ['price above 10000', { version: '1.0.0', price: 10000.01 }, 'price'],
    ['price not a number', { version: '1.0.0', price: 'cheap' }, 'price'],
    ['unknown status', { version: '1.0.0', status: 'archived' }, 'status'],
    ['unknown field', { version: '1.0.0', colour: 'red' }, 'colour'],
  ])('%s → 400 INVALID_REQUEST (json and multipart)', async (_name, fields, field) => {
    await expectRefused(await publishJson(td, alice.key, fields, bundle('field-skill')), 400, 'INVALID_REQUEST', field);
    await expectRefused(await publishForm(td, alice.key, fields, bundle('field-skill')), 400, 'INVALID_REQUEST', field);
  });

  it('a slug that breaks the name rule → 400 INVALID_REQUEST (slug)', async () => {
    await expectRefused(await publishJson(td, alice.key, { version: '1.0.0', slug: 'Bad Slug' }, bundle('field-skill')), 400, 'INVALID_REQUEST', 'slug');
  });

  it('a file part under another name, or a files field without a filename → 400 INVALID_REQUEST', async () => {
    const form = new FormData();
    form.append('version', '1.0.0');
    form.append('files', new Blob([skillMd('odd-skill')]), 'SKILL.md');
    form.append('attachment', new Blob(['x']), 'x.txt');
    await expectRefused(await td.fetch('/skills', { method: 'POST', key: alice.key, body: form }), 400, 'INVALID_REQUEST');
    const form2 = new FormData();
    form2.append('version', '1.0.0');
    form2.append('files', skillMd('odd-skill'));
    await expectRefused(await td.fetch('/skills', { method: 'POST', key: alice.key, body: form2 }), 400, 'INVALID_REQUEST');
  });

  it('another body type → 415', async () => {
    const res = await td.fetch('/skills', { method: 'POST', key: alice.key, body: 'hello', headers: { 'content-type': 'text/plain' } });
    await expectRefused(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});
