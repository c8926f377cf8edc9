import type { Queryable } from '../store/db.js';

/**
 * Per-user usage-type quota counters. The window is the calendar month (UTC); a counter
 * row is keyed by the window's start. Taking a unit is one atomic statement, so parallel
 * calls cannot exceed the limit on any engine (SQLite or PostgreSQL).
 */
export interface QuotaPeriod {
  /** epoch ms of the first instant of the month (UTC) */
  start: number;
  /** epoch ms of the first instant of the next month = resetsAt */
  end: number;
  /** the counter key stored in period_start: the start as ISO 8601 */
  key: string;
}

/** The last window asked for: every metered call asks, and it changes once a month. */
let lastPeriod: QuotaPeriod | undefined;

export function quotaPeriod(now = Date.now()): QuotaPeriod {
  const last = lastPeriod;
  if (last && now >= last.start && now < last.end) return last;
  const d = new Date(now);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return (lastPeriod = Object.freeze({ start, end, key: new Date(start).toISOString() }));
}

/**
 * Takes one unit of `usageType` if `limit` allows it (-1 = no cap). Returns false when the
 * quota is used up. Upsert and check are one statement: the conditional DO UPDATE re-checks
 * the row under its lock, so concurrent callers are serialised by the engine.
 */
export async function takeQuotaUnit(
  q: Queryable,
  userId: string,
  usageType: string,
  periodKey: string,
  limit: number,
): Promise<boolean> {
  if (limit === 0) return false;
  const r = await q.run(
    `INSERT INTO quota_counters (user_id, usage_type, period_start, used) VALUES (?, ?, ?, 1)
     ON CONFLICT (user_id, usage_type, period_start)
     DO UPDATE SET used = quota_counters.used + 1 WHERE ? < 0 OR quota_counters.used < ?`,
    [userId, usageType, periodKey, limit, limit],
  );
  return r.changes > 0;
}

/** Gives a unit back (refund of a released reservation). Never goes below zero. */
export async function returnQuotaUnit(q: Queryable, userId: string, usageType: string, periodKey: string): Promise<void> {
  await q.run(
    'UPDATE quota_counters SET used = used - 1 WHERE user_id = ? AND usage_type = ? AND period_start = ? AND used > 0',
    [userId, usageType, periodKey],
  );
}

/** Takes a unit back unconditionally (a reservation swept as orphaned that finished after all). */
export async function retakeQuotaUnit(q: Queryable, userId: string, usageType: string, periodKey: string, units = 1): Promise<void> {
  await q.run(
    `INSERT INTO quota_counters (user_id, usage_type, period_start, used) VALUES (?, ?, ?, ?)
     ON CONFLICT (user_id, usage_type, period_start) DO UPDATE SET used = quota_counters.used + excluded.used`,
    [userId, usageType, periodKey, units],
  );
}

/** Units used per usage type in one window. */
export async function quotaUsage(q: Queryable, userId: string, periodKey: string): Promise<Map<string, number>> {
  const rows = await q.all<{ usage_type: string; used: number }>(
    'SELECT usage_type, used FROM quota_counters WHERE user_id = ? AND period_start = ?',
    [userId, periodKey],
  );
  return new Map(rows.map((r) => [r.usage_type, Number(r.used)]));
}
