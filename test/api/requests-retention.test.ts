import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { getJson, portalLogin, type PortalSession } from '../helpers/portal.js';
import { seedRequests, type SeedRequest } from '../helpers/seed-requests.js';
import { PRUNE_BATCH, pruneOnce, retentionBoundary } from '../../src/daemon/requests/retention.js';

/**
 * Request log retention on both stores: the pruner deletes records (and bodies) older
 * than logs.retentionDays in whole UTC days, batch by batch, and the spend reports stay
 * exact for ranges reaching before what was pruned (their first day then comes from the
 * daily rollup, whole).
 */
const DAY = 86_400_000;
let td: TestDaemon;
let ada: TestUser;
let s: PortalSession;
const now = Date.now();
const today = Math.floor(now / DAY);
let rows: (SeedRequest & { id: string })[];

beforeAll(async () => {
  td = await startTestDaemon({ yaml: 'logs:\n  retentionDays: 10\n  bodiesRetentionDays: 3\n' });
  ada = await td.user();
  const seed: SeedRequest[] = [];
  // more old records than one batch, spread over days 11..40 back; then the last 10 days
  for (let i = 0; i < PRUNE_BATCH + 234; i++) seed.push({ userId: ada.id, createdAt: (today - 11 - (i % 30)) * DAY + (i % 1000) * 60_000, costNano: 1000 + i });
  for (let d = 0; d <= 10; d++) seed.push({ userId: ada.id, createdAt: (today - d) * DAY + 3_600_000, costNano: 7 + d, status: d % 4 === 3 ? 503 : 200 });
  // the first day of a 90-day range: one record before its `since`, one after (same UTC day)
  const since90 = now - 90 * DAY;
  const first90 = Math.floor(since90 / DAY) * DAY;
  if (since90 - first90 > 2000) seed.push({ userId: ada.id, createdAt: first90 + 1000, costNano: 500_000 });
  // (10 minutes after: the reports' own `since` is a little later than this test's)
  if (first90 + DAY - since90 > 11 * 60_000) seed.push({ userId: ada.id, createdAt: since90 + 10 * 60_000, costNano: 900_000 });
  rows = await seedRequests(td.daemon.ctx.db, seed);
  const db = td.daemon.ctx.db;
  for (const r of rows.filter((x) => x.createdAt >= (today - 6) * DAY)) {
    await db.run('INSERT INTO request_bodies (usage_id, created_at, request, response, request_bytes, response_bytes) VALUES (?, ?, ?, ?, ?, ?)', [r.id, r.createdAt, '{}', '{}', 2, 2]);
  }
  s = await portalLogin(td, ada);
});
afterAll(() => td?.close());

const summary = async (range: string) => (await getJson(td, `/portal/spend/summary?range=${range}`, s.cookie)).body.totals;
const count = async (sql: string, params: unknown[] = []) => Number((await td.daemon.ctx.db.get<{ n: number }>(sql, params as never))!.n);

describe('the pruner', () => {
  test('keeps the last retentionDays whole UTC days, deletes the rest in batches, bodies by their own retention; the spend reports stay exact', async () => {
    const before = { d7: await summary('7d'), d90: await summary('90d'), d365: await summary('365d') };
    const listed = async () => {
      const r = await td.fetch('/requests?limit=500&since=400d', { key: ada.key });
      return ((await r.json()) as any).items.length;
    };
    const boundary = retentionBoundary(10, now);
    expect(boundary).toBe((today - 10) * DAY);
    const kept = rows.filter((r) => r.createdAt >= boundary);

    const report = await pruneOnce(td.daemon.ctx, now);
    expect(report).toEqual({ beforeMs: boundary, records: rows.length - kept.length, bodies: kept.filter((r) => r.createdAt >= (today - 6) * DAY && r.createdAt < (today - 3) * DAY).length });
    expect(report.records).toBeGreaterThan(PRUNE_BATCH);
    expect(await count('SELECT COUNT(*) AS n FROM usage_records WHERE user_id = ?', [ada.id])).toBe(kept.length);
    expect(await count('SELECT MIN(created_at) AS n FROM request_bodies')).toBeGreaterThanOrEqual((today - 3) * DAY);
    expect(await listed()).toBe(kept.length);
    // a second pass finds nothing
    expect((await pruneOnce(td.daemon.ctx, now)).records).toBe(0);

    // a range inside the retention reads as before; one reaching before it counts every call of its first day, from the rollup
    expect(await summary('7d')).toEqual(before.d7);
    expect(await summary('365d')).toEqual(before.d365);
    const since90 = now - 90 * DAY;
    const firstDay = Math.floor(since90 / DAY);
    const want = rows.filter((r) => Math.floor(r.createdAt / DAY) >= firstDay && (r.status ?? 200) !== 402);
    const after90 = await summary('90d');
    expect(after90.calls).toBe(want.length);
    expect(Math.round(after90.customerCost * 1e9)).toBe(want.filter((r) => (r.status ?? 200) < 400).reduce((a, r) => a + (r.costNano ?? 1000), 0));
    const beforeSince = rows.filter((r) => Math.floor(r.createdAt / DAY) === firstDay && r.createdAt < since90);
    expect(after90.calls - before.d90.calls).toBe(beforeSince.length);
  });
});
