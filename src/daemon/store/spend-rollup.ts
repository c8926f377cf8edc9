import type { Queryable } from './db.js';

/**
 * The daily spend rollup (spend_daily, migration 6): one row per (user, UTC day,
 * provider, project tag) with the completed calls of that day. money/bookings.ts adds to it
 * in the same transaction that settles a usage record, so it always equals what
 * usage_records says; the spend reports (store/spend.ts) read it instead of every record.
 * day = floor(created_at / 86400000) of the record (a UTC day number); project_key is the
 * project uid, '' for an untagged call.
 */
export const DAY_MS = 86_400_000;
const MAX_DAY = Math.floor(Number.MAX_SAFE_INTEGER / DAY_MS) - 1;

/** Which rollup row a usage record counts in: the columns its settling UPDATE returns. */
export interface RollupKeyRow {
  user_id: string;
  provider_id: string;
  project_id: string | null;
  created_at: number;
}

/** What to add to a row (negative to take a failure back out). Integers only. */
export interface RollupDelta {
  calls: number;
  failures: number;
  rawNano: number;
  customerNano: number;
}

/** The columns a settling UPDATE … RETURNING must name for `addToSpendDaily`. */
export const ROLLUP_KEY_COLUMNS = 'user_id, provider_id, project_id, created_at';

/** Adds `d` to the record's day row, creating it at zero first: one atomic upsert on both backends. */
export async function addToSpendDaily(q: Queryable, k: RollupKeyRow, d: RollupDelta): Promise<void> {
  await q.run(
    `INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (user_id, day, provider_id, project_key) DO UPDATE SET
       calls = spend_daily.calls + excluded.calls,
       failures = spend_daily.failures + excluded.failures,
       raw_nusd = spend_daily.raw_nusd + excluded.raw_nusd,
       customer_nusd = spend_daily.customer_nusd + excluded.customer_nusd`,
    [
      k.user_id,
      Math.floor(Number(k.created_at) / DAY_MS),
      k.provider_id,
      k.project_id ?? '',
      d.calls,
      d.failures,
      d.rawNano,
      d.customerNano,
    ],
  );
}

/**
 * Recomputes one user's rollup rows for days fromDay..toDay (all days by default) from
 * their completed usage records, with the GROUP BY the migration's backfill uses. For
 * records written around the store (bulk seeding, a repair); run it inside a `db.tx`.
 */
export async function rebuildSpendDaily(q: Queryable, userId: string, fromDay = 0, toDay = MAX_DAY): Promise<void> {
  await q.run('DELETE FROM spend_daily WHERE user_id = ? AND day >= ? AND day <= ?', [userId, fromDay, toDay]);
  await q.run(
    `INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd)
       SELECT user_id, created_at / 86400000, provider_id, COALESCE(project_id, ''), COUNT(*),
              SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), SUM(raw_cost_nusd), SUM(customer_cost_nusd)
         FROM usage_records
        WHERE user_id = ? AND created_at >= ? AND created_at < ? AND status IN ('finalized', 'failed')
        GROUP BY user_id, created_at / 86400000, provider_id, COALESCE(project_id, '')`,
    [userId, fromDay * DAY_MS, (toDay + 1) * DAY_MS],
  );
}
