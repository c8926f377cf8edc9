import type { Queryable } from './db.js';
import type { WalletRow } from './wallets.js';

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
 * Moves a record from `from` to 'finalized' with its counts and costs. Returns false when
 * the record was not in state `from` (already settled by someone else).
 */
export async function finalizeUsage(q: Queryable, id: string, from: UsageStatus, o: UsageOutcome): Promise<boolean> {
  const r = await q.run(
    `UPDATE usage_records SET status = 'finalized', provider_id = ?, model = ?, prompt_tokens = ?, completion_tokens = ?,
       units = ?, raw_cost_nusd = ?, customer_cost_nusd = ?, http_status = ?, finalized_at = ?
     WHERE id = ? AND status = ?`,
    [o.providerId, o.model, o.promptTokens, o.completionTokens, o.units, o.rawNano, o.customerNano, o.httpStatus, o.now, id, from],
  );
  return r.changes > 0;
}

/** Marks a reserved record failed (released). False when it was not reserved any more. */
export async function failUsage(q: Queryable, id: string, httpStatus: number | null, now: number): Promise<boolean> {
  const r = await q.run(
    `UPDATE usage_records SET status = 'failed', http_status = ?, raw_cost_nusd = 0, customer_cost_nusd = 0, finalized_at = ?
     WHERE id = ? AND status = 'reserved'`,
    [httpStatus, now, id],
  );
  return r.changes > 0;
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
