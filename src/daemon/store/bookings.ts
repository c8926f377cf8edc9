import type { Queryable } from './db.js';
import { retakeQuotaUnit } from './quotas.js';
import type { NewUsage, UsageOutcome } from './usage.js';
import { addToSpendDaily } from './spend-rollup.js';
import { debit } from './wallets.js';

/**
 * A settled gateway call, whole: what the usage record, the quota counter, the spend
 * rollup and the wallet get from it. The SQLite daemon writes it to the booking journal
 * before the client sees the answer and applies it to the store shortly after
 * (store/ledger.ts); `applyBooking` is that application, idempotent by usage id.
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
 * Writes one booking: the usage record in its final state, and for a finalized call its
 * quota unit, its wallet debit (one transaction keyed by the usage id) and its rollup
 * row; a failed call counts as a failure in the rollup and costs nothing. Run inside a
 * transaction. Returns false (and writes nothing) when the record already exists, so
 * replaying a journal twice books nothing twice.
 */
export async function applyBooking(q: Queryable, b: Booking): Promise<boolean> {
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
  if (r.changes === 0) return false;
  const key = { user_id: b.userId, provider_id: b.providerId, project_id: b.projectId, created_at: b.createdAt };
  if (!finalized) {
    await addToSpendDaily(q, key, { calls: 1, failures: 1, rawNano: 0, customerNano: 0 });
    return true;
  }
  await addToSpendDaily(q, key, { calls: 1, failures: 0, rawNano: b.rawNano, customerNano: b.customerNano });
  await retakeQuotaUnit(q, b.userId, b.usageType, b.periodKey);
  await debit(q, {
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
  return true;
}
