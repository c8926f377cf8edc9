import type { Param, Queryable } from './db.js';
import { DAY_MS } from './spend-rollup.js';
import { AgwError } from '../../shared/errors.js';

/**
 * Spend reports. A call counts once it has completed: status 'finalized' (a call with a
 * cost) or 'failed' (counted in failures too); 'reserved' rows are calls still in flight
 * and are left out. A range [since, now] is read in two parts: the whole UTC days after
 * since's day from the daily rollup (spend_daily, store/spend-rollup.ts: days × providers
 * × projects rows), and the partial first day [since, end of that day) from the usage
 * records themselves through a (user | project, created_at) index. Sums are taken in
 * integer nano-USD by the store; the routes convert to USD at the edge.
 *
 * The request log's retention (requests/retention.ts) deletes old records, never rollup
 * rows. A range whose `since` lies before the pruning boundary (request_log_pruned) reads
 * its first day from the rollup too, whole: such a range starts at midnight UTC of its
 * first day, and counts every call of it exactly (its records may be gone). The boundary
 * is read by the same statement as the rows, so a pass of the pruner running meanwhile
 * cannot make a report count a day partly.
 */
export { DAY_MS };
export const DEFAULT_RANGE_DAYS = 30;
export const MAX_RANGE_DAYS = 365;
const RANGE_RE = /^([1-9][0-9]{0,2})d$/;

/** `Nd` with 1 ≤ N ≤ 365 (default 30d); anything else is 400 INVALID_RANGE. */
export function parseRange(range: string | undefined, now = Date.now()): { days: number; since: number } {
  const raw = range ?? `${DEFAULT_RANGE_DAYS}d`;
  const m = RANGE_RE.exec(raw);
  const days = m ? Number(m[1]) : 0;
  if (!m || days > MAX_RANGE_DAYS) {
    throw new AgwError('INVALID_RANGE', `range must look like 7d, 30d or 90d: a whole number of days from 1d to ${MAX_RANGE_DAYS}d`, {
      field: 'range',
    });
  }
  return { days, since: now - days * DAY_MS };
}

export interface SpendCells {
  calls: number;
  failures: number;
  rawNano: number;
  customerNano: number;
}

export interface SpendGroupRow extends SpendCells {
  providerId: string;
  projectId: string | null;
  projectName: string | null;
}

interface RawGroup {
  provider_id: string;
  project_name: string | null;
  calls: number;
  failures: number | null;
  raw_nusd: number | null;
  customer_nusd: number | null;
}

const SUMS = `SUM(s.calls) AS calls, SUM(s.failures) AS failures, SUM(s.raw_nusd) AS raw_nusd, SUM(s.customer_nusd) AS customer_nusd`;

function cells(r: { calls: number; failures: number | null; raw_nusd: number | null; customer_nusd: number | null }): SpendCells {
  return {
    calls: Number(r.calls),
    failures: Number(r.failures ?? 0),
    rawNano: Number(r.raw_nusd ?? 0),
    customerNano: Number(r.customer_nusd ?? 0),
  };
}

/**
 * The completed calls of one user (or every member's calls on one project) since
 * `since`, as rows (day, provider_id, project_key, calls, failures, raw_nusd,
 * customer_nusd) to aggregate: rollup rows for the days after since's day, one row per
 * usage record for the rest of since's own day. A rollup row can hold zero calls (a
 * swept call that finished later under another provider left it): the reports drop
 * such groups with HAVING, so they list exactly what the records say.
 */
function completedSince(by: 'user' | 'project', id: string, since: number): { sql: string; params: Param[] } {
  const firstDay = Math.floor(since / DAY_MS);
  const [rollupKey, recordKey] = by === 'user' ? ['user_id', 'user_id'] : ['project_key', 'project_id'];
  return {
    sql: `SELECT day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd
            FROM spend_daily WHERE ${rollupKey} = ? AND (day > ? OR (day = ? AND ? < ${PRUNED_BEFORE}))
          UNION ALL
          SELECT u.created_at / ${DAY_MS}, u.provider_id, COALESCE(u.project_id, ''), 1,
                 CASE WHEN u.status = 'failed' THEN 1 ELSE 0 END, u.raw_cost_nusd, u.customer_cost_nusd
            FROM usage_records u
           WHERE u.${recordKey} = ? AND u.created_at >= ? AND u.created_at < ? AND u.status IN ('finalized', 'failed')
             AND ? >= ${PRUNED_BEFORE}`,
    params: [id, firstDay, firstDay, since, id, since, (firstDay + 1) * DAY_MS, since],
  };
}

/** Records created before this may have been pruned (0: none ever was). */
const PRUNED_BEFORE = '(SELECT COALESCE(MAX(before_ms), 0) FROM request_log_pruned)';

/** The caller's own completed calls since `since`, grouped by (provider, project) with the project's name. */
export async function userSpendGroups(q: Queryable, userId: string, since: number): Promise<SpendGroupRow[]> {
  const src = completedSince('user', userId, since);
  const rows = await q.all<RawGroup & { project_key: string }>(
    `SELECT g.provider_id, g.project_key, p.name AS project_name, g.calls, g.failures, g.raw_nusd, g.customer_nusd
       FROM (SELECT s.provider_id, s.project_key, ${SUMS} FROM (${src.sql}) s
              GROUP BY s.provider_id, s.project_key HAVING SUM(s.calls) > 0) g
       LEFT JOIN projects p ON p.uid = g.project_key
      ORDER BY g.provider_id, g.project_key`,
    src.params,
  );
  return rows.map((r) => ({
    providerId: r.provider_id,
    projectId: r.project_key === '' ? null : r.project_key,
    projectName: r.project_name,
    ...cells(r),
  }));
}

/** A project's completed calls since `since` (every member's), grouped by provider. */
export async function projectSpendByProvider(
  q: Queryable,
  projectUid: string,
  since: number,
): Promise<(SpendCells & { providerId: string })[]> {
  const src = completedSince('project', projectUid, since);
  const rows = await q.all<RawGroup>(
    `SELECT s.provider_id, ${SUMS} FROM (${src.sql}) s GROUP BY s.provider_id HAVING SUM(s.calls) > 0 ORDER BY s.provider_id`,
    src.params,
  );
  return rows.map((r) => ({ providerId: r.provider_id, ...cells(r) }));
}

/** The caller's completed calls since `since`, per UTC day (day = floor(created_at / 86400000)). */
export async function userSpendDaily(q: Queryable, userId: string, since: number): Promise<(SpendCells & { day: number })[]> {
  const src = completedSince('user', userId, since);
  const rows = await q.all<RawGroup & { day: number }>(
    `SELECT s.day, ${SUMS} FROM (${src.sql}) s GROUP BY s.day HAVING SUM(s.calls) > 0 ORDER BY s.day`,
    src.params,
  );
  return rows.map((r) => ({ day: Number(r.day), ...cells(r) }));
}

/**
 * The caller's completed calls since `since` made with an agw_ key, per key with the
 * key's name: the per-key daily rollup (spend_key_daily) for the days after since's day,
 * the usage records for the rest of that day (as `completedSince`). Calls made with an
 * OAuth token or the session have no key and are not in it.
 */
export async function userSpendByKey(q: Queryable, userId: string, since: number): Promise<(SpendCells & { keyId: string; keyName: string | null })[]> {
  const firstDay = Math.floor(since / DAY_MS);
  const rows = await q.all<RawGroup & { key_id: string; key_name: string | null }>(
    `SELECT g.key_id, k.name AS key_name, g.calls, g.failures, g.raw_nusd, g.customer_nusd
       FROM (SELECT s.key_id, ${SUMS} FROM (
               SELECT key_id, calls, failures, raw_nusd, customer_nusd FROM spend_key_daily WHERE user_id = ? AND day > ?
               UNION ALL
               SELECT u.key_id, 1, CASE WHEN u.status = 'failed' THEN 1 ELSE 0 END, u.raw_cost_nusd, u.customer_cost_nusd
                 FROM usage_records u
                WHERE u.user_id = ? AND u.created_at >= ? AND u.created_at < ? AND u.key_id IS NOT NULL AND u.status IN ('finalized', 'failed')
             ) s GROUP BY s.key_id HAVING SUM(s.calls) > 0) g
       LEFT JOIN api_keys k ON k.id = g.key_id
      ORDER BY g.key_id`,
    [userId, firstDay, userId, since, (firstDay + 1) * DAY_MS],
  );
  return rows.map((r) => ({ keyId: r.key_id, keyName: r.key_name, ...cells(r) }));
}

/** Adds cells into an accumulator (integers only: exact). */
export function addCells(into: SpendCells, c: SpendCells): SpendCells {
  into.calls += c.calls;
  into.failures += c.failures;
  into.rawNano += c.rawNano;
  into.customerNano += c.customerNano;
  return into;
}

export function zeroCells(): SpendCells {
  return { calls: 0, failures: 0, rawNano: 0, customerNano: 0 };
}

/**
 * The caller's skill purchases since `since` (wallet debits of type skill_purchase): how
 * many, what they cost (nano-USD, positive) in all and per UTC day. Not calls, so not in
 * the call figures above; the reports add them as `purchases`.
 */
export async function userPurchases(q: Queryable, userId: string, since: number): Promise<{ count: number; nano: number; byDay: Map<number, number> }> {
  const rows = await q.all<{ day: number; n: number; nusd: number | null }>(
    `SELECT created_at / ${DAY_MS} AS day, COUNT(*) AS n, SUM(-amount_nusd) AS nusd
       FROM wallet_transactions WHERE user_id = ? AND type = 'skill_purchase' AND created_at >= ?
      GROUP BY created_at / ${DAY_MS}`,
    [userId, since],
  );
  const byDay = new Map<number, number>();
  let count = 0;
  let nano = 0;
  for (const r of rows) {
    count += Number(r.n);
    nano += Number(r.nusd ?? 0);
    byDay.set(Number(r.day), Number(r.nusd ?? 0));
  }
  return { count, nano, byDay };
}
