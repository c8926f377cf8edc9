import type { Queryable } from './db.js';

export async function setQuotaOverride(q: Queryable, userId: string, usageType: string, limit: number): Promise<void> {
  await q.run(
    `INSERT INTO quota_overrides (user_id, usage_type, quota_limit) VALUES (?, ?, ?)
     ON CONFLICT (user_id, usage_type) DO UPDATE SET quota_limit = excluded.quota_limit`,
    [userId, usageType, limit],
  );
}

export async function quotaOverrides(q: Queryable, userId: string): Promise<Map<string, number>> {
  const rows = await q.all<{ usage_type: string; quota_limit: number }>(
    'SELECT usage_type, quota_limit FROM quota_overrides WHERE user_id = ?',
    [userId],
  );
  return new Map(rows.map((r) => [r.usage_type, Number(r.quota_limit)]));
}
