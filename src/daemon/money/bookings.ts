import type { Queryable } from '../store/db.js';
import { retakeQuotaUnit } from './quotas.js';
import type { NewUsage, UsageOutcome } from '../store/usage.js';
import { addToSpendDaily, DAY_MS, type RollupDelta, type RollupKeyRow } from '../store/spend-rollup.js';
import { debitMany, type DebitInput } from './wallets.js';

/**
 * A settled gateway call, whole: what the usage record, the quota counter, the spend
 * rollup and the wallet get from it. The SQLite daemon writes it to the booking journal
 * before the client sees the answer and applies it to the store shortly after
 * (money/sqlite-ledger.ts); `applyBooking` is that application, idempotent by usage id.
 * The fields shared with a reserved record (NewUsage): `id` is the usage record id (also
 * the wallet transaction's usage_id), `providerId` the provider that served a finalized
 * call or the one reserved for a failed one, `periodKey` the quota window of admission.
 */
export interface Booking
  extends Omit<NewUsage, 'now'>,
    Pick<UsageOutcome, 'promptTokens' | 'completionTokens' | 'units' | 'rawNano' | 'customerNano'> {
  /** when the call was admitted (epoch ms): the record's created_at */
  createdAt: number;
  status: 'finalized' | 'failed';
  httpStatus: number | null;
  /** when it settled (epoch ms): finalized_at, and the debit's time (its month's allowance) */
  settledAt: number;
  /** the tier's monthly allowance in nano-USD at settle time (spent before the balance) */
  monthlyAllowance: number;
  /** the wallet transaction's description */
  description: string;
}

/**
 * Writes bookings, in order: each usage record in its final state, and for the ones not
 * in the store yet their effects, one statement per row touched rather than per booking:
 * the spend rollup rows (calls, failures and costs summed per user, day, provider and
 * project), the quota counters (finalized calls per user, usage type and window) and the
 * wallets (`debitMany`: one wallet transaction per finalized call, keyed by its usage id,
 * in order; the wallet written once). A failed call counts as a failure in the rollup and
 * costs nothing. Run inside a transaction. A booking whose record already exists writes
 * nothing, so replaying a journal twice books nothing twice. Returns how many were new.
 */
export async function applyBookings(q: Queryable, batch: readonly Booking[]): Promise<number> {
  const rollups = new Map<string, { key: RollupKeyRow; delta: RollupDelta }>();
  const units = new Map<string, { userId: string; usageType: string; periodKey: string; n: number }>();
  const debits = new Map<string, DebitInput[]>();
  let fresh = 0;
  for (const b of batch) {
    if (!(await insertRecord(q, b))) continue;
    fresh++;
    const finalized = b.status === 'finalized';
    const rk = `${b.userId}\u0000${Math.floor(b.createdAt / DAY_MS)}\u0000${b.providerId}\u0000${b.projectId ?? ''}`;
    let r = rollups.get(rk);
    if (!r) {
      r = { key: { user_id: b.userId, provider_id: b.providerId, project_id: b.projectId, created_at: b.createdAt }, delta: { calls: 0, failures: 0, rawNano: 0, customerNano: 0 } };
      rollups.set(rk, r);
    }
    r.delta.calls++;
    if (!finalized) {
      r.delta.failures++;
      continue;
    }
    r.delta.rawNano += b.rawNano;
    r.delta.customerNano += b.customerNano;
    const uk = `${b.userId}\u0000${b.usageType}\u0000${b.periodKey}`;
    const u = units.get(uk);
    if (u) u.n++;
    else units.set(uk, { userId: b.userId, usageType: b.usageType, periodKey: b.periodKey, n: 1 });
    const list = debits.get(b.userId) ?? [];
    if (!list.length) debits.set(b.userId, list);
    list.push({
      userId: b.userId,
      amount: b.customerNano,
      monthlyAllowance: b.monthlyAllowance,
      type: 'usage',
      description: b.description,
      providerId: b.providerId,
      model: b.model,
      projectId: b.projectId,
      usageId: b.id,
      now: b.settledAt,
    });
  }
  for (const { key, delta } of rollups.values()) await addToSpendDaily(q, key, delta);
  for (const u of units.values()) await retakeQuotaUnit(q, u.userId, u.usageType, u.periodKey, u.n);
  for (const [userId, list] of debits) await debitMany(q, userId, list);
  return fresh;
}

/** One booking (`applyBookings` of one): true when it was new. */
export async function applyBooking(q: Queryable, b: Booking): Promise<boolean> {
  return (await applyBookings(q, [b])) === 1;
}

/** The usage record in its final state; false (nothing written) when it already exists. */
async function insertRecord(q: Queryable, b: Booking): Promise<boolean> {
  const finalized = b.status === 'finalized';
  const r = await q.run(
    `INSERT INTO usage_records (id, user_id, usage_type, status, endpoint, provider_id, model, alias, project_id,
       prompt_tokens, completion_tokens, units, raw_cost_nusd, customer_cost_nusd, http_status, period_start, created_at, finalized_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    [
      b.id,
      b.userId,
      b.usageType,
      b.status,
      b.endpoint,
      b.providerId,
      b.model,
      b.alias,
      b.projectId,
      finalized ? b.promptTokens : 0,
      finalized ? b.completionTokens : 0,
      finalized ? b.units : 0,
      finalized ? b.rawNano : 0,
      finalized ? b.customerNano : 0,
      b.httpStatus,
      b.periodKey,
      b.createdAt,
      b.settledAt,
    ],
  );
  return r.changes > 0;
}
