import { nanoToUsd } from '../../shared/money.js';
import type { KeyT } from '../../shared/schemas/keys.js';
import { budgetPeriodEnd, budgetPeriodKey, type KeyLimits } from '../money/key-limits.js';
import { lastUsedOf } from '../auth/key-usage.js';
import type { Queryable } from '../store/db.js';
import { boundsOfRow, type ApiKeyRow } from '../store/keys.js';

/** A stored millisecond time as the API's ISO string (null stays null). */
export const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

/** What a key shows of its public part: `agw_<lookup>_…` (never the secret). */
export const keyPrefix = (lookup: string) => `agw_${lookup}_…`;

/** The API's `limits` object (USD, nulls for what is not limited). */
export function limitsView(l: KeyLimits | null): KeyT['limits'] {
  return {
    budget: l?.budgetNano == null ? null : nanoToUsd(l.budgetNano),
    budgetPeriod: l?.budgetNano == null ? null : l.budgetPeriod,
    rpm: l?.rpm ?? null,
    tpm: l?.tpm ?? null,
    models: l?.models ? [...l.models] : null,
  };
}

export function keyView(row: ApiKeyRow, spentNano: number): KeyT {
  const b = boundsOfRow(row);
  return {
    id: row.id,
    name: row.name,
    prefix: keyPrefix(row.lookup),
    createdAt: iso(row.created_at)!,
    lastUsedAt: iso(lastUsedOf(row.id, row.last_used_at)), // a use on this daemon shows at once
    expiresAt: iso(b.expiresAt),
    revoked: row.revoked_at !== null,
    limits: limitsView(b.limits),
    spent: nanoToUsd(spentNano),
    parentKeyId: row.parent_key_id,
  };
}

/**
 * What each key spent (nano-USD): a key with a budget, in its current budget period
 * (key_spend, what the budget is enforced against); a key without, in all (the daily
 * per-key rollup). Two queries for any number of keys of one user.
 */
export async function keysSpent(q: Queryable, userId: string, rows: readonly ApiKeyRow[], now = Date.now()): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!rows.length) return out;
  // only the current period of each budget (past periods' rows stay in key_spend)
  const current = new Map<string, string>();
  for (const r of rows) {
    const l = boundsOfRow(r).limits;
    if (l?.budgetNano != null) current.set(r.id, budgetPeriodKey(l.budgetPeriod, now));
  }
  const periods = new Map<string, number>();
  if (current.size) {
    const ids = [...current.keys()];
    const found = await q.all<{ key_id: string; period: string; spent_nusd: number }>(
      `SELECT key_id, period, spent_nusd FROM key_spend WHERE key_id IN (${ids.map(() => '?').join(', ')})`,
      ids,
    );
    for (const f of found) if (current.get(f.key_id) === f.period) periods.set(f.key_id, Number(f.spent_nusd));
  }
  const totals = await q.all<{ key_id: string; spent: number | null }>(
    'SELECT key_id, SUM(customer_nusd) AS spent FROM spend_key_daily WHERE user_id = ? GROUP BY key_id',
    [userId],
  );
  const total = new Map(totals.map((t) => [t.key_id, Number(t.spent ?? 0)]));
  for (const r of rows) out.set(r.id, current.has(r.id) ? (periods.get(r.id) ?? 0) : (total.get(r.id) ?? 0));
  return out;
}

/** What one key spent (nano-USD), as `keysSpent` counts it. */
export async function keySpent(q: Queryable, userId: string, keyId: string, limits: KeyLimits | null, now = Date.now()): Promise<number> {
  if (limits?.budgetNano == null) {
    const r = await q.get<{ spent: number | null }>('SELECT SUM(customer_nusd) AS spent FROM spend_key_daily WHERE user_id = ? AND key_id = ?', [userId, keyId]);
    return Number(r?.spent ?? 0);
  }
  const r = await q.get<{ spent_nusd: number }>('SELECT spent_nusd FROM key_spend WHERE key_id = ? AND period = ?', [keyId, budgetPeriodKey(limits.budgetPeriod, now)]);
  return Number(r?.spent_nusd ?? 0);
}

/** Entitlements' `key` (requested with a limited key): its limits, what it spent and what is left. */
export function keyEntitlement(keyId: string, limits: KeyLimits | null, expiresAt: number | null, spentNano: number, now = Date.now()) {
  const budget = limits?.budgetNano ?? null;
  const resets = budget === null ? null : budgetPeriodEnd(limits!.budgetPeriod, now);
  return {
    id: keyId,
    limits: limitsView(limits),
    expiresAt: iso(expiresAt),
    spent: nanoToUsd(spentNano),
    budgetRemaining: budget === null ? null : nanoToUsd(Math.max(0, budget - spentNano)),
    budgetResetsAt: iso(resets),
  };
}
