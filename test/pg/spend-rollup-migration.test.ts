import { afterAll, describe, expect, test } from 'vitest';
import type { Db } from '../../src/daemon/store/db.js';
import { MIGRATIONS, migrate } from '../../src/daemon/store/migrations/index.js';
import { PgDb } from '../../src/daemon/store/postgres.js';
import { SqliteDb } from '../../src/daemon/store/sqlite.js';
import { userSpendGroups } from '../../src/daemon/store/spend.js';
import { createUser } from '../../src/daemon/store/users.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';
import { insertUsage, prng, type UsageSeed } from '../helpers/seed-usage.js';

/**
 * Migration 6 on a store that already has usage (at version 5): spend_daily is
 * backfilled to exactly what the completed records say, the v4 covering indexes are
 * gone, and the reports read the same figures as before. Once per dialect.
 */
const DAY = 86_400_000;
const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const d of dbs) await d.drop();
});

async function storeAtVersion5(dialect: 'sqlite' | 'postgres'): Promise<Db> {
  let db: Db;
  if (dialect === 'sqlite') db = new SqliteDb(':memory:');
  else {
    const t = await createTestDatabase({ migrated: false });
    dbs.push(t);
    db = new PgDb(t.url);
  }
  await db.run('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
  for (const m of MIGRATIONS.filter((x) => x.version < 6)) {
    await db.exec(dialect === 'postgres' ? m.postgres : m.sqlite);
    await db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, Date.now()]);
  }
  return db;
}

async function usageIndexes(db: Db): Promise<string[]> {
  const rows =
    db.dialect === 'sqlite'
      ? await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'usage_records' AND sql IS NOT NULL")
      : await db.all<{ name: string }>("SELECT indexname AS name FROM pg_indexes WHERE tablename = 'usage_records' AND indexname <> 'usage_records_pkey'");
  return rows.map((r) => r.name).sort();
}

describe.each(['sqlite', 'postgres'] as const)('migration 6 on %s', (dialect) => {
  test('backfills spend_daily from the completed records and drops the covering indexes', async () => {
    const db = await storeAtVersion5(dialect);
    try {
      const [a, b] = [
        await createUser(db, { email: `a-${dialect}@example.com`, tier: 'pro' }),
        await createUser(db, { email: `b-${dialect}@example.com`, tier: 'pro' }),
      ];
      const rnd = prng(7);
      const now = Date.now();
      const statuses: UsageSeed['status'][] = ['finalized', 'finalized', 'finalized', 'failed', 'reserved'];
      const rows: UsageSeed[] = Array.from({ length: 600 }, (_, i) => {
        const status = statuses[i % statuses.length];
        const raw = status === 'finalized' ? 1 + Math.floor(rnd() * 9_000_000) : 0;
        return {
          userId: i % 3 ? a.id : b.id,
          providerId: ['openai', 'anthropic', 'groq'][Math.floor(rnd() * 3)],
          projectId: [null, 'prj_x', 'prj_y'][Math.floor(rnd() * 3)],
          status,
          createdAt: now - Math.floor(rnd() * 40 * DAY),
          rawNano: raw,
          customerNano: raw * 2 + 3,
        };
      });
      await insertUsage(db, rows, { rollup: false });
      const before = await userSpendGroupsRaw(db, a.id, now - 30 * DAY);

      expect((await migrate(db)).applied[0]).toBe(6);
      const stored = await db.all<Record<string, unknown>>(
        'SELECT user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd FROM spend_daily',
      );
      const want = new Map<string, number[]>();
      for (const r of rows.filter((x) => x.status !== 'reserved')) {
        const k = [r.userId, Math.floor(r.createdAt / DAY), r.providerId, r.projectId ?? ''].join('|');
        const c = want.get(k) ?? [0, 0, 0, 0];
        want.set(k, [c[0] + 1, c[1] + (r.status === 'failed' ? 1 : 0), c[2] + r.rawNano, c[3] + r.customerNano]);
      }
      const got = new Map(
        stored.map((r) => [
          [r.user_id, Number(r.day), r.provider_id, r.project_key].join('|'),
          [Number(r.calls), Number(r.failures), Number(r.raw_nusd), Number(r.customer_nusd)],
        ]),
      );
      expect(got).toEqual(want);

      const indexes = await usageIndexes(db);
      for (const gone of ['usage_user_spend', 'usage_user_daily', 'usage_project_spend']) expect(indexes).not.toContain(gone);
      expect(indexes).toContain('usage_project_completed');
      expect(indexes).toContain('usage_user_log'); // version 9's (user_id, created_at, id), which replaced usage_user_time

      // the reports give what the records gave before the migration
      const after = (await userSpendGroups(db, a.id, now - 30 * DAY)).map(({ projectName: _n, ...g }) => g);
      expect(after).toEqual(before);
    } finally {
      await db.close();
    }
  });
});

/** The summary's groups computed straight from the records (the pre-rollup query). */
async function userSpendGroupsRaw(db: Db, userId: string, since: number) {
  const rows = await db.all<Record<string, unknown>>(
    `SELECT provider_id, project_id, COUNT(*) AS calls, SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failures,
            SUM(raw_cost_nusd) AS raw_nusd, SUM(customer_cost_nusd) AS customer_nusd
       FROM usage_records WHERE user_id = ? AND created_at >= ? AND status IN ('finalized', 'failed')
      GROUP BY provider_id, project_id ORDER BY provider_id, COALESCE(project_id, '')`,
    [userId, since],
  );
  return rows.map((r) => ({
    providerId: String(r.provider_id),
    projectId: (r.project_id as string | null) ?? null,
    calls: Number(r.calls),
    failures: Number(r.failures),
    rawNano: Number(r.raw_nusd),
    customerNano: Number(r.customer_nusd),
  }));
}
