import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { getJson, portalLogin, type PortalSession } from '../helpers/portal.js';
import { seedYearOfUsage } from '../helpers/seed-usage.js';
import { createProject } from '../../src/daemon/store/projects.js';

/**
 * A year of one busy user's usage must answer in well under a second. CI seeds 100k
 * rows (≈275 calls a day); AGW_SPEND_PERF_ROWS=1000000 runs the full million.
 */
const ROWS = Number(process.env.AGW_SPEND_PERF_ROWS ?? 100_000);

describe(`spend reports over a year of ${ROWS} usage rows`, () => {
  let td: TestDaemon;
  let busy: TestUser;
  let s: PortalSession;
  let expected: Awaited<ReturnType<typeof seedYearOfUsage>>;
  let project: string;

  beforeAll(async () => {
    td = await startTestDaemon();
    busy = await td.user();
    const other = await td.user();
    const db = td.daemon.ctx.db;
    const projects = [];
    for (const n of ['web', 'mobile', 'batch']) projects.push((await createProject(db, busy.id, n)).uid);
    project = projects[0];
    expected = await seedYearOfUsage(db, busy.id, ROWS, { projects });
    await seedYearOfUsage(db, other.id, Math.ceil(ROWS / 10), { seed: 9 });
    // PostgreSQL's autovacuum analyzes a table after bulk changes; do it now rather than
    // time plans made on empty-table statistics. (SQLite runs as it would in the field.)
    if (db.dialect === 'postgres') for (const t of ['usage_records', 'spend_daily']) await db.run(`ANALYZE ${t}`);
    s = await portalLogin(td, busy);
  }, 600_000);
  afterAll(() => td.close());

  async function timed(path: string): Promise<{ ms: number; body: any }> {
    await getJson(td, path, s.cookie); // warm the statement cache
    let best = Infinity;
    let body: any;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      const r = await getJson(td, path, s.cookie);
      best = Math.min(best, performance.now() - t);
      expect(r.status).toBe(200);
      body = r.body;
    }
    return { ms: best, body };
  }

  test('summary over 365d: correct totals in well under a second', async () => {
    const { ms, body } = await timed('/portal/spend/summary?range=365d');
    console.log(`[perf] ${td.daemon.ctx.db.dialect} summary 365d over ${ROWS} rows: ${ms.toFixed(1)} ms`);
    expect(body.totals.calls).toBe(expected.calls);
    expect(body.totals.failures).toBe(expected.failures);
    expect(Math.round(body.totals.customerCost * 1e9)).toBe(expected.customerNano);
    expect(ms).toBeLessThan(1000);
  });

  test('summary 30d, daily 365d and project spend 365d are fast too', async () => {
    for (const path of ['/portal/spend/summary?range=30d', '/portal/spend/daily?range=365d', `/portal/spend/projects/${project}?range=365d`]) {
      const { ms } = await timed(path);
      console.log(`[perf] ${td.daemon.ctx.db.dialect} ${path} over ${ROWS} rows: ${ms.toFixed(1)} ms`);
      expect(ms).toBeLessThan(1000);
    }
  });
});
