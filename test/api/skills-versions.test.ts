import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { bundle, json, publishJson, storeSnapshot } from './skills-helpers.js';

/**
 * Versions one by one (issue #33, items 4 and 5): a prerelease never becomes current over a
 * release unless the owner says so, and an owner withdraws a single version (archive), which
 * accounts that installed it keep and nobody else gets.
 */
let td: TestDaemon;
let owner: TestUser;
let early: TestUser;
let id: number;

const call = async (method: string, path: string, key: string | undefined, body?: unknown) => {
  const res = await td.fetch(path, { method, key, json: body });
  return { status: res.status, body: await json(res) };
};
const publish = async (version: string, fields: Record<string, string | boolean> = {}) => {
  const res = await publishJson(td, owner.key, { version, category: 'coding', notes: `notes of ${version}`, ...fields }, bundle('steady-skill', { path: 'VERSION.txt', content: version }));
  expect(res.status, version).toBe(200);
  return json(res);
};
const current = async () => (await call('GET', `/skills/${id}`, undefined)).body.currentVersion;
const install = (key: string, version?: string) =>
  call('POST', `/skills/${id}/install${version === undefined ? '' : `?version=${encodeURIComponent(version)}`}`, key);
const download = (key: string, version: string) => td.fetch(`/skills/${id}/versions/${encodeURIComponent(version)}/bundle`, { key });

beforeAll(async () => {
  td = await startTestDaemon();
  owner = await td.user();
  early = await td.user();
  id = (await publish('1.0.0')).id;
  await publish('1.1.0');
});
afterAll(async () => {
  await td?.close();
});

describe('prereleases (item 4)', () => {
  it('1.2.0-beta.1 published after 1.1.0 does not become current: install and update stay on 1.1.0', async () => {
    expect((await install(early.key)).body).toMatchObject({ version: '1.1.0', alreadyInstalled: false });
    await publish('1.2.0-beta.1');
    expect(await current()).toBe('1.1.0');
    const fresh = await td.user();
    expect((await install(fresh.key)).body).toMatchObject({ version: '1.1.0', alreadyInstalled: false });
    // `agw skill update` installs the current version again: it stays on 1.1.0
    expect((await install(early.key)).body).toMatchObject({ version: '1.1.0', alreadyInstalled: true });
    const pv = (await call('GET', `/skills/${id}/public-versions`, undefined)).body;
    expect(pv.currentVersion).toBe('1.1.0');
    expect(pv.versions.map((v: { version: string; prerelease: boolean; isCurrent: boolean }) => [v.version, v.prerelease, v.isCurrent])).toEqual([
      ['1.2.0-beta.1', true, false],
      ['1.1.0', false, true],
      ['1.0.0', false, false],
    ]);
  });

  it('republished (archived, then published again) the beta still does not become current', async () => {
    expect((await call('POST', `/skills/${id}/versions/1.2.0-beta.1/archive`, owner.key)).body.currentVersion).toBe('1.1.0');
    expect((await call('POST', `/skills/${id}/versions/1.2.0-beta.1/republish`, owner.key)).body.currentVersion).toBe('1.1.0');
  });

  it('install ?version=1.2.0-beta.1 installs the beta, and the installer counts follow', async () => {
    const tester = await td.user();
    const r = await install(tester.key, '1.2.0-beta.1');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: '1.2.0-beta.1', alreadyInstalled: false, charged: 0 });
    expect((await download(tester.key, '1.2.0-beta.1')).status).toBe(200);
    const pv = (await call('GET', `/skills/${id}/public-versions`, undefined)).body;
    expect(pv.versions.find((v: { version: string }) => v.version === '1.2.0-beta.1').installerCount).toBe(1);
    const missing = await install(tester.key, '9.9.9');
    expect([missing.status, missing.body.code]).toEqual([404, 'VERSION_NOT_FOUND']);
  });

  it('the owner makes the beta current (PATCH currentVersion) and hands it back to the rule with null', async () => {
    const pinned = await call('PATCH', `/skills/${id}`, owner.key, { currentVersion: '1.2.0-beta.1' });
    expect(pinned.body.currentVersion).toBe('1.2.0-beta.1');
    expect((await call('GET', `/skills/${id}/versions`, owner.key)).body.currentVersionPinned).toBe(true);
    expect((await install((await td.user()).key)).body.version).toBe('1.2.0-beta.1');
    const back = await call('PATCH', `/skills/${id}`, owner.key, { currentVersion: null });
    expect(back.body.currentVersion).toBe('1.1.0');
    expect((await call('GET', `/skills/${id}/versions`, owner.key)).body.currentVersionPinned).toBe(false);
  });

  it('making current: only the owner, only a published version; nothing changes on a refusal', async () => {
    await publish('1.3.0-rc.1', { status: 'draft' });
    const snap = await storeSnapshot(td);
    for (const [key, body, status, code] of [
      [owner.key, { currentVersion: '1.3.0-rc.1' }, 409, 'VERSION_NOT_PUBLISHED'],
      [owner.key, { currentVersion: '7.7.7' }, 404, 'VERSION_NOT_FOUND'],
      [owner.key, { currentVersion: 'a b' }, 400, 'INVALID_REQUEST'],
      [early.key, { currentVersion: '1.0.0' }, 403, 'NOT_OWNER'],
    ] as const) {
      const r = await call('PATCH', `/skills/${id}`, key, body);
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([status, code]);
    }
    expect(await storeSnapshot(td)).toEqual(snap);
  });

  it('publishing a release hands a pinned current version back to the rule', async () => {
    await call('PATCH', `/skills/${id}`, owner.key, { currentVersion: '1.0.0' });
    await publish('1.2.0-beta.2');
    expect(await current()).toBe('1.0.0'); // a prerelease leaves the owner's choice alone
    await publish('1.1.1');
    expect(await current()).toBe('1.1.1');
  });
});

describe('archiving one version (item 5)', () => {
  it('an archived version is never current; accounts that installed it keep it, new accounts get 403 VERSION_ARCHIVED', async () => {
    const onIt = await td.user();
    expect((await install(onIt.key)).body.version).toBe('1.1.1');
    const archived = await call('POST', `/skills/${id}/versions/1.1.1/archive`, owner.key);
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ id, status: 'published', currentVersion: '1.1.0' });

    // the account that had it may install and download it again
    expect((await install(onIt.key, '1.1.1')).body).toMatchObject({ version: '1.1.1', alreadyInstalled: true });
    expect((await download(onIt.key, '1.1.1')).status).toBe(200);
    // a new account gets the current version, and not the archived one
    const newcomer = await td.user();
    expect((await install(newcomer.key)).body.version).toBe('1.1.0');
    const refused = await install(newcomer.key, '1.1.1');
    expect([refused.status, refused.body.code]).toEqual([403, 'VERSION_ARCHIVED']);
    const dl = await download(newcomer.key, '1.1.1');
    expect([dl.status, (await json(dl)).code]).toEqual([403, 'VERSION_ARCHIVED']);
    // the owner sees its status; strangers do not see it; its installers see it marked
    const mine = (await call('GET', `/skills/${id}/versions`, owner.key)).body.versions;
    expect(mine.find((v: { version: string }) => v.version === '1.1.1')).toMatchObject({ status: 'archived', isCurrent: false });
    const publicList = (await call('GET', `/skills/${id}/public-versions`, undefined)).body.versions.map((v: { version: string }) => v.version);
    expect(publicList).not.toContain('1.1.1');
  });

  it('archiving the pinned version drops the pin; archiving twice changes nothing', async () => {
    await call('PATCH', `/skills/${id}`, owner.key, { currentVersion: '1.0.0' });
    expect((await call('POST', `/skills/${id}/versions/1.0.0/archive`, owner.key)).body.currentVersion).toBe('1.1.0');
    expect((await call('GET', `/skills/${id}/versions`, owner.key)).body.currentVersionPinned).toBe(false);
    const snap = await storeSnapshot(td);
    expect((await call('POST', `/skills/${id}/versions/1.0.0/archive`, owner.key)).status).toBe(200);
    expect(await storeSnapshot(td)).toEqual(snap);
  });

  it('refusals: not the owner 403, unknown version 404, the only published version 409 LAST_PUBLISHED_VERSION', async () => {
    expect((await call('POST', `/skills/${id}/versions/1.1.0/archive`, early.key)).body.code).toBe('NOT_OWNER');
    expect((await call('POST', `/skills/${id}/versions/1.1.0/archive`, undefined)).status).toBe(401);
    expect((await call('POST', `/skills/${id}/versions/7.7.7/archive`, owner.key)).body.code).toBe('VERSION_NOT_FOUND');
    // left published: 1.1.0 and the two betas; withdraw the betas, then 1.1.0 is the last
    for (const v of ['1.2.0-beta.1', '1.2.0-beta.2']) expect((await call('POST', `/skills/${id}/versions/${v}/archive`, owner.key)).status).toBe(200);
    const last = await call('POST', `/skills/${id}/versions/1.1.0/archive`, owner.key);
    expect([last.status, last.body.code]).toEqual([409, 'LAST_PUBLISHED_VERSION']);
    expect(last.body.error).toContain('archive the skill instead');
    expect(await current()).toBe('1.1.0');
  });

  it('republish brings a version back: installable by everyone, current again when it is the highest release', async () => {
    const r = await call('POST', `/skills/${id}/versions/1.1.1/republish`, owner.key);
    expect(r.body.currentVersion).toBe('1.1.1');
    expect((await install((await td.user()).key, '1.1.1')).status).toBe(200);
  });
});
