import { forUpdate, type Queryable } from './db.js';
import { addToSpendDaily, ROLLUP_KEY_COLUMNS, type RollupKeyRow } from './spend-rollup.js';
import type { WalletRow } from '../money/wallets.js';

/**
 * Usage records: one per metered gateway call. Lifecycle (spec "States and transitions"):
 * 'reserved' before the upstream is contacted, then 'finalized' (tokens, costs, booked
 * against the concrete model id) or 'failed' (released: cost 0, quota unit refunded; the
 * row stays so spend reports can count failures). Money in nano-USD.
 */
export type UsageStatus = 'reserved' | 'finalized' | 'failed';

export interface NewUsage {
  id: string;
  userId: string;
  usageType: string;
  endpoint: 'proxy' | 'smart' | 'chat';
  providerId: string;
  model: string | null;
  alias: string | null;
  projectId: string | null;
  periodKey: string;
  now: number;
}

export interface UsageOutcome {
  providerId: string;
  model: string | null;
  promptTokens: number;
  completionTokens: number;
  units: number;
  rawNano: number;
  customerNano: number;
  httpStatus: number;
  now: number;
}

export async function insertReservedUsage(q: Queryable, u: NewUsage): Promise<void> {
  await q.run(
    `INSERT INTO usage_records (id, user_id, usage_type, status, endpoint, provider_id, model, alias, project_id,
       period_start, created_at) VALUES (?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?, ?)`,
    [u.id, u.userId, u.usageType, u.endpoint, u.providerId, u.model, u.alias, u.projectId, u.periodKey, u.now],
  );
}

/**
 * Moves a record from `from` to 'finalized' with its counts and costs, and counts it in
 * the daily spend rollup (a record settled earlier as 'failed' leaves its failure row
 * first: it may have been reserved under another provider). Returns false when the
 * record was not in state `from` (already settled by someone else).
 */
export async function finalizeUsage(q: Queryable, id: string, from: UsageStatus, o: UsageOutcome): Promise<boolean> {
  let failed: RollupKeyRow | undefined;
  if (from === 'failed') {
    failed = await q.get<RollupKeyRow>(
      `SELECT ${ROLLUP_KEY_COLUMNS} FROM usage_records WHERE id = ? AND status = 'failed'${forUpdate(q)}`,
      [id],
    );
    if (!failed) return false;
  }
  const row = await q.get<RollupKeyRow>(
    `UPDATE usage_records SET status = 'finalized', provider_id = ?, model = ?, prompt_tokens = ?, completion_tokens = ?,
       units = ?, raw_cost_nusd = ?, customer_cost_nusd = ?, http_status = ?, finalized_at = ?
     WHERE id = ? AND status = ? RETURNING ${ROLLUP_KEY_COLUMNS}`,
    [o.providerId, o.model, o.promptTokens, o.completionTokens, o.units, o.rawNano, o.customerNano, o.httpStatus, o.now, id, from],
  );
  if (!row) return false;
  if (failed) await addToSpendDaily(q, failed, { calls: -1, failures: -1, rawNano: 0, customerNano: 0 });
  await addToSpendDaily(q, row, { calls: 1, failures: 0, rawNano: o.rawNano, customerNano: o.customerNano });
  return true;
}

/** Marks a reserved record failed (released; counted as a failure in the rollup). False when it was not reserved any more. */
export async function failUsage(q: Queryable, id: string, httpStatus: number | null, now: number): Promise<boolean> {
  const row = await q.get<RollupKeyRow>(
    `UPDATE usage_records SET status = 'failed', http_status = ?, raw_cost_nusd = 0, customer_cost_nusd = 0, finalized_at = ?
     WHERE id = ? AND status = 'reserved' RETURNING ${ROLLUP_KEY_COLUMNS}`,
    [httpStatus, now, id],
  );
  if (!row) return false;
  await addToSpendDaily(q, row, { calls: 1, failures: 1, rawNano: 0, customerNano: 0 });
  return true;
}

export interface ReservedRow {
  id: string;
  user_id: string;
  usage_type: string;
  period_start: string;
}

/** Reservations older than `before` (epoch ms): orphans of a crashed or stuck call. */
export function staleReservations(q: Queryable, before: number, limit = 500): Promise<ReservedRow[]> {
  return q.all<ReservedRow>(
    "SELECT id, user_id, usage_type, period_start FROM usage_records WHERE status = 'reserved' AND created_at < ? ORDER BY created_at LIMIT ?",
    [before, limit],
  );
}

/** The wallet row plus the user's quota override for one usage type (null = none), in one query. */
export function walletWithOverride(
  q: Queryable,
  userId: string,
  usageType: string,
): Promise<(WalletRow & { quota_override: number | null }) | undefined> {
  return q.get(
    `SELECT w.*, (SELECT o.quota_limit FROM quota_overrides o WHERE o.user_id = w.user_id AND o.usage_type = ?) AS quota_override
       FROM wallets w WHERE w.user_id = ?`,
    [usageType, userId],
  );
}
