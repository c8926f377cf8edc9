import { gunzipSync } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { bundle, json, publishForm, publishJson, storeSnapshot, type FileSpec } from './skills-helpers.js';

/** Installing (free, paid, repeat, concurrent, archived) and downloading bundles. */
const MASTER = 'agw_master_token_for_install_tests_01';
let td: TestDaemon;
let owner: TestUser;
let free: number;
let paid: number;

const post = async (path: string, key?: string) => {
  const res = await td.fetch(path, { method: 'POST', key });
  return { status: res.status, body: await json(res) };
};
const wallet = async (key: string) => json(await td.fetch('/wallet', { key }));
/** Wallet transactions other than the test set-up's credit. */
const txs = async (key: string) =>
  (await json(await td.fetch('/wallet/transactions', { key }))).items.filter((t: { type: string }) => t.type.startsWith('skill_'));
/** A buyer on the free tier: no monthly allowance, so the balance pays. */
const buyer = (balance: number) => td.user({ tier: 'free', balance });

beforeAll(async () => {
  td = await startTestDaemon({ yaml: `auth:\n  masterToken: ${MASTER}\nmarketplace:\n  platformFee: 0.35\n` });
  owner = await td.user({ tier: 'free' });
  free = (await json(await publishJson(td, owner.key, { version: '1.0.0' }, bundle('free-skill')))).id;
  paid = (await json(await publishJson(td, owner.key, { version: '1.0.0', price: 1.1 }, bundle('paid-skill')))).id;
});
afterAll(async () => {
  await td?.close();
});

describe('install', () => {
  it('a free skill installs at once; a repeat install says alreadyInstalled', async () => {
    const u = await buyer(0);
    const sealed = { digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), signature: { kid: expect.any(String), sig: expect.any(String) } };
    expect(await post(`/skills/${free}/install`, u.key)).toEqual({ status: 200, body: { skillId: free, version: '1.0.0', charged: 0, alreadyInstalled: false, ...sealed } });
    expect((await post(`/skills/${free}/install`, u.key)).body).toEqual({ skillId: free, version: '1.0.0', charged: 0, alreadyInstalled: true, ...sealed });
    expect(await txs(u.key)).toEqual([]);
  });

  it('a paid skill charges the buyer once and credits the owner price x (1 - platformFee)', async () => {
    const u = await buyer(10);
    const ownerBefore = (await wallet(owner.key)).balance;
    const first = await post(`/skills/${paid}/install`, u.key);
    expect(first).toMatchObject({ status: 200, body: { skillId: paid, version: '1.0.0', charged: 1.1, alreadyInstalled: false } });
    expect((await wallet(u.key)).balance).toBeCloseTo(8.9, 9);
    expect((await wallet(owner.key)).balance - ownerBefore).toBeCloseTo(0.715, 9); // 1.1 x 0.65
    const [purchase] = await txs(u.key);
    expect(purchase).toMatchObject({ type: 'skill_purchase', amount: -1.1, skillId: paid });
    expect((await txs(owner.key))[0]).toMatchObject({ type: 'skill_revenue', amount: 0.715, skillId: paid });
    // repeat: free, nothing booked
    expect((await post(`/skills/${paid}/install`, u.key)).body).toMatchObject({ charged: 0, alreadyInstalled: true });
    expect((await wallet(u.key)).balance).toBeCloseTo(8.9, 9);
    expect(await txs(u.key)).toHaveLength(1);
  });

  it('the exact price empties the balance; a cent short is 402 INSUFFICIENT_FUNDS and changes nothing', async () => {
    const exact = await buyer(1.1);
    expect((await post(`/skills/${paid}/install`, exact.key)).status).toBe(200);
    expect((await wallet(exact.key)).balance).toBe(0);
    const short = await buyer(1.09);
    const snap = await storeSnapshot(td);
    const res = await post(`/skills/${paid}/install`, short.key);
    expect(res.status).toBe(402);
    expect(res.body.code).toBe('INSUFFICIENT_FUNDS');
    expect(res.body.details).toMatchObject({ balance: 1.09, currency: 'USD', monthlyAllowance: 0 });
    expect(await storeSnapshot(td)).toEqual(snap);
    expect((await json(await td.fetch(`/skills/${paid}`))).installCount).toBe(2);
  });

  it('the tier’s monthly allowance pays first', async () => {
    const pro = await td.user({ tier: 'pro', balance: 0 });
    expect((await post(`/skills/${paid}/install`, pro.key)).body.charged).toBe(1.1);
    const w = await wallet(pro.key);
    expect(w.balance).toBe(0);
    expect(w.monthlyAllowanceUsed).toBeCloseTo(1.1, 9);
  });

  it('two parallel first installs by one account charge once', async () => {
    const u = await buyer(5);
    const ownerBefore = (await wallet(owner.key)).balance;
    const results = await Promise.all(Array.from({ length: 6 }, () => post(`/skills/${paid}/install`, u.key)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => !r.body.alreadyInstalled)).toHaveLength(1);
    expect(results.reduce((n, r) => n + r.body.charged, 0)).toBeCloseTo(1.1, 9);
    expect((await wallet(u.key)).balance).toBeCloseTo(3.9, 9);
    expect(await txs(u.key)).toHaveLength(1);
    expect((await wallet(owner.key)).balance - ownerBefore).toBeCloseTo(0.715, 9);
  });

  it('parallel purchases of two skills with money for one: one succeeds, one gets 402', async () => {
    const other = (await json(await publishJson(td, owner.key, { version: '1.0.0', price: 1.1 }, bundle('paid-two')))).id;
    const u = await buyer(2);
    const [a, b] = await Promise.all([post(`/skills/${paid}/install`, u.key), post(`/skills/${other}/install`, u.key)]);
    expect([a.status, b.status].sort()).toEqual([200, 402]);
    expect((await wallet(u.key)).balance).toBeCloseTo(0.9, 9);
  });

  it('owners install their own paid skill free', async () => {
    expect((await post(`/skills/${paid}/install`, owner.key)).body).toMatchObject({ charged: 0, alreadyInstalled: false });
  });

  it('refusals: unknown skill 404, no credentials 401, master token 403', async () => {
    expect((await post('/skills/999999/install', owner.key)).body.code).toBe('SKILL_NOT_FOUND');
    expect((await post(`/skills/${free}/install`)).status).toBe(401);
    expect((await post(`/skills/${free}/install`, MASTER)).status).toBe(403);
  });
});

describe('bundle download', () => {
  const longPath = `assets/${'deep/'.repeat(25)}file.txt`; // > 100 bytes: needs a PAX header
  const files: FileSpec[] = bundle(
    'tar-skill',
    { path: 'tools/echo.json', content: '{"name":"echo","description":"d","parameters":{"type":"object","properties":{}}}' },
    { path: 'assets/ünïcødé.txt', content: 'héllo' },
    { path: 'assets/blob.bin', content: Buffer.from(Array.from({ length: 1500 }, (_, i) => i % 256)) },
    { path: longPath, content: 'deep' },
  );
  let id: number;

  async function untar(res: Response): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    const parser = new Parser();
    parser.on('entry', (e: ReadEntry) => {
      const chunks: Buffer[] = [];
      e.on('data', (c: Buffer) => chunks.push(c));
      e.on('end', () => out.set(e.path, Buffer.concat(chunks)));
    });
    const done = new Promise((r) => parser.on('end', r));
    parser.end(gunzipSync(Buffer.from(await res.arrayBuffer())));
    await done;
    return out;
  }

  beforeAll(async () => {
    id = (await json(await publishForm(td, owner.key, { version: '2.0.0', price: 0.5 }, files))).id;
    await publishJson(td, owner.key, { version: '3.0.0', status: 'draft' }, bundle('tar-skill'));
  });

  it('the owner gets the exact bundle as a gzip tar', async () => {
    const res = await td.fetch(`/skills/${id}/versions/2.0.0/bundle`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    expect(res.headers.get('content-disposition')).toContain('tar-skill-2.0.0.tar.gz');
    const got = await untar(res);
    expect([...got.keys()].sort()).toEqual(files.map((f) => f.path).sort());
    for (const f of files) expect(got.get(f.path)).toEqual(Buffer.from(f.content));
  });

  it('installers may download; others get 403 NOT_INSTALLED, anonymous 401', async () => {
    const stranger = await buyer(5);
    const denied = await td.fetch(`/skills/${id}/versions/2.0.0/bundle`, { key: stranger.key });
    expect(denied.status).toBe(403);
    expect((await json(denied)).code).toBe('NOT_INSTALLED');
    expect((await td.fetch(`/skills/${id}/versions/2.0.0/bundle`)).status).toBe(401);
    expect((await post(`/skills/${id}/install`, stranger.key)).status).toBe(200);
    const ok = await td.fetch(`/skills/${id}/versions/2.0.0/bundle`, { key: stranger.key });
    expect(ok.status).toBe(200);
    expect((await untar(ok)).get('SKILL.md')?.toString()).toContain('name: tar-skill');
    // a draft version is the owner's alone
    expect((await td.fetch(`/skills/${id}/versions/3.0.0/bundle`, { key: stranger.key })).status).toBe(404);
    expect((await td.fetch(`/skills/${id}/versions/3.0.0/bundle`, { key: owner.key })).status).toBe(200);
    expect((await td.fetch(`/skills/${id}/versions/9.0.0/bundle`, { key: owner.key })).status).toBe(404);
  });
});
