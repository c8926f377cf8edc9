import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { getJson, portalLogin, type PortalSession } from '../helpers/portal.js';
import { insertUsage, type UsageSeed } from '../helpers/seed-usage.js';
import { createProject, addProjectMember } from '../../src/daemon/store/projects.js';
import { parseRange } from '../../src/daemon/store/spend.js';
import { AgwError } from '../../src/shared/errors.js';

const DAY = 86_400_000;
const toNano = (usd: number) => Math.round(usd * 1e9);

/** What the summary should say, computed independently from the seeded rows. */
function expected(rows: UsageSeed[], userId: string, days: number, now = Date.now()) {
  const inRange = rows.filter((r) => r.userId === userId && r.createdAt >= now - days * DAY && r.status !== 'reserved');
  const sum = (list: UsageSeed[]) => ({
    calls: list.length,
    failures: list.filter((r) => r.status === 'failed').length,
    rawNano: list.reduce((a, r) => a + r.rawNano, 0),
    customerNano: list.reduce((a, r) => a + r.customerNano, 0),
  });
  const group = (key: (r: UsageSeed) => string) => {
    const m = new Map<string, UsageSeed[]>();
    for (const r of inRange) m.set(key(r), [...(m.get(key(r)) ?? []), r]);
    return new Map([...m].map(([k, v]) => [k, sum(v)]));
  };
  return { totals: sum(inRange), providers: group((r) => r.providerId), projects: group((r) => r.projectId ?? '') };
}

describe('range parsing', () => {
  test.each(['1d', '7d', '30d', '90d', '365d', '100d'])('%s is accepted', (r) => {
    const now = 1_750_000_000_000;
    const days = Number(r.slice(0, -1));
    expect(parseRange(r, now)).toEqual({ days, since: now - days * DAY });
  });
  test('absent means 30d', () => expect(parseRange(undefined, 0).days).toBe(30));
  test.each(['0d', '366d', '1000d', '07d', '7', '7D', 'd', '-1d', '1.5d', '', ' 7d', '7d ', '7w', '1y', '30days', '９d'])(
    '%j is INVALID_RANGE',
    (r) => {
      expect(() => parseRange(r)).toThrowError(AgwError);
      try {
        parseRange(r);
      } catch (e) {
        expect((e as AgwError).code).toBe('INVALID_RANGE');
      }
    },
  );
});

describe('spend endpoints', () => {
  let td: TestDaemon;
  let alice: TestUser;
  let bob: TestUser;
  let mallory: TestUser;
  let a: PortalSession;
  let b: PortalSession;
  let m: PortalSession;
  let apollo: string;
  let zeus: string;
  const rows: UsageSeed[] = [];

  beforeAll(async () => {
    td = await startTestDaemon();
    [alice, bob, mallory] = [await td.user(), await td.user(), await td.user()];
    const db = td.daemon.ctx.db;
    apollo = (await createProject(db, alice.id, 'Apollo <web>')).uid;
    zeus = (await createProject(db, alice.id, 'Zeus')).uid;
    await addProjectMember(db, apollo, bob.id);
    const now = Date.now();
    let i = 0;
    const add = (userId: string, providerId: string, status: UsageSeed['status'], ageDays: number, raw: number, projectId: string | null) =>
      rows.push({ userId, providerId, status, createdAt: now - ageDays * DAY - (i++ % 7) * 1000, rawNano: raw, customerNano: raw * 2 + 7, projectId });
    for (let k = 0; k < 12; k++) add(alice.id, 'openai', 'finalized', k * 2.5, 123_456_789 + k * 1_000_003, k % 3 === 0 ? null : k % 3 === 1 ? apollo : zeus);
    for (let k = 0; k < 5; k++) add(alice.id, 'anthropic', 'finalized', k * 6 + 0.5, 987_654_321 + k, k % 2 ? apollo : null);
    add(alice.id, 'anthropic', 'failed', 1, 0, apollo);
    add(alice.id, 'openai', 'failed', 3, 0, null);
    add(alice.id, 'openai', 'reserved', 0, 0, null); // in flight: never counted
    add(alice.id, 'groq', 'finalized', 45, 111, zeus); // outside 30d, inside 90d
    add(alice.id, 'groq', 'finalized', 400, 999_999, null); // outside every range
    add(bob.id, 'openai', 'finalized', 2, 5_000_000_000, apollo); // bob's call on the shared project
    add(bob.id, 'mistral', 'finalized', 2, 42, null);
    await insertUsage(db, rows);
    [a, b, m] = [await portalLogin(td, alice), await portalLogin(td, bob), await portalLogin(td, mallory)];
  });
  afterAll(() => td.close());

  test('summary totals, byProvider and byProject match the seeded usage for 7d, 30d, 90d and 365d', async () => {
    for (const days of [7, 30, 90, 365]) {
      const { status, body } = await getJson(td, `/portal/spend/summary?range=${days}d`, a.cookie);
      expect(status).toBe(200);
      const want = expected(rows, alice.id, days);
      expect(body.range.days).toBe(days);
      expect(Math.abs(Date.parse(body.range.since) - (Date.now() - days * DAY))).toBeLessThan(10_000);
      expect(body.totals).toEqual({
        calls: want.totals.calls,
        failures: want.totals.failures,
        rawCost: want.totals.rawNano / 1e9,
        customerCost: want.totals.customerNano / 1e9,
      });
      expect(new Map(body.byProvider.map((r: any) => [r.providerId, { calls: r.calls, failures: r.failures, rawNano: toNano(r.rawCost), customerNano: toNano(r.customerCost) }]))).toEqual(want.providers);
      expect(new Map(body.byProject.map((r: any) => [r.projectId ?? '', { calls: r.calls, failures: r.failures, rawNano: toNano(r.rawCost), customerNano: toNano(r.customerCost) }]))).toEqual(want.projects);
      // totals are the sum of the rows, both ways
      for (const list of [body.byProvider, body.byProject]) {
        expect(list.reduce((s: number, r: any) => s + r.calls, 0)).toBe(body.totals.calls);
        expect(list.reduce((s: number, r: any) => s + r.failures, 0)).toBe(body.totals.failures);
        expect(list.reduce((s: number, r: any) => s + toNano(r.customerCost), 0)).toBe(toNano(body.totals.customerCost));
        expect(list.reduce((s: number, r: any) => s + toNano(r.rawCost), 0)).toBe(toNano(body.totals.rawCost));
      }
    }
  });

  test('the default range is 30d; the untagged bucket has projectId null; names come from the projects', async () => {
    const { body } = await getJson(td, '/portal/spend/summary', a.cookie);
    expect(body.range.days).toBe(30);
    const names = Object.fromEntries(body.byProject.map((r: any) => [String(r.projectId), r.projectName]));
    expect(names).toEqual({ null: 'Untagged', [apollo]: 'Apollo <web>', [zeus]: 'Zeus' });
    expect(body.totals.failures).toBe(2);
  });

  test('someone with no usage gets zeros and empty lists', async () => {
    const { status, body } = await getJson(td, '/portal/spend/summary?range=365d', m.cookie);
    expect(status).toBe(200);
    expect(body.totals).toEqual({ calls: 0, failures: 0, rawCost: 0, customerCost: 0 });
    expect(body.byProvider).toEqual([]);
    expect(body.byProject).toEqual([]);
  });

  test.each(['0d', '366d', 'abc', '', '7', '30D', '1.5d', '7d&range=30d'])('range=%s is 400 INVALID_RANGE with the Error body', async (r) => {
    for (const path of ['/portal/spend/summary', `/portal/spend/projects/${apollo}`, '/portal/spend/daily']) {
      const res = await getJson(td, `${path}?range=${r}`, a.cookie);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('INVALID_RANGE');
      expect(res.body.error).toEqual(expect.any(String));
    }
  });

  test('a gateway key, no credentials or a dead cookie get 401', async () => {
    for (const path of ['/portal/spend/summary', `/portal/spend/projects/${apollo}`, '/portal/spend/daily']) {
      const key = await td.fetch(path, { key: alice.key });
      expect(key.status).toBe(401);
      expect((await key.json()).code).toBe('UNAUTHORIZED');
      expect((await getJson(td, path)).status).toBe(401);
      expect((await getJson(td, path, 'service_session=x')).status).toBe(401);
    }
  });

  test('project spend counts every member’s calls on the project; totals = sum of byProvider', async () => {
    for (const who of [a, b]) {
      const { status, body } = await getJson(td, `/portal/spend/projects/${apollo}?range=90d`, who.cookie);
      expect(status).toBe(200);
      expect(body.project).toEqual({ uid: apollo, name: 'Apollo <web>' });
      const want = rows.filter((r) => r.projectId === apollo && r.status !== 'reserved' && r.createdAt >= Date.now() - 90 * DAY);
      expect(body.totals).toEqual({
        calls: want.length,
        rawCost: want.reduce((s, r) => s + r.rawNano, 0) / 1e9,
        customerCost: want.reduce((s, r) => s + r.customerNano, 0) / 1e9,
      });
      expect(body.byProvider.map((r: any) => r.providerId).sort()).toEqual(['anthropic', 'openai']);
      expect(body.byProvider.reduce((s: number, r: any) => s + r.calls, 0)).toBe(body.totals.calls);
      expect(body.byProvider.reduce((s: number, r: any) => s + toNano(r.customerCost), 0)).toBe(toNano(body.totals.customerCost));
    }
  });

  test('project spend is 404 for an unknown project and for one without a role', async () => {
    const unknown = await getJson(td, '/portal/spend/projects/prj_nope', a.cookie);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('PROJECT_NOT_FOUND');
    const noRole = await getJson(td, `/portal/spend/projects/${zeus}`, b.cookie);
    expect(noRole.status).toBe(404);
    expect(noRole.body.code).toBe('PROJECT_NOT_FOUND');
    expect((await getJson(td, `/portal/spend/projects/${apollo}`, m.cookie)).status).toBe(404);
  });

  test('the daily series covers every day of the range and adds up to the summary', async () => {
    for (const days of [1, 30, 365]) {
      const daily = await getJson(td, `/portal/spend/daily?range=${days}d`, a.cookie);
      const summary = await getJson(td, `/portal/spend/summary?range=${days}d`, a.cookie);
      expect(daily.status).toBe(200);
      expect(daily.body.days.length).toBe(days + 1);
      expect(daily.body.days.at(-1).date).toBe(new Date().toISOString().slice(0, 10));
      const dates = daily.body.days.map((d: any) => d.date);
      expect([...dates].sort()).toEqual(dates);
      expect(daily.body.days.reduce((s: number, d: any) => s + d.calls, 0)).toBe(summary.body.totals.calls);
      expect(daily.body.days.reduce((s: number, d: any) => s + d.failures, 0)).toBe(summary.body.totals.failures);
      expect(daily.body.days.reduce((s: number, d: any) => s + toNano(d.customerCost), 0)).toBe(toNano(summary.body.totals.customerCost));
    }
  });

  test('the spend endpoints are in the OpenAPI document with the session scheme', async () => {
    const doc = await (await td.fetch('/openapi.json')).json();
    for (const p of ['/api/portal/spend/summary', '/api/portal/spend/projects/{id}', '/api/portal/login', '/api/portal/me']) {
      expect(doc.paths[p], p).toBeDefined();
    }
    expect(doc.paths['/api/portal/spend/summary'].get.security).toEqual([{ session: [] }]);
  });
});
