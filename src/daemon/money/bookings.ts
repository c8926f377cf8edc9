import type { Queryable } from '../store/db.js';
import type { Cost } from './pricing.js';
import { retakeQuotaUnit } from './quotas.js';
import { addToSpendDaily, DAY_MS, type RollupDelta, type RollupKeyRow } from '../store/spend-rollup.js';
import { debitMany, type DebitInput } from './wallets.js';
import type { KeptBodies } from '../requests/bodies.js';

/** A key budget a call counts in: the key and the budget period (key-limits.ts budgetPeriodKey). */
export interface KeyBudgetRef {
  keyId: string;
  period: string;
}

/**
 * A settled gateway call, whole: its request-log record (usage_records) and what the
 * quota counter, the spend rollups, the key's budget and the wallet get from it. The
 * SQLite daemon writes it to the booking journal before the client sees the answer and
 * applies it to the store shortly after (sqlite/ledger.ts); several daemons on
 * PostgreSQL apply it in a batch that commits before the answer (postgres/batches.ts).
 * `applyBookings` is that application, idempotent by usage id.
 *
 * - finalized: served, with what it used and cost (the Cost fields); `customerNano` is
 *   what the caller is charged, never more than `holdNano` (settle.ts caps it; the rest
 *   is `writtenOffNano`).
 * - failed: the upstream failed or refused; costs nothing, counts as a failure.
 * - refused: agw refused it before any upstream was contacted (402, 403, 429): a record
 *   for the request log only.
 */
export interface Booking
  extends Pick<Cost, 'promptTokens' | 'completionTokens' | 'cachedTokens' | 'cacheWriteTokens' | 'reasoningTokens' | 'units' | 'rawNano' | 'customerNano'> {
  /** the usage record id, also the wallet transaction's usage_id and the request id */
  id: string;
  userId: string;
  keyId: string | null;
  usageType: string;
  endpoint: 'proxy' | 'smart' | 'chat';
  /** the provider that served a finalized call, else the one the call was meant for */
  providerId: string;
  model: string | null;
  alias: string | null;
  projectId: string | null;
  /** the quota window of admission */
  periodKey: string;
  /** the key budgets the call counts in: its key's and its makers', each with its period */
  budgets: readonly KeyBudgetRef[];
  /** when the call was admitted (epoch ms): the record's created_at */
  createdAt: number;
  status: 'finalized' | 'failed' | 'refused';
  /** the upstream's status (null: no answer) */
  httpStatus: number | null;
  /** what admission held for the call, and what the provider reported beyond it (not charged) */
  holdNano: number;
  writtenOffNano: number;
  /** when it settled (epoch ms): finalized_at, and the debit's time (its month's allowance) */
  settledAt: number;
  /** the tier's monthly allowance in nano-USD at settle time (spent before the balance) */
  monthlyAllowance: number;
  /** the wallet transaction's description */
  description: string;
  /** request log: streamed, what agw answered, its error code, timings, upstreams tried */
  stream: boolean;
  answerStatus: number;
  errorCode: string | null;
  latencyMs: number | null;
  ttfbMs: number | null;
  attempts: number;
  /** the request fields the resolved provider could not honour (null: none) */
  droppedParams: readonly string[] | null;
  /** request and answer bodies, capped and redacted (logs.bodies only): request_bodies */
  bodies?: KeptBodies;
}

const rollupKey = (b: Booking) => `${b.userId}\u0000${Math.floor(b.createdAt / DAY_MS)}\u0000${b.providerId}\u0000${b.projectId ?? ''}`;

function add<K>(map: Map<string, { key: K; delta: RollupDelta }>, k: string, key: K, b: Booking, charged: number): void {
  let r = map.get(k);
  if (!r) map.set(k, (r = { key, delta: { calls: 0, failures: 0, rawNano: 0, customerNano: 0 } }));
  r.delta.calls++;
  if (b.status === 'failed') r.delta.failures++;
  else r.delta.rawNano += b.rawNano;
  r.delta.customerNano += charged;
}

/**
 * Writes bookings, in order: each record in its final state, and for the ones not in the
 * store yet their effects, one statement per row touched rather than per booking: the
 * spend rollup rows (per user, day, provider and project, and per key), the quota
 * counters (finalized calls per user, usage type and window), the key budgets and the
 * wallets (`debitMany`: one wallet transaction per finalized call, keyed by its usage id,
 * in order; the wallet written once, never below zero). Rows of one kind are written in
 * key order. Run inside a transaction. A booking whose record already exists writes nothing, so
 * replaying a journal twice books nothing twice. Returns how many were new.
 */
export async function applyBookings(q: Queryable, batch: readonly Booking[]): Promise<number> {
  const fresh: Booking[] = [];
  for (const b of batch) if (await insertRecord(q, b)) fresh.push(b);
  for (const b of fresh) if (b.bodies) await insertBodies(q, b.id, b.createdAt, b.bodies);
  // the wallets first: a charge a wallet cannot cover is cut before anything counts it
  const debits = new Map<string, DebitInput[]>();
  for (const b of fresh) {
    if (b.status !== 'finalized') continue;
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
  const short = new Map<string, number>();
  for (const [userId, list] of [...debits].sort(byKey)) {
    // a wallet that cannot cover a charge (its tier's allowance cut while calls ran): the rest is written off
    for (const c of await debitMany(q, userId, list)) {
      short.set(c.usageId, c.short);
      await writeOff(q, c.usageId, c.short);
    }
  }
  const rollups = new Map<string, { key: RollupKeyRow; delta: RollupDelta }>();
  const keyRollups = new Map<string, { key: { userId: string; day: number; keyId: string }; delta: RollupDelta }>();
  const units = new Map<string, { userId: string; usageType: string; periodKey: string; n: number }>();
  const keySpend = new Map<string, { keyId: string; period: string; nano: number }>();
  for (const b of fresh) {
    if (b.status === 'refused') continue;
    const charged = b.status === 'finalized' ? b.customerNano - (short.get(b.id) ?? 0) : 0;
    add(rollups, rollupKey(b), { user_id: b.userId, provider_id: b.providerId, project_id: b.projectId, created_at: b.createdAt }, b, charged);
    if (b.keyId) {
      const day = Math.floor(b.createdAt / DAY_MS);
      add(keyRollups, `${b.userId}\u0000${day}\u0000${b.keyId}`, { userId: b.userId, day, keyId: b.keyId }, b, charged);
    }
    if (b.status !== 'finalized') continue;
    const uk = `${b.userId}\u0000${b.usageType}\u0000${b.periodKey}`;
    const u = units.get(uk);
    if (u) u.n++;
    else units.set(uk, { userId: b.userId, usageType: b.usageType, periodKey: b.periodKey, n: 1 });
    for (const kb of charged ? b.budgets : []) {
      const kk = `${kb.keyId}\u0000${kb.period}`;
      const k = keySpend.get(kk);
      if (k) k.nano += charged;
      else keySpend.set(kk, { keyId: kb.keyId, period: kb.period, nano: charged });
    }
  }
  for (const { key, delta } of sorted(rollups)) await addToSpendDaily(q, key, delta);
  for (const { key, delta } of sorted(keyRollups)) await addToKeyDaily(q, key, delta);
  for (const u of sorted(units)) await retakeQuotaUnit(q, u.userId, u.usageType, u.periodKey, u.n);
  for (const k of sorted(keySpend)) await addKeySpend(q, k.keyId, k.period, k.nano);
  return fresh.length;
}

const byKey = <T>(a: [string, T], b: [string, T]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
const sorted = <T>(m: Map<string, T>): T[] => [...m].sort(byKey).map(([, v]) => v);

/** One booking (`applyBookings` of one): true when it was new. */
export async function applyBooking(q: Queryable, b: Booking): Promise<boolean> {
  return (await applyBookings(q, [b])) === 1;
}

/** The record in its final state; false (nothing written) when it already exists. */
async function insertRecord(q: Queryable, b: Booking): Promise<boolean> {
  const charged = b.status === 'finalized';
  const r = await q.run(
    `INSERT INTO usage_records (id, user_id, key_id, usage_type, status, endpoint, provider_id, model, alias, project_id,
       prompt_tokens, completion_tokens, cached_tokens, units, raw_cost_nusd, customer_cost_nusd, hold_nusd, written_off_nusd,
       http_status, answer_status, error_code, stream, latency_ms, ttfb_ms, attempts, period_start, created_at, finalized_at,
       cache_write_tokens, reasoning_tokens, dropped_params)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    [
      b.id,
      b.userId,
      b.keyId,
      b.usageType,
      b.status,
      b.endpoint,
      b.providerId,
      b.model,
      b.alias,
      b.projectId,
      b.promptTokens,
      b.completionTokens,
      b.cachedTokens,
      b.units,
      charged ? b.rawNano : 0,
      charged ? b.customerNano : 0,
      b.holdNano,
      b.writtenOffNano,
      b.httpStatus,
      b.answerStatus,
      b.errorCode,
      b.stream ? 1 : 0,
      b.latencyMs,
      b.ttfbMs,
      b.attempts,
      b.periodKey,
      b.createdAt,
      b.settledAt,
      b.cacheWriteTokens ?? 0,
      b.reasoningTokens ?? 0,
      b.droppedParams?.length ? JSON.stringify(b.droppedParams) : null,
    ],
  );
  return r.changes > 0;
}

async function insertBodies(q: Queryable, id: string, createdAt: number, k: KeptBodies): Promise<void> {
  await q.run(
    'INSERT INTO request_bodies (usage_id, created_at, request, response, request_bytes, response_bytes) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (usage_id) DO NOTHING',
    [id, createdAt, k.request, k.response, k.requestBytes, k.responseBytes],
  );
}

async function addToKeyDaily(q: Queryable, k: { userId: string; day: number; keyId: string }, d: RollupDelta): Promise<void> {
  await q.run(
    `INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (user_id, day, key_id) DO UPDATE SET calls = spend_key_daily.calls + excluded.calls,
       failures = spend_key_daily.failures + excluded.failures, raw_nusd = spend_key_daily.raw_nusd + excluded.raw_nusd,
       customer_nusd = spend_key_daily.customer_nusd + excluded.customer_nusd`,
    [k.userId, k.day, k.keyId, d.calls, d.failures, d.rawNano, d.customerNano],
  );
}

async function addKeySpend(q: Queryable, keyId: string, period: string, nano: number): Promise<void> {
  await q.run(
    `INSERT INTO key_spend (key_id, period, spent_nusd) VALUES (?, ?, ?)
     ON CONFLICT (key_id, period) DO UPDATE SET spent_nusd = key_spend.spent_nusd + excluded.spent_nusd`,
    [keyId, period, nano],
  );
}

/** A charge the wallet could not cover: the record says what it was charged and what was written off. */
async function writeOff(q: Queryable, usageId: string, short: number): Promise<void> {
  await q.run(
    `UPDATE usage_records SET customer_cost_nusd = customer_cost_nusd - ?, written_off_nusd = written_off_nusd + ? WHERE id = ?`,
    [short, short, usageId],
  );
}
