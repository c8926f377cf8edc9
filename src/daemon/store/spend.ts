import type { Queryable } from './db.js';
import { AgwError } from '../../shared/errors.js';

/**
 * Spend reports: aggregate queries over usage_records. A call counts once it has
 * completed: status 'finalized' (a call with a cost) or 'failed' (counted in failures
 * too); 'reserved' rows are calls still in flight and are left out. Sums are taken in
 * integer nano-USD by the store; the routes convert to USD at the edge.
 */
export const DAY_MS = 86_400_000;
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
  project_id: string | null;
  project_name: string | null;
  calls: number;
  failures: number | null;
  raw_nusd: number | null;
  customer_nusd: number | null;
}

const CELLS = `COUNT(*) AS calls,
  SUM(CASE WHEN u.status = 'failed' THEN 1 ELSE 0 END) AS failures,
  SUM(u.raw_cost_nusd) AS raw_nusd,
  SUM(u.customer_cost_nusd) AS customer_nusd`;
const COMPLETED = `u.status IN ('finalized', 'failed')`;

function cells(r: { calls: number; failures: number | null; raw_nusd: number | null; customer_nusd: number | null }): SpendCells {
  return {
    calls: Number(r.calls),
    failures: Number(r.failures ?? 0),
    rawNano: Number(r.raw_nusd ?? 0),
    customerNano: Number(r.customer_nusd ?? 0),
  };
}

/**
 * The caller's own completed calls since `since`, grouped by (provider, project) in one
 * index range scan; the few group rows are rolled up by the caller.
 */
export async function userSpendGroups(q: Queryable, userId: string, since: number): Promise<SpendGroupRow[]> {
  const rows = await q.all<RawGroup>(
    `SELECT g.provider_id, g.project_id, p.name AS project_name, g.calls, g.failures, g.raw_nusd, g.customer_nusd
       FROM (SELECT u.provider_id, u.project_id, ${CELLS}
               FROM usage_records u
              WHERE u.user_id = ? AND u.created_at >= ? AND ${COMPLETED}
              GROUP BY u.provider_id, u.project_id) g
       LEFT JOIN projects p ON p.uid = g.project_id
      ORDER BY g.provider_id, g.project_id`,
    [userId, since],
  );
  return rows.map((r) => ({ providerId: r.provider_id, projectId: r.project_id, projectName: r.project_name, ...cells(r) }));
}

/** A project's completed calls since `since` (every member's), grouped by provider. */
export async function projectSpendByProvider(
  q: Queryable,
  projectUid: string,
  since: number,
): Promise<(SpendCells & { providerId: string })[]> {
  const rows = await q.all<RawGroup>(
    `SELECT u.provider_id, ${CELLS}
       FROM usage_records u
      WHERE u.project_id = ? AND u.created_at >= ? AND ${COMPLETED}
      GROUP BY u.provider_id
      ORDER BY u.provider_id`,
    [projectUid, since],
  );
  return rows.map((r) => ({ providerId: r.provider_id, ...cells(r) }));
}

/**
 * The caller's completed calls since `since`, per UTC day (day = floor(created_at /
 * 86400000)); the redundant day bound lets the store seek the (user, day) index.
 */
export async function userSpendDaily(q: Queryable, userId: string, since: number): Promise<(SpendCells & { day: number })[]> {
  const rows = await q.all<RawGroup & { day: number }>(
    `SELECT u.created_at / ${DAY_MS} AS day, ${CELLS}
       FROM usage_records u
      WHERE u.user_id = ? AND u.created_at / ${DAY_MS} >= ? AND u.created_at >= ? AND ${COMPLETED}
      GROUP BY u.created_at / ${DAY_MS}
      ORDER BY day`,
    [userId, Math.floor(since / DAY_MS), since],
  );
  return rows.map((r) => ({ day: Number(r.day), ...cells(r) }));
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
