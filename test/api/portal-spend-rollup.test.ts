import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/daemon/store/db.js';
import { createProject } from '../../src/daemon/store/projects.js';
import { startGatewayFixture, usageTransactions, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { getJson, portalLogin } from '../helpers/portal.js';
import { insertUsage, type UsageSeed } from '../helpers/seed-usage.js';

/**
 * The daily spend rollup (spend_daily, migration 6) is kept by the gateway's settlement
 * and the reports read it: it must always equal what usage_records say, and the
 * reports must give the very figures the records give.
 */
const DAY = 86_400_000;
const toNano = (usd: number) => Math.round(usd * 1e9);
type Cells = { calls: number; failures: number; raw: number; customer: number };

/** The user's rollup rows as stored, and as recomputed from the usage records (zero rows ignored). */
async function rollupVsRecords(db: Db, userId: string) {
  const norm = (rows: Record<string, unknown>[]) =>
    rows.map((r) => ({
      day: Number(r.day),
      provider: String(r.provider_id),
      project: String(r.project_key),
      calls: Number(r.calls),
      failures: Number(r.failures),
      raw: Number(r.raw_nusd),
      customer: Number(r.customer_nusd),
    }));
  const stored = await db.all(
    `SELECT day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd FROM spend_daily
      WHERE user_id = ? AND calls <> 0 ORDER BY day, provider_id, project_key`,
    [userId],
  );
  const fresh = await db.all(
    `SELECT created_at / 86400000 AS day, provider_id, COALESCE(project_id, '') AS project_key, COUNT(*) AS calls,
            SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failures, SUM(raw_cost_nusd) AS raw_nusd,
            SUM(customer_cost_nusd) AS customer_nusd
       FROM usage_records WHERE user_id = ? AND status IN ('finalized', 'failed')
      GROUP BY created_at / 86400000, provider_id, COALESCE(project_id, '') ORDER BY 1, 2, 3`,
    [userId],
  );
  return { stored: norm(stored), fresh: norm(fresh) };
}

const cellsOf = (r: any): Cells => ({ calls: r.calls, failures: r.failures ?? 0, raw: toNano(r.rawCost), customer: toNano(r.customerCost) });

let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(() => f?.close());

const messages = [{ role: 'user', content: 'Hello there' }];

describe('the gateway keeps the rollup', () => {
  it('successful calls, a tagged call and a failed call are counted in the same transaction as their settlement', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const apollo = (await createProject(f.db, u.id, 'Apollo')).uid;
    const chat = (model: string, headers: Record<string, string> = {}) =>
      f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model, messages }, headers });
    for (let i = 0; i < 3; i++) expect((await chat('gpt-4o-mini')).status).toBe(200);
    expect((await chat('claude-haiku-4-5', { 'x-service-project-id': apollo })).status).toBe(200);
    f.openai.setMode('error');
    try {
      expect((await chat('gpt-4o-mini')).status).toBe(503);
    } finally {
      f.openai.setMode('ok');
    }
    const { stored, fresh } = await rollupVsRecords(f.db, u.id);
    expect(fresh.reduce((n, r) => n + r.calls, 0)).toBe(5);
    expect(stored).toEqual(fresh);

    const s = await portalLogin(f.d, u);
    const { body } = await getJson(f.d, '/portal/spend/summary?range=1d', s.cookie);
    const charged = (await usageTransactions(f.db, u.id)).reduce((n, t) => n + Math.abs(t.amount), 0);
    expect(body.totals.calls).toBe(5);
    expect(body.totals.failures).toBe(1);
    expect(toNano(body.totals.customerCost)).toBe(charged);
    const project = await getJson(f.d, `/portal/spend/projects/${apollo}?range=1d`, s.cookie);
    expect(project.body.byProvider.map((r: any) => [r.providerId, r.calls])).toEqual([['anthropic', 1]]);
  });

  it('30 concurrent calls on one (user, day, provider, project) row are all counted', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const res = await Promise.all(
      Array.from({ length: 30 }, () => f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } })),
    );
    await Promise.all(res.map((r) => r.arrayBuffer()));
    expect(res.map((r) => r.status)).toEqual(Array(30).fill(200));
    const { stored, fresh } = await rollupVsRecords(f.db, u.id);
    expect(stored).toEqual(fresh);
    expect(stored.reduce((n, r) => n + r.calls, 0)).toBe(30);
  });
});

describe('a range reads its partial first day from the records and the whole days after from the rollup', () => {
  it('rows either side of since and of the first midnight are counted exactly; the whole days come from the rollup', async () => {
    const u = await f.d.user();
    const db = f.db;
    const tag = (await createProject(db, u.id, 'Edge')).uid;
    const since = Date.now() - 7 * DAY;
    const firstMidnight = (Math.floor(since / DAY) + 1) * DAY;
    const at: [number, UsageSeed['status'], string, string | null][] = [
      [since - 600_000, 'finalized', 'openai', null], // before the range
      [since + 600_000, 'finalized', 'openai', tag],
      [since + 900_000, 'failed', 'anthropic', null],
      [firstMidnight - 1, 'finalized', 'anthropic', tag],
      [firstMidnight, 'finalized', 'openai', tag],
      [firstMidnight + 3 * DAY, 'finalized', 'groq', null],
      [Date.now() - 3_600_000, 'finalized', 'openai', tag],
      [Date.now() - 60_000, 'reserved', 'openai', null], // in flight: never counted
    ];
    const rows: UsageSeed[] = at.map(([createdAt, status, providerId, projectId], i) => {
      const raw = status === 'finalized' ? 1_000_003 * (i + 1) : 0;
      return { userId: u.id, createdAt, status, providerId, projectId, rawNano: raw, customerNano: raw * 2 + 1 };
    });
    await insertUsage(db, rows);
    const s = await portalLogin(f.d, u);

    const want = (from: number, pred: (r: UsageSeed) => boolean = () => true) => {
      const inRange = rows.filter((r) => r.createdAt >= from && r.status !== 'reserved' && pred(r));
      return {
        calls: inRange.length,
        failures: inRange.filter((r) => r.status === 'failed').length,
        raw: inRange.reduce((n, r) => n + r.rawNano, 0),
        customer: inRange.reduce((n, r) => n + r.customerNano, 0),
      };
    };
    const summary = await getJson(f.d, '/portal/spend/summary?range=7d', s.cookie);
    const from = Date.parse(summary.body.range.since);
    expect(cellsOf(summary.body.totals)).toEqual(want(from));
    expect(summary.body.totals.calls).toBe(6);
    for (const p of summary.body.byProvider) expect(cellsOf(p)).toEqual(want(from, (r) => r.providerId === p.providerId));

    const project = await getJson(f.d, `/portal/spend/projects/${tag}?range=7d`, s.cookie);
    const { failures: _f, ...tagged } = want(Date.parse(project.body.range.since), (r) => r.projectId === tag);
    expect(cellsOf(project.body.totals)).toMatchObject(tagged);

    const daily = await getJson(f.d, '/portal/spend/daily?range=7d', s.cookie);
    const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
    const dailyFrom = Date.parse(daily.body.range.since);
    for (const d of daily.body.days) expect(d.calls, d.date).toBe(want(dailyFrom, (r) => iso(r.createdAt) === d.date).calls);
    expect(daily.body.days[0].date).toBe(iso(dailyFrom));
    expect(daily.body.days[0].calls).toBeGreaterThanOrEqual(1);

    // the whole days are read from the rollup: with their records gone the figures stay
    await db.run('DELETE FROM usage_records WHERE user_id = ? AND created_at >= ?', [u.id, firstMidnight]);
    const again = await getJson(f.d, '/portal/spend/summary?range=7d', s.cookie);
    if (Math.floor(Date.parse(again.body.range.since) / DAY) === Math.floor(from / DAY)) {
      expect(again.body.totals).toEqual(summary.body.totals);
    }
  });
});
